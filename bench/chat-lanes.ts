// The chat bench's bots, each on its own loopback fake, all running at once: a bare discord.js /
// Bolt echo bot, Warden's adapter with an instant echo handler, and the adapter behind Warden's
// whole message path (router, access gate, per-session queue, gateway) with an instant model.
// `interleavedBursts` sends bursts to them in turn, round after round, and takes this process's
// CPU time per message of each burst: the same load hits every bot within a round, so the ratio
// of two bots' CPU per message in one round is the overhead least moved by the machine's load.
import { App, LogLevel } from '@slack/bolt';
import { Client, Events, Partials, Routes, type Message } from 'discord.js';
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { createDiscordAdapter, DISCORD_INTENTS } from '../adapters/discord/index.js';
import { createSlackAdapter } from '../adapters/slack/index.js';
import type { AgentRuntime } from '../src/agent/index.js';
import { parseConfig } from '../src/config/index.js';
import { Gateway } from '../src/gateway/gateway.js';
import type { ChatAdapter } from '../src/gateway/types.js';
import { ApprovalLedger } from '../test/fakes/approval-ledger.js';
import { fakeUser, startDiscordFake, type DiscordFake } from '../test/fakes/discord/index.js';
import type { RecordedRequest } from '../test/fakes/recorder.js';
import { startSlackFake, type SlackFake } from '../test/fakes/slack/index.js';

export type BotKind = 'bare' | 'adapter' | 'warden';
export const BOT_KINDS: readonly BotKind[] = ['bare', 'adapter', 'warden'];
export const SLACK_SECRET = 'bench-signing-secret';
/** Conversations the messages come from: per-session order is exercised without one queue holding the burst. */
const CONVERSATIONS = 20;
// discord.js holds every bot to Discord's global 50 requests/s; lifted here (for every bot) so
// the figures show the code's cost rather than the limiter's queue.
const UNLIMITED = { globalRequestsPerSecond: 1_000_000 };

