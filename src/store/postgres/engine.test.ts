import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { freshStoreTarget } from '../../../test/store-engines.js';
import { laneHeldUp, PostgresDb } from './engine.js';

describe('a lane is held up when it has gone quiet, not when its queue is long', () => {
  // now = 100 ms throughout; the stall is 10 ms.
  const cases: Array<[string, number[], number, boolean]> = [
    ['nothing unanswered', [], 0, false],
    ['nothing unanswered, the last answer long ago', [], 20, false],
    ['its oldest statement written 5 ms ago, no answer yet', [95], 0, false],
    ['its oldest statement written 10 ms ago, no answer since', [90, 99], 0, true],
    ['its oldest statement written 40 ms ago, the lane answered 3 ms ago (busy, not stuck)', [60, 80, 99], 97, false],
    ['its oldest statement written 40 ms ago, the lane last answered 15 ms ago (stuck behind it)', [60, 80, 99], 85, true],
    ['answered 30 ms ago, then a statement written 2 ms ago', [98], 70, false],
  ];
  it.each(cases)('%s', (_, pending, answeredAt, heldUp) => {
    expect(laneHeldUp({ pending, answeredAt }, 100)).toBe(heldUp);
  });
});

describe('lanes on PostgreSQL', () => {
  const open: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.close()));
  });
  async function db(laneStallMs?: number): Promise<{ db: PostgresDb; url: string }> {
    const { url } = await freshStoreTarget('postgres');
    const store = new PostgresDb({ connectionString: url!, ...(laneStallMs !== undefined ? { laneStallMs } : {}) });
    open.push(store);
    return { db: store, url: url! };
  }

  it('keeps statements on a lane that keeps answering, however long its queue: one connection', async () => {
    // A stall of 1 s against answers every 150 ms: a loaded machine does not decide the outcome.
    const { db: store } = await db(1_000);
    const first = await store.value<number>('SELECT pg_backend_pid()');
    const queue = Array.from({ length: 12 }, () => store.value<number>('SELECT pg_backend_pid() FROM pg_sleep(0.15)'));
    // 1.2 s on: the oldest unanswered statement is older than the stall, yet the lane answered moments ago.
    await new Promise((r) => setTimeout(r, 1_200));
    const later = await store.value<number>('SELECT pg_backend_pid()');
    expect(new Set([first, later, ...(await Promise.all(queue))])).toEqual(new Set([first]));
  });

  it('passes over a lane whose statement waits on a lock: what comes after it is answered meanwhile', async () => {
    const { db: store, url } = await db();
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    open.push({ close: () => holder.end() });
    await holder.query('SELECT pg_advisory_lock(4242)');
    const waiting = store.value('SELECT 1 FROM pg_advisory_xact_lock(4242)');
    let done = false;
    void waiting.then(() => (done = true));
    await new Promise((r) => setTimeout(r, 100));
    expect(await store.value<number>('SELECT 7')).toBe(7);
    expect(done).toBe(false);
    await holder.query('SELECT pg_advisory_unlock(4242)');
    expect(await waiting).toBe(1);
  });
});
