// Writes riding with a conversation's next batch, on both engines: carried, they commit in its
// transaction (one commit); otherwise, and whenever the carrier was taken back whole, they are
// written alone, once; a carrier whose outcome is unknown (the connection failed) takes them
// with it and they are not written again.
import { describe, expect, it } from 'vitest';
import { ENGINES, useTestStores } from '../../test/store-engines.js';
import { BatchStepError, type BatchStep, type Db } from './db.js';
import { carryingBatch, rideAlong } from './ride-along.js';

const testStores = useTestStores();

async function scratch(engine: (typeof ENGINES)[number]): Promise<Db> {
  const [store] = await testStores.handles(engine, 1);
  await store.db.exec('CREATE TABLE ride_test (id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
  return store.db;
}

const put = (id: number, v: string): BatchStep => ({ sql: 'INSERT INTO ride_test (id, v) VALUES (?, ?)', params: [id, v] });
const rows = async (db: Db) => (await db.all<{ id: number; v: string }>('SELECT id, v FROM ride_test ORDER BY id')).map((r) => [Number(r.id), r.v]);
/** Commits (transactions and batches) `db` runs while `fn` does. */
async function commits(db: Db, fn: () => Promise<unknown>): Promise<number> {
  let n = 0;
  db.observe((op, _ms, ok) => void (op === 'tx' && ok && n++));
  try {
    await fn();
    await new Promise((r) => setImmediate(r));
  } finally {
    db.observe(undefined);
  }
  return n;
}

describe.each(ENGINES)('writes riding with the next batch on %s', (engine) => {
  it("commit in the batch of the same key issued in this turn of the event loop: one commit, each caller its own results", async () => {
    const db = await scratch(engine);
    let rider: Promise<unknown> | undefined;
    const n = await commits(db, async () => {
      rider = rideAlong(db, 's1', [put(2, 'usage')]);
      const own = await carryingBatch(db, 's1', [put(1, 'reply')]);
      expect(own).toHaveLength(1);
      expect(await rider).toEqual([{ rows: [], changes: 1 }]);
    });
    expect(n).toBe(1);
    expect(await rows(db)).toEqual([[1, 'reply'], [2, 'usage']]);
  });

  it('another key does not carry them, nor does a batch issued later: they are written alone, once', async () => {
    const db = await scratch(engine);
    const n = await commits(db, async () => {
      const rider = rideAlong(db, 's1', [put(2, 'usage')]);
      await carryingBatch(db, 's2', [put(1, 'other conversation')]);
      await rider;
      await carryingBatch(db, 's1', [put(3, 'later')]);
    });
    expect(n).toBe(3);
    expect(await rows(db)).toEqual([[1, 'other conversation'], [2, 'usage'], [3, 'later']]);
  });

  it('a carrier that fails at its own step is taken back whole: the rider is written alone, the carrier fails', async () => {
    const db = await scratch(engine);
    await db.batch([put(1, 'there already')]);
    const rider = rideAlong(db, 's1', [put(2, 'usage')]);
    const carried = carryingBatch(db, 's1', [put(1, 'clash')]);
    await expect(carried).rejects.toBeInstanceOf(BatchStepError);
    await expect(carried).rejects.toMatchObject({ step: 0 });
    await rider;
    expect(await rows(db)).toEqual([[1, 'there already'], [2, 'usage']]);
  });

  it('a rider whose own step fails costs the carrier nothing: its steps are written alone, the rider fails', async () => {
    const db = await scratch(engine);
    await db.batch([put(2, 'there already')]);
    const rider = rideAlong(db, 's1', [put(2, 'clash')]);
    rider.catch(() => undefined);
    expect(await carryingBatch(db, 's1', [put(1, 'reply')])).toEqual([{ rows: [], changes: 1 }]);
    await expect(rider).rejects.toBeInstanceOf(BatchStepError);
    expect(await rows(db)).toEqual([[1, 'reply'], [2, 'there already']]);
  });

  it('a carrier whose outcome is unknown (its connection failed) takes the rider with it: never sent a second time', async () => {
    const db = await scratch(engine);
    const batch = db.batch.bind(db);
    let sent = 0;
    db.batch = async (steps) => {
      sent++;
      throw new Error('Connection terminated unexpectedly');
    };
    const rider = rideAlong(db, 's1', [put(2, 'usage')]);
    rider.catch(() => undefined);
    await expect(carryingBatch(db, 's1', [put(1, 'reply')])).rejects.toThrow('Connection terminated');
    await expect(rider).rejects.toThrow('Connection terminated');
    await new Promise((r) => setImmediate(r));
    expect(sent).toBe(1);
    db.batch = batch;
    expect(await rows(db)).toEqual([]);
  });

  it('inside a transaction nothing rides (the transaction may still be taken back): the rider is written alone', async () => {
    const db = await scratch(engine);
    const rider = rideAlong(db, 's1', [put(2, 'usage')]);
    await expect(
      db.tx(async () => {
        await carryingBatch(db, 's1', [put(1, 'reply')]);
        throw new Error('taken back');
      }),
    ).rejects.toThrow('taken back');
    await rider;
    expect(await rows(db)).toEqual([[2, 'usage']]);
  });
});
