// A scope keyed by a name others choose. The attacker is the admin of a guild the bot is in (or
// a Slack member): they name their guild or channel after a permissive scope. Such a scope is
// trusted only inside a guild matched by id, or with channels.<platform>.dangerouslyAllowNameMatching;
// elsewhere it only removes tools and sets nothing else. First through Warden as it runs — the
// real discord.js client against the loopback Discord fake, the real router and `/tools` — then
// the rest of the class as tables through the one matcher every path uses.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { APIUser } from 'discord-api-types/v10';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { scopedApprovers } from '../../src/approvals/scoped-approvers.js';
import { parseConfig } from '../../src/config/index.js';
import { requiresMention } from '../../src/policy/mention.js';
import { startWarden, type RunningWarden } from '../../src/app/startup.js';
import { streamingFor } from '../../src/gateway/streaming-setting.js';
import type { InboundMessage } from '../../src/gateway/types.js';
import { auditNameKeyedScopes } from '../../src/policy/scope-audit.js';
import { config, fate, surface } from '../../src/policy/testing.js';
import type { SlackAdapter } from '../../adapters/slack/index.js';
import { fakeUser, startDiscordFake, type DiscordFake } from '../fakes/discord/index.js';
import { startSlackFake, type SlackFake } from '../fakes/slack/index.js';
import type { RecordedRequest } from '../fakes/recorder.js';

const OURS = '310000000000000001';
const OURS_GENERAL = '310000000000000002';
const THEIRS = '320000000000000001';
const THEIRS_GENERAL = '320000000000000002';
const THEIRS_RANDOM = '320000000000000003';
const mallory = fakeUser('400000000000000066', 'mallory');

/** The operator's config: a trusted guild by id, a slug-keyed permissive guild, strict defaults elsewhere. */
const GUILDS = {
  [OURS]: { tools: { deny: ['browser'] }, channels: { '*': { tools: { deny: ['exec', 'process'] } }, dev: { tools: { allow: ['*'] } } } },
  acme: { requireMention: false, tools: { allow: ['*'] } },
  '*': { channels: { '*': { tools: { deny: ['exec', 'process'] } }, dev: { requireMention: false, tools: { allow: ['*'] } } } },
};

