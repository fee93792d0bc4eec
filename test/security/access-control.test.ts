// Who may make Warden act, attacked. Each case is what someone without access would try: a role
// named like the allowed one, a webhook posting as the owner, a bot's post carrying a person's id,
// a DM from a user whose id is a role's, guessing pairing codes, flooding pairing requests, and
// approving a code without being an owner. The decisions are the real ones (decideAccess, the
// adapters' own normalisation, the pairing store on SQLite), and the Discord cases run through
// the real discord.js adapter on the loopback fake with the model fake counting requests.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { inboundFromSlack } from '../../adapters/slack/inbound.js';
import { openWardenStore } from '../../src/app/migrations.js';
import { startWarden, type RunningWarden } from '../../src/app/startup.js';
import { newPairingCode, normalizeCode, PairingStore } from '../../src/cluster/pairing.js';
import { parseConfig } from '../../src/config/index.js';
import type { WardenConfig } from '../../src/config/schema/index.js';
import { decideAccess, describeAccess } from '../../src/policy/access.js';
import { matchSender } from '../../src/policy/sender.js';
import { defaultGuild, fakeUser, startDiscordFake, type DiscordFake } from '../fakes/discord/index.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import type { FakeModelServer } from '../fakes/models/server.js';

function config(raw: Record<string, unknown>): WardenConfig {
  const parsed = parseConfig(raw);
  if (!parsed.ok) throw parsed.error;
  return parsed.value.config;
}

const OWNER = '400000000000000009';
const ROLE = '300000000000000077';
const G = '300000000000000001';

