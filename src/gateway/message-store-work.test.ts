// A message's store work through the real gateway on a shared-store path (places, the session
// lease, the agent loop), on both engines: on an idle conversation it is three writes — its
// place with the lease, the message itself and the turn's first read; the answer; the release —
// and no read of its own. The message is in the transcript from its place on, before the model
// is asked: a web chat message (which no other instance can take over) outlives a crash there.
import { describe, expect, it, vi } from 'vitest';
import { ENGINES, useTestStores } from '../../test/store-engines.js';
import { createAgentRuntime } from '../agent/runtime.js';
import { SubagentRunStore } from '../agent/subagent-runs.js';
import { DbTranscriptStore } from '../agent/transcript.js';
import { FunctionToolExecutor } from '../app/agent-testing.js';
import { Leases } from '../cluster/leases.js';
import { parseConfig, type WardenConfig } from '../config/index.js';
import type { Store } from '../store/store.js';
import { modelSettings } from '../models/settings.js';
import { createScriptedProvider } from '../models/scripted.js';
import { SessionContextStore } from '../turn/session-contexts.js';
import { Gateway } from './gateway.js';
import type { ModelProvider } from '../models/types.js';
import { UsageService } from '../usage/service.js';
import { UsageStore } from '../usage/store.js';
import type { BatchStep } from '../store/db.js';
import { PushAdapter } from './push-adapter-testing.js';

const testStores = useTestStores();


/** The real gateway on `store` with the session lease and the agent loop over `model`, started. */
async function startGateway(store: Store, config: WardenConfig, model: ModelProvider, usage?: UsageService) {
  const agent = createAgentRuntime({
    ...(usage ? { usage } : {}),
    config,
    transcripts: new DbTranscriptStore(store.db),
    subagentRuns: new SubagentRunStore(store.db),
    sessionContexts: new SessionContextStore(store.db),
    tools: new FunctionToolExecutor({}),
    models: (ref) => {
      const settings = modelSettings(config, ref);
      return settings.ok ? { ok: true, provider: model, settings: settings.value } : settings;
    },
  });
  const leases = new Leases(store.db, { ttlMs: 15_000, holder: 'inst-a' });
  const platform = new PushAdapter();
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
  return { platform, gateway, leases };
}

describe.each(ENGINES)("a message's store work through the gateway on %s", (engine) => {
  it('on an idle conversation: three writes (place with lease, message and first read; answer with its usage record; release) and no read of its own (a budget adds its admission); the usage record and the activity time written once each', async () => {
    // A second handle to look at the store without counting on the first.
    const [store, look] = await testStores.handles(engine, 2);
    const parsed = parseConfig({ models: { default: 'anthropic/test-model' }, budgets: [{ scope: 'sender', per: 'day', tokens: 1_000_000 }] });
    if (!parsed.ok) throw parsed.error;
    const { config } = parsed.value;
    const model = createScriptedProvider([{ text: 'first answer' }, { text: 'second answer' }]);
    const usage = new UsageService({ store: new UsageStore(store.db), config: () => config });
    const { platform, gateway, leases } = await startGateway(store, config, model, usage);
    // Every statement the handle is sent in a batch: which write the session's row and the usage record ride in.
    const written: string[][] = [];
    const batch = store.db.batch.bind(store.db);
    const sql = (s: BatchStep) => ('sql' in s ? s.sql : '');
    store.db.batch = (steps) => (written.push(steps.map(sql)), batch(steps));
    // The start's pick-up of places other instances left (none here) is done before the first message.
    await new Promise((r) => setTimeout(r, 500));
    const idle = async () => (await look.db.value('SELECT COUNT(*) FROM lease_queue')) === 0 && (await look.db.value('SELECT COUNT(*) FROM leases')) === 0;
    for (const [i, said] of ['hello', 'and again'].entries()) {
      const calls: string[] = [];
      written.length = 0;
      store.db.observe((op) => calls.push(op));
      await platform.push(said);
      await vi.waitFor(() => expect(platform.sent).toHaveLength(i + 1), { timeout: 10_000, interval: 5 });
      await vi.waitFor(async () => expect(await idle()).toBe(true), { timeout: 10_000, interval: 5 });
      store.db.observe(undefined);
      // Under a budget the model call adds its admission (one conditional write) before it.
      expect({ said, calls }).toEqual({ said, calls: ['tx', 'all', 'tx', 'tx'] });
      // The session's activity time with the message (in the place's write), not again with the
      // answer; the usage record and its budget settle in the answer's write (its second).
      const where = (pattern: RegExp) => written.flatMap((steps, w) => steps.filter((s) => pattern.test(s)).map(() => w));
      expect({ said, touch: where(/INSERT INTO sessions/), record: where(/INSERT INTO usage_records/), settle: where(/UPDATE usage_counters SET spent/) }).toEqual({ said, touch: [0], record: [1], settle: [1] });
    }
    // One record per model call; the counter charged exactly their tokens, nothing left held.
    expect(await look.db.value('SELECT COUNT(*) FROM usage_records')).toBe(2);
    const tokens = Number(await look.db.value('SELECT SUM(input_tokens + output_tokens) FROM usage_records'));
    expect(await look.db.get('SELECT spent, held FROM usage_counters')).toEqual({ spent: tokens, held: 0 });
    // The session's activity time is its latest message's.
    const latest = await look.db.value("SELECT MAX(created_at) FROM transcript_entries WHERE role = 'user'");
    expect(Number(await look.db.value('SELECT updated_at FROM sessions'))).toBe(Number(latest));
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

  it('the message is in the transcript (once, searchable) while the model is still answering: written with its place, not again with the answer', async () => {
    const [store, look] = await testStores.handles(engine, 2);
    const parsed = parseConfig({ models: { default: 'anthropic/test-model' } });
    if (!parsed.ok) throw parsed.error;
    const { config } = parsed.value;
    let answer!: () => void;
    const asked = new Promise<void>((resolve) => (answer = resolve));
    let calls = 0;
    const model: ModelProvider = {
      name: 'anthropic',
      api: 'anthropic',
      complete: async () => {
        calls++;
        await asked;
        return { message: { role: 'assistant', content: [{ type: 'text', text: 'at last' }] }, stopReason: 'end', usage: { inputTokens: 1, outputTokens: 1 } };
      },
    };
    const { platform, gateway, leases } = await startGateway(store, config, model);
    await new Promise((r) => setTimeout(r, 500));
    await platform.push('remember the walrus');
    await vi.waitFor(() => expect(calls).toBe(1), { timeout: 10_000, interval: 5 });
    // The model has not answered: the message is already stored, seen from another connection, and found by search.
    const [key] = (await look.db.all<{ key: string }>('SELECT key FROM sessions')).map((r) => r.key);
    const seen = new DbTranscriptStore(look.db);
    const texts = async () => (await seen.load(key!)).map((e) => e.message.content.map((p) => ('text' in p ? p.text : '')).join(''));
    expect(await texts()).toEqual(['remember the walrus']);
    expect((await seen.search({ sessionKeys: [key!], terms: ['walrus'], limit: 5, offset: 0 })).map((h) => h.text)).toEqual(['remember the walrus']);
    expect(Number(await look.db.value('SELECT written FROM lease_queue'))).toBe(1);
    answer();
    await vi.waitFor(() => expect(platform.sent.map((m) => m.text)).toEqual(['at last']), { timeout: 10_000, interval: 5 });
    expect(await texts()).toEqual(['remember the walrus', 'at last']);
    await gateway.stop();
    await leases.close();
  });
});