describe('through the running bot: a guild admin renames to match', () => {
  let fake: DiscordFake;
  let warden: RunningWarden | undefined;
  beforeAll(async () => {
    fake = await startDiscordFake({
      guilds: [
        { id: OURS, name: 'Ours', channels: [{ id: OURS_GENERAL, name: 'general', type: 0 }] },
        { id: THEIRS, name: 'Theirs', channels: [{ id: THEIRS_GENERAL, name: 'general', type: 0 }, { id: THEIRS_RANDOM, name: 'random', type: 0 }] },
      ],
    });
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-name-scopes-'));
    mkdirSync(path.join(dir, 'workspace'));
    const parsed = parseConfig({
      tools: { profile: 'coding', alsoAllow: ['browser'], exec: { host: 'gateway' } },
      channels: { discord: { token: 'test-token', apiBaseUrl: fake.apiBaseUrl, guilds: GUILDS } },
      dataDir: path.join(dir, 'data'),
    });
    if (!parsed.ok) throw parsed.error;
    const started = await startWarden({ ...parsed.value, baseDir: dir }, { env: {}, shutdownGraceMs: 300 });
    if (!started.ok) throw started.error;
    warden = started.warden;
    await fake.frames.waitFor((f) => f.op === 2, 5_000, 'IDENTIFY');
    await fake.requests.waitFor((r) => r.path.includes('/commands'), 5_000, 'command registration').catch(() => undefined);
  });
  afterAll(async () => {
    await warden?.stop();
    await fake?.close();
  });

  /** The bot's `/tools` answer in a channel, asked by the attacker (with a mention). */
  async function toolsIn(channelId: string, args = '', author: APIUser = mallory): Promise<string> {
    const from = fake.requests.records.length;
    fake.userMessage({ author, channelId, content: `<@${fake.bot.id}> /tools${args}` });
    const post = await fake.requests.waitFor(
      (r: RecordedRequest) => fake.requests.records.indexOf(r) >= from && r.method === 'POST' && r.path === `/channels/${channelId}/messages`,
      8_000,
      `/tools answer in ${channelId}`,
    );
    return String(post.body.content);
  }
  const offered = (answer: string, tool: string) => new RegExp(`\\b${tool}\\b`).test(answer.split('\n')[0]!);

  it('a guild renamed to the slug key "acme" still gets the * scopes (no exec)', async () => {
    fake.renameGuild(THEIRS, 'ACME');
    const answer = await toolsIn(THEIRS_GENERAL);
    expect(offered(answer, 'exec')).toBe(false);
    expect(answer).toContain('• exec — removed by channels.discord.guilds["*"].channels["*"].tools.deny');
  });

  it("the slug key's requireMention: false is not lent to it: an unmentioned message is ignored", async () => {
    const from = fake.requests.records.length;
    fake.userMessage({ author: mallory, channelId: THEIRS_GENERAL, content: 'hello there' });
    // A mentioned command after it is answered; anything the bot did about the first comes before.
    expect(await toolsIn(THEIRS_GENERAL)).toMatch(/^Your tools here/);
    await new Promise((r) => setTimeout(r, 300));
    const touched = fake.requests.records.slice(from).filter((r) => r.path.startsWith(`/channels/${THEIRS_GENERAL}/`));
    expect(touched.filter((r) => r.method === 'POST' && r.path.endsWith('/messages'))).toHaveLength(1);
    expect(touched.filter((r) => r.path.endsWith('/typing'))).toHaveLength(0);
  });

  it('a channel of a * guild renamed to "dev" gets no allow-all and no exec', async () => {
    fake.renameChannel(THEIRS_RANDOM, 'dev');
    const answer = await toolsIn(THEIRS_RANDOM);
    expect(offered(answer, 'exec')).toBe(false);
    expect(answer).toContain('• exec — removed by channels.discord.guilds["*"].channels["*"].tools.deny');
  });

  it('inside the guild matched by id, a channel renamed "dev" does get #dev (its admins are trusted)', async () => {
    expect(offered(await toolsIn(OURS_GENERAL), 'exec')).toBe(false);
    fake.renameChannel(OURS_GENERAL, 'dev');
    expect(offered(await toolsIn(OURS_GENERAL), 'exec')).toBe(true);
    // … but not the browser its guild denies: #dev's allow-all only narrows.
    expect(offered(await toolsIn(OURS_GENERAL), 'browser')).toBe(false);
    const explained = await toolsIn(OURS_GENERAL, ' --explain browser');
    expect(explained.split('\n')[0]).toBe(`browser: removed by channels.discord.guilds.${OURS}.tools.deny`);
    expect(explained).toContain(`• group tools.allow: kept — allowed by channels.discord.guilds.${OURS}.channels.dev.tools.allow[0] = "*"`);
    expect(explained).toContain(`• group tools.allow: removed — denied by channels.discord.guilds.${OURS}.tools.deny[0] = "browser"`);
    // … and renamed away again, mid-session, it loses it on the next turn.
    fake.renameChannel(OURS_GENERAL, 'general');
    expect(offered(await toolsIn(OURS_GENERAL), 'exec')).toBe(false);
  });

  it('/tools --explain never names an owner-only tool to a non-owner', async () => {
    expect(await toolsIn(OURS_GENERAL, ' --explain gateway')).toBe(await toolsIn(OURS_GENERAL, ' --explain no_such_tool').then((t) => t.replace('no_such_tool', 'gateway')));
  });
});

