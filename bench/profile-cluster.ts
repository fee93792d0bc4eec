// One `warden start` on PostgreSQL behind the Slack fake, scripted model, for per-message
// attribution: `npx tsx bench/profile-cluster.ts [MESSAGES] [--prof DIR] [--trips] [--bin PATH]`
// (`--bin`: another checkout's bin/warden.js, to compare builds in alternating runs).
// Prints messages/s, CPU µs per message of the instance and of PostgreSQL's server processes,
// statements per message (pg_stat_statements, top texts by calls) and, with `--trips`, round
// trips per message counted by a loopback proxy between the instance and the server (a client
// write after the server last answered on that connection starts one). The proxy adds latency,
// so rates from a `--trips` run are not comparable with rates from a run without it.
import { readFileSync, readdirSync } from 'node:fs';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { startTestCluster } from '../test/postgres-cluster.js';
import { startFakeOpenAI } from '../test/fakes/models/openai-fake.js';
import { startSlackFake, type SlackFake } from '../test/fakes/slack/index.js';
import { directMessage, sharedWorkspace, startInstance, stopInstance } from '../test/cluster/harness.js';

const args = process.argv.slice(2);
const MESSAGES = Number(args.find((a) => /^\d+$/.test(a)) ?? 300);
const CONVERSATIONS = 30;
const profDir = args.includes('--prof') ? args[args.indexOf('--prof') + 1] : undefined;
const trips = args.includes('--trips');
const bin = args.includes('--bin') ? args[args.indexOf('--bin') + 1] : undefined;

const TICK = 100; // USER_HZ
function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICK;
  } catch {
    return 0;
  }
}
/** The postmaster listening on `port` and its children (the server's processes for this cluster only). */
function serverPids(port: number): number[] {
  const all = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  let master: number | undefined;
  for (const d of all) {
    try {
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (cmd.includes('postgres') && cmd.includes(`-p ${port}`)) master = Number(d);
    } catch {}
  }
  if (master === undefined) return [];
  const pids = [master];
  for (const d of all) {
    try {
      const fields = readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1]!.split(' ');
      if (Number(fields[1]) === master) pids.push(Number(d));
    } catch {}
  }
  return pids;
}

function tripProxy(target: number): Promise<{ port: number; count(): number; close(): void }> {
  let count = 0;
  const server = net.createServer((client) => {
    const upstream = net.connect(target, '127.0.0.1');
    let waiting = false;
    client.on('data', (d) => {
      if (!waiting) count++;
      waiting = true;
      upstream.write(d);
    });
    upstream.on('data', (d) => {
      waiting = false;
      client.write(d);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ port: (server.address() as net.AddressInfo).port, count: () => count, close: () => server.close() })),
  );
}

