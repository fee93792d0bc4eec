// The delivery log a platform's retries are checked against: on either engine a key is new
// once, keys are remembered together, an expired key is new again; on PostgreSQL two instances
// racing with one delivery get it exactly once.
import { afterEach, describe, expect, it } from 'vitest';
import { ENGINES, freshStoreTarget } from '../../test/store-engines.js';
import { openWardenStore } from '../app/migrations.js';
import type { Store } from '../store/store.js';
import { SharedDeliveries } from './deliveries.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function open(target: { dataDir: string; url: string | undefined }): Promise<Store> {
  const opened = await openWardenStore(target);
  if (!opened.ok) throw new Error(opened.error.message);
  cleanups.push(() => opened.store.close());
  return opened.store;
}

describe.each(ENGINES)('SharedDeliveries on %s', (engine) => {
  it('a key is new once; a delivery sharing any key with an earlier one is a repeat; every key is remembered', async () => {
    const log = new SharedDeliveries((await open(await freshStoreTarget(engine))).db);
    expect(await log.firstTime(['slack:event:T:Ev1', 'slack:message:T:C:1.1'])).toBe(true);
    expect(await log.firstTime(['slack:event:T:Ev1', 'slack:message:T:C:1.1'])).toBe(false);
    // The app_mention twin of a message: another event id, the same message.
    expect(await log.firstTime(['slack:event:T:Ev2', 'slack:message:T:C:1.1'])).toBe(false);
    // ...and its own retry is a repeat too, its event id remembered though the delivery was skipped.
    expect(await log.firstTime(['slack:event:T:Ev2'])).toBe(false);
    expect(await log.firstTime(['slack:event:T:Ev3'])).toBe(true);
    expect(await log.firstTime([])).toBe(true);
  });

  it('an expired key is new again, and pruning deletes only expired keys', async () => {
    const store = await open(await freshStoreTarget(engine));
    const brief = new SharedDeliveries(store.db, 50);
    expect(await brief.firstTime(['k1'])).toBe(true);
    expect(await brief.firstTime(['k1'])).toBe(false);
    await new Promise((r) => setTimeout(r, 120));
    expect(await brief.firstTime(['k1'])).toBe(true);
    await new SharedDeliveries(store.db).firstTime(['k2']);
    await new Promise((r) => setTimeout(r, 120));
    expect(await brief.prune()).toBe(1);
    expect(await store.db.all('SELECT key FROM delivered_events')).toEqual([{ key: 'k2' }]);
  });
});

describe('SharedDeliveries across instances (PostgreSQL)', () => {
  it('two instances racing with the same deliveries: each is new for exactly one of them', async () => {
    const target = await freshStoreTarget('postgres');
    const a = new SharedDeliveries((await open(target)).db);
    const b = new SharedDeliveries((await open(target)).db);
    const ROUNDS = 40;
    const results = await Promise.all(
      Array.from({ length: ROUNDS }, (_, i) => {
        // Even rounds: a retry (same keys); odd rounds: a message and its app_mention twin (one shared key).
        const first = [`e${i}`, `m${i}`];
        const second = i % 2 === 0 ? first : [`e${i}-twin`, `m${i}`];
        return Promise.all([a.firstTime(first), b.firstTime(second)]);
      }),
    );
    for (const pair of results) expect(pair.filter(Boolean)).toHaveLength(1);
  });
});
