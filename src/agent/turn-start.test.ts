// A turn's store work on both engines: it starts from the read taken with its session's lease
// (`startRead`, carried by the message's place) while that is fresh, and writes its message with
// the model's first answer in one write — or alone, when the turn ends without one.
import { afterEach, describe, expect, it } from 'vitest';
import { ENGINES, freshStoreTarget } from '../../test/store-engines.js';
import { openWardenStore } from '../app/migrations.js';
import { channelTurn, FunctionToolExecutor } from '../app/agent-testing.js';
import { parseConfig } from '../config/index.js';
import { modelSettings } from '../models/settings.js';
import { createScriptedProvider, ModelCallError, type ScriptStep } from '../models/scripted.js';
import { BatchStepError, type Db } from '../store/db.js';
import type { Store } from '../store/store.js';
import { SessionContextStore } from '../turn/session-contexts.js';
import { createAgentRuntime } from './runtime.js';
import { SubagentRunStore } from './subagent-runs.js';
import { DbTranscriptStore } from './transcript.js';
import { incomingAppend } from './incoming.js';

const stores: Store[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

const KEY = 'agent:main:discord:channel:c1';
const never = () => new AbortController().signal;
const say = (text: string) => ({ kind: 'message' as const, message: { role: 'user' as const, content: [{ type: 'text' as const, text }] } });
const textOf = (m: { content: Array<{ type: string; text?: string }> }) => m.content.map((p) => p.text ?? '').join('');

async function setup(engine: (typeof ENGINES)[number], script: ScriptStep[], tools = new FunctionToolExecutor({})) {
  const opened = await openWardenStore(await freshStoreTarget(engine));
  if (!opened.ok) throw new Error(opened.error.message);
  stores.push(opened.store);
  const parsed = parseConfig({ models: { default: 'anthropic/test-model', retry: { attempts: 1, baseDelayMs: 1, maxDelayMs: 5 } } });
  if (!parsed.ok) throw parsed.error;
  const { config } = parsed.value;
  const db = opened.store.db;
  const transcripts = new DbTranscriptStore(db);
  const model = createScriptedProvider(script);
  const runtime = createAgentRuntime({
    config,
    transcripts,
    subagentRuns: new SubagentRunStore(db),
    sessionContexts: new SessionContextStore(db),
    tools,
    models: (ref) => {
      const settings = modelSettings(config, ref);
      return settings.ok ? { ok: true, provider: model, settings: settings.value } : settings;
    },
  });
  /** The turn's start, read as the message's place reads it (its steps in one batch). */
  const startRead = async () => {
    const read = runtime.startRead!(KEY)!;
    return read.read(await db.batch(read.steps));
  };
  const run = (start?: Awaited<ReturnType<typeof startRead>>, written?: { seq?: number | undefined }) =>
    runtime.runTurn({ sessionKey: KEY, turn: channelTurn(), input: { text: 'and now?', senderName: 'alice' }, signal: never(), start, written });
  /**
   * The turn's start read with its message written first, as the message's place does it (the
   * place's guard: `holds`), in one batch: what was read, and the message's seq when written.
   */
  const startWritten = async (holds = true) => {
    const read = runtime.startRead!(KEY, incomingAppend({ text: 'and now?', senderName: 'alice' }, channelTurn()))!;
    const write = read.write!({ sql: holds ? '1 = 1' : '1 = 0', params: [] });
    const results = await db.batch([...write, ...read.steps]);
    return { start: await read.read(results.slice(write.length)), seq: read.writtenSeq!(results.slice(0, write.length)) };
  };
  return { db, transcripts, model, startRead, startWritten, run };
}

/** The store calls made while `fn` runs, by kind (`tx` counts a batch). */
async function storeCalls(db: Db, fn: () => Promise<unknown>): Promise<string[]> {
  const calls: string[] = [];
  db.observe((op) => calls.push(op));
  try {
    await fn();
  } finally {
    db.observe(undefined);
  }
  return calls;
}

describe.each(ENGINES)("a turn's store work on %s", (engine) => {
  it('starts from the read taken with its lease (no read of its own) and writes its message with the answer in one write', async () => {
    const { db, transcripts, model, startRead, run } = await setup(engine, [{ text: 'it is later' }]);
    await transcripts.append(KEY, [say('earlier'), { kind: 'message', message: { role: 'assistant', content: [{ type: 'text', text: 'noted' }] } }]);
    const start = await startRead();
    expect(start.fresh()).toBe(true);
    expect(start.resultsWaiting).toBe(false);
    const calls = await storeCalls(db, () => run(start));
    expect(calls).toEqual(['tx']);
    expect(model.requests[0]!.messages.map(textOf)).toEqual(['earlier', 'noted', 'alice: and now?']);
    expect((await transcripts.load(KEY)).map((e) => textOf(e.message))).toEqual(['earlier', 'noted', 'alice: and now?', 'it is later']);
  });

  it('a read gone stale (the session written here since, as a deferred call does) is not used: the turn reads again and sees it', async () => {
    const { db, transcripts, model, startRead, run } = await setup(engine, [{ text: 'seen' }]);
    await transcripts.append(KEY, [say('earlier')]);
    const start = await startRead();
    await new DbTranscriptStore(db).append(KEY, [say('written after the read')]);
    expect(start.fresh()).toBe(false);
    await run(start);
    expect(model.requests[0]!.messages.map(textOf)).toEqual(['earlier', 'written after the read', 'alice: and now?']);
  });

  it('ends without an answer (the model fails): its message is still written, once', async () => {
    const { transcripts, startRead, run } = await setup(engine, [{ error: new ModelCallError('badRequest', 'refused by the test') }]);
    const outcome = await run(await startRead());
    expect(outcome.status).toBe('failed');
    expect((await transcripts.load(KEY)).map((e) => textOf(e.message))).toEqual(['alice: and now?']);
  });

  it('the write of message and answer fails: nothing of it stays, the message is then written alone and the failure reported with its step', async () => {
    const { db, transcripts, startRead, run } = await setup(engine, [{ text: 'never stored' }]);
    if (engine === 'sqlite') await db.exec(`CREATE TRIGGER refuse_answer BEFORE INSERT ON transcript_entries WHEN NEW.role = 'assistant' BEGIN SELECT RAISE(ABORT, 'refused by the test'); END;`);
    else {
      await db.exec(`CREATE FUNCTION refuse_answer() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.role = 'assistant' THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$;
        CREATE TRIGGER refuse_answer BEFORE INSERT ON transcript_entries FOR EACH ROW EXECUTE FUNCTION refuse_answer();`);
    }
    const error = await run(await startRead()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BatchStepError);
    expect((error as Error).message).toMatch(/refused by the test/);
    // [the session's touch, the message with its search index (PostgreSQL: one statement; SQLite:
    // two), the answer]: the answer's step failed.
    expect((error as BatchStepError).step).toBe(engine === 'postgres' ? 2 : 3);
    expect((await transcripts.load(KEY)).map((e) => textOf(e.message))).toEqual(['alice: and now?']);
  });

  it('its message written with its place: the turn starts from the read that saw it, writes only the answer, and the message is there once', async () => {
    const { db, transcripts, model, startWritten, run } = await setup(engine, [{ text: 'it is later' }]);
    await transcripts.append(KEY, [say('earlier')]);
    const { start, seq } = await startWritten();
    expect(seq).toBeDefined();
    expect(start.fresh()).toBe(true);
    const calls = await storeCalls(db, () => run(start, { seq }));
    expect(calls).toEqual(['tx']);
    expect(model.requests[0]!.messages.map(textOf)).toEqual(['earlier', 'alice: and now?']);
    const stored = await transcripts.load(KEY);
    expect(stored.map((e) => textOf(e.message))).toEqual(['earlier', 'alice: and now?', 'it is later']);
    expect(stored[1]).toMatchObject({ seq, sender: { id: 'u1', name: 'alice' } });
  });

  it("the place's guard did not hold: nothing written, no seq (the turn writes its message as before)", async () => {
    const { transcripts, startWritten, run } = await setup(engine, [{ text: 'ok' }]);
    const { start, seq } = await startWritten(false);
    expect(seq).toBeUndefined();
    expect(await transcripts.load(KEY)).toEqual([]);
    await run(start);
    expect((await transcripts.load(KEY)).map((e) => textOf(e.message))).toEqual(['alice: and now?', 'ok']);
  });

  it('written with its place, then the model fails: the message stays, once, and the turn writes nothing', async () => {
    const { db, transcripts, startWritten, run } = await setup(engine, [{ error: new ModelCallError('badRequest', 'refused by the test') }]);
    const { start, seq } = await startWritten();
    const calls = await storeCalls(db, async () => expect((await run(start, { seq })).status).toBe('failed'));
    expect(calls).toEqual([]);
    expect((await transcripts.load(KEY)).map((e) => textOf(e.message))).toEqual(['alice: and now?']);
  });

  it('a place taken over from a dead instance (written, its seq unknown here): the turn reads its transcript and does not write the message again', async () => {
    const { transcripts, model, startWritten, run } = await setup(engine, [{ text: 'answered' }]);
    await startWritten();
    await run(undefined, {});
    expect(model.requests[0]!.messages.map(textOf)).toEqual(['alice: and now?']);
    expect((await transcripts.load(KEY)).map((e) => textOf(e.message))).toEqual(['alice: and now?', 'answered']);
  });

  it("a plugin adds context to the message: what the model was shown is written over the place's entry (same seq), with the answer, and found by search", async () => {
    class WithContext extends FunctionToolExecutor {
      override surface() {
        return { ...super.surface(), prompt: { prependContext: ['[from a plugin] the walrus'], appendContext: [] } };
      }
    }
    const { db, transcripts, model, startWritten, run } = await setup(engine, [{ text: 'ok' }], new WithContext({}));
    const { start, seq } = await startWritten();
    const calls = await storeCalls(db, () => run(start, { seq }));
    expect(calls).toEqual(['tx']);
    const shown = '[from a plugin] the walrus\n\nalice: and now?';
    expect(model.requests[0]!.messages.map(textOf)).toEqual([shown]);
    const stored = await transcripts.load(KEY);
    expect(stored.map((e) => [e.seq === seq, textOf(e.message)])).toEqual([
      [true, shown],
      [false, 'ok'],
    ]);
    expect(stored[0]!.sender).toEqual({ id: 'u1', name: 'alice' });
    expect((await transcripts.search!({ sessionKeys: [KEY], terms: ['walrus'], limit: 5, offset: 0 })).map((h) => h.seq)).toEqual([seq]);
  });

  it('a turn with no read taken with its lease (its place did not take it) writes its message as it starts, with its read: stored before the model is asked, once', async () => {
    const seen: string[][] = [];
    const { transcripts, model, run } = await setup(engine, [{ text: 'answered' }]);
    // The model looks at the store when it is asked.
    const complete = model.complete.bind(model);
    model.complete = async (request, signal) => {
      seen.push((await transcripts.load(KEY)).map((e) => textOf(e.message)));
      return complete(request, signal);
    };
    await transcripts.append(KEY, [say('earlier')]);
    await run();
    expect(seen).toEqual([['earlier', 'alice: and now?']]);
    expect(model.requests[0]!.messages.map(textOf)).toEqual(['earlier', 'alice: and now?']);
    expect((await transcripts.load(KEY)).map((e) => textOf(e.message))).toEqual(['earlier', 'alice: and now?', 'answered']);
  });
});