describe('access decisions an attacker tries to bend', () => {
  const discord = (extra: Record<string, unknown>) => config({ owners: { discord: [OWNER] }, channels: { discord: { token: 't', ...extra } } });
  const chan = { provider: 'discord', chat: 'channel' as const, guildId: G, channelId: '5', channelName: 'general' };
  const dm = { provider: 'discord', chat: 'dm' as const, channelId: 'D' };
  const cases: Array<[string, WardenConfig, typeof chan | typeof dm, Parameters<typeof decideAccess>[2], boolean]> = [
    ['a DM from a user whose id is the allowed role id', discord({ dmPolicy: 'allowlist', allowFrom: [`role:${ROLE}`] }), dm, { provider: 'discord', userId: ROLE, isOwner: false }, false],
    ['a channel message from a user whose id is the allowed role id', discord({ guilds: { [G]: { roles: [ROLE] } } }), chan, { provider: 'discord', userId: ROLE, isOwner: false }, false],
    ['a role id written into the user list, sender id equal to it but no such role held', discord({ guilds: { [G]: { users: [`role:${ROLE}`] } } }), chan, { provider: 'discord', userId: ROLE, isOwner: false }, false],
    ['a Slack user holding a "role" of the same id', config({ channels: { slack: { botToken: 'x', dmPolicy: 'allowlist', allowFrom: [`role:${ROLE}`] } } }), { ...dm, provider: 'slack' }, { provider: 'slack', userId: 'U1', roleIds: [ROLE], isOwner: false }, false],
    ['a bot carrying the owner id', discord({ allowBots: true, dmPolicy: 'allowlist' }), dm, { provider: 'discord', userId: OWNER, isBot: true, isOwner: true }, false],
    ['a bot claiming to be paired', discord({ allowBots: true, dmPolicy: 'pairing' }), dm, { provider: 'discord', userId: '7', isBot: true, paired: true, isOwner: false }, false],
    ['a bot in a channel without allowBots, listed as a user', discord({ guilds: { [G]: { users: ['7'] } } }), chan, { provider: 'discord', userId: '7', isBot: true, isOwner: false }, false],
    // allowBots: "mentions": a mention opens only the first rule, never the ones after it.
    ['a bot that does not mention the bot, under "mentions"', discord({ allowBots: 'mentions' }), chan, { provider: 'discord', userId: '7', isBot: true, mentionsBot: false, isOwner: false }, false],
    ['a mentioning bot carrying the owner id, in a closed DM', discord({ allowBots: 'mentions', dmPolicy: 'allowlist' }), dm, { provider: 'discord', userId: OWNER, isBot: true, mentionsBot: true, isOwner: true }, false],
    ['a mentioning bot claiming to be paired', discord({ allowBots: 'mentions', dmPolicy: 'pairing' }), dm, { provider: 'discord', userId: '7', isBot: true, mentionsBot: true, paired: true, isOwner: false }, false],
    ['a mentioning bot where the channel says false under a guild "mentions"', discord({ guilds: { [G]: { allowBots: 'mentions', channels: { general: { allowBots: false } } } } }), chan, { provider: 'discord', userId: '7', isBot: true, mentionsBot: true, isOwner: false }, false],
    ['a mentioning bot not on the guild\'s role list', discord({ allowBots: 'mentions', guilds: { [G]: { roles: [ROLE] } } }), chan, { provider: 'discord', userId: '7', isBot: true, mentionsBot: true, isOwner: false }, false],
    ['a mentioning bot holding the role id as its own id', discord({ allowBots: 'mentions', guilds: { [G]: { roles: [ROLE] } } }), chan, { provider: 'discord', userId: ROLE, isBot: true, mentionsBot: true, isOwner: false }, false],
    ['a mentioning bot in an unlisted guild under allowlist', discord({ allowBots: 'mentions', groupPolicy: 'allowlist' }), chan, { provider: 'discord', userId: '7', isBot: true, mentionsBot: true, isOwner: false }, false],
    ['a mentioning bot where the guild lists it', discord({ allowBots: 'mentions', guilds: { [G]: { users: ['7'] } } }), chan, { provider: 'discord', userId: '7', isBot: true, mentionsBot: true, isOwner: false }, true],
    ['a provider-prefixed id of another platform', discord({ dmPolicy: 'allowlist', allowFrom: ['slack:7'] }), dm, { provider: 'discord', userId: '7', isOwner: false }, false],
    ['an id with different case and spaces', discord({ dmPolicy: 'allowlist', allowFrom: [' 7 '] }), dm, { provider: 'discord', userId: '7', isOwner: false }, true],
    ['an access group named like an Object prototype key', discord({ dmPolicy: 'allowlist', allowFrom: ['group:__proto__', 'group:constructor'] }), dm, { provider: 'discord', userId: '7', isOwner: false }, false],
  ];
  it.each(cases)('%s', (_n, cfg, where, sender, allowed) => {
    const decision = decideAccess(cfg, where, sender);
    expect(decision.allowed, describeAccess(decision)).toBe(allowed);
  });

  it('a role name in roles matches nobody: Discord sends role ids in member.roles, never names', () => {
    // Discord sends role ids in member.roles; a string like "admins" can only be there if the platform sent it.
    expect(decideAccess(discord({ guilds: { [G]: { roles: ['admins'] } } }), chan, { provider: 'discord', userId: '7', roleIds: [ROLE], isOwner: false }).allowed).toBe(false);
  });

  it('toolsBySender role keys: a user id equal to the role id holds no role', () => {
    const map = { [`role:${ROLE}`]: { alsoAllow: ['exec'] } };
    expect(matchSender(map, { provider: 'discord', senderId: ROLE }, 'tools.toolsBySender')).toBeUndefined();
    expect(matchSender(map, { provider: 'discord', senderId: '7', senderRoleIds: [ROLE] }, 'tools.toolsBySender')?.key).toBe(`role:${ROLE}`);
  });
});

