// Files people post, through the real discord.js and Bolt adapters on the fakes: an image
// reaches the model as an image part; another file is saved under inbox/ and read by the `read`
// tool; a voice message is named as not transcribed.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { startWarden, type RunningWarden } from '../../src/app/startup.js';
import { fakeUser, startDiscordFake, type DiscordFake } from '../fakes/discord/index.js';
import { FAKE_PNG } from '../fakes/models/openai-media-fake.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import { startSlackFake, type SlackFake } from '../fakes/slack/index.js';
import type { SlackAdapter } from '../../adapters/slack/index.js';
import type { FakeModelServer, FakeReply, FakeRequest } from '../fakes/models/server.js';

const DEV = '300000000000000003';
const alice = fakeUser('400000000000000001', 'alice');

let discord: DiscordFake;
let slack: SlackFake;
let model: FakeModelServer;
let script: FakeReply[] = [];
let responder: ((r: FakeRequest) => FakeReply | undefined) | undefined;
const running: RunningWarden[] = [];

beforeAll(async () => {
  discord = await startDiscordFake();
  slack = await startSlackFake();
  model = await startFakeOpenAI({ respond: (r) => responder?.(r) ?? script.shift() ?? { kind: 'reply', text: 'ok' } });
});
afterEach(async () => {
  responder = undefined;
  await Promise.all(running.splice(0).map((w) => w.stop()));
});
afterAll(async () => {
  await Promise.all([discord?.close(), slack?.close(), model?.close()]);
});

async function start(): Promise<string> {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-files-in-'));
  mkdirSync(path.join(dir, 'workspace'));
  const parsed = parseConfig({
    models: { default: 'openai/gpt-test', providers: { openai: { baseUrl: model.url } } },
    tools: { profile: 'coding' },
    channels: { discord: { token: 't', apiBaseUrl: discord.apiBaseUrl, streaming: false } },
    dataDir: path.join(dir, 'data'),
  });
  if (!parsed.ok) throw parsed.error;
  const from = Date.now();
  const started = await startWarden({ ...parsed.value, baseDir: dir }, { env: { OPENAI_API_KEY: 'test' }, shutdownGraceMs: 300 });
  if (!started.ok) throw started.error;
  running.push(started.warden);
  await discord.frames.waitFor((f) => f.op === 2 && f.at >= from, 5_000, 'IDENTIFY');
  return path.join(dir, 'workspace');
}

async function reply(text: string) {
  await discord.requests.waitFor((r) => r.method === 'POST' && r.path === `/channels/${DEV}/messages` && String(r.body?.content ?? '').includes(text), 15_000, text);
}

const userText = (body: any) => JSON.stringify(body.messages.filter((m: any) => m.role === 'user').at(-1));

describe('files in', () => {
  it('an uploaded image reaches the model as an image part, and is saved under inbox/', async () => {
    const workspace = await start();
    script = [{ kind: 'reply', text: 'A tiny picture.' }];
    const before = model.requests.length;
    discord.userMessage({ author: alice, channelId: DEV, content: `<@${discord.bot.id}> what is this?`, attachments: [{ name: 'shot.png', contentType: 'image/png', data: FAKE_PNG }] });
    await reply('A tiny picture.');
    const sent = userText(model.requests[before]!.body);
    expect(sent).toContain(`data:image/png;base64,${FAKE_PNG.toString('base64')}`);
    expect(sent).toMatch(/image shot\.png attached above; saved as inbox\/\d{8}-\d{6}-[0-9a-f]{4}-shot\.png/);
    const saved = readdirSync(path.join(workspace, 'inbox'));
    expect(saved).toHaveLength(1);
    expect(readFileSync(path.join(workspace, 'inbox', saved[0]!))).toEqual(FAKE_PNG);
  });

  it('a file is saved under inbox/ with a safe name, named to the model, and the read tool reads it', async () => {
    const workspace = await start();
    let named = '';
    responder = (r) => {
      const messages = r.body.messages as any[];
      const last = messages.at(-1);
      if (last.role === 'tool') return { kind: 'reply', text: `It says: ${JSON.stringify(last.content).includes('quarterly numbers: 42') ? 'quarterly numbers: 42' : 'nothing'}` };
      named = /saved as (inbox\/[^\s\]]+)/.exec(userText(r.body))?.[1] ?? '';
      return { kind: 'reply', toolCalls: [{ name: 'read', args: { path: named } }] };
    };
    discord.userMessage({ author: alice, channelId: DEV, content: `<@${discord.bot.id}> read it`, attachments: [{ name: '../../etc/report.txt', contentType: 'text/plain', data: Buffer.from('quarterly numbers: 42\n') }] });
    await reply('It says: quarterly numbers: 42');
    // The sender's name cannot choose the directory: the basename only, under inbox/.
    expect(named).toMatch(/^inbox\/\d{8}-\d{6}-[0-9a-f]{4}-report\.txt$/);
    expect(readFileSync(path.join(workspace, named), 'utf8')).toBe('quarterly numbers: 42\n');
  });

  it('a voice message is named as not transcribed', async () => {
    await start();
    script = [{ kind: 'reply', text: 'Heard you.' }];
    const before = model.requests.length;
    discord.userMessage({ author: alice, channelId: DEV, content: `<@${discord.bot.id}>`, attachments: [{ name: 'voice-message.ogg', contentType: 'audio/ogg', data: Buffer.from('OggS fake'), voice: true }] });
    await reply('Heard you.');
    expect(userText(model.requests[before]!.body)).toMatch(/voice message voice-message\.ogg, saved as inbox\/.*; it is not transcribed/);
  });
});

