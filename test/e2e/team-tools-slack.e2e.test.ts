// The team tools end to end on the Slack fake with the real Bolt adapter (HTTP receiver) and
// the scripted model, on both store engines: sessions_search finds a phrase said three sessions
// ago in a channel the caller may read, and never what another person said to the bot in a DM;
// progress_card updates one message (chat.update) several times, within Slack's rate;
// conversations_turn (owner-only) posts in #ops, #dev goes on meanwhile, and the next human
// reply in #ops comes back to #dev's session as a follow-up turn.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SlackAdapter } from '../../adapters/slack/index.js';
import { parseConfig } from '../../src/config/index.js';
import { startWarden, type RunningWarden } from '../../src/app/startup.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import type { FakeModelServer, FakeReply, FakeRequest } from '../fakes/models/server.js';
import { sendJson, type RecordedRequest } from '../fakes/recorder.js';
import { startSlackFake, type SlackFake } from '../fakes/slack/index.js';
import { ENGINES, freshStoreTarget } from '../store-engines.js';

const SECRET = 'e2e-signing-secret';
const GENERAL = 'C0000GEN';
const DEV = 'C0000DEV';
const OPS = 'C0000OPS';
const PRIVATE_OPS = 'G0000SRE';
const NOT_JOINED = 'C0000HR';
const ARCHIVED = 'C0000OLD';
const BOB = 'U0000BOB';
const MALLORY = 'U0000MAL';
const MALLORY_DM = 'D0000MAL';
const OLGA = 'U0000OLGA';

const STEPS = ['build', 'test', 'migrate', 'deploy', 'verify'];
const cardCall = (n: number): FakeReply => ({
  kind: 'reply',
  delayMs: 400,
  toolCalls: [
    {
      name: 'progress_card',
      args: {
        ...(n === 0 ? { title: 'Release 4.2' } : {}),
        steps: STEPS.map((text, i) => ({ text, status: i < n ? 'done' : i === n ? 'in_progress' : 'pending' })),
        ...(n === STEPS.length ? { final: 'done' } : {}),
      },
    },
  ],
});

