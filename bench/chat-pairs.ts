// The chat overhead alone, for repeated runs while working on the message path:
// `npx tsx bench/chat-pairs.ts slack|discord [ROUNDS] [BURST]` starts the bare bot, the adapter
// and Warden's path on fakes of their own, sends them interleaved bursts and prints CPU µs per
// message and messages/s of each, and the overheads against the bare bot with their spread.
import { log } from '../src/log/log.js';
import { BOT_KINDS, discordLane, interleavedBursts, median, overhead, quartiles, slackLane, type Lane } from './chat-lanes.js';

log.level = 'warn';
const platform = process.argv[2] === 'discord' ? 'discord' : 'slack';
const rounds = Number(process.argv[3] ?? 12);
const burst = Number(process.argv[4] ?? 200);
const lanes: Lane[] = [];
for (const kind of BOT_KINDS) lanes.push(await (platform === 'discord' ? discordLane(kind) : slackLane(kind)));
const samples = await interleavedBursts(lanes, { rounds, burst });
for (const lane of lanes) await lane.stop();
const pct = (x: number) => `${x.toFixed(1)} %`;
const bare = samples.get('bare')!;
for (const kind of BOT_KINDS) {
  const s = samples.get(kind)!;
  const [q1, q3] = quartiles(s.cpu);
  let line = `${platform} ${kind.padEnd(8)} cpu µs/msg ${median(s.cpu).toFixed(0)} [${q1.toFixed(0)}–${q3.toFixed(0)}]  msg/s ${median(s.rates).toFixed(0)}`;
  if (kind !== 'bare') {
    const o = overhead(bare, s);
    line += `  overhead: cpu pairs ${pct(o.cpu)} [${pct(o.cpuIqr[0])}–${pct(o.cpuIqr[1])}], msg/s ${pct(o.rate)}`;
  }
  console.log(line);
}
