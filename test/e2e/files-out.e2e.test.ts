// Files a tool makes reach the chat: image_generate's image is posted as a Discord attachment
// and a Slack upload with the reply, through the real adapters on the fakes; a file over the
// platform's limit is named in the text instead.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fitFiles } from '../../adapters/common/outbound-files.js';
import type { SlackAdapter } from '../../adapters/slack/index.js';
import { parseConfig } from '../../src/config/index.js';
import { startWarden, type RunningWarden } from '../../src/app/startup.js';
import { fakeUser, startDiscordFake, type DiscordFake } from '../fakes/discord/index.js';
import { FAKE_PNG, openaiMediaDialect } from '../fakes/models/openai-media-fake.js';
import { openaiDialect } from '../fakes/models/openai-fake.js';
import { startFakeModelServer, type Dialect, type FakeModelServer, type FakeReply } from '../fakes/models/server.js';
import { startSlackFake, type SlackFake } from '../fakes/slack/index.js';

const DEV = '300000000000000003';
const alice = fakeUser('400000000000000001', 'alice');

let discord: DiscordFake;
let slack: SlackFake;
let model: FakeModelServer;
let script: FakeReply[] = [];
const running: RunningWarden[] = [];

/** One OpenAI endpoint for chat and images, as the real one is. */
const media = openaiMediaDialect();
const both: Dialect = {
  ...openaiDialect,
  matches: (p) => openaiDialect.matches(p) || media.matches(p),
  writeReply: (res, reply, request, stream) => (media.matches(request.path) ? media.writeReply(res, reply, request, stream) : openaiDialect.writeReply(res, reply, request, stream)),
};

beforeAll(async () => {
  discord = await startDiscordFake();
  slack = await startSlackFake();
  model = await startFakeModelServer(both, { respond: (r) => (media.matches(r.path) ? { kind: 'reply' } : (script.shift() ?? { kind: 'reply', text: 'ok' })) });
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((w) => w.stop()));
});
afterAll(async () => {
  await Promise.all([discord?.close(), slack?.close(), model?.close()]);
});

async function start(channels: Record<string, unknown>): Promise<RunningWarden> {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-files-out-'));
  mkdirSync(path.join(dir, 'workspace'));
  const parsed = parseConfig({
    models: { default: 'openai/gpt-test', providers: { openai: { baseUrl: model.url } } },
    media: { imageGeneration: { model: 'openai/gpt-image-1' } },
    tools: { profile: 'full' },
    channels,
    dataDir: path.join(dir, 'data'),
  });
  if (!parsed.ok) throw parsed.error;
  const from = Date.now();
  const started = await startWarden({ ...parsed.value, baseDir: dir }, { env: { OPENAI_API_KEY: 'test' }, shutdownGraceMs: 300 });
  if (!started.ok) throw started.error;
  running.push(started.warden);
  if ('discord' in channels) await discord.frames.waitFor((f) => f.op === 2 && f.at >= from, 5_000, 'IDENTIFY');
  return started.warden;
}

const drawing: FakeReply[] = [
  { kind: 'reply', toolCalls: [{ name: 'image_generate', args: { prompt: 'a red square' } }] },
  { kind: 'reply', text: 'Here is your square.' },
];

describe('files out', () => {
  it('Discord: the generated image is an attachment of the reply', async () => {
    await start({ discord: { token: 't', apiBaseUrl: discord.apiBaseUrl } });
    script = [...drawing];
    discord.userMessage({ author: alice, channelId: DEV, content: `<@${discord.bot.id}> draw` });
    const until = Date.now() + 15_000;
    let withFile: any;
    while (Date.now() < until && !withFile) {
      withFile = discord.requests.records.find((r) => r.method === 'POST' && r.path === `/channels/${DEV}/messages` && (r.files ?? []).length > 0);
      await sleep(50);
    }
    expect(withFile, 'a post with a file').toBeDefined();
    expect(withFile.files[0].name).toMatch(/^image-\d{8}-\d{6}-[0-9a-f]{6}\.png$/);
    // The fake keeps uploads as UTF-8 text: compare in that form.
    expect(withFile.files[0].content).toBe(FAKE_PNG.toString('utf8'));
    const texts = discord.botMessagesIn(DEV).map((m) => m.content);
    expect(texts.join('\n')).toContain('Here is your square.');
  });

  it('Slack: the generated image is uploaded into the conversation', async () => {
    const warden = await start({ slack: { botToken: 'xoxb-fake', signingSecret: 'secret', apiUrl: slack.apiUrl, port: 0, host: '127.0.0.1' } });
    const url = (warden.adapters.find((a) => a.provider === 'slack') as SlackAdapter).eventsUrl!;
    script = [...drawing];
    const from = slack.requests.records.length;
    const event = slack.messageEvent({ user: 'U0000ALICE', channel: 'C0000DEV', text: `<@${slack.bot.userId}> draw`, type: 'app_mention' });
    await slack.sendEvent(url, slack.envelope(event), { secret: 'secret' });
    const done = await slack.requests.waitFor((r) => slack.requests.records.indexOf(r) >= from && r.path === '/api/files.completeUploadExternal', 15_000, 'upload');
    expect(JSON.stringify(done.body)).toContain('C0000DEV');
    const started = slack.requests.records.slice(from).find((r) => r.path === '/api/files.getUploadURLExternal')!;
    expect(String(started.body.filename)).toMatch(/^image-.*\.png$/);
    expect(Number(started.body.length)).toBe(FAKE_PNG.length);
  });

  it.each([
    ['within the limit', 10, 1, { fit: 1, notes: 0 }],
    ['over the byte limit: named with its path', 4, 5, { fit: 0, notes: 1 }],
    ['over the count: the rest named', 10, 0, { fit: 0, notes: 1 }],
  ])('fitFiles %s', (_name, maxBytes, maxFiles, expected) => {
    const r = fitFiles([{ name: 'a.png', mimeType: 'image/png', data: Buffer.alloc(5), path: 'generated/a.png' }], { maxBytes, maxFiles });
    expect({ fit: r.fit.length, notes: r.notes.length }).toEqual(expected);
    if (r.notes.length) expect(r.notes[0]).toContain('generated/a.png');
  });
});
