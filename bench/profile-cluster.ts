// `warden start` on PostgreSQL behind the Slack fake, scripted model, for per-message
// attribution: `npx tsx bench/profile-cluster.ts [MESSAGES] [--prof DIR] [--trips] [--bin PATH]
// [--instances N] [--delivery sticky|round-robin] [--warm N] [--pool-max N]` (`--bin`: another checkout's bin/warden.js, to
// compare builds in alternating runs; `--instances`: N instances on the one database, messages
// spread by `--delivery`, default sticky: a conversation always reaches the same instance).
// Prints messages/s, CPU µs per message of each instance and of PostgreSQL's server processes,
// the notifications sent per message on each of the instances' channels (heard by a listener of
// the bench's own; every instance listening on a channel hears each of them),
// statements per message (pg_stat_statements, top texts by calls) and, with `--trips`, round
// trips per message counted by a loopback proxy between the instance and the server (a client
// write after the server last answered on that connection starts one). The proxy adds latency,
// so rates from a `--trips` run are not comparable with rates from a run without it.
import './run-dir.js';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { inboxChannel } from '../src/cluster/leases.js';
import { cpuMs, mainThreadMs, serverPids } from './proc-cpu.js';
import { startTestCluster } from '../test/postgres-cluster.js';
import { startFakeOpenAI } from '../test/fakes/models/openai-fake.js';
import { startSlackFake, type SlackFake } from '../test/fakes/slack/index.js';
import { directMessage, dmAnswers, sharedWorkspace, startInstance, stopInstance, type Instance } from '../test/cluster/harness.js';

const args = process.argv.slice(2);
const MESSAGES = Number(args[0] !== undefined && /^\d+$/.test(args[0]) ? args[0] : 300);
const CONVERSATIONS = 30;
const profDir = args.includes('--prof') ? args[args.indexOf('--prof') + 1] : undefined;
const trips = args.includes('--trips');
const bin = args.includes('--bin') ? args[args.indexOf('--bin') + 1] : undefined;
const COUNT = args.includes('--instances') ? Number(args[args.indexOf('--instances') + 1]) : 1;
const delivery = args.includes('--delivery') ? args[args.indexOf('--delivery') + 1] : 'sticky';
/** Which instance message `m` (of conversation `m mod CONVERSATIONS`) reaches, as `cluster.bench.ts` spreads them. */
const instanceFor = (m: number): number => (delivery === 'sticky' ? (m % CONVERSATIONS) % COUNT : (m + Math.floor(m / CONVERSATIONS)) % COUNT);
/** Warm-up messages before the measured burst (`--warm N`, default one per conversation), spread as the burst is. */
/** `store.poolMax` of every instance (`--pool-max N`; default the config's default, 10). */
const POOL_MAX = args.includes('--pool-max') ? Number(args[args.indexOf('--pool-max') + 1]) : undefined;
const WARM = args.includes('--warm') ? Number(args[args.indexOf('--warm') + 1]) : CONVERSATIONS;
const CHANNELS = ['warden_lease', 'warden_inbox', 'warden_stop', 'warden_approval', 'warden_cron', 'warden_conversation_wait'];

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

