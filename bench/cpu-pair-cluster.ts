// Two builds side by side: `npx tsx bench/cpu-pair-cluster.ts OTHER_BIN [ROUNDS] [MESSAGES] [WARM]
// [--instances N] [--before-instances N] [--delivery sticky|round-robin] [--before-delivery …] [--pool-max N] [--before-pool-max N]` starts the instances of
// another checkout (its bin/warden.js, "before") and those of this checkout ("now"), each side on
// a PostgreSQL server of its own behind the same Slack fake and scripted model, and sends them
// bursts of MESSAGES over 30 conversations in alternation (before, now, now, before, …), reading
// the CPU time (/proc) of each side's instances and of its PostgreSQL server around its burst.
// Prints the CPU per message of each burst and the medians: on a machine shared with other work,
// wall throughput moves with the load, CPU per message far less, and alternation spreads what
// remains evenly.
// `--instances N` (default 1): N instances on each side's store, a burst's messages spread over
// them by `--delivery` (default sticky: a conversation always reaches the same instance;
// round-robin: consecutive messages of a conversation reach different instances, as
// `cluster.bench.ts` spreads them). `--before-instances N`: the before side's count instead, so
// OTHER_BIN = this checkout's bin/warden.js compares one instance with several of one build;
// `--before-delivery`: the before side's delivery instead (sticky against round-robin, one build).
import './run-dir.js';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { cpuMs, loadAverage, serverPids } from './proc-cpu.js';
import { startTestCluster, type TestCluster } from '../test/postgres-cluster.js';
import { startFakeOpenAI } from '../test/fakes/models/openai-fake.js';
import { startSlackFake, type SlackFake } from '../test/fakes/slack/index.js';
import { BIN, directMessage, sharedWorkspace, startInstance, stopInstance, type Instance } from '../test/cluster/harness.js';

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const positional = args.filter((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--'));
const [otherBin, roundsArg, messagesArg, warmArg] = positional;
if (!otherBin) throw new Error('usage: cpu-pair-cluster.ts OTHER_BIN [ROUNDS] [MESSAGES] [WARM] [--instances N] [--before-instances N] [--delivery sticky|round-robin] [--before-delivery sticky|round-robin] [--pool-max N] [--before-pool-max N]');
const ROUNDS = Number(roundsArg ?? 4);
const MESSAGES = Number(messagesArg ?? 200);
const CONVERSATIONS = 30;
/** Warm-up messages sent to each side before the rounds (WARM, default one per conversation): a process costs less per message for its first thousand or so. */
const WARM = Number(warmArg ?? CONVERSATIONS);
const COUNT = Number(flag('--instances') ?? 1);
const BEFORE_COUNT = Number(flag('--before-instances') ?? COUNT);
/** `store.poolMax` of each side's instances (`--pool-max N`, `--before-pool-max N`; default the config's default). */
const poolMax = (name: string, fallback?: number): number | undefined => (flag(name) !== undefined ? Number(flag(name)) : fallback);
const POOL_MAX = poolMax('--pool-max');
const BEFORE_POOL_MAX = poolMax('--before-pool-max', POOL_MAX);
type Delivery = 'sticky' | 'round-robin';
function delivery(name: string): Delivery {
  const value = flag(name);
  if (value !== undefined && value !== 'sticky' && value !== 'round-robin') throw new Error(`${name}: sticky or round-robin, not ${value}`);
  return value ?? 'sticky';
}
const DELIVERY = delivery('--delivery');
const BEFORE_DELIVERY = args.includes('--before-delivery') ? delivery('--before-delivery') : DELIVERY;
/** Which of `count` instances message `m` (of conversation `m mod CONVERSATIONS`) reaches. */
const instanceFor = (m: number, count: number, how: Delivery): number => (how === 'sticky' ? (m % CONVERSATIONS) % count : (m + Math.floor(m / CONVERSATIONS)) % count);

/** Answers posted to each side's DMs (`D` + its prefix), counted as the fake records them (a filter over every request at each poll would cost the harness more as a run goes on). */
const answered = new Map<string, number>();
const answers = (_: SlackFake, prefix: string) => answered.get(prefix) ?? 0;
async function waitUntil(check: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

const fake = await startSlackFake();
const model = await startFakeOpenAI({ respond: () => ({ kind: 'reply', text: 'ok' }), keepBodies: false });
const stopCounting = fake.requests.subscribe((r) => {
  const channel = String(r.body?.channel);
  if (r.path === '/api/chat.postMessage' && channel.startsWith('D') && !r.body.blocks) answered.set(channel.slice(1, 2), (answered.get(channel.slice(1, 2)) ?? 0) + 1);
});
async function database(cluster: TestCluster): Promise<string> {
  const url = new URL(cluster.url);
  const name = `pair_${randomUUID().replace(/-/g, '')}`;
  const c = new pg.Client({ connectionString: cluster.url });
  await c.connect();
  await c.query(`CREATE DATABASE ${name}`);
  await c.end();
  url.pathname = `/${name}`;
  return url.toString();
}
interface Side {
  label: string;
  prefix: string;
  cluster: TestCluster;
  instances: Instance[];
  delivery: Delivery;
  perMessage: number[];
  server: number[];
}
const sides: Side[] = [];
const clusters: TestCluster[] = [];
try {
  for (const [label, bin, prefix, count, how, pool] of [['before', otherBin, 'UB', BEFORE_COUNT, BEFORE_DELIVERY, BEFORE_POOL_MAX], ['now', BIN, 'UN', COUNT, DELIVERY, POOL_MAX]] as const) {
    const cluster = await startTestCluster();
    clusters.push(cluster);
    const storeUrl = await database(cluster);
    const workspace = sharedWorkspace();
    const instances: Instance[] = [];
    for (let i = 0; i < count; i++) instances.push(await startInstance(`${label}${i}`, { fake, storeUrl, workspace, leaseSec: 15, modelUrl: model.url, bin, ...(pool !== undefined ? { poolMax: pool } : {}) }));
    sides.push({ label, prefix, cluster, instances, delivery: how, perMessage: [], server: [] });
  }
  process.stdout.write(`instances: before ${BEFORE_COUNT} (${BEFORE_DELIVERY}${BEFORE_POOL_MAX !== undefined ? `, poolMax ${BEFORE_POOL_MAX}` : ''}), now ${COUNT} (${DELIVERY}${POOL_MAX !== undefined ? `, poolMax ${POOL_MAX}` : ''}); ${MESSAGES} messages a burst, ${WARM} to warm\n`);
  let sent = 0;
  const burst = async (side: Side, count: number, record: boolean) => {
    const pids = side.instances.map((i) => i.child.pid!);
    const port = Number(new URL(side.cluster.url).port);
    const serverCpu = () => serverPids(port).reduce((s, p) => s + cpuMs(p), 0);
    const goal = answers(fake, side.prefix.slice(1)) + count;
    const cpu0 = pids.map((p) => cpuMs(p));
    const server0 = serverCpu();
    await Promise.all(
      Array.from({ length: count }, (_, m) => directMessage(fake, side.instances[instanceFor(m, side.instances.length, side.delivery)]!, `${side.prefix}${String(m % CONVERSATIONS).padStart(4, '0')}`, `message ${sent++}`)),
    );
    await waitUntil(() => answers(fake, side.prefix.slice(1)) >= goal, 300_000);
    const each = pids.map((p, i) => ((cpuMs(p) - cpu0[i]!) * 1000) / count);
    const perMessage = each.reduce((a, b) => a + b, 0);
    // Server processes that ended during the burst are missed; a connection opened during it counts from its start.
    const server = ((serverCpu() - server0) * 1000) / count;
    if (record) {
      side.perMessage.push(perMessage);
      side.server.push(server);
      process.stdout.write(`${side.label.padEnd(7)} ${perMessage.toFixed(0)} µs/message${each.length > 1 ? ` (${each.map((e) => e.toFixed(0)).join(' + ')})` : ''}, PostgreSQL ${server.toFixed(0)}\n`);
    }
  };
  // Warm-up: every conversation at least once on each side.
  for (const side of sides) await burst(side, WARM, false);
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? sides : [...sides].reverse();
    for (const side of order) await burst(side, MESSAGES, true);
  }
  const [before, now] = sides.map((s) => median(s.perMessage));
  const [beforePg, nowPg] = sides.map((s) => median(s.server));
  process.stdout.write(`median CPU per message: before ${before!.toFixed(0)} µs, now ${now!.toFixed(0)} µs (${(now! / before!).toFixed(2)}×)\n`);
  process.stdout.write(`median PostgreSQL CPU per message: before ${beforePg!.toFixed(0)} µs, now ${nowPg!.toFixed(0)} µs; instances and PostgreSQL ${((now! + nowPg!) / (before! + beforePg!)).toFixed(2)}×\n`);
  process.stdout.write(`load average ${loadAverage()}\n`);
} finally {
  stopCounting();
  await Promise.all(sides.flatMap((s) => s.instances.map(stopInstance)));
  await model.close();
  await fake.close();
  for (const cluster of clusters) cluster.stop();
}
