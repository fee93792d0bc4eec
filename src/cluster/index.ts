import type { Store } from '../store/store.js';
import { InstanceRegistry } from './instances.js';
import { INBOX_CHANNEL, Leases } from './leases.js';

export { InstanceRegistry } from './instances.js';
export { INBOX_CHANNEL, LEASE_CHANNEL, Leases, STOP_CHANNEL, leaseDigest, type ClaimedPlace, type HeldLease, type Place } from './leases.js';
export { clusterMigrations } from './migrations.js';
export { SharedDeliveries } from './deliveries.js';

/** This instance among others on a shared store: its registry row and its leases. */
export interface Cluster {
  instances: InstanceRegistry;
  leases: Leases;
  stop(): Promise<void>;
}

/**
 * Joins the instances sharing the store (PostgreSQL), its heartbeat running; undefined on an
 * unshared store (SQLite), where this process is the only server and nothing is leased.
 */
export async function joinCluster(store: Store, options: { leaseSec: number; role: 'server' | 'cli' }): Promise<Cluster | undefined> {
  if (!store.db.shared) return undefined;
  const leaseMs = Math.round(options.leaseSec * 1000);
  const instances = new InstanceRegistry(store.db, { leaseMs, role: options.role });
  await instances.start();
  const leases = new Leases(store.db, { ttlMs: leaseMs, holder: instances.id });
  return {
    instances,
    leases,
    stop: async () => {
      await leases.close();
      await instances.stop();
      // Places forwarded here and not picked up: the others take them over now, not at their next sweep.
      if (store.db.open) await store.db.notify(INBOX_CHANNEL, '*').catch(() => undefined);
    },
  };
}