describe('through the running bot on Slack: a member renames a channel', () => {
  const SECRET = 'name-scopes-secret';
  let slack: SlackFake;
  let warden: RunningWarden | undefined;
  let url = '';
  beforeAll(async () => {
    slack = await startSlackFake({ channels: { C0000OPS: 'ops', C0000RND: 'random' } });
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-name-scopes-slack-'));
    mkdirSync(path.join(dir, 'workspace'));
    const parsed = parseConfig({
      tools: { profile: 'coding', exec: { host: 'gateway' } },
      channels: {
        slack: {
          botToken: 'xoxb-fake', signingSecret: SECRET, apiUrl: slack.apiUrl, port: 0, host: '127.0.0.1',
          // The operator: no exec where the name is "general"; a permissive ops channel keyed by name.
          channels: { '#general': { tools: { deny: ['exec', 'process', 'web_fetch'] } }, '#ops': { tools: { allow: ['*'] } }, '*': { tools: { deny: ['exec', 'process'] } } },
        },
      },
      dataDir: path.join(dir, 'data'),
    });
    if (!parsed.ok) throw parsed.error;
    const started = await startWarden({ ...parsed.value, baseDir: dir }, { env: {}, shutdownGraceMs: 300 });
    if (!started.ok) throw started.error;
    warden = started.warden;
    url = (warden.adapters.find((a) => a.provider === 'slack') as SlackAdapter).eventsUrl!;
  });
  afterAll(async () => {
    await warden?.stop();
    await slack?.close();
  });

  async function toolsIn(channel: string): Promise<string> {
    const from = slack.requests.records.length;
    const event = slack.messageEvent({ user: 'U0MALLORY', channel, text: `<@${slack.bot.userId}> /tools`, type: 'app_mention' });
    expect((await slack.sendEvent(url, slack.envelope(event), { secret: SECRET })).status).toBe(200);
    const post = await slack.requests.waitFor(
      (r) => slack.requests.records.indexOf(r) >= from && r.path === '/api/chat.postMessage' && r.body.channel === channel && !r.body.blocks,
      8_000,
      `/tools answer in ${channel}`,
    );
    return String(post.body.text);
  }
  const firstLine = (t: string) => t.split('\n')[0]!;

  it('a channel renamed "ops" gets no allow-all: * still applies', async () => {
    expect(firstLine(await toolsIn('C0000RND'))).not.toMatch(/\bexec\b/);
    await slack.sendEvent(url, slack.envelope(slack.renameEvent('C0000RND', 'ops')), { secret: SECRET });
    const answer = await toolsIn('C0000RND');
    expect(firstLine(answer)).not.toMatch(/\bexec\b/);
    expect(answer).toContain('exec — removed by channels.slack.channels["*"].tools.deny');
  });

  it('a rename is seen on the next message (the cached name is replaced): a channel renamed "general" gets the #general deny', async () => {
    expect(firstLine(await toolsIn('C0000OPS'))).toMatch(/\bweb_fetch\b/);
    await slack.sendEvent(url, slack.envelope(slack.renameEvent('C0000OPS', 'general')), { secret: SECRET });
    expect(await toolsIn('C0000OPS')).toContain('web_fetch — removed by channels.slack.channels["#general"].tools.deny');
  });
});

/** The same operator config, as the tables read it. */
const discordRaw = (extra: Record<string, unknown> = {}) => ({ tools: { profile: 'coding' }, channels: { discord: { token: 't', guilds: GUILDS, ...extra } } });
const at = (ctx: Record<string, unknown>) => ({ provider: 'discord', chat: 'channel' as const, channelId: '329999999999999999', ...ctx });

describe('the class, through the surface function (attacker: another guild, names chosen freely)', () => {
  // [what the attacker does, context, tool, where it is decided without the opt-in]
  const STAR_CHANNEL = 'channels.discord.guilds["*"].channels["*"].tools.deny';
  const table: Array<[string, Record<string, unknown>, string, string]> = [
    ['guild named exactly as the slug key', { guildId: THEIRS, guildName: 'acme' }, 'exec', STAR_CHANNEL],
    ['guild name in another case', { guildId: THEIRS, guildName: 'ACME' }, 'exec', STAR_CHANNEL],
    ['guild name that slugs to the key (punctuation, spaces)', { guildId: THEIRS, guildName: '  Acme!! ' }, 'exec', STAR_CHANNEL],
    ['guild name with a leading #', { guildId: THEIRS, guildName: '#acme' }, 'exec', STAR_CHANNEL],
    ['guild name in Cyrillic look-alikes (slugs to nothing)', { guildId: THEIRS, guildName: '\u0410\u0421\u041c\u0415' }, 'exec', STAR_CHANNEL],
    ['channel name in full-width letters (slugs to nothing)', { guildId: THEIRS, channelName: '\uff44\uff45\uff56' }, 'exec', STAR_CHANNEL],
    ['guild named as the id of the trusted guild', { guildId: THEIRS, guildName: OURS, channelName: 'dev' }, 'exec', STAR_CHANNEL],
    ['channel named as the name key', { guildId: THEIRS, channelName: 'dev' }, 'exec', STAR_CHANNEL],
    ['channel name with #', { guildId: THEIRS, channelName: '#dev' }, 'exec', STAR_CHANNEL],
    ['channel name in upper case', { guildId: THEIRS, channelName: 'DEV' }, 'exec', STAR_CHANNEL],
    ['channel name that slugs to the key', { guildId: THEIRS, channelName: 'Dev!' }, 'exec', STAR_CHANNEL],
    ['thread under a parent channel named as the key', { chat: 'thread', guildId: THEIRS, channelName: 'dev', threadId: '329999999999999998' }, 'exec', STAR_CHANNEL],
    ['guild renamed to the slug and channel to the name at once', { guildId: THEIRS, guildName: 'Acme', channelName: 'dev' }, 'exec', STAR_CHANNEL],
    ['a DM that claims a guild and a channel name has no scope at all (and no exec from it)', { chat: 'dm', guildId: undefined, guildName: 'acme', channelName: 'dev' }, 'exec', 'kept'],
  ];
  it.each(table)('%s', (_what, ctx, tool, expected) => {
    expect(fate(surface(discordRaw(), at(ctx)), tool)).toBe(expected);
  });

  // Look-alikes slug to nothing: they match no name key, with or without the opt-in.
  const lookAlike = (what: string) => what.includes('look-alikes') || what.includes('full-width');
  it.each(table.filter(([what, ctx]) => ctx.chat !== 'dm' && !lookAlike(what)))('with dangerouslyAllowNameMatching the operator accepts it: %s', (_what, ctx, tool) => {
    expect(fate(surface(discordRaw({ dangerouslyAllowNameMatching: true }), at(ctx)), tool)).toBe('kept');
  });
  it.each(table.filter(([what]) => lookAlike(what)))('look-alikes match nothing even with the opt-in: %s', (_what, ctx, tool, expected) => {
    expect(fate(surface(discordRaw({ dangerouslyAllowNameMatching: true }), at(ctx)), tool)).toBe(expected);
  });

  it('a guild renamed to the id of a trusted guild takes nothing of it, even with the opt-in', () => {
    const raw = { tools: { profile: 'coding' }, channels: { discord: { token: 't', dangerouslyAllowNameMatching: true, guilds: { [OURS]: { tools: { allow: ['*'] }, requireMention: false }, '*': { tools: { deny: ['exec'] } } } } } };
    expect(fate(surface(raw, at({ guildId: THEIRS, guildName: OURS })), 'exec')).toBe('channels.discord.guilds["*"].tools.deny');
    expect(requiresMention(config(raw), message({ guildId: THEIRS, guildName: OURS }), false)).toBe(true);
  });

  it('a name-matched scope still restricts: a deny keyed by name holds in any guild of that name', () => {
    const raw = { tools: { profile: 'coding' }, channels: { discord: { token: 't', guilds: { 'no-exec': { tools: { deny: ['exec'] } } } } } };
    expect(fate(surface(raw, at({ guildId: THEIRS, guildName: 'No Exec' })), 'exec')).toBe('channels.discord.guilds.no-exec.tools.deny');
  });
});