async function waitUntil(check: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

const cluster = await startTestCluster({ shared_preload_libraries: 'pg_stat_statements' });
const fake = await startSlackFake();
const model = await startFakeOpenAI({ respond: () => ({ kind: 'reply', text: 'ok' }), keepBodies: false });
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
const instances: Instance[] = [];
for (let i = 0; i < COUNT; i++)
  instances.push(
    await startInstance(`prof${i}`, {
      fake,
      storeUrl,
      workspace,
      leaseSec: 15,
      modelUrl: model.url,
      nodeArgs: profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [],
      ...(bin ? { bin } : {}),
      ...(POOL_MAX !== undefined ? { poolMax: POOL_MAX } : {}),
    }),
  );
const heard = new Map<string, number>();
const listener = new pg.Client({ connectionString: adminUrl });
await listener.connect();
listener.on('notification', (n) => heard.set(n.channel, (heard.get(n.channel) ?? 0) + 1));
for (const channel of CHANNELS) await listener.query(`LISTEN ${channel}`);
// Each instance's own channel (places forwarded to it): heard by that instance alone.
const ids = (await stats.query<{ id: string }>(`SELECT id FROM instances WHERE role = 'server'`)).rows.map((r) => r.id);
for (const id of ids) await listener.query(`LISTEN ${inboxChannel(id)}`);
const answered = dmAnswers(fake);
const answers = (_: SlackFake) => answered.count();
try {
  const pids = instances.map((i) => i.child.pid!);
  const warm = answers(fake) + WARM;
  await Promise.all(Array.from({ length: WARM }, (_, c) => directMessage(fake, instances[instanceFor(c)]!, `U0USER${String(c % CONVERSATIONS).padStart(3, '0')}`, 'hello')));
  await waitUntil(() => answers(fake) >= warm, 60_000);
  // Idle cost: what the instances and the server spend with no message in flight, over 3 s.
  const idle0 = pids.map((p) => cpuMs(p));
  const idleServer0 = new Map(serverPids(port).map((p) => [p, cpuMs(p)]));
  await new Promise((r) => setTimeout(r, 3000));
  const idleInstances = pids.reduce((s, p, i) => s + cpuMs(p) - idle0[i]!, 0) / 3;
  const idleServer = serverPids(port).reduce((s, p) => s + cpuMs(p) - (idleServer0.get(p) ?? 0), 0) / 3;
  await stats.query('SELECT pg_stat_statements_reset()');
  // Connections opened during the burst count from zero; those closed during it are missed.
  const servers0 = new Map(serverPids(port).map((p) => [p, cpuMs(p)]));
  const sumServer = () => serverPids(port).reduce((s, p) => s + cpuMs(p) - (servers0.get(p) ?? 0), 0);
  const cpu0 = pids.map((p) => cpuMs(p));
  const main0 = pids.map(mainThreadMs);
  heard.clear();
    const trips0 = proxy?.count() ?? 0;
  const slack0 = fake.requests.records.length;
  const model0 = model.requests.length;
  const here0 = process.cpuUsage();
  const goal = answers(fake) + MESSAGES;
  const started = performance.now();
  const burstFrom = process.hrtime.bigint() / 1000n;
  const sends: Promise<Response>[] = [];
  for (let m = 0; m < MESSAGES; m++) sends.push(directMessage(fake, instances[instanceFor(m)]!, `U0USER${String(m % CONVERSATIONS).padStart(3, '0')}`, `message ${m}`));
  await Promise.all(sends);
  await waitUntil(() => answers(fake) >= goal, 300_000);
  const seconds = (performance.now() - started) / 1000;
  const burstTo = process.hrtime.bigint() / 1000n;
  const cpus = pids.map((p, i) => cpuMs(p) - cpu0[i]!);
  const mains = pids.reduce((s, p, i) => s + mainThreadMs(p) - main0[i]!, 0);
  const cpu = cpus.reduce((a, b) => a + b, 0);
  const pgCpu = sumServer();
  const perBackend = serverPids(port)
    .map((p) => ({ p, ms: cpuMs(p) - (servers0.get(p) ?? 0), fresh: !servers0.has(p) }))
    .filter((b) => b.ms > 0)
    .sort((a, b) => b.ms - a.ms);
  const sessions = await stats.query<{ n: string }>(`SELECT COUNT(*) AS n FROM pg_stat_activity WHERE application_name = 'warden'`);
  const servers = serverPids(port);
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
  out(`instances: ${COUNT}, delivery ${delivery}${POOL_MAX !== undefined ? `, store.poolMax ${POOL_MAX}` : ''}; load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
  out(`instance CPU: ${((cpu * 1000) / MESSAGES).toFixed(0)} µs/message (${((cpu / 1000 / seconds) * 100).toFixed(0)} % of a core)${COUNT > 1 ? ` = ${cpus.map((c) => ((c * 1000) / MESSAGES).toFixed(0)).join(' + ')}` : ''}; main threads ${((mains * 1000) / MESSAGES).toFixed(0)} µs/message, other threads ${(((cpu - mains) * 1000) / MESSAGES).toFixed(0)}`);
  out(`idle CPU: instances ${idleInstances.toFixed(0)} ms/s, PostgreSQL ${idleServer.toFixed(0)} ms/s`);
  out(`PostgreSQL CPU: ${((pgCpu * 1000) / MESSAGES).toFixed(0)} µs/message (${servers.length} processes, ${sessions.rows[0]!.n} of them the instances' connections; busy in the burst, ms: ${perBackend.map((b) => `${b.ms.toFixed(0)}${b.fresh ? '*' : ''}`).join(' ')}; * opened during it)`);
  // The harness shares the cores: the Slack fake, the model server and this script are one process.
  out(`harness CPU (Slack fake, model server, sender): ${((here.user + here.system) / MESSAGES).toFixed(0)} µs/message`);
  const modelBytes = model.requests.slice(model0).reduce((n, r) => n + r.tokens * 4, 0) / Math.max(1, model.requests.length - model0);
  out(`model requests/message: ${((model.requests.length - model0) / MESSAGES).toFixed(2)} (${(modelBytes / 1024).toFixed(1)} KiB each); Slack calls/message: ${[...slackCalls].map(([k, n]) => `${k} ${(n / MESSAGES).toFixed(2)}`).join(', ')}`);
  out(`statements/message: ${(total / MESSAGES).toFixed(2)}`);
  const own = ids.reduce((n, id) => n + (heard.get(inboxChannel(id)) ?? 0), 0);
  out(`notifications/message sent: ${CHANNELS.map((c) => `${c} ${((heard.get(c) ?? 0) / MESSAGES).toFixed(2)}`).join(', ')}, an instance's own inbox ${(own / MESSAGES).toFixed(2)}`);
  out(`burst window (monotonic µs, as in a --cpu-prof profile): ${burstFrom} ${burstTo}`);
  if (proxy) out(`round trips/message: ${(tripCount / MESSAGES).toFixed(2)}`);
  for (const r of rows.rows.slice(0, 25)) out(`  ${(Number(r.calls) / MESSAGES).toFixed(2).padStart(6)}  ${Number(r.ms).toFixed(0).padStart(6)} ms  ${r.query.replace(/\s+/g, ' ').slice(0, 150)}`);
} finally {
  answered.stop();
  await listener.end();
  await Promise.all(instances.map(stopInstance));
  await stats.end();
  proxy?.close();
  await model.close();
  await fake.close();
  cluster.stop();
}
