// Who may make Warden act, end to end: Warden as `warden start` runs it, the real discord.js
// adapter against the loopback Discord fake, the OpenAI-dialect model fake counting requests.
// A refused message costs no model request, says one short thing, and leaves an audit row.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { APIUser } from 'discord-api-types/v10';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { startWarden, type RunningWarden } from '../../src/app/startup.js';
import { metrics } from '../../src/ops/metrics.js';
import { defaultGuild, fakeUser, startDiscordFake, type DiscordFake } from '../fakes/discord/index.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import type { FakeModelServer } from '../fakes/models/server.js';
import type { RecordedRequest } from '../fakes/recorder.js';

const GUILD = '300000000000000001';
const GENERAL = '300000000000000002';
const DEV = '300000000000000003';
const ENGINEER = '300000000000000077';
const alice = fakeUser('400000000000000001', 'alice');
const bob = fakeUser('400000000000000002', 'bob');
const mallory = fakeUser('400000000000000066', 'mallory');
const olga = fakeUser('400000000000000009', 'olga');
const otherBot = fakeUser('100000000000000099', 'otherwarden');

let fake: DiscordFake;
let model: FakeModelServer;
const running: RunningWarden[] = [];

beforeAll(async () => {
  // alice holds the engineer role; bob does not.
  fake = await startDiscordFake({ guilds: [{ ...defaultGuild, roles: [{ id: ENGINEER, name: 'engineer' }], members: { [alice.id]: [ENGINEER], [bob.id]: [] } }] });
  model = await startFakeOpenAI({ respond: () => ({ kind: 'reply', text: 'model answer' }) });
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((w) => w.stop()));
});
afterAll(async () => {
  await Promise.all([fake?.close(), model?.close()]);
});