function message(over: Partial<InboundMessage>): InboundMessage {
  return { provider: 'discord', chatType: 'channel', guildId: THEIRS, channelId: '329999999999999999', senderId: '400000000000000066', text: 'hi', mentionsBot: false, messageId: 'm', receivedAt: 0, ...over };
}

describe('settings a name match does not lend (requireMention, streaming, approvers)', () => {
  const raw = {
    approvals: { approvers: { discord: ['1'], slack: ['U1'] } },
    channels: {
      discord: {
        token: 't',
        streaming: false,
        guilds: {
          acme: { requireMention: false, streaming: true, approvals: { approvers: ['400000000000000066'] } },
          '*': { channels: { dev: { requireMention: false, streaming: true, approvals: { approvers: ['400000000000000066'] } } } },
        },
      },
      slack: { botToken: 'x', signingSecret: 's', streaming: false, channels: { '#ops': { requireMention: false, streaming: true, approvals: { approvers: ['UMALLORY'] } } } },
    },
  };
  const cases: Array<[string, Partial<InboundMessage>]> = [
    ['Discord guild renamed to the slug key', { guildName: 'Acme' }],
    ['Discord channel of another guild renamed to the name key', { channelName: 'dev' }],
    ['Slack channel created or renamed #ops', { provider: 'slack', guildId: 'T1', channelId: 'C0NEW0001', channelName: 'ops' }],
  ];
  it.each(cases)('%s: mention still required, platform streaming, platform approvers', (_what, over) => {
    const c = config(raw);
    const m = message(over);
    expect(requiresMention(c, m, false)).toBe(true);
    expect(streamingFor(c, m)).toBe(false);
    expect(scopedApprovers(c, m)).toBeUndefined();
  });
  it.each(cases)('%s: with dangerouslyAllowNameMatching the scope applies whole', (_what, over) => {
    const c = config({ ...raw, channels: { ...raw.channels, discord: { ...raw.channels.discord, dangerouslyAllowNameMatching: true }, slack: { ...raw.channels.slack, dangerouslyAllowNameMatching: true } } });
    const m = message(over);
    expect(requiresMention(c, m, false)).toBe(false);
    expect(streamingFor(c, m)).toBe(true);
    expect(scopedApprovers(c, m)?.[0]).toMatch(/MALLORY|400000000000000066/);
  });
});

