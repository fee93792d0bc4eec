// Chat adapters against the loopback fakes: reply latency, messages per second and CPU time per
// message through the Discord gateway path and the Slack HTTP path, next to a bare discord.js /
// Bolt echo bot on the same kind of fake in the same run — once with the adapter and an instant
// echo handler, once through the whole of Warden's message path (adapter, router, access gate,
// per-session queue, gateway) with an instant model and no tools; and approval click → router
// callback latency. The three bots run side by side, each on a fake of its own (chat-lanes.ts),
// and take bursts in turn, round after round in a shuffled order: a round's bursts share the
// machine's load, so the overhead is read from same-round pairs of CPU time per message, the
// figure least moved by other processes on a shared machine. Messages come from 20
// conversations, so the per-session order (one turn at a time) is exercised without a single
// queue holding the whole burst.
import { performance } from 'node:perf_hooks';
import { createDiscordAdapter } from '../adapters/discord/index.js';
import { createSlackAdapter } from '../adapters/slack/index.js';
import { log } from '../src/log/log.js';
import type { ClickOutcome } from '../src/gateway/types.js';
import { ApprovalLedger } from '../test/fakes/approval-ledger.js';
import { defaultGuild, fakeUser, startDiscordFake } from '../test/fakes/discord/index.js';
import { startSlackFake } from '../test/fakes/slack/index.js';
import { BOT_KINDS, discordLane, interleavedBursts, median, overhead, quartiles, SLACK_SECRET, slackLane, type BotKind, type Lane, type LaneSamples } from './chat-lanes.js';
import { type Bench, type BenchRow, fmtMs, fmtRatio, summarize } from './harness.js';

const SEQUENTIAL = 100;
const LATENCY_ROUNDS = 3;
const WARMUP = 50;
const BURST = 200;
const ROUNDS = 12;
const CLICKS = 100;
const SECRET = SLACK_SECRET;
/** Most throughput lost against the bare bot measured in the same run, in per cent. */
const DISCORD_TARGET_PCT = 15;
const SLACK_TARGET_PCT = 10;

/** One message at a time to each lane in turn, `SEQUENTIAL` per round: reply latency. */
async function latencies(lanes: readonly Lane[]): Promise<Map<BotKind, number[]>> {
  const out = new Map<BotKind, number[]>(lanes.map((l) => [l.kind, []]));
  for (const lane of lanes) {
    for (let i = 0; i < WARMUP; i++) {
      const reply = lane.expect(`${lane.kind}-warm-${i}`);
      await lane.trigger(`${lane.kind}-warm-${i}`);
      await reply;
    }
  }
  for (let round = 0; round < LATENCY_ROUNDS; round++) {
    for (const lane of [...lanes.slice(round % lanes.length), ...lanes.slice(0, round % lanes.length)]) {
      for (let i = 0; i < SEQUENTIAL; i++) {
        const text = `${lane.kind}-seq-${round}-${i}`;
        const reply = lane.expect(text);
        const start = performance.now();
        await lane.trigger(text);
        await reply;
        out.get(lane.kind)!.push(performance.now() - start);
      }
      lane.clear();
    }
  }
  return out;
}

const pct = (x: number): string => `${x.toFixed(1)} %`;

function reportPair(report: (row: BenchRow) => void, label: string, bareLatency: number[], ourLatency: number[], bare: LaneSamples, ours: LaneSamples, targetPct: number, what: string): void {
  const b = summarize(bareLatency);
  const o = summarize(ourLatency);
  const o2 = overhead(bare, ours);
  report({ name: `${label}: reply latency p50 (${what} / bare)`, value: fmtMs(o.p50), note: `bare ${fmtMs(b.p50)}, ${fmtRatio(o.p50 / b.p50)}` });
  report({ name: `${label}: reply latency p99 (${what} / bare)`, value: fmtMs(o.p99), note: `bare ${fmtMs(b.p99)}, ${fmtRatio(o.p99 / b.p99)}` });
  report({
    name: `${label}: messages/s, median of ${ours.rates.length} bursts of ${BURST} (${what} / bare)`,
    value: median(ours.rates).toFixed(0),
    note: `bare ${median(bare.rates).toFixed(0)} (same run), overhead ${pct(o2.rate)} (target ≤ ${targetPct} %)`,
  });
  // Per round, ours against the bare bot's burst of the same round, then the median and the
  // middle half of the pairs: the spread says how far one run's figure can be trusted.
  const [q1, q3] = quartiles(ours.cpu);
  report({
    name: `${label}: CPU µs per message (${what} / bare)`,
    value: median(ours.cpu).toFixed(0),
    note: `[${q1.toFixed(0)}–${q3.toFixed(0)}], bare ${median(bare.cpu).toFixed(0)}; overhead ${pct(o2.cpu)} in messages/s terms, median of ${o2.cpuPairs.length} same-round pairs, middle half ${pct(o2.cpuIqr[0])}–${pct(o2.cpuIqr[1])} (target ≤ ${targetPct} %)`,
  });
}

