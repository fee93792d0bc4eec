// The team tools end to end on the Slack fake with the real Bolt adapter (HTTP receiver) and
// the scripted model, on both store engines: sessions_search finds a phrase said three sessions
// ago in a channel the caller may read, and never what another person said to the bot in a DM.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SlackAdapter } from '../../adapters/slack/index.js';
import { parseConfig } from '../../src/config/index.js';
import { startWarden, type RunningWarden } from '../../src/app/startup.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import type { FakeModelServer, FakeReply, FakeRequest } from '../fakes/models/server.js';
import type { RecordedRequest } from '../fakes/recorder.js';
import { startSlackFake, type SlackFake } from '../fakes/slack/index.js';
import { ENGINES, freshStoreTarget } from '../store-engines.js';

const SECRET = 'e2e-signing-secret';
const GENERAL = 'C0000GEN';
const DEV = 'C0000DEV';
const OPS = 'C0000OPS';
const BOB = 'U0000BOB';
const MALLORY = 'U0000MAL';
const MALLORY_DM = 'D0000MAL';

function respond(r: FakeRequest): FakeReply {
  const last = (r.body.messages as Array<{ role: string; content: unknown }>).at(-1)!;
  const text = typeof last.content === 'string' ? last.content : JSON.stringify(last.content);
  if (last.role === 'tool') return { kind: 'reply', text: `Tool said: ${text.slice(0, 1500)}` };
  if (text.includes('search for walrus')) return { kind: 'reply', toolCalls: [{ name: 'sessions_search', args: { query: 'purple walrus' } }] };
  return { kind: 'reply', text: 'noted' };
}

let model: FakeModelServer;
beforeAll(async () => {
  model = await startFakeOpenAI({ respond });
});
afterAll(async () => {
  await model?.close();
});

describe.each(ENGINES)('sessions_search on Slack (%s store)', (engine) => {
  let fake: SlackFake;
  let warden: RunningWarden;
  let url: string;
  beforeAll(async () => {
    fake = await startSlackFake();
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-team-slack-'));
    const target = await freshStoreTarget(engine);
    const parsed = parseConfig({
      models: { default: 'openai/gpt-test', providers: { openai: { baseUrl: model.url } } },
      tools: { profile: 'messaging' },
      dataDir: target.dataDir,
      ...(target.url ? { store: { url: target.url } } : {}),
      channels: { slack: { botToken: 'xoxb-fake', signingSecret: SECRET, apiUrl: fake.apiUrl, port: 0, host: '127.0.0.1', streaming: false } },
    });
    if (!parsed.ok) throw parsed.error;
    const started = await startWarden({ ...parsed.value, baseDir: dir }, { env: { OPENAI_API_KEY: 'test', PATH: process.env.PATH }, shutdownGraceMs: 300 });
    if (!started.ok) throw started.error;
    warden = started.warden;
    url = (warden.adapters.find((a) => a.provider === 'slack') as SlackAdapter).eventsUrl!;
  });
  afterAll(async () => {
    await warden?.stop();
    await fake?.close();
  });

  const mark = () => fake.requests.records.length;
  const replyIn = (channel: string, from: number, includes: string) =>
    fake.requests.waitFor(
      (r: RecordedRequest) => fake.requests.records.indexOf(r) >= from && r.path === '/api/chat.postMessage' && r.body.channel === channel && String(r.body.text ?? '').includes(includes),
      20_000,
      `a reply in ${channel} with ${includes}`,
    );
  async function said(user: string, channel: string, text: string, includes = '') {
    const from = mark();
    const dm = channel.startsWith('D');
    const event = fake.messageEvent({ user, channel, text: dm ? text : `<@${fake.bot.userId}> ${text}`, type: dm ? 'message' : 'app_mention' });
    expect((await fake.sendEvent(url, fake.envelope(event), { secret: SECRET })).status).toBe(200);
    return replyIn(channel, from, includes);
  }

  it('finds the phrase said three sessions ago in #ops, not the one in mallory’s DM', async () => {
    await said(BOB, OPS, 'the rollback phrase is purple walrus, remember it');
    await said(BOB, GENERAL, 'lunch at noon?');
    await said(MALLORY, MALLORY_DM, 'private: my purple walrus salary is 90k');
    const reply = await said(BOB, DEV, 'search for walrus', 'Tool said:');
    const text = String(reply.body.text);
    expect(text.toLowerCase()).toContain(`agent:main:slack:channel:${OPS.toLowerCase()}`);
    expect(text).toContain('rollback phrase is purple walrus');
    expect(text).toContain('1 result');
    expect(text).not.toContain('salary');
    expect(text).not.toContain('direct:');
  });
});
