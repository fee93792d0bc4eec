// Two Warden bots in one channel, end to end: two Warden instances (as `warden start` runs them),
// each its own bot application on the loopback Discord fake (real discord.js), each with its own
// model fake that always answers by addressing the other bot. With `allowBots` and the loop
// breaker, the exchange a person starts stops after the configured number of bot turns.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { startWarden, type RunningWarden } from '../../src/app/startup.js';
import { defaultGuild, fakeUser, startDiscordFake, type DiscordFake } from '../fakes/discord/index.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import type { FakeModelServer } from '../fakes/models/server.js';
import { until } from '../until.js';

const GUILD = '300000000000000001';
const DEV = '300000000000000003';
const A = { id: '100000000000000001', username: 'warden-a', token: 'token-a' };
const B = { id: '100000000000000002', username: 'warden-b', token: 'token-b' };
const alice = fakeUser('400000000000000001', 'alice');
const MAX_BOT_TURNS = 3;

let fake: DiscordFake;
let modelA: FakeModelServer;
let modelB: FakeModelServer;
const running: RunningWarden[] = [];

beforeAll(async () => {
  fake = await startDiscordFake({ guilds: [defaultGuild], bot: { id: A.id, username: A.username }, token: A.token, otherBots: [B] });
  // Each model always replies, addressing the other bot: left alone, the two would talk forever.
  modelA = await startFakeOpenAI({ respond: () => ({ kind: 'reply', text: `<@${B.id}> ping from A` }) });
  modelB = await startFakeOpenAI({ respond: () => ({ kind: 'reply', text: `<@${A.id}> pong from B` }) });
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((w) => w.stop()));
});
afterAll(async () => {
  await Promise.all([fake?.close(), modelA?.close(), modelB?.close()]);
});

async function start(bot: typeof A, model: FakeModelServer): Promise<RunningWarden> {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-two-bots-e2e-'));
  mkdirSync(path.join(dir, 'workspace'));
  const parsed = parseConfig({
    models: { default: 'openai/gpt-test', providers: { openai: { baseUrl: model.url } } },
    tools: { profile: 'minimal' },
    channels: {
      discord: {
        token: bot.token,
        apiBaseUrl: fake.apiBaseUrl,
        streaming: false,
        guilds: { [GUILD]: { channels: { dev: { allowBots: true, botLoopProtection: { maxEventsPerWindow: MAX_BOT_TURNS, windowSeconds: 60, cooldownSeconds: 60 } } } } },
      },
    },
    dataDir: path.join(dir, 'data'),
  });
  if (!parsed.ok) throw parsed.error;
  const from = Date.now();
  const started = await startWarden({ ...parsed.value, baseDir: dir }, { env: { OPENAI_API_KEY: 'test' }, shutdownGraceMs: 300 });
  if (!started.ok) throw started.error;
  running.push(started.warden);
  await fake.frames.waitFor((f) => f.op === 2 && f.at >= from && f.d?.token === bot.token, 30_000, `IDENTIFY of ${bot.username}`);
  return started.warden;
}

/** Posts in #dev by `bot` (by the token it authenticated with), from record `from` on. */
const postsBy = (bot: typeof A, from: number) =>
  fake.requests.records.slice(from).filter((r) => r.method === 'POST' && r.path === `/channels/${DEV}/messages` && r.headers.authorization === `Bot ${bot.token}`);

describe('two Warden bots in one channel', () => {
  it(`with allowBots, each answers at most ${MAX_BOT_TURNS} bot turns in a row, then the exchange stops`, async () => {
    const bots = [await start(A, modelA), await start(B, modelB)];
    // Ready once each bot's client has taken its guilds in (discord.js is ready after GUILD_CREATE):
    // a message before that would find no channel to answer in.
    await until(async () => (await Promise.all(bots.map((w) => w.readiness()))).every((r) => r.ready), 60_000, 'both bots ready');
    const from = fake.requests.records.length;
    fake.userMessage({ author: alice, channelId: DEV, content: `<@${A.id}> start a conversation with the other bot` });
    // A answers alice (a person's turn), then each bot answers the other's messages until its breaker trips:
    // A: 1 + MAX, B: MAX. Waited for as a condition (a loaded machine takes seconds per turn), then
    // the exchange must stay quiet: a breaker that let one more through would post within this window.
    await until(() => postsBy(A, from).length >= 1 + MAX_BOT_TURNS && postsBy(B, from).length >= MAX_BOT_TURNS, 90_000, 'the bots\' turns up to the breaker');
    await sleep(3_000);
    expect(postsBy(A, from)).toHaveLength(1 + MAX_BOT_TURNS);
    expect(postsBy(B, from)).toHaveLength(MAX_BOT_TURNS);
    expect(modelA.requests.length).toBe(1 + MAX_BOT_TURNS);
    expect(modelB.requests.length).toBe(MAX_BOT_TURNS);
    expect(String(postsBy(B, from)[0]!.body.content)).toContain(`<@${A.id}> pong from B`);
  }, 120_000);
});
