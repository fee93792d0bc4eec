// For tests: a web chat adapter the test drives by hand — `push` delivers one owner DM to the
// gateway as the platform would, and every reply the gateway sends is kept in `sent`.
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
