// Budget counters on both store engines: admission is one conditional write, holds are given
// back, a restart (a new connection) finds the counters, periods turn over, and two instances on
// one PostgreSQL charging one sender at once never pass the cap by more than one call's cost.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { ENGINES, freshStoreTarget } from '../../test/store-engines.js';
import { openWardenStore } from '../app/migrations.js';
import { parseConfig, type WardenConfig } from '../config/index.js';
import type { Store } from '../store/store.js';
import { UsageService, type CallFacts } from './service.js';
import { UsageStore } from './store.js';
import { Transcripts } from '../store/transcript.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function open(target: { dataDir: string; url: string | undefined }): Promise<Store> {
  const opened = await openWardenStore({ dataDir: target.dataDir, url: target.url });
  if (!opened.ok) throw new Error(opened.error.message);
  cleanups.push(() => opened.store.close());
  return opened.store;
}

function configWith(budgets: unknown): WardenConfig {
  const parsed = parseConfig({
    models: { default: 'local/m', providers: { local: { api: 'openai', baseUrl: 'http://127.0.0.1:9/v1', models: [{ id: 'm', cost: { input: 10, output: 10 } }] } } },
    budgets,
  });
  if (!parsed.ok) throw parsed.error;
  return parsed.value.config;
}

/** A call whose prompt is 1000 one-byte characters and which may answer 100 tokens: at $10/M its cost is at most $0.011. */
const FACTS: CallFacts = {
  provider: 'local',
  model: 'm',
  attribution: { agentId: 'main', platform: 'discord', senderId: 'u1', channelId: 'c1', purpose: 'turn' },
  prompt: { chars: 1000, bytes: 1000, images: 0 },
  maxOutputTokens: 100,
};
/** What each call reports: 1000 in, 50 out = 10 500 000 nano-dollars. */
const USED = { inputTokens: 1000, outputTokens: 50 };
const CALL_NANO = 10_500_000;

describe.each(ENGINES)('budget counters on %s', (engine) => {
  it('admits below the cap, refuses once spent + the prompt’s estimate reaches it, and keeps counting after a restart', async () => {
    const target = await freshStoreTarget(engine);
    const config = configWith([{ scope: 'sender', per: 'day', usd: 0.03 }]);
    let now = Date.UTC(2026, 11, 6, 12);
    const service = (store: Store) => new UsageService({ store: new UsageStore(store.db), config: () => config, now: () => now });
    const first = service(await open(target));
    for (let i = 0; i < 2; i++) {
      const a = await first.admit(FACTS);
      expect(a.ok).toBe(true);
      if (a.ok) await first.settle(a.ticket, USED);
    }
    // 2 × $0.0105 spent + $0.0025 estimated for the prompt = $0.0235 < $0.03: one more.
    const third = await first.admit(FACTS);
    expect(third.ok).toBe(true);
    if (third.ok) await first.settle(third.ticket, USED);
    // $0.0315 spent: over the cap by less than one call.
    const refused = await first.admit(FACTS);
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.refusal.message).toContain('$0.0315 USD spent. It resets at 2026-12-07 00:00 UTC.');

    // Another process (a restart) reads the same counter.
    const second = service(await open(target));
    expect((await second.admit(FACTS)).ok).toBe(false);
    // The next day is a new counter.
    now = Date.UTC(2026, 11, 7, 0, 0, 1);
    expect((await second.admit(FACTS)).ok).toBe(true);
  });

  it('a failed call gives its hold back; a token budget counts tokens', async () => {
    const target = await freshStoreTarget(engine);
    const config = configWith([{ scope: 'channel', match: 'c1', per: 'week', tokens: 3_000 }]);
    const usage = new UsageService({ store: new UsageStore((await open(target)).db), config: () => config });
    const a = await usage.admit(FACTS);
    expect(a.ok).toBe(true);
    if (!a.ok) return;
    // While the first call is in flight its bound (1008 + 100 tokens) is held; a second still fits beside it (1108 + 250 estimated < 3000).
    const b = await usage.admit(FACTS);
    expect(b.ok).toBe(true);
    if (!b.ok) return;
    await usage.settle(a.ticket, undefined);
    await usage.settle(b.ticket, undefined);
    const key = a.ticket.held[0]!.key;
    expect(await usage.store.get(key)).toEqual({ spent: 0, held: 0, raised: 0 });
    const c = await usage.admit(FACTS);
    if (c.ok) await usage.settle(c.ticket, USED);
    expect(await usage.store.get(key)).toEqual({ spent: 1050, held: 0, raised: 0 });
  });
});

