// Streamed replies end to end: the real discord.js and Bolt adapters against the loopback
// fakes, a model fake that writes its answer over time. A streamed answer arrives as one post
// and its edits, the final text equal to the model's; a tool's progress line is replaced by
// the answer; long answers continue in new messages; `streaming: false` in a channel scope
// posts once. Each case logs the figures the benchmark reports: time from the model's first
// text to the first visible message, and platform API calls per answer.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { chunkText } from '../../src/gateway/chunk-text.js';
import type { SlackAdapter } from '../../adapters/slack/index.js';
import { parseConfig } from '../../src/config/index.js';
import { startWarden, type RunningWarden } from '../../src/app/startup.js';
import { fakeUser, startDiscordFake, type DiscordFake } from '../fakes/discord/index.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import type { FakeModelServer, FakeReply } from '../fakes/models/server.js';
import { startSlackFake, type SlackFake } from '../fakes/slack/index.js';

const GUILD = '300000000000000001';
const DEV = '300000000000000003';
const GENERAL = '300000000000000002';
const alice = fakeUser('400000000000000001', 'alice');
const ANSWER = 'Streaming works: this answer arrives in pieces, edited in place, and ends exactly as the model wrote it.';

let discord: DiscordFake;
let slack: SlackFake;
let slackNative: SlackFake;
let slackRefusing: SlackFake;
let model: FakeModelServer;
let script: FakeReply[] = [];
const running: RunningWarden[] = [];

beforeAll(async () => {
  discord = await startDiscordFake();
  slack = await startSlackFake();
  slackNative = await startSlackFake({ nativeStreaming: true });
  slackRefusing = await startSlackFake({ nativeStreaming: 'not_allowed' });
  model = await startFakeOpenAI({ respond: () => script.shift() ?? { kind: 'reply', text: 'ok' } });
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((w) => w.stop()));
});
afterAll(async () => {
  await Promise.all([discord?.close(), slack?.close(), slackNative?.close(), slackRefusing?.close(), model?.close()]);
});

async function start(channels: Record<string, unknown>): Promise<RunningWarden> {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-streaming-e2e-'));
  mkdirSync(path.join(dir, 'workspace'));
  writeFileSync(path.join(dir, 'workspace', 'notes.txt'), 'the deploy is green\n');
  const parsed = parseConfig({
    models: { default: 'openai/gpt-test', providers: { openai: { baseUrl: model.url } } },
    tools: { profile: 'coding' },
    channels,
    dataDir: path.join(dir, 'data'),
  });
  if (!parsed.ok) throw parsed.error;
  const from = Date.now();
  const started = await startWarden({ ...parsed.value, baseDir: dir }, { env: { OPENAI_API_KEY: 'test' }, shutdownGraceMs: 300 });
  if (!started.ok) throw started.error;
  running.push(started.warden);
  if ('discord' in channels) await discord.frames.waitFor((f) => f.op === 2 && f.at >= from, 30_000, 'IDENTIFY');
  return started.warden;
}

const discordChannels = () => ({
  discord: { token: 't', apiBaseUrl: discord.apiBaseUrl, guilds: { [GUILD]: { channels: { general: { streaming: false } } } } },
});

/** Waits until the bot's messages in a channel show `text` (joined) and nothing changes for a while. */
async function settled(read: () => string[], text: string, ms = 60_000): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (read().join('') === text.replaceAll('\n', '')) return;
    if (read().join('\n') === text || read().join('') === text) return;
    await sleep(50);
  }
  throw new Error(`bot messages never showed the final text; they show ${JSON.stringify(read())}`);
}

function figures(surface: string, firstModelText: number | undefined, firstVisible: number | undefined, calls: Record<string, number>) {
  const added = firstModelText !== undefined && firstVisible !== undefined ? firstVisible - firstModelText : undefined;
  // Read by bench/streaming.md; one line per case.
  process.stdout.write(`[bench] ${surface}: first visible ${added ?? '?'} ms after the model's first text; API calls ${JSON.stringify(calls)}\n`);
  return added;
}

