// The team tools end to end on the Discord fake with the real discord.js adapter and the
// scripted model, on both store engines: sessions_search finds a phrase said three sessions ago
// in a channel the caller may read, and never what another person said to the bot in a DM;
// progress_card edits one message several times, never faster than Discord's edit rate;
// conversations_turn (owner-only) posts in #ops, the caller's conversation goes on meanwhile, and
// the next human reply in #ops comes back to it as a follow-up turn.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { startWarden, type RunningWarden } from '../../src/app/startup.js';
import { defaultGuild, fakeUser, startDiscordFake, type DiscordFake } from '../fakes/discord/index.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import type { FakeModelServer, FakeReply, FakeRequest } from '../fakes/models/server.js';
import type { RecordedRequest } from '../fakes/recorder.js';
import { ENGINES, freshStoreTarget } from '../store-engines.js';

const GUILD = defaultGuild.id;
const GENERAL = '300000000000000002';
const DEV = '300000000000000003';
const OPS = '300000000000000009';
const SECRET_ROOM = '300000000000000010';
const THREAD = '300000000000000004';
const bob = fakeUser('400000000000000002', 'bob');
const mallory = fakeUser('400000000000000007', 'mallory');
const olga = fakeUser('400000000000000009', 'olga');

const lastText = (r: FakeRequest) => {
  const last = (r.body.messages as Array<{ role: string; content: unknown }>).at(-1)!;
  return { role: last.role, text: typeof last.content === 'string' ? last.content : JSON.stringify(last.content) };
};

const STEPS = ['build', 'test', 'migrate', 'deploy', 'verify'];
/** The n-th progress_card call of the scripted task: step n done, the rest pending; the last closes the card. */
const cardCall = (n: number): FakeReply => ({
  kind: 'reply',
  delayMs: 350,
  toolCalls: [
    {
      name: 'progress_card',
      args: {
        ...(n === 0 ? { title: 'Release 4.2' } : {}),
        steps: STEPS.map((text, i) => ({ text, status: i < n ? 'done' : i === n ? 'in_progress' : 'pending' })),
        ...(n === STEPS.length ? { final: 'done' } : { note: `working on ${STEPS[n]}` }),
      },
    },
  ],
});

function respond(r: FakeRequest): FakeReply {
  const { role, text } = lastText(r);
  const messages = r.body.messages as Array<{ role: string; content: unknown }>;
  // The task of this turn: what the last user message asked (the session holds earlier turns too).
  const lastUser = messages.findLastIndex((m) => m.role === 'user');
  const thisTurn = messages.slice(lastUser);
  const cardCalls = thisTurn.filter((m) => m.role === 'tool' && JSON.stringify(m.content).includes('Card ')).length;
  if (JSON.stringify(messages[lastUser]).includes('list all conversations')) return listingStep(role, text);
  if (role === 'tool' && JSON.stringify(messages[lastUser]).includes('run the release')) return cardCalls > STEPS.length ? { kind: 'reply', text: 'release finished' } : cardCall(cardCalls);
  if (role === 'tool') return { kind: 'reply', text: `Tool said: ${text.slice(0, 1500)}` };
  if (text.includes('[Reply ')) return { kind: 'reply', text: `Follow-up: ${text.slice(text.indexOf('[Reply'), 1200)}` };
  if (text.includes('ask ops')) return { kind: 'reply', toolCalls: [{ name: 'conversations_turn', args: { provider: 'discord', channel: OPS, text: 'Is the 4.2 deploy safe to start?', timeoutSeconds: 60 } }] };
  if (text.includes('run the release')) return cardCall(0);
  if (text.includes('search for walrus')) return { kind: 'reply', toolCalls: [{ name: 'sessions_search', args: { query: 'purple walrus' } }] };
  return { kind: 'reply', text: 'noted' };
}

/** conversations_list two at a time, following each page's cursor to the end (as a model pages). */
function listingStep(role: string, text: string): FakeReply {
  if (role !== 'tool') return { kind: 'reply', toolCalls: [{ name: 'conversations_list', args: { provider: 'discord', limit: 2 } }] };
  const more = /with cursor \\?"([A-Za-z0-9_-]+)\\?"/.exec(text);
  if (more) return { kind: 'reply', toolCalls: [{ name: 'conversations_list', args: { provider: 'discord', limit: 2, cursor: more[1] } }] };
  return { kind: 'reply', text: 'listing done' };
}

let model: FakeModelServer;
beforeAll(async () => {
  model = await startFakeOpenAI({ respond });
});
afterAll(async () => {
  await model?.close();
});

