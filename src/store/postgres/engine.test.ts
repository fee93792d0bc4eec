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

/** The extended-protocol messages' codes in what the lanes wrote (each message: code, int32 length, body). */
function messageCodes(writes: Buffer[]): string {
  let codes = '';
  for (const buf of writes) {
    for (let at = 0; at < buf.length; at += 1 + buf.readInt32BE(at + 1)) codes += String.fromCharCode(buf[at]!);
  }
  return codes;
}

describe('batches on PostgreSQL: columns learnt once per connection', () => {
  const open: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.close()));
  });
  /** A store with one lane, and what that lane writes from now on. */
  async function watched(): Promise<{ db: PostgresDb; writes: Buffer[] }> {
    const { url } = await freshStoreTarget('postgres');
    const db = new PostgresDb({ connectionString: url!, poolMax: 2 });
    open.push(db);
    await db.exec('CREATE TABLE things (id TEXT PRIMARY KEY, n BIGINT NOT NULL, note TEXT)');
    await db.batch([{ sql: 'SELECT 1', params: [] }]);
    const lane = (db as unknown as { lanes: Array<{ client: { connection: { stream: { write(b: Buffer): boolean } } } }> }).lanes[0]!;
    const stream = lane.client.connection.stream;
    const writes: Buffer[] = [];
    const write = stream.write.bind(stream);
    stream.write = (b: Buffer) => (writes.push(b), write(b));
    return { db, writes };
  }

  it("describes a statement on its first run only; later runs read rows with the columns' names and types learnt then", async () => {
    const { db, writes } = await watched();
    const insert = { sql: 'INSERT INTO things (id, n, note) VALUES (?, ?, ?)', params: ['a', 7, null] };
    const select = { sql: 'SELECT id, n, note FROM things WHERE id = ?', params: ['a'] };
    expect(await db.batch([insert, select])).toEqual([
      { rows: [], changes: 1 },
      { rows: [{ id: 'a', n: 7, note: null }], changes: 1 },
    ]);
    // First run: Parse, Bind, Describe, Execute for each, one Sync.
    expect(messageCodes(writes.splice(0))).toBe('PBDEPBDES');
    expect(await db.batch([{ ...insert, params: ['b', 8, 'x'] }, { ...select, params: ['b'] }])).toEqual([
      { rows: [], changes: 1 },
      { rows: [{ id: 'b', n: 8, note: 'x' }], changes: 1 },
    ]);
    // Prepared and described: Bind and Execute alone.
    expect(messageCodes(writes.splice(0))).toBe('BEBES');
    // A statement new to the connection beside known ones is described alone.
    expect(await db.batch([{ ...select, params: ['a'] }, { sql: 'SELECT COUNT(*) AS many FROM things', params: [] }])).toEqual([
      { rows: [{ id: 'a', n: 7, note: null }], changes: 1 },
      { rows: [{ many: 2 }], changes: 1 },
    ]);
    expect(messageCodes(writes.splice(0))).toBe('BEPBDES');
  });

  it('a schema change under a described statement fails that statement (the server refuses it), never misreads its rows', async () => {
    const { db } = await watched();
    await db.run('INSERT INTO things (id, n) VALUES (?, ?)', ['a', 1]);
    const all = { sql: 'SELECT * FROM things WHERE id = ?', params: ['a'] };
    expect((await db.batch([all]))[0]!.rows).toEqual([{ id: 'a', n: 1, note: null }]);
    await db.exec('ALTER TABLE things ADD COLUMN extra TEXT');
    await expect(db.batch([all])).rejects.toThrow(/cached plan must not change result type/);
  });

  it('a batch that failed before a new statement ran leaves it undescribed: described on its next run', async () => {
    const { db, writes } = await watched();
    const failing = { sql: 'INSERT INTO things (id, n) VALUES (?, ?)', params: ['a', null] };
    const after = { sql: 'SELECT n FROM things WHERE id = ?', params: ['a'] };
    await expect(db.batch([failing, after])).rejects.toThrow(/null value/);
    writes.splice(0);
    expect(await db.batch([{ ...failing, params: ['a', 3] }, after])).toEqual([
      { rows: [], changes: 1 },
      { rows: [{ n: 3 }], changes: 1 },
    ]);
    // The insert was parsed and described before it failed; the select never was.
    expect(messageCodes(writes)).toBe('BDEPBDES');
  });
});
