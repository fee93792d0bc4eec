import { afterEach, describe, expect, it } from 'vitest';
import { ENGINES, freshStoreTarget } from '../../test/store-engines.js';
import { openWardenStore } from '../app/migrations.js';
import type { Store } from '../store/store.js';
import { InstanceRegistry } from './instances.js';
import { Leases } from './leases.js';
import { until } from '../../test/until.js';

const stores: Store[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

/** Two handles on one fresh store, as two instances would open it. */
async function twoHandles(engine: (typeof ENGINES)[number]): Promise<[Store, Store]> {
  const target = await freshStoreTarget(engine);
  const open = async () => {
    const opened = await openWardenStore(target);
    if (!opened.ok) throw new Error(opened.error.message);
    stores.push(opened.store);
    return opened.store;
  };
  return [await open(), await open()];
}

describe.each(ENGINES)('leases on %s', (engine) => {
  it('one holder at a time; a release hands over to the waiter; the old generation can no longer renew or release', async () => {
    const [a, b] = await twoHandles(engine);
    const la = new Leases(a.db, { ttlMs: 5_000, holder: 'A' });
    const lb = new Leases(b.db, { ttlMs: 5_000, holder: 'B' });
    const held = (await la.tryAcquire('session:x'))!;
    expect(held.generation).toBe(1);
    expect(await lb.tryAcquire('session:x')).toBeUndefined();
    const order: string[] = [];
    const waiting = lb.hold('session:x', new AbortController().signal, async () => {
      order.push('B runs');
    });
    await new Promise((r) => setTimeout(r, 100));
    order.push('A releases');
    await la.release(held);
    await waiting;
    expect(order).toEqual(['A releases', 'B runs']);
    // B's hold took generation 2 and released it; A's stale lease is nothing now.
    expect(await la.renew(held)).toBe(false);
    expect(await la.holds(held)).toBe(false);
    await la.close();
    await lb.close();
  });

  it('an expired lease is taken over; its old holder learns it lost the lease at the next renewal and its work is aborted', async () => {
    const [a, b] = await twoHandles(engine);
    const la = new Leases(a.db, { ttlMs: 300, holder: 'A' });
    const lb = new Leases(b.db, { ttlMs: 300, holder: 'B' });
    const stale = (await la.tryAcquire('cron:job'))!;
    // A "pauses" past its expiry: B takes the lease over.
    await until(async () => (await lb.tryAcquire('cron:job')) !== undefined);
    expect(await la.renew(stale)).toBe(false);
    await la.release(stale);
    expect(await lb.holds({ name: 'cron:job', generation: stale.generation + 1 })).toBe(true);

    // A holder whose renewal fails stops its work instead of running on beside the new holder.
    const [c, d] = await twoHandles(engine);
    const lc = new Leases(c.db, { ttlMs: 300, holder: 'C' });
    const ld = new Leases(d.db, { ttlMs: 300, holder: 'D' });
    let aborted: unknown;
    const work = lc.hold('session:y', new AbortController().signal, (signal) => new Promise<void>((resolve) => signal.addEventListener('abort', () => ((aborted = signal.reason), resolve()))));
    await until(async () => (await c.db.value('SELECT 1 FROM leases WHERE name = ?', ['session:y'])) !== undefined);
    // Another instance deletes and retakes it (as after an expiry while C was paused).
    await d.db.run('UPDATE leases SET expires_at = 0 WHERE name = ?', ['session:y']);
    expect(await ld.tryAcquire('session:y')).toBeDefined();
    await work;
    expect(String(aborted)).toMatch(/lost its lease/);
    for (const l of [la, lb, lc, ld]) await l.close();
  });

  it('instances are live while their heartbeat runs and dead once their lease runs out', async () => {
    const [a, b] = await twoHandles(engine);
    const ia = new InstanceRegistry(a.db, { leaseMs: 400, role: 'server' });
    const ib = new InstanceRegistry(b.db, { leaseMs: 400, role: 'server' });
    await ia.start();
    await ib.start();
    expect((await ia.live()).map((i) => i.id).sort()).toEqual([ia.id, ib.id].sort());
    await new Promise((r) => setTimeout(r, 900));
    // Heartbeats kept both alive past their first lease.
    expect(await ia.isLive(ib.id)).toBe(true);
    // B stops beating without removing its row (as a killed process would).
    (ib as unknown as { timer: NodeJS.Timeout }).timer && clearInterval((ib as unknown as { timer: NodeJS.Timeout }).timer);
    await until(async () => !(await ia.isLive(ib.id)), 5_000);
    await ia.stop();
    expect(await ib.isLive(ia.id)).toBe(false);
  });
});
