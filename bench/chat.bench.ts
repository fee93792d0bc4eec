// Chat adapters against the loopback fakes: reply latency and messages per second through the
// Discord gateway path and the Slack HTTP path, next to a bare discord.js / Bolt echo bot on the
// same fake in the same run — once with the adapter and an instant echo handler, once through the
// whole of Warden's message path (adapter, router, per-session queue, gateway) with an instant
// model and no tools; and approval click → router callback latency. Phases rotate so drift in
// the machine hits all of them. Messages come from 20 conversations, so the per-session order
// (one turn at a time) is exercised without a single queue holding the whole burst.
import { performance } from 'node:perf_hooks';
import { App, LogLevel } from '@slack/bolt';
import { Client, Events, Partials, Routes, type Message } from 'discord.js';
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createDiscordAdapter, DISCORD_INTENTS } from '../adapters/discord/index.js';
import { createSlackAdapter } from '../adapters/slack/index.js';
import type { AgentRuntime } from '../src/agent/index.js';
import { parseConfig } from '../src/config/index.js';
import { Gateway } from '../src/gateway/gateway.js';
import { log } from '../src/log/log.js';
import type { ChatAdapter, ClickOutcome } from '../src/gateway/types.js';
import { ApprovalLedger } from '../test/fakes/approval-ledger.js';
import { defaultGuild, fakeUser, startDiscordFake, type DiscordFake } from '../test/fakes/discord/index.js';
import type { RecordedRequest } from '../test/fakes/recorder.js';
import { startSlackFake, type SlackFake } from '../test/fakes/slack/index.js';
import { type Bench, type BenchRow, fmtMs, fmtRatio, summarize } from './harness.js';

const SEQUENTIAL = 300;
const BURST = 200;
const BURSTS = 5;
const WARMUP = 50;
const ROUNDS = 4;
const CLICKS = 100;
const SECRET = 'bench-signing-secret';
// discord.js holds every bot to Discord's global 50 requests/s; lifted here (for both bots) so the
// figures show the code's cost rather than the limiter's queue.
const UNLIMITED = { globalRequestsPerSecond: 1_000_000 };
/** Most throughput lost against the bare bot measured in the same run, in per cent. */
const DISCORD_TARGET_PCT = 15;
const SLACK_TARGET_PCT = 10;

interface Phase {
  latencies: number[];
  /** Messages per second of each burst. */
  burstRates: number[];
  /**
   * This process's CPU time per message over each round's bursts (bot and fake alike, as both
   * run here). Wall-clock rates on a shared machine move with the other processes' load; CPU
   * time per message moves far less, and while the bursts keep this process busy, messages/s
   * is its inverse: the same overhead, measured the load-robust way.
   */
  cpuPerMessage: number[];
}

/** Resolves a waiter when the fake records the reply carrying its text. */
class Replies {
  private readonly waiting = new Map<string, () => void>();
  constructor(private readonly textOf: (r: RecordedRequest) => string | undefined) {}
  onRecord = (r: RecordedRequest): void => {
    const text = this.textOf(r);
    if (text === undefined) return;
    const done = this.waiting.get(text);
    if (done) {
      this.waiting.delete(text);
      done();
    }
  };
  expect(text: string): Promise<void> {
    return new Promise((resolve) => this.waiting.set(text, resolve));
  }
}

async function measurePhase(tag: string, replies: Replies, trigger: (text: string) => Promise<unknown> | void, phase: Phase): Promise<void> {
  for (let i = 0; i < WARMUP; i++) {
    const text = `${tag}-warm-${i}`;
    const reply = replies.expect(text);
    await trigger(text);
    await reply;
  }
  for (let i = 0; i < SEQUENTIAL; i++) {
    const text = `${tag}-seq-${i}`;
    const reply = replies.expect(text);
    const start = performance.now();
    await trigger(text);
    await reply;
    phase.latencies.push(performance.now() - start);
  }
  const cpu = process.cpuUsage();
  for (let b = 0; b < BURSTS; b++) {
    const start = performance.now();
    const all: Promise<void>[] = [];
    for (let i = 0; i < BURST; i++) {
      const text = `${tag}-burst-${b}-${i}`;
      all.push(replies.expect(text));
      void trigger(text);
    }
    await Promise.all(all);
    phase.burstRates.push(BURST / ((performance.now() - start) / 1000));
  }
  const used = process.cpuUsage(cpu);
  phase.cpuPerMessage.push((used.user + used.system) / (BURSTS * BURST));
}

const newPhase = (): Phase => ({ latencies: [], burstRates: [], cpuPerMessage: [] });

type BotRun = readonly [name: string, phase: Phase, start: () => Promise<() => Promise<void>>];