describe('Slack: a bot post carrying a person\'s id is a bot', () => {
  const context = { teamId: 'T1', botUserId: 'UBOT', botId: 'BBOT' };
  it.each([
    ['a bot_message with the owner in `user`', { type: 'message', subtype: 'bot_message', channel: 'D1', channel_type: 'im', user: 'UOWNER', bot_id: 'BEVIL', text: 'hi', ts: '1.1' }],
    ['an app post with bot_id and a user', { type: 'message', channel: 'C1', channel_type: 'channel', user: 'UOWNER', bot_id: 'BEVIL', text: 'hi', ts: '1.2' }],
    ['a bot_message without bot_id', { type: 'message', subtype: 'bot_message', channel: 'C1', channel_type: 'channel', user: 'UOWNER', text: 'hi', ts: '1.3' }],
  ])('%s', (_n, event) => {
    const inbound = inboundFromSlack(event, context)!;
    expect(inbound.senderIsBot).toBe(true);
    const cfg = config({ owners: { slack: ['UOWNER'] }, channels: { slack: { botToken: 'x', allowBots: true, dmPolicy: 'allowlist' } } });
    // The gate never counts a bot as an owner; with an allowlist that names nobody, it is refused.
    const decision = decideAccess(cfg, { provider: 'slack', chat: inbound.chatType, channelId: inbound.channelId }, { provider: 'slack', userId: inbound.senderId, isBot: true, isOwner: false });
    if (inbound.chatType === 'dm') expect(decision.allowed).toBe(false);
  });
});

describe('Slack, allowBots: "mentions": only a mention of this bot opens the gate for a bot post', () => {
  const context = { teamId: 'T1', botUserId: 'UBOT', botId: 'BBOT' };
  const cfg = config({ channels: { slack: { botToken: 'x', allowBots: 'mentions' } } });
  const post = (text: string, type = 'message') => ({ type, channel: 'C1', channel_type: 'channel', bot_id: 'BEVIL', user: 'UEVILBOT', text, ts: '2.1' });
  it.each([
    ['a plain post', post('hello all'), false],
    ['the bot named in plain text', post('@warden please run this'), false],
    ['a longer id that starts with the bot id', post('<@UBOTX> run this'), false],
    ['a mention of someone else', post('<@UOWNER> run this'), false],
    ['a broadcast mention', post('<!channel> run this'), false],
    ['a mention of this bot', post('<@UBOT> run this'), true],
    ['an app_mention event', post('<@UBOT> run this', 'app_mention'), true],
  ] as const)('%s', (_n, event, allowed) => {
    const inbound = inboundFromSlack(event, context)!;
    expect(inbound.senderIsBot).toBe(true);
    const decision = decideAccess(cfg, { provider: 'slack', chat: inbound.chatType, guildId: 'T1', channelId: inbound.channelId }, { provider: 'slack', userId: inbound.senderId, isBot: true, mentionsBot: inbound.mentionsBot, isOwner: false });
    expect(decision.allowed, describeAccess(decision)).toBe(allowed);
  });
});

describe('pairing codes', () => {
  it('a code is 8 characters of 32 (about 10^12 codes), uniform, and malformed input never reaches the store', () => {
    const seen = new Set(Array.from({ length: 2000 }, () => newPairingCode()));
    expect(seen.size).toBe(2000);
    for (const bad of ["' OR 1=1 --", 'ABCDEFG%', 'ABCDEFGHI', '', 'ABCD\u0000EFG']) expect(normalizeCode(bad)).toBeUndefined();
  });

  it('guessing: 5,000 wrong codes pair nobody; the real one still works once; a flood of requesters gets at most 3 codes', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-pair-brute-'));
    const opened = await openWardenStore({ dataDir: dir });
    if (!opened.ok) throw new Error(opened.error.message);
    try {
      const store = new PairingStore(opened.store.db);
      const first = await store.request('discord', 'victim-target');
      expect(first.kind).toBe('created');
      const real = first.kind === 'created' ? first.code : '';
      let paired = 0;
      for (let i = 0; i < 5000; i++) {
        const guess = newPairingCode();
        if (guess === real) continue;
        if ((await store.approve(guess, 'discord', `discord:${OWNER}`)).ok) paired++;
      }
      expect(paired).toBe(0);
      expect(await store.isPaired('discord', 'victim-target')).toBe(false);
      // A flood of strangers: two more codes, then nothing (no message to send, nothing stored).
      const kinds = [];
      for (let i = 0; i < 50; i++) kinds.push((await store.request('discord', `stranger-${i}`)).kind);
      expect(kinds.filter((k) => k === 'created')).toHaveLength(2);
      expect((await store.pending('discord')).length).toBe(3);
      expect((await store.approve(real, 'discord', `discord:${OWNER}`)).ok).toBe(true);
      expect((await store.approve(real, 'discord', `discord:${OWNER}`)).ok).toBe(false);
    } finally {
      await opened.store.close();
    }
  }, 60_000);
});

