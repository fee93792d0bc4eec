// Where a message's store work spends JavaScript time, in process: runs the message path of
// `bench/cluster.bench.ts` (`steps`) on SQLite and on PostgreSQL (a throwaway cluster),
// alternating, so a `--cpu-prof` profile of this process shows the store's own code.
// Usage: node --cpu-prof --cpu-prof-dir DIR --import tsx bench/profile-message-js.ts [MESSAGES]
import './run-dir.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openWardenStore } from '../src/app/migrations.js';
import { startTestCluster } from '../test/postgres-cluster.js';
import { freshDatabase, messagePath, messageRig } from './cluster.bench.js';
import { fmtMs } from './harness.js';

const MESSAGES = Number(process.argv[2] ?? 700);
/** `sqlite`, `postgres` or both (the default). */
const ENGINES = process.argv[3] ?? 'both';
const cluster = await startTestCluster({ shared_preload_libraries: 'pg_stat_statements' });
try {
  const sqlite = await openWardenStore({ dataDir: mkdtempSync(path.join(tmpdir(), 'warden-profile-sqlite-')) });
  const postgres = await openWardenStore({ dataDir: mkdtempSync(path.join(tmpdir(), 'warden-profile-pg-')), url: await freshDatabase(cluster.url) });
  if (!sqlite.ok || !postgres.ok) throw new Error('stores did not open');
  const rigs = [messageRig(sqlite.store), messageRig(postgres.store)];
  const paths = [messagePath(rigs[0]!, 'sqlite', 'steps'), messagePath(rigs[1]!, 'pg', 'steps')];
  const run = paths.filter((_, i) => ENGINES === 'both' || ENGINES === (i === 0 ? 'sqlite' : 'postgres'));
  const started = performance.now();
  for (let i = 0; i < MESSAGES; i++) for (const p of run) await p.message();
  console.log(`${MESSAGES} messages each in ${fmtMs(performance.now() - started)}`);
  for (const [i, p] of paths.entries()) if (run.includes(p)) {
    const r = p.result();
    console.log(`${i === 0 ? 'SQLite' : 'PostgreSQL'} p50 ${fmtMs(r.total.p50)} (steps ${r.steps.map((t) => fmtMs(t.p50)).join(' / ')})`);
  }
  if (process.env.WARDEN_PROFILE_PLANS === 'on') {
    // Which statements the server plans afresh at each execution (custom plans) on the lane that ran them.
    const plans = await postgres.store.db.all<{ generic_plans: number; custom_plans: number; statement: string }>('SELECT generic_plans, custom_plans, statement FROM pg_prepared_statements ORDER BY custom_plans DESC');
    for (const p of plans) console.log(`${String(p.generic_plans).padStart(6)} generic ${String(p.custom_plans).padStart(6)} custom  ${p.statement.replace(/\s+/g, ' ').slice(0, 120)}`);
  }
  await Promise.all(rigs.map((r) => r.close()));
  await sqlite.store.close();
  await postgres.store.close();
} finally {
  await cluster.stop();
}