/** One running bot on its own fake: send it a message, wait for the reply carrying its text. */
export interface Lane {
  readonly kind: BotKind;
  /** Sends one message whose reply will carry `text`. */
  trigger(text: string): Promise<unknown> | void;
  /** Resolves once the fake records the reply carrying `text`. */
  expect(text: string): Promise<void>;
  /** Forgets what the fake recorded (between bursts, so its memory does not grow). */
  clear(): void;
  stop(): Promise<void>;
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

/** A model that answers instantly with the message it was given. */
const instantModel: AgentRuntime = {
  runTurn: async (request) => ({ status: 'completed', reply: request.input.text, rounds: 1, usage: { inputTokens: 0, outputTokens: 0 } }),
};

/** The adapter alone with an instant echo handler: what the adapter costs. */
async function echoThrough(adapter: ChatAdapter): Promise<() => Promise<void>> {
  await adapter.start(async (m) => {
    await adapter.send({ provider: adapter.provider, channelId: m.channelId, threadId: m.threadId }, { text: m.text });
  });
  return () => adapter.stop();
}

/** Warden's message path around an adapter: router, access gate, queue and gateway with an instant model. */
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

/** A Discord bot of `kind` on a fake of its own, answering DMs from CONVERSATIONS users. */
export async function discordLane(kind: BotKind): Promise<Lane & { fake: DiscordFake }> {
  const fake = await startDiscordFake();
  const replies = new Replies((r) => (r.method === 'POST' && /^\/channels\/\d+\/messages$/.test(r.path) ? (r.body?.content as string) : undefined));
  fake.requests.subscribe(replies.onRecord);
  const senders = Array.from({ length: CONVERSATIONS }, (_, i) => fakeUser(`4000000000000001${String(i).padStart(2, '0')}`, `user${i}`));
  let next = 0;
  let stopBot: () => Promise<void>;
  if (kind === 'bare') {
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
    stopBot = () => client.destroy();
  } else {
    // The adapter as Warden builds it, with no approvers (the bench clicks nothing).
    const adapter = createDiscordAdapter(
      { token: 'bench', apiBaseUrl: fake.apiBaseUrl, requireMention: false, guilds: {} },
      { onApprovalClick: new ApprovalLedger([]).onApprovalClick, approvers: [], approvalsTarget: 'channel' },
      { rest: UNLIMITED },
    );
    stopBot = await (kind === 'adapter' ? echoThrough(adapter) : throughWarden(adapter));
  }
  return {
    kind,
    fake,
    trigger: (text) => void fake.userMessage({ author: senders[next++ % senders.length]!, dm: true, content: text }),
    expect: (text) => replies.expect(text),
    clear: () => {
      fake.requests.clear();
      fake.messages.clear();
    },
    stop: async () => {
      await stopBot();
      await fake.close();
    },
  };
}

/** A Slack bot of `kind` (HTTP events, signed) on a fake of its own, answering in CONVERSATIONS channels. */
export async function slackLane(kind: BotKind): Promise<Lane & { fake: SlackFake; url: string }> {
  const fake = await startSlackFake();
  const replies = new Replies((r) => (r.path === '/api/chat.postMessage' ? (r.body?.text as string) : undefined));
  fake.requests.subscribe(replies.onRecord);
  let url: string;
  let stopBot: () => Promise<void>;
  if (kind === 'bare') {
    const app = new App({ token: 'xoxb-fake', signingSecret: SLACK_SECRET, clientOptions: { slackApiUrl: fake.apiUrl }, logLevel: LogLevel.ERROR });
    // The least a Bolt bot does: post with the app's client without holding the listener, as the
    // adapter does. (`await say(…)` kept each event's handling open until Slack answered the post,
    // which made this "bare" bot slower than the adapter.)
    app.message(async ({ message }) => {
      const m = message as { channel: string; text?: string };
      void app.client.chat.postMessage({ channel: m.channel, text: m.text ?? '' });
    });
    const server = (await app.start({ port: 0, host: '127.0.0.1' })) as Server;
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slack/events`;
    stopBot = () => app.stop() as Promise<void>;
  } else {
    const adapter = createSlackAdapter(
      { botToken: 'xoxb-fake', signingSecret: SLACK_SECRET, appToken: undefined, apiUrl: fake.apiUrl, port: 0, host: '127.0.0.1', requireMention: false, channels: {} },
      { onApprovalClick: new ApprovalLedger([]).onApprovalClick, approvers: [], approvalsTarget: 'channel' },
    );
    stopBot = await (kind === 'adapter' ? echoThrough(adapter) : throughWarden(adapter));
    url = adapter.eventsUrl!;
  }
  let next = 0;
  return {
    kind,
    fake,
    url,
    trigger: (text) => fake.sendEvent(url, fake.envelope(fake.messageEvent({ user: 'U0000ALICE', channel: `C0000GEN${next++ % CONVERSATIONS}`, text })), { secret: SLACK_SECRET }),
    expect: (text) => replies.expect(text),
    clear: () => {
      fake.requests.clear();
      fake.messages.clear();
    },
    stop: async () => {
      await stopBot();
      await fake.close();
    },
  };
}

/** Sends `count` messages to a lane and waits for every reply. */
async function burst(lane: Lane, tag: string, count: number): Promise<void> {
  const all: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    const text = `${tag}-${i}`;
    all.push(lane.expect(text));
    void lane.trigger(text);
  }
  await Promise.all(all);
}

export interface LaneSamples {
  /** Messages per second of each measured burst. */
  rates: number[];
  /** This process's CPU µs per message (bot and fake alike, as both run here), per measured burst. */
  cpu: number[];
}

/**
 * Bursts of `burst` messages to each lane in turn, for `rounds` rounds after `warmRounds`
 * unmeasured ones. Each round visits the lanes in a fresh random order (seeded, so runs
 * compare), so no bot always follows the same one.
 */
export async function interleavedBursts(lanes: readonly Lane[], options: { rounds: number; burst: number; warmRounds?: number; seed?: number }): Promise<Map<BotKind, LaneSamples>> {
  const samples = new Map<BotKind, LaneSamples>(lanes.map((l) => [l.kind, { rates: [], cpu: [] }]));
  let seed = options.seed ?? 1;
  const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
  const warm = options.warmRounds ?? 2;
  for (let round = -warm; round < options.rounds; round++) {
    const order = [...lanes];
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    for (const lane of order) {
      const cpu0 = process.cpuUsage();
      const start = performance.now();
      await burst(lane, `${lane.kind}-${round}`, options.burst);
      const elapsed = performance.now() - start;
      const cpu = process.cpuUsage(cpu0);
      lane.clear();
      if (round < 0) continue;
      const s = samples.get(lane.kind)!;
      s.rates.push(options.burst / (elapsed / 1000));
      s.cpu.push((cpu.user + cpu.system) / options.burst);
    }
  }
  return samples;
}

export const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length === 0 ? 0 : s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
/** The middle half of the samples: [25th, 75th] percentile. */
export const quartiles = (xs: readonly number[]): [number, number] => {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.max(0, Math.round(q * (s.length - 1))))] ?? 0;
  return [at(0.25), at(0.75)];
};

/**
 * Overheads of `ours` against `bare`, in messages/s terms (1 − bare cost / our cost): by CPU
 * per message paired round by round, and by the median burst rates.
 */
export function overhead(bare: LaneSamples, ours: LaneSamples): { cpuPairs: number[]; cpu: number; cpuIqr: [number, number]; rate: number } {
  const cpuPairs = ours.cpu.map((c, i) => (1 - bare.cpu[i]! / c) * 100);
  const bareRate = median(bare.rates);
  return { cpuPairs, cpu: median(cpuPairs), cpuIqr: quartiles(cpuPairs), rate: ((bareRate - median(ours.rates)) / bareRate) * 100 };
}