describe('through the real Discord adapter', () => {
  const ENGINEER = '300000000000000077';
  const SPOOF = '300000000000000078';
  const eve = fakeUser('400000000000000066', 'eve');
  const owner = fakeUser(OWNER, 'olga');
  const GENERAL = '300000000000000002';
  let fake: DiscordFake;
  let model: FakeModelServer;
  const running: RunningWarden[] = [];
  beforeAll(async () => {
    // eve made a role NAMED like the allowed role's id, and holds it.
    fake = await startDiscordFake({ guilds: [{ ...defaultGuild, roles: [{ id: ENGINEER, name: 'engineer' }, { id: SPOOF, name: ENGINEER }], members: { [eve.id]: [SPOOF] } }] });
    model = await startFakeOpenAI({ respond: () => ({ kind: 'reply', text: 'model answer' }) });
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((w) => w.stop()));
  });
  afterAll(async () => {
    await Promise.all([fake?.close(), model?.close()]);
  });

  async function start(): Promise<void> {
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-access-attack-'));
    mkdirSync(path.join(dir, 'workspace'));
    const parsed = parseConfig({
      owners: { discord: [OWNER] },
      models: { default: 'openai/gpt-test', providers: { openai: { baseUrl: model.url } } },
      channels: { discord: { token: 't', apiBaseUrl: fake.apiBaseUrl, streaming: false, dmPolicy: 'allowlist', groupPolicy: 'allowlist', guilds: { [G]: { roles: [ENGINEER] } } } },
      dataDir: path.join(dir, 'data'),
    });
    if (!parsed.ok) throw parsed.error;
    const from = Date.now();
    const started = await startWarden({ ...parsed.value, baseDir: dir }, { env: { OPENAI_API_KEY: 'test' }, shutdownGraceMs: 300 });
    if (!started.ok) throw started.error;
    running.push(started.warden);
    await fake.frames.waitFor((f) => f.op === 2 && f.at >= from, 30_000, 'IDENTIFY');
  }

  const postsAfter = (from: number) => fake.requests.records.slice(from).filter((r) => r.method === 'POST' && /\/channels\/\d+\/messages$/.test(r.path));

  it.each([
    ['a member holding a role named like the allowed role id', () => fake.userMessage({ author: eve, channelId: GENERAL, content: `<@${fake.bot.id}> hi` })],
    ['a webhook posting under the owner\'s name and id', () => fake.userMessage({ author: owner, webhookId: '500000000000000001', channelId: GENERAL, content: `<@${fake.bot.id}> run it` })],
    ['another bot mentioning Warden', () => fake.userMessage({ author: fakeUser('100000000000000099', 'evilbot'), authorIsBot: true, channelId: GENERAL, content: `<@${fake.bot.id}> hi` })],
  ])('%s: no model call', async (_n, send) => {
    await start();
    const before = model.requests.length;
    const from = fake.requests.records.length;
    send();
    await sleep(1200);
    expect(model.requests.length).toBe(before);
    // The role spoof is told it has no access; the webhook and the bot are not answered at all.
    for (const post of postsAfter(from)) expect(String((post.body as { content?: string }).content)).toBe("Sorry, you don't have access to this assistant here.");
  }, 60_000);
});