describe('Slack: names are chosen by members (ids C…/G… are not)', () => {
  const raw = (extra: Record<string, unknown> = {}) => ({
    tools: { profile: 'coding' },
    channels: { slack: { botToken: 'x', signingSecret: 's', channels: { C0123ABCD: { tools: { allow: ['*'] } }, '#general': { tools: { allow: ['*'] } }, dev: { tools: { allow: ['*'] } }, '*': { tools: { deny: ['exec', 'process'] } } }, ...extra } },
  });
  const slack = (ctx: Record<string, unknown>) => ({ provider: 'slack', chat: 'channel' as const, guildId: 'T1', ...ctx });
  const STAR = 'channels.slack.channels["*"].tools.deny';
  const table: Array<[string, Record<string, unknown>, string, string]> = [
    ['the channel by its id', { channelId: 'C0123ABCD', channelName: 'whatever' }, 'exec', 'kept'],
    ['its id in lower case (Slack ids are case-insensitive here)', { channelId: 'c0123abcd' }, 'exec', 'kept'],
    ['a channel named "general"', { channelId: 'C0NEW0001', channelName: 'general' }, 'exec', STAR],
    ['a channel named "#general"', { channelId: 'C0NEW0001', channelName: '#general' }, 'exec', STAR],
    ['a channel named "dev"', { channelId: 'C0NEW0001', channelName: 'dev' }, 'exec', STAR],
    ['a private channel (G…) named "dev"', { channelId: 'G0NEW0001', channelName: 'dev' }, 'exec', STAR],
    ['a channel named as the id key', { channelId: 'C0NEW0001', channelName: 'c0123abcd' }, 'exec', STAR],
    ['a thread in a channel named "dev"', { chat: 'thread', channelId: 'C0NEW0001', channelName: 'dev', threadId: '1700000000.000100' }, 'exec', STAR],
    ['a DM that claims the name "general"', { chat: 'dm', channelId: 'D0NEW0001', channelName: 'general' }, 'exec', 'kept'],
  ];
  it.each(table)('%s', (_what, ctx, tool, expected) => {
    expect(fate(surface(raw(), slack(ctx)), tool)).toBe(expected);
  });
  it('with dangerouslyAllowNameMatching a name key replaces *; a name shaped like an id still never matches it', () => {
    const optIn = raw({ dangerouslyAllowNameMatching: true });
    expect(fate(surface(optIn, slack({ channelId: 'C0NEW0001', channelName: 'dev' })), 'exec')).toBe('kept');
    expect(fate(surface(optIn, slack({ channelId: 'C0NEW0001', channelName: 'C0123ABCD' })), 'exec')).toBe(STAR);
  });
});

describe('warden audit names every scope a rename can reach, with a fix', () => {
  it.each([
    ['a slug-keyed guild', 'channels.discord.guilds.acme', 'key the scope by the guild id'],
    ['a channel name key under the * guild', 'channels.discord.guilds["*"].channels.dev', 'key the scope by the guild id'],
  ])('%s', (_what, path, fix) => {
    const findings = auditNameKeyedScopes(config(discordRaw()));
    const f = findings.find((x) => x.message.startsWith(`${path} `));
    expect(f?.id).toBe('channels.name-keyed-scope');
    expect(f?.fix).toContain(fix);
  });
  it('not the channel name keys of a guild keyed by id, nor id or * keys', () => {
    const paths = auditNameKeyedScopes(config(discordRaw())).map((f) => f.message.split(' ')[0]);
    expect(paths.sort()).toEqual(['channels.discord.guilds.acme', 'channels.discord.guilds["*"].channels.dev']);
  });
  it('says what a name match ignores, and warns harder with the opt-in', () => {
    const off = auditNameKeyedScopes(config(discordRaw())).find((f) => f.message.startsWith('channels.discord.guilds.acme '))!;
    expect(off.message).toContain('ignored: requireMention');
    const on = auditNameKeyedScopes(config(discordRaw({ dangerouslyAllowNameMatching: true }))).find((f) => f.message.startsWith('channels.discord.guilds.acme '))!;
    expect(on.message).toContain('dangerouslyAllowNameMatching');
    expect(on.fix).toContain('turn channels.discord.dangerouslyAllowNameMatching off');
  });
  it('a Slack name key, and not a Slack id key', () => {
    const c = config({ channels: { slack: { botToken: 'x', signingSecret: 's', channels: { '#general': { tools: { deny: ['exec'] } }, C0123ABCD: {} } } } });
    const paths = auditNameKeyedScopes(c).map((f) => f.message.split(' ')[0]);
    expect(paths).toEqual(['channels.slack.channels["#general"]']);
  });
});
