// For tests: a web chat adapter the test drives by hand — `push` delivers one owner DM to the
// gateway as the platform would, and every reply the gateway sends is kept in `sent`.
import { parseConfig } from '../config/index.js';
import { Gateway, type GatewayOptions } from './gateway.js';
import type { ChatAdapter, InboundMessage, OutboundMessage, ReplyTarget } from './types.js';

export class PushAdapter implements ChatAdapter {
  readonly provider = 'web' as const;
  readonly sent: OutboundMessage[] = [];
  approvals = { provider: 'web', show: async () => {}, update: async () => {} };
  private onMessage: ((m: InboundMessage) => Promise<void>) | undefined;
  async start(onMessage: (m: InboundMessage) => Promise<void>) {
    this.onMessage = onMessage;
  }
  async send(_target: ReplyTarget, message: OutboundMessage) {
    this.sent.push(message);
  }
  typing() {
    return () => {};
  }
  async stop() {}
  push(text: string) {
    return this.onMessage!({ provider: 'web', chatType: 'dm', channelId: 'web', senderId: 'local', text, mentionsBot: false, messageId: String(Math.random()), receivedAt: Date.now() });
  }
}

/**
 * A gateway on `adapter` whose turns go to `agent` and whose places go to `sessionLeases` (the
 * shared line a test stands in for), with no tools and no approvals: the line-up under test alone.
 */
export function lineGateway(options: Pick<GatewayOptions, 'agent' | 'sessionLeases' | 'maxPending'> & { adapter: PushAdapter }): Gateway {
  const parsed = parseConfig({ models: { default: 'anthropic/claude-sonnet-4-5' } });
  if (!parsed.ok) throw parsed.error;
  return new Gateway({
    config: parsed.value.config,
    adapters: [options.adapter],
    agent: options.agent,
    tools: undefined,
    toolReport: () => ({ tools: [], removed: [], unavailable: [], warnings: [] }),
    approvals: { approve: () => async () => ({ kind: 'not-found' }), pendingCount: () => 0 },
    ...(options.maxPending !== undefined ? { maxPending: options.maxPending } : {}),
    shutdownGraceMs: 50,
    sessionLeases: options.sessionLeases,
  });
}
