// Both store engines for the store tests: the embedded SQLite file in a temporary data dir and a
// fresh database on the test run's PostgreSQL cluster (see global-setup.ts).
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import type { StoreEngine } from '../src/store/db.js';

export const ENGINES: readonly StoreEngine[] = ['sqlite', 'postgres'];

/** `store.url` and data dir for a new, empty store on `engine`. */
export async function freshStoreTarget(engine: StoreEngine): Promise<{ dataDir: string; url: string | undefined }> {
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
