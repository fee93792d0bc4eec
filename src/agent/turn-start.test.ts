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

const stores: Store[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

const KEY = 'agent:main:discord:channel:c1';
const never = () => new AbortController().signal;
const say = (text: string) => ({ kind: 'message' as const, message: { role: 'user' as const, content: [{ type: 'text' as const, text }] } });
const textOf = (m: { content: Array<{ type: string; text?: string }> }) => m.content.map((p) => p.text ?? '').join('');

async function setup(engine: (typeof ENGINES)[number], script: ScriptStep[]) {
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
    tools: new FunctionToolExecutor({}),
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
  const run = (start?: Awaited<ReturnType<typeof startRead>>) => runtime.runTurn({ sessionKey: KEY, turn: channelTurn(), input: { text: 'and now?', senderName: 'alice' }, signal: never(), start });
  return { db, transcripts, model, startRead, run };
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
    // [the session's touch, the message, its search index, the answer]: the answer's step failed.
    expect((error as BatchStepError).step).toBe(3);
    expect((await transcripts.load(KEY)).map((e) => textOf(e.message))).toEqual(['alice: and now?']);
  });
});
