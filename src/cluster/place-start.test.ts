// A message's start in one write: its place in the conversation's line, the conversation's lease
// and the turn's first read (`place`'s `alongside` steps), on both engines.
import { describe, expect, it } from 'vitest';
import { ENGINES, useTestStores } from '../../test/store-engines.js';
import { leasedInstances } from '../../test/cluster/leased-instances.js';
import { DbTranscriptStore } from '../agent/transcript.js';
import { BatchStepError, type BatchStep, type Db } from '../store/db.js';
import { Leases, type Place } from './leases.js';

const testStores = useTestStores();

const twoInstances = (engine: (typeof ENGINES)[number]) => leasedInstances(testStores, engine);

/** A trigger that refuses every insert into `table` (the engine's own error, as a broken write would raise). */
async function refuseInserts(db: Db, table: string): Promise<void> {
  if (db.engine === 'sqlite') await db.exec(`CREATE TRIGGER refuse_${table} BEFORE INSERT ON ${table} BEGIN SELECT RAISE(ABORT, 'refused by the test'); END;`);
  else {
    await db.exec(`CREATE OR REPLACE FUNCTION refuse_insert() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$;
      CREATE TRIGGER refuse_${table} BEFORE INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION refuse_insert();`);
  }
}

const never = new AbortController().signal;

