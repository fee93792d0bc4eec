// Where a message's store work goes on PostgreSQL, statement by statement: runs the message path
// of `bench/cluster.bench.ts` (as now, and as before) on a throwaway cluster with
// pg_stat_statements, then prints each statement's calls, mean planning and execution time on
// the server. `WARDEN_PROFILE_SYNC=on` starts the cluster with fsync and synchronous_commit on
// (the test cluster has both off), to learn what each commit's WAL flush costs.
// Usage: npx tsx bench/profile-store-steps.ts
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openWardenStore } from '../src/app/migrations.js';
import { startTestCluster } from '../test/postgres-cluster.js';
import { freshDatabase, interleaved, messagePath, messageRig } from './cluster.bench.js';
import { fmtMs } from './harness.js';

const sync = process.env.WARDEN_PROFILE_SYNC === 'on';
const cluster = await startTestCluster({ shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track_planning': 'on', ...(sync ? { fsync: 'on', synchronous_commit: 'on' } : {}) });
try {
  const url = await freshDatabase(cluster.url);
  const opened = await openWardenStore({ dataDir: mkdtempSync(path.join(tmpdir(), 'warden-profile-pg-')), url });
  if (!opened.ok) throw new Error('store did not open');
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  const rig = messageRig(opened.store);
  const paths = [messagePath(rig, 'pg', 'before'), messagePath(rig, 'pg', 'steps')];
  // Warm-up (plans cached, statements prepared), then counted from a reset.
  for (let i = 0; i < 60; i++) for (const p of paths) await p.message();
  await admin.query('SELECT pg_stat_statements_reset()');
  const [before, now] = await interleaved(paths);
  const rows = await admin.query<{ calls: string; plan: number; exec: number; rows: string; query: string }>(
    `SELECT calls, mean_plan_time AS plan, mean_exec_time AS exec, rows, query FROM pg_stat_statements
     WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT LIKE '%pg_stat_statements%'
     ORDER BY calls * (mean_exec_time + mean_plan_time) DESC`,
  );
  const messages = 2 * 350;
  console.log(`fsync/synchronous_commit ${sync ? 'on' : 'off'}; ${messages} messages (before and now alternating)`);
  console.log(`p50 now ${fmtMs(now!.total.p50)} (steps ${now!.steps.map((s) => fmtMs(s.p50)).join(' / ')}); before ${fmtMs(before!.total.p50)}`);
  let total = 0;
  for (const r of rows.rows) {
    const per = (Number(r.calls) * (r.exec + r.plan)) / messages;
    total += per;
    console.log(`${String(r.calls).padStart(6)} calls  plan ${(r.plan * 1000).toFixed(1).padStart(6)} µs  exec ${(r.exec * 1000).toFixed(1).padStart(7)} µs  per message ${(per * 1000).toFixed(1).padStart(6)} µs  ${r.query.replace(/\s+/g, ' ').slice(0, 150)}`);
  }
  console.log(`server plan+exec per message (both paths averaged): ${(total * 1000).toFixed(1)} µs`);
  await rig.close();
  await admin.end();
  await opened.store.close();
} finally {
  cluster.stop();
}