describe.each(ENGINES)('a metered call on %s', (engine) => {
  it("answers without waiting for its usage record, which commits with the conversation's next write (the answer's transcript entry) in one transaction; `settled()` waits for it", async () => {
    const target = await freshStoreTarget(engine);
    const store = await open(target);
    const config = configWith([{ scope: 'sender', per: 'day', usd: 1 }]);
    const usage = new UsageService({ store: new UsageStore(store.db), config: () => config });
    const answer = { message: { role: 'assistant' as const, content: [{ type: 'text' as const, text: 'ok' }] }, stopReason: 'end' as const, usage: USED };
    const sessionKey = 'agent:main:discord:direct:u1';
    const provider = usage.wrap({ name: 'local', api: 'openai', complete: async () => answer }, { ...FACTS.attribution, sessionKey });
    const transcripts = new Transcripts(store.db);
    const request = { model: 'm', system: '', messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'hi' }] }], tools: [], maxOutputTokens: 100 };
    // What the store is asked after the answer: every batch's statements, and the commits.
    const batches: string[][] = [];
    const batch = store.db.batch.bind(store.db);
    store.db.batch = (steps) => (batches.push(steps.map((s) => ('sql' in s ? s.sql.trim().split(/\s+/).slice(0, 3).join(' ') : 'NOTIFY'))), batch(steps));
    let commits = 0;
    store.db.observe((op, _ms, ok) => void (op === 'tx' && ok && commits++));
    const response = await provider.complete(request, new AbortController().signal);
    expect(response).toBe(answer);
    // The caller's next write of the conversation, issued after the answer returned.
    await transcripts.appendMany({ key: sessionKey, agentId: 'main', provider: 'discord', now: Date.now() }, [{ sessionKey, role: 'assistant', content: answer.message.content }]);
    await usage.settled();
    store.db.observe(undefined);
    // One batch, one commit: the transcript's touch and entry, then the record and the counter's settle.
    expect(batches).toEqual([['INSERT INTO sessions', engine === 'postgres' ? 'WITH e AS' : 'INSERT INTO transcript_entries', ...(engine === 'postgres' ? [] : ['INSERT INTO transcript_search']), 'INSERT INTO usage_records', 'WITH v (key,']]);
    expect(commits).toBe(1);
    expect(await store.db.value('SELECT COUNT(*) FROM usage_records')).toBe(1);
    expect(await store.db.value('SELECT COUNT(*) FROM transcript_entries')).toBe(1);
    expect(await usage.store.get(`sender|discord:u1|day|${new Date().toISOString().slice(0, 10)}|usd`)).toEqual({ spent: CALL_NANO, held: 0, raised: 0 });
  });

  it('a record that no write of its conversation carries is written alone, once, in one transaction with its settle', async () => {
    const store = await open(await freshStoreTarget(engine));
    const config = configWith([{ scope: 'sender', per: 'day', usd: 1 }]);
    const usage = new UsageService({ store: new UsageStore(store.db), config: () => config });
    const answer = { message: { role: 'assistant' as const, content: [{ type: 'text' as const, text: 'ok' }] }, stopReason: 'end' as const, usage: USED };
    for (const attribution of [FACTS.attribution, { ...FACTS.attribution, sessionKey: 'agent:main:discord:direct:u1' }]) {
      let commits = 0;
      store.db.observe((op, _ms, ok) => void (op === 'tx' && ok && commits++));
      await usage.wrap({ name: 'local', api: 'openai', complete: async () => answer }, attribution).complete({ model: 'm', system: '', messages: [], tools: [], maxOutputTokens: 100 }, new AbortController().signal);
      await usage.settled();
      store.db.observe(undefined);
      expect(commits).toBe(1);
    }
    expect(await store.db.value('SELECT COUNT(*) FROM usage_records')).toBe(2);
    expect((await usage.store.get((await store.db.value<string>('SELECT key FROM usage_counters'))!))?.spent).toBe(2 * CALL_NANO);
  });

  it('the next call in the same conversation is admitted against the settled record, not the hold of the answer before it; another conversation does not wait for it', async () => {
    const store = await open(await freshStoreTarget(engine));
    // $0.05 a day; a call may answer 10 000 tokens, so while in flight it holds about $0.10 (past
    // the cap on its own), and it really costs $0.0105.
    const config = configWith([{ scope: 'sender', per: 'day', usd: 0.05 }]);
    const usage = new UsageService({ store: new UsageStore(store.db), config: () => config });
    const answer = { message: { role: 'assistant' as const, content: [{ type: 'text' as const, text: 'ok' }] }, stopReason: 'end' as const, usage: USED };
    const model = { name: 'local', api: 'openai' as const, complete: async () => answer };
    const request = { model: 'm', system: '', messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'hi' }] }], tools: [], maxOutputTokens: 10_000 };
    const inConversation = (sessionKey: string) => usage.wrap(model, { ...FACTS.attribution, sessionKey });
    // The store is slow to settle a counter (the statement that swaps a hold for the cost): it
    // goes out once the test lets it.
    let settles = 0;
    let letSettle!: () => void;
    const slow = new Promise<void>((resolve) => (letSettle = resolve));
    const batch = store.db.batch.bind(store.db);
    store.db.batch = (steps) => (steps.some((s) => 'sql' in s && s.sql.includes('INSERT INTO usage_records')) ? (settles++, slow.then(() => batch(steps))) : batch(steps));
    const never = new AbortController().signal;
    expect(await inConversation('s1').complete(request, never)).toBe(answer);
    // The answer came back with its record still on its way (no write of the conversation
    // carried it: it left alone at the event loop's check phase) ...
    await new Promise((r) => setImmediate(r));
    expect(settles).toBe(1);
    const key = (await store.db.value<string>('SELECT key FROM usage_counters'))!;
    expect((await usage.store.get(key))?.held).toBeGreaterThan(0.05 * 1e9);
    // ... another conversation's call, which does not wait for it, is judged with the hold on: refused.
    await expect(inConversation('s2').complete(request, never)).rejects.toThrow(/more held by calls still running/);
    // The same conversation's next call waits for the record ...
    let answered = false;
    const next = inConversation('s1').complete(request, never).finally(() => (answered = true));
    await sleep(100);
    expect(answered).toBe(false);
    // ... and once it is written, is admitted against what was spent.
    letSettle();
    expect(await next).toBe(answer);
    await usage.settled();
    expect(await usage.store.get(key)).toEqual({ spent: 2 * CALL_NANO, held: 0, raised: 0 });
  });
});