const answers = (fake: SlackFake) => fake.calls('chat.postMessage').filter((c) => String(c.body.channel).startsWith('D') && !c.body.blocks).length;
async function waitUntil(check: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

const cluster = await startTestCluster({ shared_preload_libraries: 'pg_stat_statements' });
const fake = await startSlackFake();
const model = await startFakeOpenAI({ respond: () => ({ kind: 'reply', text: 'ok' }) });
const port = Number(new URL(cluster.url).port);
const admin = new URL(cluster.url);
const name = `prof_${randomUUID().replace(/-/g, '')}`;
{
  const c = new pg.Client({ connectionString: cluster.url });
  await c.connect();
  await c.query(`CREATE DATABASE ${name}`);
  await c.end();
}
admin.pathname = `/${name}`;
const adminUrl = admin.toString();
const stats = new pg.Client({ connectionString: adminUrl });
await stats.connect();
await stats.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
const proxy = trips ? await tripProxy(port) : undefined;
const storeUrl = proxy ? adminUrl.replace(`:${port}/`, `:${proxy.port}/`) : adminUrl;
const workspace = sharedWorkspace();
const instance = await startInstance('prof', {
  fake,
  storeUrl,
  workspace,
  leaseSec: 15,
  modelUrl: model.url,
  nodeArgs: profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [],
  ...(bin ? { bin } : {}),
});
try {
  const pid = instance.child.pid!;
  const warm = answers(fake) + CONVERSATIONS;
  await Promise.all(Array.from({ length: CONVERSATIONS }, (_, c) => directMessage(fake, instance, `U0USER${String(c).padStart(3, '0')}`, 'hello')));
  await waitUntil(() => answers(fake) >= warm, 60_000);
  await stats.query('SELECT pg_stat_statements_reset()');
  const servers = serverPids(port);
  const sumServer = () => servers.reduce((s, p) => s + cpuMs(p), 0);
  const cpu0 = cpuMs(pid);
  const pg0 = sumServer();
  const trips0 = proxy?.count() ?? 0;
  const slack0 = fake.requests.records.length;
  const model0 = model.requests.length;
  const here0 = process.cpuUsage();
  const goal = answers(fake) + MESSAGES;
  const started = performance.now();
  const burstFrom = process.hrtime.bigint() / 1000n;
  const sends: Promise<Response>[] = [];
  for (let m = 0; m < MESSAGES; m++) sends.push(directMessage(fake, instance, `U0USER${String(m % CONVERSATIONS).padStart(3, '0')}`, `message ${m}`));
  await Promise.all(sends);
  await waitUntil(() => answers(fake) >= goal, 300_000);
  const seconds = (performance.now() - started) / 1000;
  const burstTo = process.hrtime.bigint() / 1000n;
  const cpu = cpuMs(pid) - cpu0;
  const pgCpu = sumServer() - pg0;
  const tripCount = (proxy?.count() ?? 0) - trips0;
  const here = process.cpuUsage(here0);
  const slackCalls = new Map<string, number>();
  for (const r of fake.requests.records.slice(slack0)) slackCalls.set(r.path, (slackCalls.get(r.path) ?? 0) + 1);
  const rows = await stats.query<{ calls: string; query: string; ms: string }>(
    `SELECT calls, total_exec_time AS ms, query FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT LIKE '%pg_stat_statements%' ORDER BY calls DESC`,
  );
  const total = rows.rows.reduce((s, r) => s + Number(r.calls), 0);
  const out = (line: string) => process.stdout.write(`${line}\n`);
  out(`messages/s: ${(MESSAGES / seconds).toFixed(1)} (${MESSAGES} messages, ${CONVERSATIONS} conversations, ${seconds.toFixed(2)} s)`);
  out(`instance CPU: ${((cpu * 1000) / MESSAGES).toFixed(0)} µs/message (${((cpu / 1000 / seconds) * 100).toFixed(0)} % of a core)`);
  out(`PostgreSQL CPU: ${((pgCpu * 1000) / MESSAGES).toFixed(0)} µs/message (${servers.length} processes)`);
  // The harness shares the cores: the Slack fake, the model server and this script are one process.
  out(`harness CPU (Slack fake, model server, sender): ${((here.user + here.system) / MESSAGES).toFixed(0)} µs/message`);
  const modelBytes = model.requests.slice(model0).reduce((n, r) => n + r.tokens * 4, 0) / Math.max(1, model.requests.length - model0);
  out(`model requests/message: ${((model.requests.length - model0) / MESSAGES).toFixed(2)} (${(modelBytes / 1024).toFixed(1)} KiB each); Slack calls/message: ${[...slackCalls].map(([k, n]) => `${k} ${(n / MESSAGES).toFixed(2)}`).join(', ')}`);
  out(`statements/message: ${(total / MESSAGES).toFixed(2)}`);
  if (profDir) out(`burst window (monotonic µs, as in the profile): ${burstFrom} ${burstTo}`);
  if (proxy) out(`round trips/message: ${(tripCount / MESSAGES).toFixed(2)}`);
  for (const r of rows.rows.slice(0, 25)) out(`  ${(Number(r.calls) / MESSAGES).toFixed(2).padStart(6)}  ${Number(r.ms).toFixed(0).padStart(6)} ms  ${r.query.replace(/\s+/g, ' ').slice(0, 150)}`);
} finally {
  await stopInstance(instance);
  await stats.end();
  proxy?.close();
  await model.close();
  await fake.close();
  cluster.stop();
}