/** Measures each bot in turn for ROUNDS rounds; round -1 warms the JIT and is thrown away. */
async function runRounds(tag: string, bots: readonly BotRun[], replies: Replies, trigger: (text: string) => Promise<unknown> | void, reset: () => void): Promise<void> {
  for (let round = -1; round < ROUNDS; round++) {
    // Rotate which bot goes first, so warm-up and drift favour none.
    const first = ((round % bots.length) + bots.length) % bots.length;
    for (const [which, phase, startBot] of [...bots.slice(first), ...bots.slice(0, first)]) {
      const stop = await startBot();
      await measurePhase(`${tag}-${which}-${round}`, replies, trigger, round < 0 ? newPhase() : phase);
      await stop();
      reset();
    }
  }
}

/** A model that answers instantly with the message it was given. */
const instantModel: AgentRuntime = {
  runTurn: async (request) => ({ status: 'completed', reply: request.input.text, rounds: 1, usage: { inputTokens: 0, outputTokens: 0 } }),
};

/** The adapter alone with an instant echo handler: what the adapter costs. */
async function echoThrough(adapter: ChatAdapter): Promise<() => Promise<void>> {
  await adapter.start(async (m) => adapter.send({ provider: adapter.provider, channelId: m.channelId, threadId: m.threadId }, { text: m.text }));
  return () => adapter.stop();
}

