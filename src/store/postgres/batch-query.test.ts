import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { freshStoreTarget } from '../../../test/store-engines.js';
import type { BatchResult } from '../db.js';
import { BatchQuery, type WireStatement } from './batch-query.js';

const INT4_OID = 23;

describe('a batch on a pipelined pg client', () => {
  const clients: pg.Client[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.end()));
  });
  /** A pipelined client whose int4 columns cannot be read (its parser throws). */
  async function client(): Promise<pg.Client> {
    const { url } = await freshStoreTarget('postgres');
    const getTypeParser = (oid: number, format?: string) =>
      oid === INT4_OID
        ? () => {
            throw new Error('an unreadable int4');
          }
        : pg.types.getTypeParser(oid, (format ?? 'text') as 'text');
    const c = new pg.Client({ connectionString: url!, pipeline: true, types: { getTypeParser } } as pg.ClientConfig);
    await c.connect();
    clients.push(c);
    return c;
  }
  const run = (c: pg.Client, statements: WireStatement[]) =>
    new Promise<BatchResult[]>((resolve, reject) => {
      (c as unknown as { query(q: BatchQuery): void }).query(new BatchQuery(statements, (err, results) => (err ? reject(err) : resolve(results!))));
    });

  it('is taken by the pipelined client, and batches behind it are answered in order', async () => {
    const c = await client();
    const [a, b] = await Promise.all([run(c, [{ text: "SELECT 'a' AS x", values: [] }]), run(c, [{ name: 'n1', text: 'SELECT $1::text AS y', values: ['b'] }])]);
    expect(a).toEqual([{ rows: [{ x: 'a' }], changes: 1 }]);
    expect(b).toEqual([{ rows: [{ y: 'b' }], changes: 1 }]);
  });

  it('a row that cannot be read fails the batch once the server is done answering; the connection goes on', async () => {
    const c = await client();
    const failed = run(c, [
      { text: "SELECT 'fine' AS x", values: [] },
      { text: 'SELECT 1::int4 AS n', values: [] },
    ]);
    const after = run(c, [{ text: "SELECT 'next' AS x", values: [] }]);
    await expect(failed).rejects.toThrow('an unreadable int4');
    await expect(after).resolves.toEqual([{ rows: [{ x: 'next' }], changes: 1 }]);
  });

  it('a statement that fails at the server names its step; the statements after it never ran', async () => {
    const c = await client();
    const error = await run(c, [
      { text: 'CREATE TEMP TABLE t (n text PRIMARY KEY)', values: [] },
      { text: "INSERT INTO t VALUES ('a')", values: [] },
      { text: "INSERT INTO t VALUES ('a')", values: [] },
      { text: "INSERT INTO t VALUES ('b')", values: [] },
    ]).catch((e: unknown) => e as Error & { batchStep?: number });
    expect(error).toBeInstanceOf(Error);
    expect((error as { batchStep?: number }).batchStep).toBe(2);
    // Taken back whole: not even the table is left.
    await expect(run(c, [{ text: 'SELECT COUNT(*) FROM t', values: [] }])).rejects.toThrow(/does not exist/);
  });
});