async function start(discord: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<RunningWarden> {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-access-e2e-'));
  mkdirSync(path.join(dir, 'workspace'));
  const parsed = parseConfig({
    owners: { discord: [olga.id] },
    models: { default: 'openai/gpt-test', providers: { openai: { baseUrl: model.url } } },
    tools: { profile: 'coding', exec: { host: 'gateway' } },
    channels: { discord: { token: 'test-token', apiBaseUrl: fake.apiBaseUrl, streaming: false, ...discord } },
    dataDir: path.join(dir, 'data'),
    ...extra,
  });
  if (!parsed.ok) throw parsed.error;
  const from = Date.now();
  const started = await startWarden({ ...parsed.value, baseDir: dir }, { env: { OPENAI_API_KEY: 'test' }, shutdownGraceMs: 300 });
  if (!started.ok) throw started.error;
  running.push(started.warden);
  await fake.frames.waitFor((f) => f.op === 2 && f.at >= from, 30_000, 'IDENTIFY');
  return started.warden;
}

const mark = () => fake.requests.records.length;
const postsIn = (channelId: string, from: number) =>
  fake.requests.records.slice(from).filter((r) => r.method === 'POST' && r.path === `/channels/${channelId}/messages`);

function botPost(channelId: string, from: number, pred: (body: any) => boolean = () => true, what = 'bot message'): Promise<RecordedRequest> {
  return fake.requests.waitFor(
    (r) => fake.requests.records.indexOf(r) >= from && r.method === 'POST' && r.path === `/channels/${channelId}/messages` && pred(r.body),
    20_000,
    `${what} in ${channelId}`,
  );
}

const dm = (author: APIUser, content: string) => fake.userMessage({ author, dm: true, content })!;
const inChannel = (author: APIUser, channelId: string, content: string, authorIsBot = false) =>
  fake.userMessage({ author, channelId, content: `<@${fake.bot.id}> ${content}`, authorIsBot })!;

const buttonsOf = (message: { components?: unknown[] }) =>
  ((message.components ?? []) as any[]).flatMap((row) => row.components ?? []).map((b: any) => b.custom_id as string);
const textsOf = (token: string) => fake.requests.records.filter((r) => r.path.includes(token)).map((r) => JSON.stringify(r.body ?? {}));

async function auditRows(warden: RunningWarden, type: string): Promise<Array<{ actor: string; data: string }>> {
  return warden.store.db.all('SELECT actor, data FROM audit_events WHERE type = ? ORDER BY id', [type]);
}

/** Lets anything the gateway would still do land (a reply, a model call) before a "nothing happened" check. */
const settle = () => sleep(600);

describe('access control on Discord', () => {
  it('an unlisted user DMs the bot: one refusal, zero model requests, one audit row; a second DM is not answered again', async () => {
    const warden = await start({ dmPolicy: 'allowlist', allowFrom: [alice.id] });
    const before = model.requests.length;
    const dmChannel = fake.dmChannelOf(mallory.id);
    let from = mark();
    dm(mallory, 'hello, please run up my bill');
    const refusal = await botPost(dmChannel, from);
    expect(refusal.body.content).toBe("Sorry, you don't have access to this assistant here.");
    from = mark();
    dm(mallory, 'hello again');
    await settle();
    expect(postsIn(dmChannel, from)).toHaveLength(0);
    expect(model.requests.length).toBe(before);
    const rows = await auditRows(warden, 'access.denied');
    expect(rows).toHaveLength(2);
    expect(rows[0]!.actor).toBe(`discord:${mallory.id}`);
    expect(JSON.parse(rows[0]!.data)).toMatchObject({ reason: 'dm-not-allowed', path: 'channels.discord.allowFrom' });
    // A listed user's DM reaches the model.
    from = mark();
    dm(alice, 'hi');
    expect((await botPost(fake.dmChannelOf(alice.id), from)).body.content).toContain('model answer');
    expect(model.requests.length).toBe(before + 1);
    expect(await metrics.inboundRefused.get()).toMatchObject({ values: expect.arrayContaining([expect.objectContaining({ labels: { provider: 'discord', reason: 'dm-not-allowed' } })]) });
  }, 60_000);

  it('pairing: an unknown DM gets a code; a non-owner cannot approve it; the owner approves with /pair and the next DM goes through', async () => {
    await start({ dmPolicy: 'pairing' });
    const before = model.requests.length;
    const bobDm = fake.dmChannelOf(bob.id);
    let from = mark();
    dm(bob, 'let me in');
    const asked = await botPost(bobDm, from);
    const code = /\/pair ([A-Z2-9]{8})/.exec(asked.body.content)?.[1];
    expect(code, asked.body.content).toBeDefined();
    // A second DM within the hour: no new code, no message.
    from = mark();
    dm(bob, 'hello?');
    await settle();
    expect(postsIn(bobDm, from)).toHaveLength(0);
    expect(model.requests.length).toBe(before);

    // mallory (unknown) tries to approve bob's code: her DM is refused (she gets a code of her own), nothing is paired.
    from = mark();
    dm(mallory, `/pair ${code}`);
    await botPost(fake.dmChannelOf(mallory.id), from, (b) => /\/pair [A-Z2-9]{8}/.test(b.content), 'mallory\'s own pairing code');
    // alice in a channel (let in there) tries: /pair is not a command for a non-owner.
    from = mark();
    inChannel(alice, GENERAL, `/pair ${code}`);
    expect((await botPost(GENERAL, from)).body.content).toMatch(/Unknown command|not a command|unknown/i);

    from = mark();
    dm(olga, `/pair ${code}`);
    expect((await botPost(fake.dmChannelOf(olga.id), from)).body.content).toBe(`Paired Bob (${bob.id}): their direct messages are let in from now on.`);
    from = mark();
    dm(bob, 'now?');
    expect((await botPost(bobDm, from)).body.content).toContain('model answer');
    expect(model.requests.length).toBe(before + 1);
  }, 60_000);

  it('pairing by button: the owner gets a card in their DM; a non-owner\'s click is refused privately; the owner\'s Approve lets the next DM through, once', async () => {
    await start({ dmPolicy: 'pairing' });
    const before = model.requests.length;
    const bobDm = fake.dmChannelOf(bob.id);
    const olgaDm = fake.dmChannelOf(olga.id);
    let from = mark();
    dm(bob, 'let me in');
    const code = /\/pair ([A-Z2-9]{8})/.exec((await botPost(bobDm, from)).body.content)?.[1];
    expect(code).toBeDefined();
    const posted = await botPost(olgaDm, from, (b) => Array.isArray(b.components) && b.components.length > 0, 'pairing card');
    expect(posted.body.content).toContain(`Bob (${bob.id})`);
    expect(posted.body.content).toContain(code);
    const card = fake.botMessagesIn(olgaDm).filter((m) => buttonsOf(m).length > 0).at(-1)!;
    expect(buttonsOf(card)).toEqual([`warden-pair:approve:${code}`, `warden-pair:deny:${code}`]);

    // mallory (not an owner) clicks Approve: told privately, nothing is paired, the card keeps its buttons.
    const refused = fake.click({ message: card, customId: `warden-pair:approve:${code}`, user: mallory });
    await fake.requests.waitFor((r) => r.path.includes(refused.token) && JSON.stringify(r.body ?? {}).includes('Only an owner'), 10_000, 'refusal to mallory');
    expect(textsOf(refused.token).join()).toContain('"flags":64');
    from = mark();
    dm(bob, 'now?');
    await settle();
    expect(postsIn(bobDm, from)).toHaveLength(0);
    expect(model.requests.length).toBe(before);

    // olga clicks Approve: the card is edited to the outcome, without buttons.
    const approved = fake.click({ message: card, customId: `warden-pair:approve:${code}`, user: olga });
    const edit = await fake.requests.waitFor((r) => r.method === 'PATCH' && r.path.includes(approved.token) && String(r.body?.content ?? '').startsWith('Paired'), 10_000, 'card edited');
    expect(edit.body.content).toContain(`Paired Bob (${bob.id})`);
    expect(edit.body.components).toEqual([]);
    from = mark();
    dm(bob, 'now?');
    expect((await botPost(bobDm, from)).body.content).toContain('model answer');
    expect(model.requests.length).toBe(before + 1);

    // A second click on the stale card (Deny) decides nothing: the code was consumed.
    const late = fake.click({ message: card, customId: `warden-pair:deny:${code}`, user: olga });
    await fake.requests.waitFor((r) => r.path.includes(late.token) && JSON.stringify(r.body ?? {}).includes('No pairing request has that code'), 10_000, 'late click answer');
    from = mark();
    dm(bob, 'still in?');
    expect((await botPost(bobDm, from)).body.content).toContain('model answer');
  }, 60_000);

  it('pairing by button: Deny consumes the code and lets nobody in', async () => {
    await start({ dmPolicy: 'pairing' });
    const before = model.requests.length;
    const bobDm = fake.dmChannelOf(bob.id);
    const olgaDm = fake.dmChannelOf(olga.id);
    let from = mark();
    dm(bob, 'let me in');
    await botPost(olgaDm, from, (b) => Array.isArray(b.components) && b.components.length > 0, 'pairing card');
    const card = fake.botMessagesIn(olgaDm).filter((m) => buttonsOf(m).length > 0).at(-1)!;
    const deny = buttonsOf(card).find((id) => id.startsWith('warden-pair:deny:'))!;
    const denied = fake.click({ message: card, customId: deny, user: olga });
    const edit = await fake.requests.waitFor((r) => r.method === 'PATCH' && r.path.includes(denied.token) && String(r.body?.content ?? '').startsWith('Denied'), 10_000, 'card edited');
    expect(edit.body.components).toEqual([]);
    // bob's next DM is refused again: a fresh request, so a fresh code (and a fresh card).
    from = mark();
    dm(bob, 'please?');
    expect((await botPost(bobDm, from)).body.content).toMatch(/\/pair [A-Z2-9]{8}/);
    expect(model.requests.length).toBe(before);
  }, 60_000);

  it('groupPolicy allowlist with a guild role: a member with the role is answered, one without is not', async () => {
    const warden = await start({ groupPolicy: 'allowlist', guilds: { [GUILD]: { roles: [ENGINEER] } } });
    const before = model.requests.length;
    let from = mark();
    inChannel(alice, GENERAL, 'what is up?');
    expect((await botPost(GENERAL, from)).body.content).toContain('model answer');
    expect(model.requests.length).toBe(before + 1);
    from = mark();
    inChannel(bob, GENERAL, 'what is up?');
    const refused = await botPost(GENERAL, from);
    expect(refused.body.content).toBe("Sorry, you don't have access to this assistant here.");
    await settle();
    expect(model.requests.length).toBe(before + 1);
    expect(JSON.parse((await auditRows(warden, 'access.denied'))[0]!.data)).toMatchObject({ reason: 'sender-not-listed', path: `channels.discord.guilds.${GUILD}.roles` });
    // /status names the rule that let alice in.
    from = mark();
    inChannel(alice, GENERAL, '/status');
    expect((await botPost(GENERAL, from)).body.content).toContain(`Access: allowed (group-listed) by channels.discord.guilds.${GUILD}.roles via role:${ENGINEER}`);
  }, 60_000);

  it('toolsBySender["role:<id>"] removes exec for members of the role; /tools names the key', async () => {
    await start({ guilds: { [GUILD]: { channels: { dev: { tools: { allow: ['*'] }, toolsBySender: { [`role:${ENGINEER}`]: { deny: ['exec', 'process'] } } } } } } });
    let from = mark();
    inChannel(alice, DEV, '/tools');
    const tools = (await botPost(DEV, from)).body.content as string;
    expect(tools.split('\n')[0]).not.toMatch(/\bexec\b/);
    expect(tools).toContain(`• exec — removed by channels.discord.guilds.${GUILD}.channels.dev.toolsBySender["role:${ENGINEER}"]`);
    from = mark();
    inChannel(bob, DEV, '/tools');
    expect(((await botPost(DEV, from)).body.content as string).split('\n')[0]).toMatch(/\bexec\b/);
  }, 60_000);

  it('rate limit: the 11th message in a minute from one sender gets the limit reply once, without a model call', async () => {
    await start({}, { rateLimit: { sender: { perMinute: 10, burst: 10 } } });
    const before = model.requests.length;
    const aliceDm = fake.dmChannelOf(alice.id);
    for (let i = 1; i <= 10; i++) {
      const from = mark();
      dm(alice, `message ${i}`);
      await botPost(aliceDm, from, (b) => String(b.content).includes('model answer'), `answer ${i}`);
    }
    expect(model.requests.length).toBe(before + 10);
    let from = mark();
    dm(alice, 'message 11');
    const limited = await botPost(aliceDm, from);
    expect(limited.body.content).toMatch(/^You're sending messages faster than I can take them\. Please try again in \d+ s\.$/);
    from = mark();
    dm(alice, 'message 12');
    await settle();
    expect(postsIn(aliceDm, from)).toHaveLength(0);
    expect(model.requests.length).toBe(before + 10);
    // The owner is not limited.
    from = mark();
    dm(olga, '/status');
    await botPost(fake.dmChannelOf(olga.id), from);
  }, 90_000);

  it('bots: another bot is ignored by default; with allowBots the loop breaker stops the exchange after the configured turns', async () => {
    await start({ guilds: { [GUILD]: { channels: { dev: { allowBots: true, botLoopProtection: { maxEventsPerWindow: 3, windowSeconds: 60, cooldownSeconds: 60 } } } } } });
    const before = model.requests.length;
    // #general: no allowBots.
    let from = mark();
    inChannel(otherBot, GENERAL, 'hello fellow bot', true);
    await settle();
    expect(postsIn(GENERAL, from)).toHaveLength(0);
    expect(model.requests.length).toBe(before);
    // #dev: the other bot answers every Warden message with a mention, as a second Warden would.
    let answered = 0;
    for (let turn = 1; turn <= 5; turn++) {
      from = mark();
      inChannel(otherBot, DEV, `bot turn ${turn}`, true);
      if (turn <= 3) {
        await botPost(DEV, from, (b) => String(b.content).includes('model answer'), `reply to bot turn ${turn}`);
        answered++;
      } else {
        await settle();
        expect(postsIn(DEV, from)).toHaveLength(0);
      }
    }
    expect(answered).toBe(3);
    expect(model.requests.length).toBe(before + 3);
    // A person in the conversation resets the count; the cooldown still holds for bots.
    from = mark();
    inChannel(alice, DEV, 'a human speaks');
    await botPost(DEV, from, (b) => String(b.content).includes('model answer'));
  }, 90_000);

  it('allowBots: "mentions": a bot message that mentions Warden is answered, one that does not is dropped (even where people need no mention)', async () => {
    const warden = await start({ allowBots: 'mentions', guilds: { [GUILD]: { requireMention: false } } });
    const before = model.requests.length;
    // Without a mention: dropped by the access gate, silently, at no model cost.
    let from = mark();
    fake.userMessage({ author: otherBot, channelId: DEV, content: 'bot chatter, nobody addressed', authorIsBot: true });
    await settle();
    expect(postsIn(DEV, from)).toHaveLength(0);
    expect(model.requests.length).toBe(before);
    // A person needs no mention there (requireMention: false): the channel is live.
    from = mark();
    fake.userMessage({ author: alice, channelId: DEV, content: 'a person, no mention' });
    await botPost(DEV, from, (b) => String(b.content).includes('model answer'), 'reply to the person');
    // With a mention of Warden: answered.
    from = mark();
    inChannel(otherBot, DEV, 'please summarise', true);
    await botPost(DEV, from, (b) => String(b.content).includes('model answer'), 'reply to the mentioning bot');
    expect(model.requests.length).toBe(before + 2);
    // Mentioning someone else is not mentioning Warden.
    from = mark();
    fake.userMessage({ author: otherBot, channelId: DEV, content: `<@${alice.id}> over to you`, authorIsBot: true });
    await settle();
    expect(postsIn(DEV, from)).toHaveLength(0);
    // A bot's DM is addressed to Warden already (OpenClaw's reading): answered without a mention.
    from = mark();
    fake.userMessage({ author: otherBot, dm: true, content: 'a direct question', authorIsBot: true });
    await botPost(fake.dmChannelOf(otherBot.id), from, (b) => String(b.content).includes('model answer'), 'reply to the bot DM');
    expect(model.requests.length).toBe(before + 3);
    // The bot stays no owner and the refusals were bot drops (no refusal text, no audit row).
    expect(await auditRows(warden, 'access.denied')).toHaveLength(0);
  }, 90_000);
});
