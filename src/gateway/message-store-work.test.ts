// A message's store work through the real gateway on a shared-store path (places, the session
// lease, the agent loop), on both engines: on an idle conversation it is three writes — its
// place with the lease and the turn's first read, its message with the answer, the release —
// and no read of its own.
import { describe, expect, it, vi } from 'vitest';
import { ENGINES, useTestStores } from '../../test/store-engines.js';
import { createAgentRuntime } from '../agent/runtime.js';
import { SubagentRunStore } from '../agent/subagent-runs.js';
import { DbTranscriptStore } from '../agent/transcript.js';
import { FunctionToolExecutor } from '../app/agent-testing.js';
import { Leases } from '../cluster/leases.js';
import { parseConfig } from '../config/index.js';
import { modelSettings } from '../models/settings.js';
import { createScriptedProvider } from '../models/scripted.js';
import { SessionContextStore } from '../turn/session-contexts.js';
import { Gateway } from './gateway.js';
import type { ChatAdapter, InboundMessage, OutboundMessage, ReplyTarget } from './types.js';

const testStores = useTestStores();

class Platform implements ChatAdapter {
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

describe.each(ENGINES)("a message's store work through the gateway on %s", (engine) => {
  it('on an idle conversation: three writes (place with lease and first read; message with answer; release) and no read of its own', async () => {
    // A second handle to look at the store without counting on the first.
    const [store, look] = await testStores.handles(engine, 2);
    const parsed = parseConfig({ models: { default: 'anthropic/test-model' } });
    if (!parsed.ok) throw parsed.error;
    const { config } = parsed.value;
    const model = createScriptedProvider([{ text: 'first answer' }, { text: 'second answer' }]);
    const transcripts = new DbTranscriptStore(store.db);
    const agent = createAgentRuntime({
      config,
      transcripts,
      subagentRuns: new SubagentRunStore(store.db),
      sessionContexts: new SessionContextStore(store.db),
      tools: new FunctionToolExecutor({}),
      models: (ref) => {
        const settings = modelSettings(config, ref);
        return settings.ok ? { ok: true, provider: model, settings: settings.value } : settings;
      },
    });
    const leases = new Leases(store.db, { ttlMs: 15_000, holder: 'inst-a' });
    const platform = new Platform();
    const gateway = new Gateway({
      config,
      adapters: [platform],
      agent,
      tools: undefined,
      toolReport: () => ({ tools: [], removed: [], unavailable: [], warnings: [] }),
      approvals: { approve: () => async () => ({ kind: 'not-found' }), pendingCount: () => 0 },
      sessionLeases: leases,
    });
    await gateway.start();
    // The start's pick-up of places other instances left (none here) is done before the first message.
    await new Promise((r) => setTimeout(r, 500));
    const idle = async () => (await look.db.value('SELECT COUNT(*) FROM lease_queue')) === 0 && (await look.db.value('SELECT COUNT(*) FROM leases')) === 0;
    for (const [i, said] of ['hello', 'and again'].entries()) {
      const calls: string[] = [];
      store.db.observe((op) => calls.push(op));
      await platform.push(said);
      await vi.waitFor(() => expect(platform.sent).toHaveLength(i + 1), { timeout: 10_000, interval: 5 });
      await vi.waitFor(async () => expect(await idle()).toBe(true), { timeout: 10_000, interval: 5 });
      store.db.observe(undefined);
      expect({ said, calls }).toEqual({ said, calls: ['tx', 'tx', 'tx'] });
    }
    expect(platform.sent.map((m) => m.text)).toEqual(['first answer', 'second answer']);
    const [key] = (await look.db.all<{ key: string }>('SELECT key FROM sessions')).map((r) => r.key);
    expect((await new DbTranscriptStore(look.db).load(key!)).map((e) => e.message.content.map((p) => ('text' in p ? p.text : '')).join(''))).toEqual([
      'hello',
      'first answer',
      'and again',
      'second answer',
    ]);
    // The second turn read the first exchange (from its place's write).
    expect(model.requests[1]!.messages).toHaveLength(3);
    await gateway.stop();
    await leases.close();
  });
});
