// CPU per message of a message's PostgreSQL store work in process (`messagePath`, `steps`, of
// `bench/cluster.bench.ts`) with the code of a given checkout: `npx tsx bench/cpu-store-path.ts
// CHECKOUT [MESSAGES]` (run it for two checkouts in alternation to compare them). The client's
// CPU time moves far less with the machine's load than the wall time around a round trip.
import './run-dir.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const checkout = path.resolve(process.argv[2] ?? '.');
const MESSAGES = Number(process.argv[3] ?? 400);
const WARM = 200;
const { openWardenStore } = (await import(path.join(checkout, 'src/app/migrations.ts'))) as typeof import('../src/app/migrations.js');
const { startTestCluster } = (await import(path.join(checkout, 'test/postgres-cluster.ts'))) as typeof import('../test/postgres-cluster.js');
const { freshDatabase, messagePath, messageRig } = (await import(path.join(checkout, 'bench/cluster.bench.ts'))) as typeof import('./cluster.bench.js');
const cluster = await startTestCluster({ shared_preload_libraries: 'pg_stat_statements' });
try {
  const opened = await openWardenStore({ dataDir: mkdtempSync(path.join(tmpdir(), 'warden-cpu-store-')), url: await freshDatabase(cluster.url) });
  if (!opened.ok) throw new Error('store did not open');
  const rig = messageRig(opened.store);
  const run = messagePath(rig, 'pg', 'steps');
  for (let i = 0; i < WARM; i++) await run.message();
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < MESSAGES; i++) await run.message();
  const used = process.cpuUsage(cpu);
  const wall = performance.now() - started;
  const load = (await import('node:os')).loadavg()[0]!.toFixed(1);
  console.log(
    `${checkout}: CPU ${((used.user + used.system) / MESSAGES).toFixed(0)} µs/message, wall ${((wall * 1000) / MESSAGES).toFixed(0)} µs/message, p50 ${(run.result().total.p50 * 1000).toFixed(0)} µs (${MESSAGES} messages after ${WARM}; load ${load})`,
  );
  await rig.close();
  await opened.store.close();
} finally {
  await cluster.stop();
}
