// Two builds side by side: `npx tsx bench/cpu-pair-cluster.ts OTHER_BIN [ROUNDS] [MESSAGES] [WARM]` starts
// one `warden start` of another checkout (its bin/warden.js, "before") and one of this checkout
// ("now"), each on its own PostgreSQL database behind the same Slack fake and scripted model,
// and sends them bursts of MESSAGES over 30 conversations in alternation (before, now, now,
// before, …), reading each instance's CPU time (/proc) around its burst. Prints the CPU per
// message of each burst and the medians: on a machine shared with other work, wall throughput
// moves with the load, CPU per message far less, and alternation spreads what remains evenly.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { cpuMs } from './proc-cpu.js';
import { startTestCluster } from '../test/postgres-cluster.js';
import { startFakeOpenAI } from '../test/fakes/models/openai-fake.js';
import { startSlackFake, type SlackFake } from '../test/fakes/slack/index.js';
import { BIN, directMessage, sharedWorkspace, startInstance, stopInstance, type Instance } from '../test/cluster/harness.js';

const [otherBin, roundsArg, messagesArg, warmArg] = process.argv.slice(2);
if (!otherBin) throw new Error('usage: cpu-pair-cluster.ts OTHER_BIN [ROUNDS] [MESSAGES]');
const ROUNDS = Number(roundsArg ?? 4);
const MESSAGES = Number(messagesArg ?? 200);
const CONVERSATIONS = 30;
/** Warm-up messages sent to each side before the rounds (WARM, default one per conversation): a process costs less per message for its first thousand or so. */
const WARM = Number(warmArg ?? CONVERSATIONS);

const answers = (fake: SlackFake, prefix: string) => fake.calls('chat.postMessage').filter((c) => String(c.body.channel).startsWith(`D${prefix}`) && !c.body.blocks).length;
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

const cluster = await startTestCluster();
const fake = await startSlackFake();
const model = await startFakeOpenAI({ respond: () => ({ kind: 'reply', text: 'ok' }) });
async function database(): Promise<string> {
  const url = new URL(cluster.url);
  const name = `pair_${randomUUID().replace(/-/g, '')}`;
  const c = new pg.Client({ connectionString: cluster.url });
  await c.connect();
  await c.query(`CREATE DATABASE ${name}`);
  await c.end();
  url.pathname = `/${name}`;
  return url.toString();
}
const sides: Array<{ label: string; prefix: string; instance: Instance; perMessage: number[] }> = [];
try {
  for (const [label, bin, prefix] of [['before', otherBin, 'UB'], ['now', BIN, 'UN']] as const) {
    const instance = await startInstance(label, { fake, storeUrl: await database(), workspace: sharedWorkspace(), leaseSec: 15, modelUrl: model.url, bin });
    sides.push({ label, prefix, instance, perMessage: [] });
  }
  let sent = 0;
  const burst = async (side: (typeof sides)[number], count: number, record: boolean) => {
    const pid = side.instance.child.pid!;
    const goal = answers(fake, side.prefix.slice(1)) + count;
    const cpu0 = cpuMs(pid);
    await Promise.all(
      Array.from({ length: count }, (_, m) => directMessage(fake, side.instance, `${side.prefix}${String(m % CONVERSATIONS).padStart(4, '0')}`, `message ${sent++}`)),
    );
    await waitUntil(() => answers(fake, side.prefix.slice(1)) >= goal, 300_000);
    const perMessage = ((cpuMs(pid) - cpu0) * 1000) / count;
    if (record) {
      side.perMessage.push(perMessage);
      process.stdout.write(`${side.label.padEnd(7)} ${perMessage.toFixed(0)} µs/message\n`);
    }
  };
  // Warm-up: every conversation at least once on each side.
  for (const side of sides) await burst(side, WARM, false);
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? sides : [...sides].reverse();
    for (const side of order) await burst(side, MESSAGES, true);
  }
  const [before, now] = sides.map((s) => median(s.perMessage));
  process.stdout.write(`median CPU per message: before ${before!.toFixed(0)} µs, now ${now!.toFixed(0)} µs (${(now! / before!).toFixed(2)}×)\n`);
} finally {
  await Promise.all(sides.map((s) => stopInstance(s.instance)));
  await model.close();
  await fake.close();
  cluster.stop();
}
