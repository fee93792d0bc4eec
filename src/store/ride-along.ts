import { BatchStepError, type BatchResult, type BatchStep, type Db } from './db.js';

/**
 * Writes that need not commit on their own: they ride with the next batch a caller sends for the
 * same key (a conversation) in this turn of the event loop, in its transaction — one commit for
 * both instead of two. A model call's usage record is one: issued as the answer returns, it
 * commits with the answer's transcript write that follows at once.
 *
 * What a rider is promised is what a write of its own would give: committed once, or failed.
 * - Carried and committed: resolved with its steps' results.
 * - Nobody carried it before the event loop's check phase: sent alone then, as its own batch.
 * - The carrying batch failed at one of its steps (`BatchStepError`: the engine took the whole
 *   transaction back, nothing of it stays): the rider is sent alone, so a transcript write that
 *   fails never costs the usage record; and when the rider's own step was the one that failed,
 *   the carrier's steps are sent again alone, so a usage record that cannot be written never
 *   costs the transcript write.
 * - The carrying batch failed otherwise (the connection went: it may or may not have committed):
 *   the rider fails with it and is not sent again, so it is never written twice. A write of its
 *   own on that connection would have failed the same way.
 * If the process dies before the carrier commits, neither is written; after, both are.
 */
interface Rider {
  steps: readonly BatchStep[];
  resolve(results: BatchResult[]): void;
  reject(err: unknown): void;
}

const waiting = new WeakMap<Db, Map<string, Rider[]>>();

/** Sends `steps` with the next `carryingBatch(db, key, …)` of this turn of the event loop, or alone at its check phase. */
export function rideAlong(db: Db, key: string, steps: readonly BatchStep[]): Promise<BatchResult[]> {
  // Inside a transaction the steps join it, as any statement issued there does.
  if (db.inTransaction) return db.batch(steps);
  return new Promise<BatchResult[]>((resolve, reject) => {
    const rider: Rider = { steps, resolve, reject };
    let byKey = waiting.get(db);
    if (!byKey) waiting.set(db, (byKey = new Map()));
    const list = byKey.get(key);
    if (list) list.push(rider);
    else byKey.set(key, [rider]);
    setImmediate(() => {
      if (unlist(db, key, rider)) sendAlone(db, rider);
    });
  });
}

/**
 * `db.batch(steps)`, carrying the riders waiting for `key`; resolves to `steps`' own results.
 * Inside a transaction nothing rides: the transaction may still be rolled back after this batch,
 * and a rider told it committed would be lost.
 */
export async function carryingBatch(db: Db, key: string, steps: readonly BatchStep[]): Promise<BatchResult[]> {
  const riders = db.inTransaction ? [] : take(db, key);
  if (riders.length === 0) return db.batch(steps);
  let results: BatchResult[];
  try {
    results = await db.batch([...steps, ...riders.flatMap((r) => r.steps)]);
  } catch (err) {
    if (!(err instanceof BatchStepError)) {
      for (const rider of riders) rider.reject(err);
      throw err;
    }
    for (const rider of riders) sendAlone(db, rider);
    if (err.step < steps.length) throw err;
    return db.batch(steps);
  }
  let at = steps.length;
  for (const rider of riders) {
    rider.resolve(results.slice(at, at + rider.steps.length));
    at += rider.steps.length;
  }
  return results.slice(0, steps.length);
}

function take(db: Db, key: string): Rider[] {
  const byKey = waiting.get(db);
  const list = byKey?.get(key);
  if (!list) return [];
  byKey!.delete(key);
  return list;
}

function unlist(db: Db, key: string, rider: Rider): boolean {
  const byKey = waiting.get(db);
  const list = byKey?.get(key);
  const at = list?.indexOf(rider) ?? -1;
  if (at < 0) return false;
  list!.splice(at, 1);
  if (list!.length === 0) byKey!.delete(key);
  return true;
}

function sendAlone(db: Db, rider: Rider): void {
  db.batch(rider.steps).then(rider.resolve, rider.reject);
}
