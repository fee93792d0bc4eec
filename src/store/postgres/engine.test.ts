import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { freshStoreTarget } from '../../../test/store-engines.js';
import { PostgresDb } from './engine.js';

describe('lanes on PostgreSQL', () => {
  const open: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.close()));
  });
  async function db(): Promise<{ db: PostgresDb; url: string }> {
    const { url } = await freshStoreTarget('postgres');
    const store = new PostgresDb({ connectionString: url! });
    open.push(store);
    return { db: store, url: url! };
  }

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
