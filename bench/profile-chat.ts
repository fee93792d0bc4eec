// One bot on its fake, bursts of messages only, for `--cpu-prof`-style attribution:
// `npx tsx bench/profile-chat.ts slack|discord bare|adapter|warden [BURSTS] [OUT.cpuprofile]`
// prints CPU µs per message (this process: bot and fake) and the bursts' messages/s, and
// writes a CPU profile of the bursts alone (not start-up or warm-up) when OUT is given.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { performance } from 'node:perf_hooks';
import { log } from '../src/log/log.js';
import { discordLane, median, slackLane, type BotKind } from './chat-lanes.js';

log.level = 'warn';
const platform = process.argv[2] === 'discord' ? 'discord' : 'slack';
const kind = (process.argv[3] ?? 'bare') as BotKind;
const BURSTS = Number(process.argv[4] ?? 10);
const out = process.argv[5];
const lane = await (platform === 'discord' ? discordLane(kind) : slackLane(kind));
async function burst(tag: string): Promise<number> {
  const start = performance.now();
  const all: Promise<void>[] = [];
  for (let i = 0; i < 200; i++) {
    all.push(lane.expect(`${tag}-${i}`));
    void lane.trigger(`${tag}-${i}`);
  }
  await Promise.all(all);
  lane.clear();
  return 200 / ((performance.now() - start) / 1000);
}
// Warm-up (JIT, channel names cached), not measured.
for (let b = 0; b < 3; b++) await burst(`warm-${b}`);
const session = out ? new Session() : undefined;
const post = (method: string, params?: object) => new Promise<any>((resolve, reject) => session!.post(method, params, (err, res) => (err ? reject(err) : resolve(res))));
if (session) {
  session.connect();
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 100 });
  await post('Profiler.start');
}
const rates: number[] = [];
const cpu0 = process.cpuUsage();
for (let b = 0; b < BURSTS; b++) rates.push(await burst(`${kind}-${b}`));
const cpu = process.cpuUsage(cpu0);
if (session) writeFileSync(out!, JSON.stringify((await post('Profiler.stop')).profile));
await lane.stop();
console.log(platform, kind, 'cpu µs/msg', ((cpu.user + cpu.system) / (BURSTS * 200)).toFixed(0), 'median msg/s', median(rates).toFixed(0));
