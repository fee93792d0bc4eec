// Two instances on one fresh store, each with its registry started and its session leases, as
// two `warden start` processes sharing the store hold them (the store-level cluster tests).
import { InstanceRegistry } from '../../src/cluster/instances.js';
import { Leases, type LeaseOptions } from '../../src/cluster/leases.js';
import type { Db, StoreEngine } from '../../src/store/db.js';
import type { TestStores } from '../store-engines.js';

/**
 * `options`: the leases' own (`ttlMs` default 5 s); `wrap`: what each lease set's handle on the
 * store is (a stand-in around it that counts or fails batches).
 */
export async function leasedInstances(stores: TestStores, engine: StoreEngine, options: Partial<Omit<LeaseOptions, 'holder'>> = {}, wrap: (db: Db) => Db = (db) => db) {
  const [a, b] = await stores.handles(engine, 2);
  const ra = new InstanceRegistry(a.db, { leaseMs: 5_000, role: 'server', id: 'inst-a' });
  const rb = new InstanceRegistry(b.db, { leaseMs: 5_000, role: 'server', id: 'inst-b' });
  await ra.start();
  await rb.start();
  const la = new Leases(wrap(a.db), { ttlMs: 5_000, ...options, holder: 'inst-a' });
  const lb = new Leases(wrap(b.db), { ttlMs: 5_000, ...options, holder: 'inst-b' });
  const stop = () => Promise.all([la.close(), lb.close(), ra.stop(), rb.stop()]);
  return { a, b, ra, rb, la, lb, stop };
}
