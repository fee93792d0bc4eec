// Where a message's store work goes on PostgreSQL, statement by statement: runs the message path
// of `bench/cluster.bench.ts` as the previous round made it (its statements) and as now, alternating in streams (`STREAM`), each on a database of its own in one
// throwaway cluster with pg_stat_statements; then prints, per path, each statement's calls and
// mean execution time on the server and the server's time per message. The server's time is
// less at the mercy of a loaded machine than the wall time around a round trip.
// `WARDEN_PROFILE_SYNC=on` starts the cluster with fsync and synchronous_commit on (the test
// cluster has both off), to learn what each commit's WAL flush costs.
// Usage: npx tsx bench/profile-store-steps.ts
import './run-dir.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openWardenStore } from '../src/app/migrations.js';
import { startTestCluster } from '../test/postgres-cluster.js';
import { freshDatabase, interleaved, messagePath, messageRig } from './cluster.bench.js';
import { fmtMs } from './harness.js';

const sync = process.env.WARDEN_PROFILE_SYNC === 'on';
const MESSAGES = 350;
const cluster = await startTestCluster({ shared_preload_libraries: 'pg_stat_statements', ...(sync ? { fsync: 'on', synchronous_commit: 'on' } : {}) });
try {
  const open = async () => {
    const url = await freshDatabase(cluster.url);
    const opened = await openWardenStore({ dataDir: mkdtempSync(path.join(tmpdir(), 'warden-profile-pg-')), url });
    if (!opened.ok) throw new Error('store did not open');
    return { url, store: opened.store };
  };
  const previous = await open();
  const now = await open();
  const admin = new pg.Client({ connectionString: now.url });
  await admin.connect();
  const rigs = [messageRig(previous.store, true), messageRig(now.store)];
  const paths = [messagePath(rigs[0]!, 'pg', 'previous'), messagePath(rigs[1]!, 'pg', 'steps')];
  // Warm-up (statements prepared, plans cached), then counted from a reset.
  for (let i = 0; i < 60; i++) for (const p of paths) await p.message();
  await admin.query('SELECT pg_stat_statements_reset()');
  const results = await interleaved(paths);
  const load = (await import('node:os')).loadavg().map((l) => l.toFixed(1)).join(' ');
  console.log(`fsync/synchronous_commit ${sync ? 'on' : 'off'}; ${MESSAGES} messages on each path, alternating; load average ${load}`);
  for (const [i, db] of [previous, now].entries()) {
    const name = new URL(db.url).pathname.slice(1);
    const rows = await admin.query<{ calls: string; exec: number; query: string }>(
      `SELECT calls, mean_exec_time AS exec, query FROM pg_stat_statements
       WHERE dbid = (SELECT oid FROM pg_database WHERE datname = $1) AND query NOT LIKE '%pg_stat_statements%'
       ORDER BY calls * mean_exec_time DESC`,
      [name],
    );
    const r = results[i]!;
    console.log(`\n## ${i === 0 ? 'previous round' : 'now'}: p50 ${fmtMs(r.total.p50)} (steps ${r.steps.map((s) => fmtMs(s.p50)).join(' / ')})`);
    let total = 0;
    let statements = 0;
    for (const row of rows.rows) {
      const per = (Number(row.calls) * row.exec) / MESSAGES;
      total += per;
      statements += Number(row.calls) / MESSAGES;
      console.log(`${(Number(row.calls) / MESSAGES).toFixed(1).padStart(5)} × ${(row.exec * 1000).toFixed(1).padStart(6)} µs = ${(per * 1000).toFixed(1).padStart(6)} µs/msg  ${row.query.replace(/\s+/g, ' ').slice(0, 130)}`);
    }
    console.log(`server execution per message: ${(total * 1000).toFixed(1)} µs in ${statements.toFixed(1)} statements`);
  }
  await Promise.all(rigs.map((r) => r.close()));
  await admin.end();
  await previous.store.close();
  await now.store.close();
} finally {
  cluster.stop();
}