/** Warden's message path around an adapter: router, queue and gateway with an instant model. */
async function throughWarden(adapter: ChatAdapter): Promise<() => Promise<void>> {
  const parsed = parseConfig({ models: { default: 'openai/instant' }, channels: { discord: { requireMention: false }, slack: { requireMention: false } } });
  if (!parsed.ok) throw parsed.error;
  const gateway = new Gateway({
    config: parsed.value.config,
    adapters: [adapter],
    agent: instantModel,
    tools: undefined,
    toolReport: () => ({ tools: [], removed: [], unavailable: [], warnings: [] }),
    approvals: { approve: () => async () => ({ kind: 'not-found' }), pendingCount: () => 0 },
  });
  await gateway.start();
  return () => gateway.stop();
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

function reportPair(report: (row: BenchRow) => void, label: string, bare: Phase, ours: Phase, targetPct: number, what = 'adapter'): void {
  const b = summarize(bare.latencies);
  const o = summarize(ours.latencies);
  const bareRate = median(bare.burstRates);
  const ourRate = median(ours.burstRates);
  report({ name: `${label}: reply latency p50 (${what} / bare)`, value: fmtMs(o.p50), note: `bare ${fmtMs(b.p50)}, ${fmtRatio(o.p50 / b.p50)}` });
  report({ name: `${label}: reply latency p99 (${what} / bare)`, value: fmtMs(o.p99), note: `bare ${fmtMs(b.p99)}, ${fmtRatio(o.p99 / b.p99)}` });
  report({
    name: `${label}: messages/s, median of bursts of ${BURST} (${what} / bare)`,
    value: ourRate.toFixed(0),
    note: `bare ${bareRate.toFixed(0)} (same run), overhead ${(((bareRate - ourRate) / bareRate) * 100).toFixed(1)} % (target ≤ ${targetPct} %)`,
  });
  // Per round, ours against the bare bot of the same round (adjacent in time), then the median.
  const pairs = ours.cpuPerMessage.map((c, i) => 1 - (bare.cpuPerMessage[i] ?? c) / c);
  report({
    name: `${label}: CPU µs per message, bursts (${what} / bare)`,
    value: median(ours.cpuPerMessage).toFixed(0),
    note: `bare ${median(bare.cpuPerMessage).toFixed(0)}, overhead ${(median(pairs) * 100).toFixed(1)} % in messages/s terms, median of ${pairs.length} same-round pairs (target ≤ ${targetPct} %)`,
  });
}

// ---- Discord ----

async function discordBench(report: (row: BenchRow) => void): Promise<void> {
  const fake = await startDiscordFake();
  const channelId = defaultGuild.channels[0]!.id;
  const author = fakeUser('400000000000000001', 'alice');
  const senders = Array.from({ length: 20 }, (_, i) => fakeUser(`4000000000000001${String(i).padStart(2, '0')}`, `user${i}`));
  const replies = new Replies((r) => (r.method === 'POST' && /^\/channels\/\d+\/messages$/.test(r.path) ? (r.body?.content as string) : undefined));
  const unsubscribe = fake.requests.subscribe(replies.onRecord);
  let next = 0;
  const trigger = (text: string) => void fake.userMessage({ author: senders[next++ % senders.length]!, dm: true, content: text });
  const bare = newPhase();
  const ours = newPhase();
  const full = newPhase();

  async function bareBot(): Promise<() => Promise<void>> {
    const client = new Client({ intents: DISCORD_INTENTS, partials: [Partials.Channel], rest: { api: fake.apiBaseUrl, ...UNLIMITED } });
    // The least a bot on discord.js does: the reply goes out through the REST client, as the
    // adapter's does. (`channel.send` also builds and caches a Message from the response, which
    // made this "bare" bot slower than the adapter and the overhead negative.)
    client.on(Events.MessageCreate, (m: Message) => {
      if (m.author.bot) return;
      void client.rest.post(Routes.channelMessages(m.channelId), { body: { content: m.content } });
    });
    const ready = once(client, Events.ClientReady);
    await client.login('bench');
    await ready;
    return () => client.destroy();
  }

  /** The adapter as Warden builds it, with no approvers (the bench clicks nothing). */
  const newAdapter = () =>
    createDiscordAdapter(
      { token: 'bench', apiBaseUrl: fake.apiBaseUrl, requireMention: false, guilds: {} },
      { onApprovalClick: new ApprovalLedger([]).onApprovalClick, approvers: [], approvalsTarget: 'channel' },
      { rest: UNLIMITED },
    );
  const adapterBot = () => echoThrough(newAdapter());
  const wardenBot = () => throughWarden(newAdapter());

  await runRounds('d', [
    ['bare', bare, bareBot],
    ['adapter', ours, adapterBot],
    ['warden', full, wardenBot],
  ], replies, trigger, () => {
    fake.requests.clear();
    fake.messages.clear();
  });
  reportPair(report, 'discord gateway path', bare, ours, DISCORD_TARGET_PCT);
  reportPair(report, 'discord gateway path', bare, full, DISCORD_TARGET_PCT, 'warden, instant model');

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
  unsubscribe();
  await fake.close();
}

// ---- Slack ----

async function slackBench(report: (row: BenchRow) => void): Promise<void> {
  const fake = await startSlackFake();
  const channel = 'C0000GEN';
  const replies = new Replies((r) => (r.path === '/api/chat.postMessage' ? (r.body?.text as string) : undefined));
  const unsubscribe = fake.requests.subscribe(replies.onRecord);
  let url = '';
  let next = 0;
  const trigger = (text: string) =>
    fake.sendEvent(url, fake.envelope(fake.messageEvent({ user: 'U0000ALICE', channel: `C0000GEN${next++ % 20}`, text })), { secret: SECRET });
  const bare = newPhase();
  const ours = newPhase();
  const full = newPhase();

  async function bareBot(): Promise<() => Promise<void>> {
    const app = new App({ token: 'xoxb-fake', signingSecret: SECRET, clientOptions: { slackApiUrl: fake.apiUrl }, logLevel: LogLevel.ERROR });
    // The least a Bolt bot does: post with the app's client without holding the listener, as the
    // adapter does. (`await say(…)` kept each event's handling open until Slack answered the post,
    // which made this "bare" bot slower than the adapter.)
    app.message(async ({ message }) => {
      const m = message as { channel: string; text?: string };
      void app.client.chat.postMessage({ channel: m.channel, text: m.text ?? '' });
    });
    const server = (await app.start({ port: 0, host: '127.0.0.1' })) as Server;
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slack/events`;
    return () => app.stop() as Promise<void>;
  }

  /** Starts the adapter (as Warden builds it) behind `wrap` and points the event sender at it. */
  async function slackBot(wrap: (adapter: ChatAdapter) => Promise<() => Promise<void>>): Promise<() => Promise<void>> {
    const adapter = createSlackAdapter(
      { botToken: 'xoxb-fake', signingSecret: SECRET, appToken: undefined, apiUrl: fake.apiUrl, port: 0, host: '127.0.0.1', requireMention: false, channels: {} },
      { onApprovalClick: new ApprovalLedger([]).onApprovalClick, approvers: [], approvalsTarget: 'channel' },
    );
    const stop = await wrap(adapter);
    url = adapter.eventsUrl!;
    return stop;
  }
  const adapterBot = () => slackBot(echoThrough);
  const wardenBot = () => slackBot(throughWarden);

  await runRounds('s', [
    ['bare', bare, bareBot],
    ['adapter', ours, adapterBot],
    ['warden', full, wardenBot],
  ], replies, trigger, () => {
    fake.requests.clear();
    fake.messages.clear();
  });
  reportPair(report, 'slack http path', bare, ours, SLACK_TARGET_PCT);
  reportPair(report, 'slack http path', bare, full, SLACK_TARGET_PCT, 'warden, instant model');

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
  unsubscribe();
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