describe('streamed replies on Discord', () => {
  it('one post and throttled edits; the final text is the model\'s; the first text shows while the model writes', async () => {
    await start(discordChannels());
    script = [{ kind: 'reply', text: ANSWER, pieceDelayMs: 120 }];
    const from = discord.requests.records.length;
    const before = model.requests.length;
    discord.userMessage({ author: alice, channelId: DEV, content: `<@${discord.bot.id}> tell me` });
    await settled(() => discord.botMessagesIn(DEV).slice(-1).map((m) => m.content), ANSWER);
    const calls = discord.requests.records.slice(from).filter((r) => r.path.startsWith(`/channels/${DEV}/messages`));
    const posts = calls.filter((r) => r.method === 'POST');
    const edits = calls.filter((r) => r.method === 'PATCH');
    expect(posts).toHaveLength(1);
    expect(edits.length).toBeGreaterThanOrEqual(1);
    expect(edits.at(-1)!.body.content).toBe(ANSWER);
    // Throttled: the model wrote ~16 pieces; Discord saw at most one write a second, plus the final.
    const times = calls.map((r) => r.at);
    for (let i = 1; i < times.length - 1; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(900);
    const events = model.requests[before]!.eventTimes!;
    figures('discord', events[1], posts[0]!.at, { post: posts.length, edit: edits.length });
    // Streamed: the first text is posted while the model is still writing. (How soon, in
    // milliseconds, is a figure of the streaming benchmark; a loaded machine stretches it.)
    expect(posts[0]!.at).toBeLessThan(events.at(-1)!);
  });

  it("a tool's progress line shows and the answer replaces it", async () => {
    await start(discordChannels());
    script = [
      { kind: 'reply', text: 'Let me look.', toolCalls: [{ name: 'read', args: { path: 'notes.txt' } }], pieceDelayMs: 30 },
      // The model takes a while after the tool: the throttled stream shows the progress line meanwhile.
      { kind: 'reply', text: 'The deploy is green.', pieceDelayMs: 30, delayMs: 1500 },
    ];
    const from = discord.requests.records.length;
    discord.userMessage({ author: alice, channelId: DEV, content: `<@${discord.bot.id}> status?` });
    await settled(() => discord.botMessagesIn(DEV).slice(-1).map((m) => m.content), 'The deploy is green.');
    const shown = discord.requests.records.slice(from).filter((r) => r.path.startsWith(`/channels/${DEV}/messages`)).map((r) => String(r.body?.content ?? ''));
    expect(shown.some((t) => t.includes('_running `read` …_'))).toBe(true);
    expect(shown.at(-1)).toBe('The deploy is green.');
  });

  it('a long answer continues in new messages at 2,000 characters; together they are the answer', async () => {
    await start(discordChannels());
    const long = Array.from({ length: 60 }, (_, i) => `Line ${i}: ${'words '.repeat(6)}`.trim()).join('\n');
    script = [{ kind: 'reply', text: long, pieceDelayMs: 2 }];
    const before = discord.botMessagesIn(DEV).length;
    discord.userMessage({ author: alice, channelId: DEV, content: `<@${discord.bot.id}> long` });
    const expected = chunkText(long, 2000);
    expect(expected.length).toBeGreaterThan(1);
    const until = Date.now() + 60_000;
    let got: string[] = [];
    while (Date.now() < until) {
      got = discord.botMessagesIn(DEV).slice(before).map((m) => m.content);
      if (JSON.stringify(got) === JSON.stringify(expected)) break;
      await sleep(100);
    }
    expect(got).toEqual(expected);
  });

  it('`streaming: false` in a channel scope posts the reply once', async () => {
    await start(discordChannels());
    script = [{ kind: 'reply', text: ANSWER, pieceDelayMs: 20 }];
    const from = discord.requests.records.length;
    discord.userMessage({ author: alice, channelId: GENERAL, content: `<@${discord.bot.id}> tell me` });
    await discord.requests.waitFor((r) => r.method === 'POST' && r.path === `/channels/${GENERAL}/messages`, 30_000, 'reply');
    await sleep(300);
    const calls = discord.requests.records.slice(from).filter((r) => r.path.startsWith(`/channels/${GENERAL}/messages`));
    expect(calls.map((r) => [r.method, r.body.content])).toEqual([['POST', ANSWER]]);
  });
});

describe('streamed replies on Slack', () => {
  it('chat.postMessage once, chat.update after; the final text is the model\'s', async () => {
    const warden = await start({ slack: { botToken: 'xoxb-fake', signingSecret: 'secret', apiUrl: slack.apiUrl, port: 0, host: '127.0.0.1' } });
    const url = (warden.adapters.find((a) => a.provider === 'slack') as SlackAdapter).eventsUrl!;
    script = [{ kind: 'reply', text: ANSWER, pieceDelayMs: 120 }];
    const from = slack.requests.records.length;
    const before = model.requests.length;
    const event = slack.messageEvent({ user: 'U0000ALICE', channel: 'C0000DEV', text: `<@${slack.bot.userId}> tell me`, type: 'app_mention' });
    await slack.sendEvent(url, slack.envelope(event), { secret: 'secret' });
    const read = () => [...slack.messages.values()].filter((m) => m.channel === 'C0000DEV').map((m) => m.text).slice(-1);
    await settled(read, ANSWER);
    const calls = slack.requests.records.slice(from).filter((r) => r.path === '/api/chat.postMessage' || r.path === '/api/chat.update');
    const posts = calls.filter((r) => r.path === '/api/chat.postMessage');
    expect(posts).toHaveLength(1);
    expect(calls.at(-1)!.path).toBe('/api/chat.update');
    expect(calls.at(-1)!.body.text).toBe(ANSWER);
    const events = model.requests[before]!.eventTimes!;
    figures('slack', events[1], posts[0]!.at, { 'chat.postMessage': posts.length, 'chat.update': calls.length - posts.length });
    expect(posts[0]!.at).toBeLessThan(events.at(-1)!);
  });

  it('the model\'s Markdown arrives as mrkdwn: bold, links, bullets, a table as a code block', async () => {
    const warden = await start({ slack: { botToken: 'xoxb-fake', signingSecret: 'secret', apiUrl: slack.apiUrl, port: 0, host: '127.0.0.1' } });
    const url = (warden.adapters.find((a) => a.provider === 'slack') as SlackAdapter).eventsUrl!;
    script = [{ kind: 'reply', text: '## Status\n- **api** is up, see [the board](https://status.test/board)\n\n| svc | ok |\n| --- | --- |\n| api | yes |' }];
    const event = slack.messageEvent({ user: 'U0000ALICE', channel: 'C0000DEV', text: `<@${slack.bot.userId}> status`, type: 'app_mention' });
    await slack.sendEvent(url, slack.envelope(event), { secret: 'secret' });
    const expected = '*Status*\n• *api* is up, see <https://status.test/board|the board>\n\n```\nsvc | ok\n----+----\napi | yes\n```';
    const read = () => [...slack.messages.values()].filter((m) => m.channel === 'C0000DEV').map((m) => m.text).slice(-1);
    await settled(read, expected);
  });
});

describe('Slack native streaming in threads', () => {
  const slackConfig = (fake: SlackFake, extra: Record<string, unknown> = {}) => ({
    slack: { botToken: 'xoxb-fake', signingSecret: 'secret', apiUrl: fake.apiUrl, port: 0, host: '127.0.0.1', ...extra },
  });
  const STREAM_METHODS = ['/api/chat.startStream', '/api/chat.appendStream', '/api/chat.stopStream', '/api/chat.postMessage', '/api/chat.update', '/api/chat.delete'];
  async function askInThread(fake: SlackFake, warden: RunningWarden, channel = 'C0000DEV', thread = fake.nextTs()) {
    const url = (warden.adapters.find((a) => a.provider === 'slack') as SlackAdapter).eventsUrl!;
    const event = fake.messageEvent({ user: 'U0000ALICE', channel, text: `<@${fake.bot.userId}> tell me`, type: 'app_mention', threadTs: thread });
    await fake.sendEvent(url, fake.envelope(event), { secret: 'secret' });
    return thread;
  }
  const inThread = (fake: SlackFake, thread: string) => () => [...fake.messages.values()].filter((m) => m.thread_ts === thread).map((m) => m.text);

  it('a stream-capable workspace gets start, appends and stop; the final text is the model\'s', async () => {
    const warden = await start(slackConfig(slackNative));
    script = [{ kind: 'reply', text: ANSWER, pieceDelayMs: 120 }];
    const from = slackNative.requests.records.length;
    const before = model.requests.length;
    const thread = await askInThread(slackNative, warden);
    await settled(inThread(slackNative, thread), ANSWER);
    await slackNative.waitForCall('chat.stopStream', () => true, 5_000);
    const calls = slackNative.requests.records.slice(from).filter((r) => STREAM_METHODS.includes(r.path));
    const methods = calls.map((r) => r.path.slice('/api/'.length));
    expect(methods[0]).toBe('chat.startStream');
    expect(methods.at(-1)).toBe('chat.stopStream');
    expect(methods.slice(1, -1).every((m) => m === 'chat.appendStream')).toBe(true);
    expect(methods.filter((m) => m === 'chat.appendStream').length).toBeGreaterThanOrEqual(1);
    const start0 = calls[0]!.body;
    expect(start0).toMatchObject({ channel: 'C0000DEV', thread_ts: thread, recipient_user_id: 'U0000ALICE', recipient_team_id: slackNative.teamId });
    // What was streamed, put together, is the answer exactly (Markdown, as the model wrote it).
    const streamed = calls.filter((r) => r.path !== '/api/chat.stopStream').map((r) => String(r.body.markdown_text ?? '')).join('');
    expect(streamed).toBe(ANSWER);
    const message = [...slackNative.messages.values()].find((m) => m.thread_ts === thread)!;
    expect(message).toMatchObject({ text: ANSWER, streaming: false });
    const added = figures('slack (native stream)', model.requests[before]!.eventTimes![1], calls[0]!.at, Object.fromEntries(['chat.startStream', 'chat.appendStream', 'chat.stopStream'].map((m) => [m, methods.filter((x) => x === m).length])));
    expect(added).toBeLessThanOrEqual(300);
  });

  it("a tool's progress line is streamed, then replaced: the stream stops and one edit makes the text exact", async () => {
    const warden = await start(slackConfig(slackNative));
    script = [
      { kind: 'reply', text: 'Let me look.', toolCalls: [{ name: 'read', args: { path: 'notes.txt' } }], pieceDelayMs: 30 },
      { kind: 'reply', text: 'The deploy is **green**.', pieceDelayMs: 30, delayMs: 1500 },
    ];
    const from = slackNative.requests.records.length;
    const thread = await askInThread(slackNative, warden);
    await settled(inThread(slackNative, thread), 'The deploy is *green*.');
    const calls = slackNative.requests.records.slice(from).filter((r) => STREAM_METHODS.includes(r.path));
    const streamed = calls.filter((r) => r.path === '/api/chat.startStream' || r.path === '/api/chat.appendStream').map((r) => String(r.body.markdown_text ?? '')).join('');
    expect(streamed).toContain('_running `read` …_');
    const stopAt = calls.findIndex((r) => r.path === '/api/chat.stopStream');
    expect(stopAt).toBeGreaterThan(0);
    expect(calls.slice(stopAt + 1).every((r) => r.path === '/api/chat.update')).toBe(true);
    expect(calls.at(-1)!.body.text).toBe('The deploy is *green*.');
  });

  it('a workspace that refuses native streaming gets the edits, and is not asked again', async () => {
    const warden = await start(slackConfig(slackRefusing));
    script = [{ kind: 'reply', text: ANSWER, pieceDelayMs: 120 }, { kind: 'reply', text: 'Second answer, by edits at once.', pieceDelayMs: 60 }];
    const from = slackRefusing.requests.records.length;
    const thread = await askInThread(slackRefusing, warden);
    await settled(inThread(slackRefusing, thread), ANSWER);
    const calls = slackRefusing.requests.records.slice(from).filter((r) => STREAM_METHODS.includes(r.path));
    expect(calls.map((r) => r.path)[0]).toBe('/api/chat.startStream');
    expect(calls.slice(1).map((r) => r.path)).toEqual(['/api/chat.postMessage', ...calls.slice(2).map(() => '/api/chat.update')]);
    expect(calls.at(-1)!.body.text).toBe(ANSWER);
    const second = slackRefusing.requests.records.length;
    const thread2 = await askInThread(slackRefusing, warden);
    await settled(inThread(slackRefusing, thread2), 'Second answer, by edits at once.');
    expect(slackRefusing.requests.records.slice(second).some((r) => r.path === '/api/chat.startStream')).toBe(false);
  });

  it('`streaming: false` in a channel scope posts once, native or not', async () => {
    const warden = await start(slackConfig(slackNative, { channels: { C0000GEN: { streaming: false } } }));
    script = [{ kind: 'reply', text: ANSWER, pieceDelayMs: 20 }];
    const from = slackNative.requests.records.length;
    const thread = await askInThread(slackNative, warden, 'C0000GEN');
    await settled(inThread(slackNative, thread), ANSWER);
    await sleep(300);
    const calls = slackNative.requests.records.slice(from).filter((r) => STREAM_METHODS.includes(r.path));
    expect(calls.map((r) => [r.path, r.body.text])).toEqual([['/api/chat.postMessage', ANSWER]]);
  });

  it('a top-level reply (no thread to stream into) streams by edits', async () => {
    const warden = await start(slackConfig(slackNative));
    script = [{ kind: 'reply', text: ANSWER, pieceDelayMs: 60 }];
    const from = slackNative.requests.records.length;
    const url = (warden.adapters.find((a) => a.provider === 'slack') as SlackAdapter).eventsUrl!;
    await slackNative.sendEvent(url, slackNative.envelope(slackNative.messageEvent({ user: 'U0000ALICE', channel: 'C0000DEV', text: `<@${slackNative.bot.userId}> hi`, type: 'app_mention' })), { secret: 'secret' });
    await slackNative.waitForCall('chat.update', (b) => b.text === ANSWER, 15_000);
    expect(slackNative.requests.records.slice(from).some((r) => r.path === '/api/chat.startStream')).toBe(false);
  });
});