describe('files in on Slack', () => {
  async function startSlack(): Promise<{ url: string; workspace: string }> {
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-files-in-slack-'));
    mkdirSync(path.join(dir, 'workspace'));
    const parsed = parseConfig({
      models: { default: 'openai/gpt-test', providers: { openai: { baseUrl: model.url } } },
      tools: { profile: 'coding' },
      channels: { slack: { botToken: 'xoxb-fake', signingSecret: 'secret', apiUrl: slack.apiUrl, port: 0, host: '127.0.0.1', streaming: false } },
      dataDir: path.join(dir, 'data'),
    });
    if (!parsed.ok) throw parsed.error;
    const started = await startWarden({ ...parsed.value, baseDir: dir }, { env: { OPENAI_API_KEY: 'test' }, shutdownGraceMs: 300 });
    if (!started.ok) throw started.error;
    running.push(started.warden);
    return { url: (started.warden.adapters.find((a) => a.provider === 'slack') as SlackAdapter).eventsUrl!, workspace: path.join(dir, 'workspace') };
  }
  const share = (url: string, text: string, files: Array<Record<string, unknown>>) =>
    slack.sendEvent(url, slack.envelope(slack.messageEvent({ user: 'U0000ALICE', channel: 'D0000ALICE', text, extra: { subtype: 'file_share', files } })), { secret: 'secret' });
  const slackReply = (text: string) => slack.waitForCall('chat.postMessage', (b) => String(b.text ?? '').includes(text), 15_000);

  it('an uploaded image is fetched with the bot token and reaches the model as an image part', async () => {
    const { url, workspace } = await startSlack();
    script = [{ kind: 'reply', text: 'A tiny Slack picture.' }];
    const before = model.requests.length;
    const from = slack.requests.records.length;
    await share(url, 'what is this?', [slack.hostFile({ name: 'shot.png', mimetype: 'image/png', data: FAKE_PNG })]);
    await slackReply('A tiny Slack picture.');
    const sent = userText(model.requests[before]!.body);
    expect(sent).toContain(`data:image/png;base64,${FAKE_PNG.toString('base64')}`);
    expect(sent).toMatch(/image shot\.png attached above; saved as inbox\//);
    const fetched = slack.requests.records.slice(from).filter((r) => r.path.startsWith('/files-pri/'));
    expect(fetched).toHaveLength(1);
    expect(fetched[0]!.headers.authorization).toBe('Bearer xoxb-fake');
    expect(readdirSync(path.join(workspace, 'inbox'))).toHaveLength(1);
  });

  it('a text file is saved under inbox/ and the read tool reads it', async () => {
    const { url, workspace } = await startSlack();
    let named = '';
    responder = (r) => {
      const last = (r.body.messages as any[]).at(-1);
      if (last.role === 'tool') return { kind: 'reply', text: `Slack file says: ${JSON.stringify(last.content).includes('standup at 10') ? 'standup at 10' : 'nothing'}` };
      named = /saved as (inbox\/[^\s\]]+)/.exec(userText(r.body))?.[1] ?? '';
      return { kind: 'reply', toolCalls: [{ name: 'read', args: { path: named } }] };
    };
    await share(url, 'read it', [slack.hostFile({ name: 'notes.txt', mimetype: 'text/plain', data: Buffer.from('standup at 10\n') })]);
    await slackReply('Slack file says: standup at 10');
    expect(named).toMatch(/^inbox\/\d{8}-\d{6}-[0-9a-f]{4}-notes\.txt$/);
    expect(readFileSync(path.join(workspace, named), 'utf8')).toBe('standup at 10\n');
  });

  it('a file whose URL is not Slack\'s file host is not fetched, and the token goes nowhere', async () => {
    const { url } = await startSlack();
    let seen = false;
    const elsewhere = createServer((req, res) => ((seen = true), res.end('x')));
    await new Promise<void>((r) => elsewhere.listen(0, '127.0.0.1', r));
    try {
      script = [{ kind: 'reply', text: 'No file for me.' }];
      const before = model.requests.length;
      const port = (elsewhere.address() as AddressInfo).port;
      await share(url, 'take this', [{ id: 'F0BAD', name: 'x.txt', mimetype: 'text/plain', size: 1, url_private: `http://127.0.0.1:${port}/steal` }]);
      await slackReply('No file for me.');
      expect(seen).toBe(false);
      expect(userText(model.requests[before]!.body)).toMatch(/file x\.txt could not be fetched: not the platform's file host/);
    } finally {
      elsewhere.close();
    }
  });
});
