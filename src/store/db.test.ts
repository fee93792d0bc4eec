import { afterEach, describe, expect, it } from 'vitest';
import { ENGINES, freshStoreTarget } from '../../test/store-engines.js';
import { WARDEN_MIGRATIONS } from '../app/migrations.js';
import { BatchStepError, type Db } from './db.js';
import { migrationsFor, type Migration } from './migrations.js';
import { openStore, type Store } from './store.js';

const open: Store[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

const THINGS: Migration = {
  id: 'test-001-things',
  async up(db) {
    await db.exec('CREATE TABLE things (id TEXT PRIMARY KEY, n BIGINT NOT NULL, note TEXT, seq INTEGER)');
  },
};

async function storeOn(engine: (typeof ENGINES)[number], migrations: readonly Migration[] = [THINGS], target?: { dataDir: string; url: string | undefined }): Promise<Store> {
  const where = target ?? (await freshStoreTarget(engine));
  const result = await openStore({ dataDir: where.dataDir, url: where.url, migrations });
  if (!result.ok) throw new Error(result.error.message);
  open.push(result.store);
  return result.store;
}

describe.each(ENGINES)('the store interface on %s', (engine) => {
  it('runs the same statements: positional and named parameters, RETURNING, ON CONFLICT, IS DISTINCT FROM', async () => {
    const { db } = await storeOn(engine);
    expect(await db.run('INSERT INTO things (id, n, note) VALUES (?, ?, ?)', ['a', 1, 'x'])).toEqual({ changes: 1 });
    expect(await db.get('INSERT INTO things (id, n, note) VALUES (@id, @n, @note) RETURNING id, n', { id: 'b', n: 2, note: null })).toEqual({ id: 'b', n: 2 });
    expect((await db.run('INSERT INTO things (id, n) VALUES (?, ?) ON CONFLICT (id) DO NOTHING', ['a', 9])).changes).toBe(0);
    await db.run('INSERT INTO things (id, n) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET n = excluded.n', ['a', 10]);
    expect(await db.value('SELECT n FROM things WHERE id = ?', ['a'])).toBe(10);
    expect(await db.all('SELECT id FROM things WHERE note IS NOT DISTINCT FROM ? ORDER BY id', [null])).toEqual([{ id: 'b' }]);
    expect(await db.get('SELECT COUNT(*) AS "howMany" FROM things')).toEqual({ howMany: 2 });
    expect(await db.value('SELECT n FROM things WHERE id = ?', ['missing'])).toBeUndefined();
  });

  it('runs a batch as one transaction: each step\'s rows and changes in order, its notification at commit', async () => {
    const { db } = await storeOn(engine);
    await db.run('INSERT INTO things (id, n) VALUES (?, ?)', ['a', 1]);
    const heard: Array<string | undefined> = [];
    const off = await db.listen('things_changed', (payload) => heard.push(payload));
    const results = await db.batch([
      { sql: 'UPDATE things SET n = n + 1 WHERE id = ?', params: ['a'] },
      { sql: 'INSERT INTO things (id, n) VALUES (@id, @n) RETURNING id, n', params: { id: 'b', n: 2 } },
      { notify: 'things_changed', payload: 'a,b' },
      { sql: 'DELETE FROM things WHERE id = ?', params: ['missing'] },
    ]);
    expect(results).toEqual([
      { rows: [], changes: 1 },
      { rows: [{ id: 'b', n: 2 }], changes: 1 },
      { rows: [], changes: 0 },
      { rows: [], changes: 0 },
    ]);
    expect(await db.all('SELECT id, n FROM things ORDER BY id')).toEqual([
      { id: 'a', n: 2 },
      { id: 'b', n: 2 },
    ]);
    await expect.poll(() => heard).toEqual(['a,b']);
    await off();
  });

  it('rolls a whole batch back when one step fails, tells no one, and the store stays usable', async () => {
    const { db } = await storeOn(engine);
    const heard: Array<string | undefined> = [];
    const off = await db.listen('things_changed', (payload) => heard.push(payload));
    await expect(
      db.batch([
        { sql: 'INSERT INTO things (id, n) VALUES (?, ?)', params: ['x', 1] },
        { notify: 'things_changed', payload: 'x' },
        { sql: 'INSERT INTO things (id, n) VALUES (?, ?)', params: ['x', 2] },
        { sql: 'INSERT INTO things (id, n) VALUES (?, ?)', params: ['y', 3] },
      ]),
    ).rejects.toThrow();
    expect(await db.value('SELECT COUNT(*) FROM things')).toBe(0);
    // Many times over: a pooled connection left inside a failed transaction would show here.
    for (let i = 0; i < 12; i++) await db.batch([{ sql: 'INSERT INTO things (id, n) VALUES (?, ?)', params: [`ok${i}`, i] }]);
    expect(await db.value('SELECT COUNT(*) FROM things')).toBe(12);
    await db.run('INSERT INTO things (id, n) VALUES (?, ?)', ['after', 0]);
    await new Promise((r) => setTimeout(r, 50));
    expect(heard).toEqual([]);
    await off();
  });

  it('statements and batches issued together by many callers (one write on PostgreSQL) each get their own answer; a failing batch takes back only its own steps', async () => {
    const target = await freshStoreTarget(engine);
    const { db } = await storeOn(engine, [THINGS], target);
    await db.run('INSERT INTO things (id, n) VALUES (?, ?)', ['taken', 0]);
    const callers = Array.from({ length: 40 }, (_, i) =>
      i % 4 === 0
        ? db.batch([
            { sql: 'INSERT INTO things (id, n) VALUES (?, ?)', params: [`b${i}`, i] },
            // Every eighth caller's batch fails on its second step: its first step goes too.
            { sql: 'INSERT INTO things (id, n) VALUES (?, ?) RETURNING n', params: [i % 8 === 0 ? 'taken' : `c${i}`, i] },
          ])
        : i % 4 === 1
          ? db.value<number>('SELECT n FROM things WHERE id = ?', ['taken'])
          : db.get<{ n: number }>('INSERT INTO things (id, n) VALUES (?, ?) RETURNING n', [`s${i}`, i]),
    );
    const settled = await Promise.allSettled(callers);
    settled.forEach((r, i) => {
      if (i % 8 === 0) expect(r.status).toBe('rejected');
      else if (i % 4 === 0) expect(r.status === 'fulfilled' && (r.value as Array<{ rows: unknown[] }>)[1]!.rows).toEqual([{ n: i }]);
      else if (i % 4 === 1) expect(r.status === 'fulfilled' && r.value).toBe(0);
      else expect(r.status === 'fulfilled' && r.value).toEqual({ n: i });
    });
    const ids = (await db.all<{ id: string }>('SELECT id FROM things ORDER BY id')).map((r) => r.id);
    expect(ids).toEqual(['taken', ...Array.from({ length: 40 }, (_, i) => (i % 8 === 0 ? [] : i % 4 === 0 ? [`b${i}`, `c${i}`] : i % 4 === 1 ? [] : [`s${i}`])).flat()].sort());
    // A step that cannot be sent (a parameter missing) fails the batch before anything is written,
    // and no connection is left inside a transaction: another handle sees what follows at once.
    await expect(db.batch([{ sql: 'INSERT INTO things (id, n) VALUES (?, ?)', params: ['never', 1] }, { sql: 'INSERT INTO things (id, n) VALUES (?, ?)', params: ['x'] }])).rejects.toThrow(/parameter/i);
    for (let i = 0; i < 4; i++) await db.run('INSERT INTO things (id, n) VALUES (?, ?)', [`after${i}`, i]);
    const other = await storeOn(engine, [THINGS], target);
    expect(await other.db.value('SELECT COUNT(*) FROM things WHERE id LIKE ?', ['after%'])).toBe(4);
    expect(await other.db.value('SELECT COUNT(*) FROM things WHERE id = ?', ['never'])).toBe(0);
  });

  it('reports a step failing in the middle as a BatchStepError naming it: the steps before it are taken back, the ones after never run', async () => {
    const { db } = await storeOn(engine);
    await db.run('INSERT INTO things (id, n) VALUES (?, ?)', ['taken', 0]);
    // Each statement text new to the connection, so the failure lands among statements the server
    // is still preparing: those it skipped are prepared again the next time, not taken as known.
    const failing = [
      { sql: 'UPDATE things SET n = n + 100 WHERE id = ?', params: ['taken'] },
      { sql: 'INSERT INTO things (id, n, note) VALUES (?, ?, ?)', params: ['first', 1, 'a'] },
      { sql: 'INSERT INTO things (id, n, note) VALUES (?, ?, ?) RETURNING id', params: ['taken', 2, 'b'] },
      { sql: 'INSERT INTO things (id, n, note, seq) VALUES (?, ?, ?, ?)', params: ['after', 3, 'c', 1] },
      { sql: 'UPDATE things SET note = ? WHERE id = ?', params: ['never', 'taken'] },
    ];
    const error = await db.batch(failing).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(BatchStepError);
    expect((error as BatchStepError).step).toBe(2);
    expect((error as BatchStepError).message).toMatch(/^batch step 3 failed: .*(unique|UNIQUE)/);
    expect(await db.all('SELECT id, n, note FROM things ORDER BY id')).toEqual([{ id: 'taken', n: 0, note: null }]);
    // The same statements again, now able to succeed: each runs (none is taken as prepared when the server skipped it).
    const results = await db.batch([failing[0]!, failing[1]!, { ...failing[2]!, params: ['second', 2, 'b'] }, failing[3]!, failing[4]!]);
    expect(results.map((r) => r.changes)).toEqual([1, 1, 1, 1, 1]);
    expect(results[2]!.rows).toEqual([{ id: 'second' }]);
    expect(await db.all('SELECT id, n, note FROM things ORDER BY id')).toEqual([
      { id: 'after', n: 3, note: 'c' },
      { id: 'first', n: 1, note: 'a' },
      { id: 'second', n: 2, note: 'b' },
      { id: 'taken', n: 100, note: 'never' },
    ]);
  });

  it('runs a batch\'s steps in order, each seeing what the steps before it wrote', async () => {
    const { db } = await storeOn(engine);
    const results = await db.batch([
      { sql: 'INSERT INTO things (id, n) VALUES (?, ?)', params: ['a', 1] },
      { sql: 'UPDATE things SET n = n * 10 WHERE id = ?', params: ['a'] },
      { sql: 'INSERT INTO things (id, n) SELECT ?, n + 1 FROM things WHERE id = ? RETURNING n', params: ['b', 'a'] },
      { sql: 'SELECT COUNT(*) AS "howMany", MAX(n) AS total FROM things' },
    ]);
    expect(results[2]!.rows).toEqual([{ n: 11 }]);
    expect(results[3]!.rows).toEqual([{ howMany: 2, total: 11 }]);
  });

  it('names the step whose parameters do not fit, before anything is written', async () => {
    const { db } = await storeOn(engine);
    const error = await db.batch([{ sql: 'INSERT INTO things (id, n) VALUES (?, ?)', params: ['a', 1] }, { sql: 'INSERT INTO things (id, n) VALUES (@id, @n)', params: { id: 'b' } }]).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(BatchStepError);
    expect((error as BatchStepError).step).toBe(1);
    expect((error as BatchStepError).message).toMatch(/^batch step 2 failed: .*\bn\b/);
    expect(await db.value('SELECT COUNT(*) FROM things')).toBe(0);
  });

  it('joins an open transaction with a batch: the transaction\'s rollback takes the batch back too', async () => {
    const { db } = await storeOn(engine);
    await expect(
      db.tx(async () => {
        await db.batch([{ sql: 'INSERT INTO things (id, n) VALUES (?, ?)', params: ['in-tx', 1] }]);
        expect(await db.value('SELECT n FROM things WHERE id = ?', ['in-tx'])).toBe(1);
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(await db.value('SELECT COUNT(*) FROM things')).toBe(0);
  });

  it('returns BIGINT millisecond times as numbers', async () => {
    const { db } = await storeOn(engine);
    const at = 1_764_000_000_123;
    await db.run('INSERT INTO things (id, n) VALUES (?, ?)', ['t', at]);
    expect(await db.value('SELECT n FROM things WHERE id = ?', ['t'])).toBe(at);
  });

  it('stores a NUL-carrying string without failing the write', async () => {
    const { db } = await storeOn(engine);
    await db.run('INSERT INTO things (id, n, note) VALUES (?, ?, ?)', ['nul', 0, 'a\u0000b']);
    expect(['a\u0000b', 'a\uFFFDb']).toContain(await db.value('SELECT note FROM things WHERE id = ?', ['nul']));
  });

  it.each([
    ['too few positional', 'SELECT 1 FROM things WHERE id = ? AND n = ?', ['a']],
    ['a missing named one', 'SELECT 1 FROM things WHERE id = @id AND n = @n', { id: 'a' }],
  ] as const)('refuses a statement with %s parameters', async (_label, sql, params) => {
    const { db } = await storeOn(engine);
    await expect(db.all(sql, params)).rejects.toThrow();
  });

  it('commits a transaction that resolves and rolls back one that rejects', async () => {
    const { db } = await storeOn(engine);
    await db.tx(async () => {
      await db.run('INSERT INTO things (id, n) VALUES (?, ?)', ['kept', 1]);
    });
    await expect(
      db.tx(async () => {
        await db.run('INSERT INTO things (id, n) VALUES (?, ?)', ['dropped', 1]);
        throw new Error('no');
      }),
    ).rejects.toThrow('no');
    expect(await db.all('SELECT id FROM things ORDER BY id')).toEqual([{ id: 'kept' }]);
  });

  it('joins calls made deeper in the transaction and makes a nested one a savepoint', async () => {
    const { db } = await storeOn(engine);
    const insert = (id: string) => db.run('INSERT INTO things (id, n) VALUES (?, ?)', [id, 1]);
    await expect(
      db.tx(async () => {
        await insert('outer');
        await db.tx(async () => insert('inner-kept'));
        await db
          .tx(async () => {
            await insert('inner-dropped');
            throw new Error('inner');
          })
          .catch(() => undefined);
        expect((await db.all<{ id: string }>('SELECT id FROM things ORDER BY id')).map((r) => r.id)).toEqual(['inner-kept', 'outer']);
        throw new Error('outer');
      }),
    ).rejects.toThrow('outer');
    expect(await db.all('SELECT id FROM things')).toEqual([]);
  });

  it('keeps a caller outside a transaction out of it while the transaction awaits', async () => {
    const { db } = await storeOn(engine);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const tx = db
      .tx(async () => {
        await db.run('INSERT INTO things (id, n) VALUES (?, ?)', ['in-tx', 1]);
        await gate;
        throw new Error('rolled back');
      })
      .catch(() => undefined);
    const outside = db.run('INSERT INTO things (id, n) VALUES (?, ?)', ['outside', 1]);
    await new Promise((r) => setTimeout(r, 20));
    release();
    await Promise.all([tx, outside]);
    expect(await db.all('SELECT id FROM things')).toEqual([{ id: 'outside' }]);
  });

  it('delivers a notification sent inside a transaction only once it commits', async () => {
    const { db } = await storeOn(engine);
    const got: Array<string | undefined> = [];
    const stop = await db.listen('warden_test', (p) => got.push(p));
    await db.tx(async () => {
      await db.notify('warden_test', 'one');
      await new Promise((r) => setTimeout(r, 30));
      expect(got).toEqual([]);
    });
    await expect.poll(() => got, { timeout: 5000 }).toEqual(['one']);
    await db
      .tx(async () => {
        await db.notify('warden_test', 'never');
        throw new Error('rollback');
      })
      .catch(() => undefined);
    await db.notify('warden_test', 'two');
    await expect.poll(() => got, { timeout: 5000 }).toEqual(['one', 'two']);
    await stop();
  });

  it('applies every feature migration and reports none pending; reopening applies nothing', async () => {
    const target = await freshStoreTarget(engine);
    const first = await storeOn(engine, migrationsFor(engine, WARDEN_MIGRATIONS), target);
    expect(first.engine).toBe(engine);
    expect(await first.pending()).toEqual([]);
    expect(await first.ping()).toBe(true);
    const ids = migrationsFor(engine, WARDEN_MIGRATIONS).map((m) => m.id);
    expect((await first.db.all<{ id: string }>('SELECT id FROM schema_migrations')).map((r) => r.id).sort()).toEqual([...ids].sort());
    const second = await storeOn(engine, migrationsFor(engine, WARDEN_MIGRATIONS), target);
    expect(await second.db.value('SELECT COUNT(*) FROM schema_migrations')).toBe(ids.length);
  });

  it('leaves the database at the last good migration when one fails', async () => {
    const target = await freshStoreTarget(engine);
    const broken: Migration = {
      id: 'test-003-broken',
      async up(db) {
        await db.exec('CREATE TABLE half (id TEXT)');
        await db.exec('THIS IS NOT SQL');
      },
    };
    const result = await openStore({ dataDir: target.dataDir, url: target.url, migrations: [THINGS, broken] });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.kind).toBe('migration-failed');
    const again = await storeOn(engine, [THINGS], target);
    expect(await again.db.all('SELECT id FROM schema_migrations')).toEqual([{ id: 'test-001-things' }]);
    await expect(again.db.all('SELECT * FROM half')).rejects.toThrow();
  });
});

// On SQLite the lock is the migration's own BEGIN IMMEDIATE, which waits for another *process*;
// two connections to one file in one process would block each other's thread instead.
describe('batches on PostgreSQL: one write, one Sync, one implicit transaction', () => {
  it('runs every step in one transaction without a BEGIN or COMMIT of its own', async () => {
    const { db } = await storeOn('postgres');
    const results = await db.batch([
      { sql: 'INSERT INTO things (id, n) VALUES (?, ?)', params: ['a', 1] },
      { sql: 'SELECT txid_current() AS tx, statement_timestamp() = transaction_timestamp() AS first' },
      { sql: 'SELECT txid_current() AS tx, statement_timestamp() = transaction_timestamp() AS first' },
    ]);
    const [one, two] = [results[1]!.rows[0]!, results[2]!.rows[0]!];
    // The same transaction throughout, begun by the batch's first statement (not by a BEGIN before it).
    expect(one.tx).toBe(two.tx);
    expect(one.first).toBe(false);
    // The next batch is a transaction of its own: the Sync committed the first.
    const next = await db.batch([{ sql: 'SELECT txid_current() AS tx' }]);
    expect(Number(next[0]!.rows[0]!.tx)).toBeGreaterThan(Number(one.tx));
  });

  it('rolls a failing batch back while other callers\' statements share its write, and never leaves its connection inside a transaction', async () => {
    const { db } = await storeOn('postgres');
    await db.run('INSERT INTO things (id, n) VALUES (?, ?)', ['taken', 0]);
    const round = async (i: number) => {
      const [bad, good, read] = await Promise.allSettled([
        db.batch([
          { sql: 'INSERT INTO things (id, n) VALUES (?, ?)', params: [`lost${i}`, i] },
          { sql: 'INSERT INTO things (id, n) VALUES (?, ?)', params: ['taken', i] },
        ]),
        db.batch([{ sql: 'INSERT INTO things (id, n) VALUES (?, ?)', params: [`kept${i}`, i] }]),
        db.value('SELECT COUNT(*) FROM things WHERE id LIKE ?', ['lost%']),
      ]);
      expect(bad.status).toBe('rejected');
      expect(good.status).toBe('fulfilled');
      expect(read.status === 'fulfilled' && read.value).toBe(0);
    };
    for (let i = 0; i < 6; i++) await round(i);
    expect(await db.value('SELECT COUNT(*) FROM things WHERE id LIKE ?', ['kept%'])).toBe(6);
    expect(await db.value('SELECT COUNT(*) FROM things WHERE id LIKE ?', ['lost%'])).toBe(0);
    // Were a connection left in a transaction, this statement (its own implicit one) would not see itself committed elsewhere.
    expect(await db.value("SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'")).toBe(0);
  });
});

describe('migrations on a shared PostgreSQL store', () => {
  it('lets two instances started together migrate once (the advisory migration lock)', async () => {
    const engine = 'postgres';
    const target = await freshStoreTarget(engine);
    let runs = 0;
    const slow: Migration = {
      id: 'test-002-slow',
      async up(db: Db) {
        runs++;
        await new Promise((r) => setTimeout(r, 50));
        await db.exec('CREATE TABLE slow (id TEXT)');
      },
    };
    await Promise.all([storeOn(engine, [THINGS, slow], target), storeOn(engine, [THINGS, slow], target)]);
    expect(runs).toBe(1);
  });

});

describe('store.url', () => {
  it('names an unreachable server without its password', async () => {
    const result = await openStore({ dataDir: '/tmp', url: 'postgres://warden:secret@127.0.0.1:1/none', migrations: [] });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.kind).toBe('unreachable');
    expect(result.error.message).not.toContain('secret');
  });

  it.each(['mysql://x/y', 'not a url'])('refuses %s', async (url) => {
    const result = await openStore({ dataDir: '/tmp', url, migrations: [] });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.kind).toBe('bad-url');
  });
});
