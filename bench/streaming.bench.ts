// Streamed replies through the whole of Warden (startWarden, the real discord.js and Bolt
// adapters, the gateway) against the loopback fakes and a model fake that writes a 104-character
// answer in 16 pieces, one every 120 ms: how long after the model's first text the first
// message is visible on each platform (the fake received the post), and platform API calls per
// streamed answer. Slack is measured twice: a top-level reply (chat.postMessage, then chat.update
// edits) and a reply in a thread on a workspace with native streaming (chat.startStream,
// chat.appendStream, chat.stopStream). The web chat's figure comes from Chromium
// (test/e2e/web-streaming.browser.test.ts).
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SlackAdapter } from '../adapters/slack/index.js';
import { parseConfig } from '../src/config/index.js';
import { startWarden, type RunningWarden } from '../src/app/startup.js';
import { fakeUser, startDiscordFake } from '../test/fakes/discord/index.js';
import { startFakeOpenAI } from '../test/fakes/models/openai-fake.js';
import { startSlackFake } from '../test/fakes/slack/index.js';
import { type Bench, fmtMs } from './harness.js';

const ANSWERS = 8;
const ANSWER = 'Streaming works: this answer arrives in pieces, edited in place, and ends exactly as the model wrote it.';
const DEV = '300000000000000003';
const alice = fakeUser('400000000000000001', 'alice');

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

async function until(pred: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error('the streamed answer never settled');
    await sleep(20);
  }
}

const bench: Bench = async (report) => {
  const discord = await startDiscordFake();
  const slack = await startSlackFake({ nativeStreaming: true });
  const model = await startFakeOpenAI({ respond: () => ({ kind: 'reply', text: ANSWER, pieceDelayMs: 120 }) });
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-bench-stream-'));
  mkdirSync(path.join(dir, 'workspace'));
  const parsed = parseConfig({
    models: { default: 'openai/gpt-test', providers: { openai: { baseUrl: model.url } } },
    tools: { profile: 'minimal' },
    channels: {
      discord: { token: 't', apiBaseUrl: discord.apiBaseUrl },
      slack: { botToken: 'xoxb-fake', signingSecret: 'secret', apiUrl: slack.apiUrl, port: 0, host: '127.0.0.1' },
    },
    dataDir: path.join(dir, 'data'),
  });
  if (!parsed.ok) throw parsed.error;
  const from = Date.now();
  const started = await startWarden({ ...parsed.value, baseDir: dir }, { env: { OPENAI_API_KEY: 'test' }, shutdownGraceMs: 300 });
  if (!started.ok) throw started.error;
  const warden: RunningWarden = started.warden;
  try {
    await discord.frames.waitFor((f) => f.op === 2 && f.at >= from, 5_000, 'IDENTIFY');
    const slackUrl = (warden.adapters.find((a) => a.provider === 'slack') as SlackAdapter).eventsUrl!;

    const added = { discord: [] as number[], slack: [] as number[], 'slack native stream': [] as number[] };
    const calls = { discord: [] as number[], slack: [] as number[], 'slack native stream': [] as number[] };
    for (let i = 0; i < ANSWERS; i++) {
      // Discord
      let mark = discord.requests.records.length;
      let before = model.requests.length;
      discord.userMessage({ author: alice, channelId: DEV, content: `<@${discord.bot.id}> answer ${i}` });
      const dCalls = () => discord.requests.records.slice(mark).filter((r) => r.path.startsWith(`/channels/${DEV}/messages`));
      await until(() => dCalls().at(-1)?.body?.content === ANSWER);
      await sleep(200);
      added.discord.push(dCalls()[0]!.at - model.requests[before]!.eventTimes![1]!);
      calls.discord.push(dCalls().length);

      // Slack
      mark = slack.requests.records.length;
      before = model.requests.length;
      const event = slack.messageEvent({ user: 'U0000ALICE', channel: 'C0000DEV', text: `<@${slack.bot.userId}> answer ${i}`, type: 'app_mention' });
      await slack.sendEvent(slackUrl, slack.envelope(event), { secret: 'secret' });
      const sCalls = () => slack.requests.records.slice(mark).filter((r) => r.path === '/api/chat.postMessage' || r.path === '/api/chat.update');
      await until(() => sCalls().at(-1)?.body?.text === ANSWER);
      await sleep(200);
      added.slack.push(sCalls()[0]!.at - model.requests[before]!.eventTimes![1]!);
      calls.slack.push(sCalls().length);

      // Slack, in a thread, native streaming
      mark = slack.requests.records.length;
      before = model.requests.length;
      const thread = slack.nextTs();
      const inThread = slack.messageEvent({ user: 'U0000ALICE', channel: 'C0000DEV', text: `<@${slack.bot.userId}> answer ${i}`, type: 'app_mention', threadTs: thread });
      await slack.sendEvent(slackUrl, slack.envelope(inThread), { secret: 'secret' });
      const nCalls = () => slack.requests.records.slice(mark).filter((r) => /^\/api\/chat\.(postMessage|update|startStream|appendStream|stopStream)$/.test(r.path));
      await until(() => nCalls().at(-1)?.path === '/api/chat.stopStream');
      await sleep(200);
      const streamed = [...slack.messages.values()].find((m) => m.thread_ts === thread);
      if (streamed?.text !== ANSWER) throw new Error(`the native stream showed ${JSON.stringify(streamed?.text)}`);
      added['slack native stream'].push(nCalls()[0]!.at - model.requests[before]!.eventTimes![1]!);
      calls['slack native stream'].push(nCalls().length);
    }
    for (const p of ['discord', 'slack', 'slack native stream'] as const) {
      report({ name: `${p}: first visible after the model's first text (median)`, value: fmtMs(median(added[p])), note: `max ${fmtMs(Math.max(...added[p]))}, target ≤ 300 ms` });
      report({ name: `${p}: API calls per streamed answer (median)`, value: String(median(calls[p])), note: `16 model pieces over ~2 s; non-streamed: 1` });
    }
  } finally {
    await warden.stop();
    await Promise.all([discord.close(), slack.close(), model.close()]);
  }
};

export default bench;