describe.each(ENGINES)('team tools on Discord (%s store)', (engine) => {
  let fake: DiscordFake;
  let warden: RunningWarden;
  beforeAll(async () => {
    fake = await startDiscordFake({ guilds: [{ ...defaultGuild, channels: [...defaultGuild.channels, { id: OPS, name: 'ops', type: 0 }, { id: SECRET_ROOM, name: 'hr-private', type: 0, hidden: true }] }] });
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-team-e2e-'));
    const target = await freshStoreTarget(engine);
    const parsed = parseConfig({
      models: { default: 'openai/gpt-test', providers: { openai: { baseUrl: model.url } } },
      tools: { profile: 'messaging', alsoAllow: ['progress_card'] },
      owners: { discord: [olga.id] },
      dataDir: target.dataDir,
      ...(target.url ? { store: { url: target.url } } : {}),
      channels: { discord: { token: 'test-token', apiBaseUrl: fake.apiBaseUrl, streaming: false, guilds: { [GUILD]: { channels: { dev: {}, ops: {}, general: {} } } } } },
    });
    if (!parsed.ok) throw parsed.error;
    const from = Date.now();
    const started = await startWarden({ ...parsed.value, baseDir: dir }, { env: { OPENAI_API_KEY: 'test', PATH: process.env.PATH }, shutdownGraceMs: 300 });
    if (!started.ok) throw started.error;
    warden = started.warden;
    await fake.frames.waitFor((f) => f.op === 2 && f.at >= from, 10_000, 'IDENTIFY');
  });
  afterAll(async () => {
    await warden?.stop();
    await fake?.close();
  });

  const mark = () => fake.requests.records.length;
  const botPost = (channelId: string, from: number, includes: string) =>
    fake.requests.waitFor(
      (r: RecordedRequest) => fake.requests.records.indexOf(r) >= from && r.method === 'POST' && r.path === `/channels/${channelId}/messages` && String(r.body?.content ?? '').includes(includes),
      20_000,
      `a reply in ${channelId} with ${includes}`,
    );
  async function said(author: typeof bob, where: string | 'dm', text: string) {
    const from = mark();
    if (where === 'dm') fake.userMessage({ author, dm: true, content: text });
    else fake.userMessage({ author, channelId: where, content: `<@${fake.bot.id}> ${text}` });
    return botPost(where === 'dm' ? fake.dmChannelOf(author.id) : where, from, '');
  }

  it('finds the phrase said three sessions ago in #ops, not the one in mallory’s DM', async () => {
    await said(bob, OPS, 'the rollback phrase is purple walrus, remember it');
    await said(bob, GENERAL, 'lunch at noon?');
    await said(mallory, 'dm', 'private: my purple walrus salary is 90k');
    const from = mark();
    fake.userMessage({ author: bob, channelId: DEV, content: `<@${fake.bot.id}> search for walrus` });
    const reply = await botPost(DEV, from, 'Tool said:');
    const text = String(reply.body.content);
    expect(text).toContain(`agent:main:discord:channel:${OPS}`);
    expect(text).toContain('rollback phrase is purple walrus');
    expect(text).toContain('1 result');
    expect(text).not.toContain('salary');
    expect(text).not.toContain('direct:');
    // What the model read: the hit wrapped as untrusted, and nothing of the DM.
    const toolMessage = JSON.stringify((model.requests.at(-1)!.body.messages as Array<{ role: string; content: unknown }>).filter((m) => m.role === 'tool').at(-1));
    expect(toolMessage).toMatch(/<untrusted-[0-9a-f]+ source=\\"sessions_search\\">/);
    expect(toolMessage).not.toContain('salary');
  });

  it('progress_card posts one message and edits it in place, never faster than one write a second', async () => {
    const from = mark();
    fake.userMessage({ author: bob, channelId: DEV, content: `<@${fake.bot.id}> run the release` });
    await botPost(DEV, from, 'release finished');
    const writes = fake.requests.records.slice(from).filter((r) => String(r.body?.content ?? '').includes('Release 4.2'));
    const posts = writes.filter((r) => r.method === 'POST');
    expect(posts).toHaveLength(1);
    const id = fake.botMessagesIn(DEV).find((m) => m.content.includes('Release 4.2'))!.id;
    const edits = writes.filter((r) => r.method === 'PATCH');
    for (const e of edits) expect(e.path).toBe(`/channels/${DEV}/messages/${id}`);
    expect(edits.length).toBeGreaterThanOrEqual(2);
    expect(edits.length).toBeLessThanOrEqual(STEPS.length);
    // Discord's edit rate: the stream writes at most once a second (DISCORD_STREAM_INTERVAL_MS).
    for (let i = 1; i < writes.length; i++) expect(writes[i]!.at - writes[i - 1]!.at).toBeGreaterThanOrEqual(950);
    const last = String(edits.at(-1)!.body.content);
    expect(last).toContain('✅ Done');
    expect(last.match(/✅/g)).toHaveLength(STEPS.length + 1);
  });

  it('conversations_turn: posts in #ops, #dev takes new messages meanwhile, the reply in #ops comes back', async () => {
    const from = mark();
    fake.userMessage({ author: olga, channelId: DEV, content: `<@${fake.bot.id}> ask ops whether we can deploy` });
    const asked = await botPost(OPS, from, 'Is the 4.2 deploy safe to start?');
    expect(asked.method).toBe('POST');
    const pending = await botPost(DEV, from, 'Tool said:');
    expect(String(pending.body.content)).toContain('waiting for the next reply there');
    // The caller's conversation is not held: a new message there is answered while #ops is silent.
    const free = mark();
    fake.userMessage({ author: olga, channelId: DEV, content: `<@${fake.bot.id}> lunch plans?` });
    await botPost(DEV, free, 'noted');
    // A human in #ops answers without mentioning the bot; the reply reaches #dev's session.
    fake.userMessage({ author: bob, channelId: OPS, content: 'yes, go ahead after 3pm' });
    const followUp = await botPost(DEV, from, 'Follow-up:');
    expect(String(followUp.body.content)).toContain('yes, go ahead after 3pm');
    expect(String(followUp.body.content)).toContain(`discord channel ${OPS}`);
    // What the model read: the reply wrapped as untrusted.
    const lastUser = JSON.stringify((model.requests.at(-1)!.body.messages as Array<{ role: string; content: unknown }>).filter((m) => m.role === 'user').at(-1));
    expect(lastUser).toMatch(/<untrusted-[0-9a-f]+ source=\\"conversation:discord channel /);
  });

  it('conversations_list: every channel and thread the bot may view, then the known DMs, two a page, wrapped as untrusted', async () => {
    const from = mark();
    const before = model.requests.length;
    fake.userMessage({ author: olga, channelId: DEV, content: `<@${fake.bot.id}> list all conversations` });
    await botPost(DEV, from, 'listing done');
    const pages = model.requests
      .slice(before)
      .map((r) => (r.body.messages as Array<{ role: string; content: unknown }>).at(-1)!)
      .filter((m) => m.role === 'tool')
      .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)));
    const listed = pages.flatMap((p) => [...p.matchAll(/\\?"(channelId|threadId|userId)\\?": \\?"(\d+)\\?"/g)].map((m) => `${m[1]}:${m[2]}`));
    // Never a channel the bot may not view; each conversation once, across pages of at most two.
    expect(pages.length).toBeGreaterThanOrEqual(3);
    for (const p of pages) expect(p).toMatch(/\d conversation\(s\)/);
    expect(pages.join('\n')).not.toContain(SECRET_ROOM);
    expect(pages.join('\n')).not.toContain('hr-private');
    expect(listed.filter((l) => l.startsWith('channelId:') || l.startsWith('threadId:')).sort()).toEqual(
      [`channelId:${GENERAL}`, `channelId:${DEV}`, `channelId:${DEV}`, `channelId:${OPS}`, `threadId:${THREAD}`].sort(),
    );
    // The DMs people opened with the bot (mallory's, from the first test), after the channels.
    expect(listed).toContain(`userId:${mallory.id}`);
    expect(listed.indexOf(`userId:${mallory.id}`)).toBeGreaterThan(listed.indexOf(`threadId:${THREAD}`));
    for (const p of pages) expect(p).toMatch(/<untrusted-[0-9a-f]+ source=\\?"conversations_list\\?">/);
    expect(pages.at(-1)).toContain('That is all.');
  });

  it('conversations_list is owner-only: a member gets no listing', async () => {
    const from = mark();
    const before = model.requests.length;
    fake.userMessage({ author: bob, channelId: DEV, content: `<@${fake.bot.id}> list all conversations` });
    await botPost(DEV, from, 'listing done');
    const toolText = model.requests.slice(before).map((r) => JSON.stringify((r.body.messages as unknown[]).at(-1))).join('\n');
    expect(toolText).not.toContain(OPS);
    expect(toolText).toMatch(/not available|not on|unknown tool|restricted to owners/i);
  });

  it('conversations_turn is owner-only: a member’s call never reaches #ops', async () => {
    const from = mark();
    fake.userMessage({ author: bob, channelId: DEV, content: `<@${fake.bot.id}> ask ops please` });
    const reply = await botPost(DEV, from, 'Tool said:');
    expect(String(reply.body.content)).toMatch(/not available|not on|unknown tool|restricted to owners/i);
    const posted = fake.requests.records.slice(from).filter((r) => r.method === 'POST' && r.path === `/channels/${OPS}/messages`);
    expect(posted).toHaveLength(0);
  });
});