describe.each(ENGINES)("a message's start in one write on %s", (engine) => {
  // The write's steps: [the line's lock (PostgreSQL)], the place, the lease, then what goes alongside.
  const lock = engine === 'postgres' ? 1 : 0;
  const cases: Array<{ step: string; at: number; setup?: (db: Db) => Promise<void>; alongside: BatchStep[] }> = [
    { step: 'the place', at: lock, setup: (db) => refuseInserts(db, 'lease_queue'), alongside: [] },
    { step: 'the lease', at: lock + 1, setup: (db) => refuseInserts(db, 'leases'), alongside: [] },
    { step: 'the first read alongside', at: lock + 2, alongside: [{ sql: 'SELECT * FROM no_such_table' }] },
    {
      step: 'a later step alongside, after one that wrote',
      at: lock + 4,
      alongside: [
        { sql: 'SELECT 1 AS one' },
        { sql: "INSERT INTO place_start_probe (key, value) VALUES ('written-alongside', '1')" },
        { sql: 'SELECT * FROM no_such_table' },
      ],
    },
  ];

  it.each(cases)('a failure at $step fails the whole write with a BatchStepError naming it; nothing of it stays', async ({ at, setup, alongside }) => {
    const { a, la, stop } = await twoInstances(engine);
    await a.db.exec('CREATE TABLE place_start_probe (key TEXT PRIMARY KEY, value TEXT)');
    await setup?.(a.db);
    const error = await la.place('session:s', '{"m":1}', true, alongside).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BatchStepError);
    expect((error as BatchStepError).step).toBe(at);
    expect(await a.db.value('SELECT COUNT(*) FROM lease_queue')).toBe(0);
    expect(await a.db.value('SELECT COUNT(*) FROM leases')).toBe(0);
    expect(await a.db.value('SELECT COUNT(*) FROM place_start_probe')).toBe(0);
    await stop();
  });

  it('hands back what the steps alongside read only with the lease; a conversation busy on another instance gets neither', async () => {
    const { a, b, la, lb, stop } = await twoInstances(engine);
    const ta = new DbTranscriptStore(a.db);
    await ta.append('k', [{ kind: 'message', message: { role: 'user', content: [{ type: 'text', text: 'earlier' }] } }]);
    // Idle: the lease, and the transcript as `load` reads it.
    const read = ta.loadSteps('k');
    const idle = await la.place('session:k', '{"m":1}', true, read.steps);
    expect(idle.lease).toBeDefined();
    const started = await read.read(idle.alongside!);
    expect(started.entries).toEqual(await ta.load('k'));
    expect(started.fresh()).toBe(true);
    // Busy on instance A (it holds the lease): B's message goes to A, with no lease and nothing read handed back.
    const tb = new DbTranscriptStore(b.db);
    const busy = await lb.place('session:k', '{"m":2}', true, tb.loadSteps('k').steps);
    expect(busy).toMatchObject({ holder: 'inst-a', here: false });
    expect(busy.lease).toBeUndefined();
    expect(busy.alongside).toBeUndefined();
    // Busy by a lease alone (work without a place, e.g. a scheduled turn) on B: A takes no lease either.
    await la.release(idle.lease!, idle.seq);
    await la.claim().then((claimed) => Promise.all(claimed.map((c) => la.leave(c.seq))));
    const held = await lb.tryAcquire('session:k');
    expect(held).toBeDefined();
    const blocked = await la.place('session:k', undefined, true, ta.loadSteps('k').steps);
    expect(blocked.lease).toBeUndefined();
    expect(blocked.alongside).toBeUndefined();
    expect(await a.db.get('SELECT holder, generation FROM leases WHERE name = ?', ['session:k'])).toEqual({ holder: 'inst-b', generation: held!.generation });
    // Written after the read: what was read is no longer fresh.
    await ta.append('k', [{ kind: 'message', message: { role: 'user', content: [{ type: 'text', text: 'later' }] } }]);
    expect(started.fresh()).toBe(false);
    await stop();
  });

  it('two instances placing messages of one conversation at once: each turn reads every message before it and the transcript keeps place order', async () => {
    const { a, b, la, lb, stop } = await twoInstances(engine);
    const stores = new Map([
      [la, new DbTranscriptStore(a.db)],
      [lb, new DbTranscriptStore(b.db)],
    ]);
    const seen = new Map<number, number>();
    const text = (seq: number) => `m${seq}`;
    /** A message's work on its lease: what it read (or reads now, if not handed one) must be every message before it. */
    const work = async (leases: Leases, name: string, seq: number, place: Place | undefined, started: Awaited<ReturnType<ReturnType<DbTranscriptStore['loadSteps']>['read']>> | undefined) =>
      leases.hold(
        name,
        never,
        async (_signal, lease) => {
          const transcripts = stores.get(leases)!;
          const entries = started && lease === place?.lease && started.fresh() ? started.entries : await transcripts.load(name.slice('session:'.length));
          seen.set(seq, entries.length);
          await transcripts.append(name.slice('session:'.length), [{ kind: 'message', message: { role: 'user', content: [{ type: 'text', text: text(seq) }] } }]);
        },
        seq,
        undefined,
        place?.lease,
      );
    for (let round = 0; round < 6; round++) {
      const name = `session:c${round}`;
      const key = name.slice('session:'.length);
      const placeFrom = async (leases: Leases, m: number) => {
        const read = stores.get(leases)!.loadSteps(key);
        const place = await leases.place(name, `{"m":${m}}`, true, read.steps);
        return { leases, place, started: place.alongside ? await read.read(place.alongside) : undefined };
      };
      // (SQLite is never shared by two instances: there the two take turns.)
      const placed = engine === 'postgres' ? await Promise.all([placeFrom(la, 1), placeFrom(lb, 2), placeFrom(la, 3), placeFrom(lb, 4)]) : [await placeFrom(la, 1), await placeFrom(lb, 2), await placeFrom(la, 3), await placeFrom(lb, 4)];
      expect(placed.filter((p) => p.place.lease !== undefined)).toHaveLength(1);
      // Each instance runs what is its own (its places here, then what was forwarded to it), in place order.
      const runAll = async (leases: Leases) => {
        await leases.claim();
        const mine = placed.filter((p) => p.place.holder === (leases === la ? 'inst-a' : 'inst-b')).sort((x, y) => x.place.seq - y.place.seq);
        for (const p of mine) await work(leases, name, p.place.seq, p.leases === leases ? p.place : undefined, p.leases === leases ? p.started : undefined);
      };
      await Promise.all([runAll(la), runAll(lb)]);
      const order = placed.map((p) => p.place.seq).sort((x, y) => x - y);
      const transcript = await stores.get(la)!.load(key);
      expect(transcript.map((e) => (e.message.content[0] as { text: string }).text)).toEqual(order.map(text));
      // Every message's turn saw exactly the messages placed before it.
      expect(order.map((seq) => seen.get(seq))).toEqual(order.map((_, i) => i));
      // The last release waits for the instance's next write (see `Leases.hold`): flushed to look at the line.
      await Promise.all([la.flush(), lb.flush()]);
      expect(await a.db.value('SELECT COUNT(*) FROM lease_queue')).toBe(0);
    }
    await stop();
  });

  /** The message's write as the gateway asks for it with its place. */
  const said = (text: string) => ({ kind: 'message' as const, message: { role: 'user' as const, content: [{ type: 'text' as const, text }] }, sender: { id: 'U1', name: 'alice' } });
  const texts = async (t: DbTranscriptStore, key: string) => (await t.load(key)).map((e) => (e.message.content[0] as { text: string }).text);

  it('writes the message with the place that takes the lease (before the read alongside, which sees it), marks the place written; a place without the lease writes nothing', async () => {
    const { a, b, la, lb, stop } = await twoInstances(engine);
    const ta = new DbTranscriptStore(a.db);
    const tb = new DbTranscriptStore(b.db);
    await ta.append('k', [said('earlier')]);
    const write = ta.guardedAppend('k', said('hello'));
    const read = ta.loadSteps('k');
    const idle = await la.place('session:k', '{"m":1}', true, read.steps, write.steps);
    expect(idle.lease).toBeDefined();
    const seq = write.seq(idle.written!);
    expect(seq).toBeDefined();
    const started = await read.read(idle.alongside!);
    expect(started.entries.map((e) => [e.seq, (e.message.content[0] as { text: string }).text])).toEqual([
      [started.entries[0]!.seq, 'earlier'],
      [seq, 'hello'],
    ]);
    expect(started.entries[1]!.sender).toEqual({ id: 'U1', name: 'alice' });
    expect(Number(await a.db.value('SELECT written FROM lease_queue WHERE seq = ?', [idle.seq]))).toBe(1);
    // Found by sessions_search at once.
    expect((await ta.search({ sessionKeys: ['k'], terms: ['hello'], limit: 5, offset: 0 })).map((h) => h.seq)).toEqual([seq]);
    // Busy on A: B's message goes to A with no lease, and is not written (its turn writes it, in its turn).
    const other = tb.guardedAppend('k', said('second'));
    const busy = await lb.place('session:k', '{"m":2}', true, tb.loadSteps('k').steps, other.steps);
    expect(busy).toMatchObject({ holder: 'inst-a', here: false });
    expect(busy.lease).toBeUndefined();
    expect(busy.written).toBeUndefined();
    expect(Number(await a.db.value('SELECT written FROM lease_queue WHERE seq = ?', [busy.seq]))).toBe(0);
    expect(await texts(ta, 'k')).toEqual(['earlier', 'hello']);
    // A place behind this instance's own earlier one takes no lease and writes nothing either.
    const behind = await la.place('session:k', '{"m":3}', true, [], ta.guardedAppend('k', said('third')).steps);
    expect(behind.lease).toBeUndefined();
    expect(await texts(ta, 'k')).toEqual(['earlier', 'hello']);
    expect(await a.db.value("SELECT COUNT(*) FROM sessions WHERE key = 'k'")).toBe(1);
    await stop();
  });

  it("a failure in the message's write fails the whole write with a BatchStepError naming its step; nothing of it stays", async () => {
    const { a, la, stop } = await twoInstances(engine);
    await refuseInserts(a.db, 'transcript_entries');
    const t = new DbTranscriptStore(a.db);
    const error = await la.place('session:k', '{"m":1}', true, t.loadSteps('k').steps, t.guardedAppend('k', said('hello')).steps).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BatchStepError);
    // [the line's lock (PostgreSQL)], the place, the lease (SQLite: and its mark), the message.
    expect((error as BatchStepError).step).toBe(3);
    expect(await a.db.value('SELECT COUNT(*) FROM lease_queue')).toBe(0);
    expect(await a.db.value('SELECT COUNT(*) FROM leases')).toBe(0);
    expect(await a.db.value('SELECT COUNT(*) FROM sessions')).toBe(0);
    await stop();
  });

  it('an instance that dies after the message was written with its place leaves the place marked: the survivor takes it over as written', async () => {
    const { a, la, lb, ra, stop } = await twoInstances(engine);
    const t = new DbTranscriptStore(a.db);
    const placed = await la.place('session:k', '{"m":1}', true, [], t.guardedAppend('k', said('hello')).steps);
    expect(placed.lease).toBeDefined();
    const unwritten = await la.place('session:k', '{"m":2}', true, [], t.guardedAppend('k', said('queued')).steps);
    expect(unwritten.lease).toBeUndefined();
    // A dies during the model call: its heartbeat stops and its lease runs out (its rows stay, as after a SIGKILL).
    clearInterval((ra as unknown as { timer: NodeJS.Timeout }).timer);
    await a.db.run('UPDATE instances SET lease_until = 0 WHERE id = ?', ['inst-a']);
    const taken = await lb.takeOver();
    expect(taken.map((p) => [p.payload, p.written === true])).toEqual([
      ['{"m":1}', true],
      ['{"m":2}', false],
    ]);
    expect(await texts(t, 'k')).toEqual(['hello']);
    await stop();
  });
});