/** Latency, then interleaved bursts, for the three bots of one platform; rows for adapter and Warden. */
async function overheads(report: (row: BenchRow) => void, label: string, newLane: (kind: BotKind) => Promise<Lane>, targetPct: number): Promise<void> {
  const lanes: Lane[] = [];
  try {
    for (const kind of BOT_KINDS) lanes.push(await newLane(kind));
    const latency = await latencies(lanes);
    const samples = await interleavedBursts(lanes, { rounds: ROUNDS, burst: BURST });
    const bare = samples.get('bare')!;
    reportPair(report, label, latency.get('bare')!, latency.get('adapter')!, bare, samples.get('adapter')!, targetPct, 'adapter');
    reportPair(report, label, latency.get('bare')!, latency.get('warden')!, bare, samples.get('warden')!, targetPct, 'warden, instant model');
  } finally {
    for (const lane of lanes) await lane.stop();
  }
}

// ---- Discord ----

async function discordBench(report: (row: BenchRow) => void): Promise<void> {
  await overheads(report, 'discord gateway path', discordLane, DISCORD_TARGET_PCT);
  const fake = await startDiscordFake();
  const channelId = defaultGuild.channels[0]!.id;
  const author = fakeUser('400000000000000001', 'alice');

  // Click → router callback: the adapter acknowledges (deferred update) and then calls the router.
  let clicked: (() => void) | undefined;
  const ledger = new ApprovalLedger(['400000000000000009']);
  const adapter = createDiscordAdapter(
    { token: 'bench', apiBaseUrl: fake.apiBaseUrl, requireMention: false, guilds: {} },
    {
      onApprovalClick: async (click): Promise<ClickOutcome> => {
        clicked?.();
        return ledger.onApprovalClick(click);
      },
      approvers: ledger.approvers,
      approvalsTarget: 'channel',
    },
  );
  await adapter.start(async () => undefined);
  const request = ledger.create({ provider: 'discord', channelId });
  await adapter.approvals.show(request);
  const card = fake.botMessagesIn(channelId).find((m) => m.embeds.length > 0)!;
  const customId = (card.components![0] as any).components[0].custom_id as string;
  const samples: number[] = [];
  for (let i = 0; i < CLICKS; i++) {
    const done = new Promise<void>((resolve) => (clicked = resolve));
    const start = performance.now();
    fake.click({ message: card, customId, user: author });
    await done;
    samples.push(performance.now() - start);
    await fake.requests.waitFor(() => fake.requests.filter((r) => r.path.startsWith('/webhooks/')).length > i, 5_000);
  }
  await adapter.stop();
  const t = summarize(samples);
  report({ name: 'discord: approval click → router callback p50 / p99', value: fmtMs(t.p50), note: `p99 ${fmtMs(t.p99)} (includes the deferred-update round trip)` });
  await fake.close();
}

// ---- Slack ----

async function slackBench(report: (row: BenchRow) => void): Promise<void> {
  await overheads(report, 'slack http path', slackLane, SLACK_TARGET_PCT);
  const fake = await startSlackFake();
  const channel = 'C0000GEN';
  let clicked: (() => void) | undefined;
  const ledger = new ApprovalLedger(['U0000OWNER']);
  const adapter = createSlackAdapter(
    { botToken: 'xoxb-fake', signingSecret: SECRET, appToken: undefined, apiUrl: fake.apiUrl, port: 0, host: '127.0.0.1', requireMention: false, channels: {} },
    {
      onApprovalClick: async (click): Promise<ClickOutcome> => {
        clicked?.();
        return ledger.onApprovalClick(click);
      },
      approvers: ledger.approvers,
      approvalsTarget: 'channel',
    },
  );
  await adapter.start(async () => undefined);
  await adapter.approvals.show(ledger.create({ provider: 'slack', channelId: channel }));
  const card = [...fake.messages.values()].find((m) => m.blocks?.length)!;
  const button = card.blocks!.find((b) => b.type === 'actions').elements[0];
  const samples: number[] = [];
  for (let i = 0; i < CLICKS; i++) {
    const done = new Promise<void>((resolve) => (clicked = resolve));
    const start = performance.now();
    void fake.sendAction(adapter.eventsUrl!, fake.blockActions({ message: card, actionId: button.action_id, value: button.value, user: 'U0000ALICE' }), { secret: SECRET });
    await done;
    samples.push(performance.now() - start);
    // Let the refusal go out before the next click (and before the fake closes).
    await fake.requests.waitFor(() => fake.calls('chat.postEphemeral').length > i, 5_000);
  }
  await adapter.stop();
  const t = summarize(samples);
  report({ name: 'slack: approval click → router callback p50 / p99', value: fmtMs(t.p50), note: `p99 ${fmtMs(t.p99)} (signed request, verified, acked)` });
  await fake.close();
}

const bench: Bench = async (report) => {
  const level = log.level;
  log.level = 'warn';
  try {
    await discordBench(report);
    await slackBench(report);
  } finally {
    log.level = level;
  }
};
export default bench;