describe('two instances on one PostgreSQL', () => {
  it('charging the same sender at once never pass the cap by more than one call’s cost', async () => {
    const target = await freshStoreTarget('postgres');
    const CAP_USD = 0.1;
    const config = configWith([{ scope: 'sender', per: 'day', usd: CAP_USD }]);
    const instances = [await open(target), await open(target)].map((store) => new UsageService({ store: new UsageStore(store.db), config: () => config }));
    let made = 0;
    // Eight concurrent callers per instance, each calling until refused: each call takes a few ms, like a model.
    const caller = async (usage: UsageService) => {
      for (;;) {
        const a = await usage.admit(FACTS);
        if (!a.ok) return;
        made++;
        await sleep(2 + Math.floor(Math.random() * 5));
        await usage.settle(a.ticket, USED);
      }
    };
    await Promise.all(instances.flatMap((usage) => Array.from({ length: 8 }, () => caller(usage))));
    const key = `sender|discord:u1|day|${new Date().toISOString().slice(0, 10)}|usd`;
    const counter = await instances[0]!.store.get(key);
    expect(counter?.held).toBe(0);
    expect(counter!.spent).toBe(made * CALL_NANO);
    expect(counter!.spent).toBeLessThanOrEqual(CAP_USD * 1e9 + CALL_NANO);
    // Not refused early either: the callers got close to the cap.
    expect(counter!.spent).toBeGreaterThanOrEqual(CAP_USD * 1e9 - 3 * CALL_NANO);
  });
});