function respond(r: FakeRequest): FakeReply {
  const messages = r.body.messages as Array<{ role: string; content: unknown }>;
  const last = messages.at(-1)!;
  const text = typeof last.content === 'string' ? last.content : JSON.stringify(last.content);
  // The task of this turn: what the last user message asked (the session holds earlier turns too).
  const lastUser = messages.findLastIndex((m) => m.role === 'user');
  const thisTurn = messages.slice(lastUser);
  const cardCalls = thisTurn.filter((m) => m.role === 'tool' && JSON.stringify(m.content).includes('Card ')).length;
  if (last.role === 'tool' && JSON.stringify(messages[lastUser]).includes('run the release')) return cardCalls > STEPS.length ? { kind: 'reply', text: 'release finished' } : cardCall(cardCalls);
  if (JSON.stringify(messages[lastUser]).includes('list all conversations')) {
    if (last.role !== 'tool') return { kind: 'reply', toolCalls: [{ name: 'conversations_list', args: { provider: 'slack', limit: 2 } }] };
    const more = /with cursor \\?"([A-Za-z0-9_-]+)\\?"/.exec(text);
    if (more) return { kind: 'reply', toolCalls: [{ name: 'conversations_list', args: { provider: 'slack', limit: 2, cursor: more[1] } }] };
    return { kind: 'reply', text: 'listing done' };
  }
  if (text.includes('run the release')) return cardCall(0);
  if (text.includes('[Reply ')) return { kind: 'reply', text: `Follow-up: ${text.slice(text.indexOf('[Reply'), 1200)}` };
  if (text.includes('race ops')) return { kind: 'reply', toolCalls: [{ name: 'conversations_turn', args: { provider: 'slack', channel: OPS, text: 'Race question: is 4.3 ready?', timeoutSeconds: 60 } }] };
  if (text.includes('fail ops')) return { kind: 'reply', toolCalls: [{ name: 'conversations_turn', args: { provider: 'slack', channel: OPS, text: 'Doomed question', timeoutSeconds: 60 } }] };
  if (text.includes('ask ops')) return { kind: 'reply', toolCalls: [{ name: 'conversations_turn', args: { provider: 'slack', channel: OPS, text: 'Is the 4.2 deploy safe to start?', timeoutSeconds: 60 } }] };
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

describe.each(ENGINES)('team tools on Slack (%s store)', (engine) => {
  let fake: SlackFake;
  let warden: RunningWarden;
  let url: string;
  beforeAll(async () => {
    fake = await startSlackFake({
      channels: { [GENERAL]: 'general', [DEV]: 'dev', [OPS]: 'ops', [PRIVATE_OPS]: 'sre', [NOT_JOINED]: 'hr', [ARCHIVED]: 'old-launch' },
      memberOf: [GENERAL, DEV, OPS, PRIVATE_OPS, ARCHIVED],
      archived: [ARCHIVED],
    });
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-team-slack-'));
    const target = await freshStoreTarget(engine);
    const parsed = parseConfig({
      models: { default: 'openai/gpt-test', providers: { openai: { baseUrl: model.url } } },
      tools: { profile: 'messaging', alsoAllow: ['progress_card'] },
      owners: { slack: [OLGA] },
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

  it('progress_card posts one message and updates it in place, at most one write per 1.2 s', async () => {
    const from = mark();
    await said(BOB, DEV, 'run the release', 'release finished');
    const writes = fake.requests.records.slice(from).filter((r) => (r.path === '/api/chat.postMessage' || r.path === '/api/chat.update') && String(r.body.text ?? '').includes('Release 4.2'));
    const posts = writes.filter((r) => r.path === '/api/chat.postMessage');
    expect(posts).toHaveLength(1);
    const updates = writes.filter((r) => r.path === '/api/chat.update');
    expect(updates.length).toBeGreaterThanOrEqual(2);
    expect(updates.length).toBeLessThanOrEqual(STEPS.length);
    const postedTs = [...fake.messages.values()].find((m) => m.channel === DEV && String(m.text ?? '').includes('Release 4.2'))!.ts;
    for (const u of updates) expect(u.body.ts).toBe(postedTs);
    expect(posts[0]!.body.channel).toBe(DEV);
    // Slack's chat.update rate (SLACK_STREAM_INTERVAL_MS): writes at least 1.2 s apart.
    for (let i = 1; i < writes.length; i++) expect(writes[i]!.at - writes[i - 1]!.at).toBeGreaterThanOrEqual(1_150);
    expect(String(updates.at(-1)!.body.text)).toContain('Done');
  });

  it('conversations_turn: posts in #ops, #dev takes new messages meanwhile, the reply in #ops comes back', async () => {
    const from = mark();
    const pending = await said(OLGA, DEV, 'ask ops whether we can deploy', 'Tool said:');
    expect(String(pending.body.text)).toContain('waiting for the next reply there');
    await replyIn(OPS, from, 'Is the 4.2 deploy safe to start?');
    await said(OLGA, DEV, 'lunch plans?', 'noted');
    // A human in #ops answers with a plain channel message (no mention); it reaches #dev's session.
    const event = fake.messageEvent({ user: BOB, channel: OPS, text: 'yes, go ahead after 3pm', type: 'message' });
    expect((await fake.sendEvent(url, fake.envelope(event), { secret: SECRET })).status).toBe(200);
    const followUp = await replyIn(DEV, from, 'Follow-up:');
    expect(String(followUp.body.text)).toContain('yes, go ahead after 3pm');
  });

  it('conversations_turn: a reply Slack delivers before it answers the post is kept; a message placed before the post is not taken', async () => {
    const from = mark();
    const before = fake.nextTs();
    // While chat.postMessage for the question is in flight, Slack delivers two messages in #ops:
    // one placed before the question (a delayed event) and the human's answer placed after it,
    // and only then answers the post (the old code stored its wait only at that answer).
    let delivered = false;
    fake.override(
      (r) => r.path === '/api/chat.postMessage' && r.body.channel === OPS && String(r.body.text ?? '').includes('Race question') && !delivered,
      async (r, res) => {
        delivered = true;
        const ts = fake.nextTs();
        fake.messages.set(`${OPS}:${ts}`, { channel: OPS, ts, text: String(r.body.text) });
        for (const [at, text] of [[before, 'typed before the question: no'], [fake.nextTs(), 'instant answer: 4.3 is ready']] as const) {
          const event = fake.messageEvent({ user: BOB, channel: OPS, text, type: 'message', ts: at });
          expect((await fake.sendEvent(url, fake.envelope(event), { secret: SECRET })).status).toBe(200);
        }
        await new Promise((resolve) => setTimeout(resolve, 300));
        sendJson(res, 200, { ok: true, channel: OPS, ts, message: { type: 'message', user: fake.bot.userId, bot_id: fake.bot.botId, channel: OPS, ts, text: String(r.body.text) } });
        return true;
      },
    );
    await said(OLGA, DEV, 'race ops now', 'Tool said:');
    const followUp = await replyIn(DEV, from, 'Follow-up:');
    expect(String(followUp.body.text)).toContain('instant answer: 4.3 is ready');
    expect(String(followUp.body.text)).not.toContain('typed before the question');
    expect(delivered).toBe(true);
  });

  it('conversations_turn: a post Slack refuses returns the error and leaves no wait behind', async () => {
    fake.override(
      (r) => r.path === '/api/chat.postMessage' && r.body.channel === OPS && String(r.body.text ?? '').includes('Doomed question'),
      (_r, res) => (sendJson(res, 200, { ok: false, error: 'is_archived' }), true),
    );
    const waits = async () => Number(await warden.store.db.value('SELECT COUNT(*) FROM conversation_waits'));
    const before = await waits();
    const reply = await said(OLGA, DEV, 'fail ops now', 'Tool said:');
    expect(String(reply.body.text)).toContain('could not post');
    expect(await waits()).toBe(before);
    expect(Number(await warden.store.db.value("SELECT COUNT(*) FROM conversation_waits WHERE state = 'pending'"))).toBe(0);
    expect(Number(await warden.store.db.value('SELECT COUNT(*) FROM conversation_wait_replies'))).toBe(0);
  });

  it('conversations_list: the channels the bot is a member of (conversations.list, paged), then the known DMs, wrapped as untrusted', async () => {
    const before = model.requests.length;
    const from = mark();
    await said(OLGA, DEV, 'list all conversations', 'listing done');
    const pages = model.requests
      .slice(before)
      .map((r) => (r.body.messages as Array<{ role: string; content: unknown }>).at(-1)!)
      .filter((m) => m.role === 'tool')
      .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)));
    const all = pages.join('\n');
    const listed = [...all.matchAll(/\\?"(channelId|userId)\\?": \\?"([A-Z0-9]+)\\?"/g)].map((m) => `${m[1]}:${m[2]}`);
    expect(listed.filter((l) => l.startsWith('channelId:')).sort()).toEqual([`channelId:${DEV}`, `channelId:${GENERAL}`, `channelId:${OPS}`, `channelId:${PRIVATE_OPS}`].sort());
    expect(all).not.toContain(NOT_JOINED);
    expect(all).not.toContain(ARCHIVED);
    expect(listed).toContain(`userId:${MALLORY}`);
    for (const p of pages) expect(p).toMatch(/<untrusted-[0-9a-f]+ source=\\?"conversations_list\\?">/);
    // Slack was asked page by page, never for more than the page still needed.
    const calls = fake.requests.records.slice(from).filter((r) => r.path === '/api/conversations.list');
    expect(calls.length).toBeGreaterThanOrEqual(2);
    for (const c of calls) expect(Number(c.body.limit)).toBeLessThanOrEqual(2);
  });

  it('conversations_turn is owner-only: a member’s call never reaches #ops', async () => {
    const from = mark();
    await said(BOB, DEV, 'ask ops please', 'Tool said:');
    expect(fake.requests.records.slice(from).filter((r) => r.path === '/api/chat.postMessage' && r.body.channel === OPS)).toHaveLength(0);
  });
});
