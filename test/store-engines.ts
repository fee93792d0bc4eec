// Both store engines for the store tests: the embedded SQLite file in a temporary data dir and a
// fresh database on the test run's PostgreSQL cluster (see global-setup.ts).
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterEach, inject } from 'vitest';
import { openWardenStore } from '../src/app/migrations.js';
import type { StoreEngine } from '../src/store/db.js';
import type { Store } from '../src/store/store.js';

export const ENGINES: readonly StoreEngine[] = ['sqlite', 'postgres'];

export interface StoreTarget {
  dataDir: string;
  url: string | undefined;
}

/** `store.url` and data dir for a new, empty store on `engine`. */
export async function freshStoreTarget(engine: StoreEngine): Promise<StoreTarget> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'warden-store-'));
  if (engine === 'sqlite') return { dataDir, url: undefined };
  const admin = new URL(inject('postgresUrl'));
  const name = `t_${randomUUID().replace(/-/g, '')}`;
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  admin.pathname = `/${name}`;
  return { dataDir, url: admin.toString() };
}

/** Opens the migrated Warden store at `target`, as an instance does at start; throws on failure. */
export async function openStore(target: StoreTarget): Promise<Store> {
  const opened = await openWardenStore({ dataDir: target.dataDir, url: target.url });
  if (!opened.ok) throw new Error(opened.error.message);
  return opened.store;
}

/** A tuple of `N` store handles (`N` a small literal). */
export type StoreHandles<N extends number, R extends Store[] = []> = R['length'] extends N ? R : StoreHandles<N, [...R, Store]>;

export interface TestStores {
  /** A handle on the store at `target` (one per instance sharing it); closed after the test. */
  open(target: StoreTarget): Promise<Store>;
  /** A new, empty store on `engine`, and an opener of handles on it. */
  fresh(engine: StoreEngine): Promise<{ target: StoreTarget; open: () => Promise<Store> }>;
  /** `count` handles on one new store on `engine`, as `count` instances open it. */
  handles<N extends number>(engine: StoreEngine, count: N): Promise<StoreHandles<N>>;
}

/**
 * Store handles for the tests of the suite it is called in: each is closed after its test (an
 * `afterEach` registered here), so a test only says how many instances share which store.
 */
export function useTestStores(): TestStores {
  const opened: Store[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((s) => s.close()));
  });
  const open = async (target: StoreTarget) => {
    const store = await openStore(target);
    opened.push(store);
    return store;
  };
  const fresh = async (engine: StoreEngine) => {
    const target = await freshStoreTarget(engine);
    return { target, open: () => open(target) };
  };
  return {
    open,
    fresh,
    async handles(engine, count) {
      const store = await fresh(engine);
      const out: Store[] = [];
      for (let i = 0; i < count; i++) out.push(await store.open());
      return out as StoreHandles<typeof count>;
    },
  };
}
