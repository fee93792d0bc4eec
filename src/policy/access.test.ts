import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/index.js';
import type { WardenConfig } from '../config/schema/index.js';
import { accessSettings, decideAccess, describeAccess, type AccessSender, type AccessWhere } from './access.js';

function config(raw: Record<string, unknown>): WardenConfig {
  const parsed = parseConfig(raw);
  if (!parsed.ok) throw parsed.error;
  return parsed.value.config;
}

const G = '300000000000000001';
const GEN = '300000000000000002';
const DEV = '300000000000000003';
const ROLE = '600000000000000001';

const dm = (provider = 'discord'): AccessWhere => ({ provider, chat: 'dm', channelId: 'D1' });
const chan = (channelId = GEN, channelName = 'general', guildId: string | undefined = G): AccessWhere => ({ provider: 'discord', chat: 'channel', guildId, channelId, channelName });
const slackChan = (channelId = 'C0000GEN', channelName = 'general'): AccessWhere => ({ provider: 'slack', chat: 'channel', guildId: 'T1', channelId, channelName });
const who = (userId: string, extra: Partial<AccessSender> = {}): AccessSender => ({ provider: 'discord', userId, isOwner: false, ...extra });
const discord = (extra: Record<string, unknown>) => config({ owners: { discord: ['1'] }, channels: { discord: { token: 't', ...extra } } });

type Case = [name: string, cfg: WardenConfig, where: AccessWhere, sender: AccessSender, expected: string];

const cases: Case[] = [
  // Defaults keep every config written before these keys working.
  ['default: a DM from anyone is let in', discord({}), dm(), who('7'), 'allowed (dm-open) by channels.discord.dmPolicy (default)'],
  ['default: a channel message from anyone is let in', discord({}), chan(), who('7'), 'allowed (group-open) by channels.discord.groupPolicy (default)'],
  ['default: a bot is dropped', discord({}), chan(), who('8', { isBot: true }), 'refused (bot) by channels.discord.allowBots'],
  ['the web chat is let in', discord({ dmPolicy: 'disabled' }), dm('web'), { provider: 'web', userId: 'local', isOwner: true }, 'allowed (web) by channels.web'],
  // DMs
  ['dmPolicy disabled refuses a stranger', discord({ dmPolicy: 'disabled' }), dm(), who('7'), 'refused (dm-disabled) by channels.discord.dmPolicy'],
  ['an owner is let in whatever the DM policy', discord({ dmPolicy: 'disabled' }), dm(), who('1', { isOwner: true }), 'allowed (owner) by owners.discord'],
  ['allowlist: a listed id', discord({ dmPolicy: 'allowlist', allowFrom: ['7'] }), dm(), who('7'), 'allowed (dm-allow-from) by channels.discord.allowFrom via 7'],
  ['allowlist: a provider-prefixed id', discord({ dmPolicy: 'allowlist', allowFrom: ['discord:7'] }), dm(), who('7'), 'allowed (dm-allow-from) by channels.discord.allowFrom via discord:7'],
  ['allowlist: an unlisted id', discord({ dmPolicy: 'allowlist', allowFrom: ['7'] }), dm(), who('9'), 'refused (dm-not-allowed) by channels.discord.allowFrom'],
  ['allowlist: empty names nobody but owners', discord({ dmPolicy: 'allowlist' }), dm(), who('9'), 'refused (dm-not-allowed) by channels.discord.allowFrom'],
  ['allowlist: * lets anyone in', discord({ dmPolicy: 'allowlist', allowFrom: ['*'] }), dm(), who('9'), 'allowed (dm-allow-from) by channels.discord.allowFrom via *'],
  [
    'allowlist: through an access group',
    config({ accessGroups: { ops: ['7'] }, channels: { discord: { token: 't', dmPolicy: 'allowlist', allowFrom: ['accessGroup:ops'] } } }),
    dm(),
    who('7'),
    'allowed (dm-allow-from) by channels.discord.allowFrom via accessGroup:ops (7)',
  ],
  ['allowlist: a role the sender holds (roles are known only in a guild)', discord({ dmPolicy: 'allowlist', allowFrom: [`role:${ROLE}`] }), dm(), who('7'), 'refused (dm-not-allowed) by channels.discord.allowFrom'],
  ['allowlist: a DM from a user whose id equals a listed role id', discord({ dmPolicy: 'allowlist', allowFrom: [`role:${ROLE}`] }), dm(), who(ROLE), 'refused (dm-not-allowed) by channels.discord.allowFrom'],
  ['pairing: a stranger is asked to pair', discord({ dmPolicy: 'pairing' }), dm(), who('7'), 'refused (pairing-required) by channels.discord.dmPolicy'],
  ['pairing: a paired sender is let in', discord({ dmPolicy: 'pairing' }), dm(), who('7', { paired: true }), 'allowed (paired) by channels.discord.dmPolicy (paired)'],
  ['pairing: allowFrom still lets in', discord({ dmPolicy: 'pairing', allowFrom: ['7'] }), dm(), who('7'), 'allowed (dm-allow-from) by channels.discord.allowFrom via 7'],
  ['pairing: a bot claiming to be paired is not', discord({ dmPolicy: 'pairing', allowBots: true }), dm(), who('7', { paired: true, isBot: true }), 'refused (pairing-required) by channels.discord.dmPolicy'],
  ['a bot carrying an owner id is no owner', discord({ allowBots: true, dmPolicy: 'allowlist' }), dm(), who('1', { isOwner: true, isBot: true }), 'refused (dm-not-allowed) by channels.discord.allowFrom'],
  // Channels
  ['groupPolicy disabled', discord({ groupPolicy: 'disabled' }), chan(), who('7'), 'refused (group-disabled) by channels.discord.groupPolicy'],
  ['allowlist: an unlisted guild', discord({ groupPolicy: 'allowlist' }), chan(), who('7'), 'refused (guild-not-listed) by channels.discord.guilds'],
  ['allowlist: a listed guild without channels', discord({ groupPolicy: 'allowlist', guilds: { [G]: {} } }), chan(), who('7'), `allowed (group-listed) by channels.discord.guilds.${G}`],
  ['allowlist: a channel not in the guild map', discord({ groupPolicy: 'allowlist', guilds: { [G]: { channels: { [DEV]: {} } } } }), chan(), who('7'), `refused (channel-not-listed) by channels.discord.guilds.${G}.channels`],
  ['allowlist: a * channel keeps the rest reachable', discord({ groupPolicy: 'allowlist', guilds: { [G]: { channels: { [DEV]: {}, '*': {} } } } }), chan(), who('7'), `allowed (group-listed) by channels.discord.guilds.${G}.channels["*"]`],
  ['allowlist: a role the member holds', discord({ groupPolicy: 'allowlist', guilds: { [G]: { roles: [ROLE] } } }), chan(), who('7', { roleIds: [ROLE] }), `allowed (group-listed) by channels.discord.guilds.${G}.roles via role:${ROLE}`],
  ['allowlist: a member without the role', discord({ groupPolicy: 'allowlist', guilds: { [G]: { roles: [ROLE] } } }), chan(), who('7', { roleIds: ['5'] }), `refused (sender-not-listed) by channels.discord.guilds.${G}.roles`],
  ['a user whose id equals the role id is not a role member', discord({ guilds: { [G]: { roles: [ROLE] } } }), chan(), who(ROLE), `refused (sender-not-listed) by channels.discord.guilds.${G}.roles`],
  ['users and roles: either lets in', discord({ guilds: { [G]: { users: ['7'], roles: [ROLE] } } }), chan(), who('7'), `allowed (group-listed) by channels.discord.guilds.${G}.users via 7`],
  ['a channel list replaces the guild list', discord({ guilds: { [G]: { users: ['7'], channels: { general: { users: ['8'] } } } } }), chan(), who('7'), `refused (sender-not-listed) by channels.discord.guilds.${G}.channels.general.users`],
  ['a channel users: ["*"] opens a room in a narrow guild', discord({ guilds: { [G]: { users: ['7'], channels: { general: { users: ['*'] } } } } }), chan(), who('9'), `allowed (group-listed) by channels.discord.guilds.${G}.channels.general.users via *`],
  ['enabled: false silences a channel, owners still pass', discord({ guilds: { [G]: { channels: { general: { enabled: false } } } } }), chan(), who('1', { isOwner: true }), 'allowed (owner) by owners.discord'],
  ['enabled: false silences a channel', discord({ guilds: { [G]: { channels: { general: { enabled: false } } } } }), chan(), who('7'), `refused (channel-disabled) by channels.discord.guilds.${G}.channels.general.enabled`],
  // Names others choose never let anyone in.
  ['a guild matched only by name is not listed', discord({ groupPolicy: 'allowlist', guilds: { 'my-team': {} } }), { ...chan(), guildName: 'My Team' }, who('7'), 'refused (guild-not-listed) by channels.discord.guilds'],
  [
    'a channel renamed to a listed name in a * guild does not let in',
    discord({ groupPolicy: 'allowlist', guilds: { '*': { channels: { 'ops-room': {} } } } }),
    chan('300000000000000099', 'ops-room', '300000000000000098'),
    who('7'),
    'refused (channel-not-listed) by channels.discord.guilds["*"].channels',
  ],
  // Bots
  ['allowBots on a channel lets a bot in', discord({ guilds: { [G]: { channels: { general: { allowBots: true } } } } }), chan(), who('8', { isBot: true }), 'allowed (group-open) by channels.discord.groupPolicy (default)'],
  ['allowBots on a channel does not open another', discord({ guilds: { [G]: { channels: { general: { allowBots: true } } } } }), chan(DEV, 'dev'), who('8', { isBot: true }), 'refused (bot) by channels.discord.allowBots'],
  ['a channel allowBots: false beats the platform', discord({ allowBots: true, guilds: { [G]: { channels: { general: { allowBots: false } } } } }), chan(), who('8', { isBot: true }), `refused (bot) by channels.discord.guilds.${G}.channels.general.allowBots`],
  ['an allowed bot still needs the sender list', discord({ allowBots: true, guilds: { [G]: { roles: [ROLE] } } }), chan(), who('8', { isBot: true }), `refused (sender-not-listed) by channels.discord.guilds.${G}.roles`],
  // allowBots: "mentions" (OpenClaw's): a bot gets in only by mentioning this bot; a DM is addressed to it already.
  ['mentions: a bot that mentions this bot is let in', discord({ allowBots: 'mentions' }), chan(), who('8', { isBot: true, mentionsBot: true }), 'allowed (group-open) by channels.discord.groupPolicy (default)'],
  ['mentions: a bot that does not mention it is dropped', discord({ allowBots: 'mentions' }), chan(), who('8', { isBot: true, mentionsBot: false }), 'refused (bot) by channels.discord.allowBots'],
  ['mentions: a bot with the mention unknown is dropped', discord({ allowBots: 'mentions' }), chan(), who('8', { isBot: true }), 'refused (bot) by channels.discord.allowBots'],
  ['mentions: in a thread too', discord({ allowBots: 'mentions' }), { ...chan(), chat: 'thread' }, who('8', { isBot: true, mentionsBot: false }), 'refused (bot) by channels.discord.allowBots'],
  ['mentions: a bot DM counts as addressed to this bot', discord({ allowBots: 'mentions' }), dm(), who('8', { isBot: true, mentionsBot: false }), 'allowed (dm-open) by channels.discord.dmPolicy (default)'],
  ['mentions: a bot DM still meets dmPolicy', discord({ allowBots: 'mentions', dmPolicy: 'allowlist' }), dm(), who('8', { isBot: true, mentionsBot: true }), 'refused (dm-not-allowed) by channels.discord.allowFrom'],
  ['mentions: a mentioning bot still needs the sender list', discord({ allowBots: 'mentions', guilds: { [G]: { roles: [ROLE] } } }), chan(), who('8', { isBot: true, mentionsBot: true }), `refused (sender-not-listed) by channels.discord.guilds.${G}.roles`],
  ['mentions: a mentioning bot carrying an owner id is no owner', discord({ allowBots: 'mentions', groupPolicy: 'allowlist' }), chan(), who('1', { isOwner: true, isBot: true, mentionsBot: true }), 'refused (guild-not-listed) by channels.discord.guilds'],
  ['mentions on a channel beats platform true', discord({ allowBots: true, guilds: { [G]: { channels: { general: { allowBots: 'mentions' } } } } }), chan(), who('8', { isBot: true, mentionsBot: false }), `refused (bot) by channels.discord.guilds.${G}.channels.general.allowBots`],
  ['mentions on a guild, false on its channel', discord({ guilds: { [G]: { allowBots: 'mentions', channels: { general: { allowBots: false } } } } }), chan(), who('8', { isBot: true, mentionsBot: true }), `refused (bot) by channels.discord.guilds.${G}.channels.general.allowBots`],
  ['mentions on a guild reaches its channels', discord({ guilds: { [G]: { allowBots: 'mentions' } } }), chan(DEV, 'dev'), who('8', { isBot: true, mentionsBot: true }), 'allowed (group-open) by channels.discord.groupPolicy (default)'],
  ['mentions: a person need not mention (allowBots judges bots only)', discord({ allowBots: 'mentions' }), chan(), who('7', { mentionsBot: false }), 'allowed (group-open) by channels.discord.groupPolicy (default)'],
  ['mentions on Slack: a mentioning bot user', config({ channels: { slack: { botToken: 'x', allowBots: 'mentions' } } }), slackChan(), { provider: 'slack', userId: 'B1', isBot: true, mentionsBot: true, isOwner: false }, 'allowed (group-open) by channels.slack.groupPolicy (default)'],
  ['mentions on Slack: a bot that does not mention', config({ channels: { slack: { botToken: 'x', allowBots: 'mentions' } } }), slackChan(), { provider: 'slack', userId: 'B1', isBot: true, mentionsBot: false, isOwner: false }, 'refused (bot) by channels.slack.allowBots'],
  // Slack
  ['slack: allowlist needs the channel listed', config({ channels: { slack: { botToken: 'x', groupPolicy: 'allowlist', channels: { C0000DEV: {} } } } }), slackChan(), { provider: 'slack', userId: 'U1', isOwner: false }, 'refused (channel-not-listed) by channels.slack.channels'],
  [
    'slack: a user group member',
    config({ channels: { slack: { botToken: 'x', channels: { C0000GEN: { users: ['usergroup:S1'] } } } } }),
    slackChan(),
    { provider: 'slack', userId: 'U1', usergroupIds: ['S1'], isOwner: false },
    'allowed (group-listed) by channels.slack.channels.C0000GEN.users via usergroup:S1',
  ],
  [
    'slack: memberships that could not be looked up never match',
    config({ channels: { slack: { botToken: 'x', channels: { C0000GEN: { users: ['usergroup:S1'] } } } } }),
    slackChan(),
    { provider: 'slack', userId: 'U1', isOwner: false },
    'refused (sender-not-listed) by channels.slack.channels.C0000GEN.users',
  ],
  [
    'slack: a spoofed role entry never matches on Slack',
    config({ channels: { slack: { botToken: 'x', channels: { C0000GEN: { users: ['role:S1'] } } } } }),
    slackChan(),
    { provider: 'slack', userId: 'U1', roleIds: ['S1'], isOwner: false },
    'refused (sender-not-listed) by channels.slack.channels.C0000GEN.users',
  ],
];

describe('decideAccess: who may make Warden act, most specific scope first', () => {
  it.each(cases)('%s', (_name, cfg, where, sender, expected) => {
    expect(describeAccess(decideAccess(cfg, where, sender))).toBe(expected);
  });

  it('rejects an allowBots value other than true, false or "mentions", naming the key', () => {
    for (const bad of ['yes', 'mention', 1, null]) {
      const parsed = parseConfig({ channels: { discord: { token: 't', guilds: { [G]: { channels: { general: { allowBots: bad } } } } } } });
      expect(parsed.ok, String(bad)).toBe(false);
      if (!parsed.ok) expect(String(parsed.error.message)).toContain(`channels.discord.guilds["${G}"].channels.general.allowBots: expected true, false or "mentions"`);
    }
  });

  it('says what the sender is told', () => {
    const cfg = discord({ dmPolicy: 'pairing', groupPolicy: 'allowlist' });
    expect(decideAccess(cfg, dm(), who('7'))).toMatchObject({ reply: 'pairing' });
    expect(decideAccess(discord({ dmPolicy: 'disabled' }), dm(), who('7'))).toMatchObject({ reply: 'denied' });
    // An unlisted guild is not told anything: the bot was never meant to be there.
    expect(decideAccess(cfg, chan(), who('7'))).toMatchObject({ reply: 'none' });
    expect(decideAccess(discord({}), chan(), who('8', { isBot: true }))).toMatchObject({ reply: 'none' });
  });

  it('resolves the loop breaker key by key, narrowest first', () => {
    const cfg = discord({ allowBots: true, botLoopProtection: { maxEventsPerWindow: 8, cooldownSeconds: 90 }, guilds: { [G]: { channels: { general: { botLoopProtection: { maxEventsPerWindow: 3 } } } } } });
    expect(accessSettings(cfg, chan()).botLoop).toEqual({ enabled: true, maxEventsPerWindow: 3, windowSeconds: 60, cooldownSeconds: 90, path: `channels.discord.guilds.${G}.channels.general.botLoopProtection` });
    expect(decideAccess(cfg, chan(), who('8', { isBot: true }))).toMatchObject({ allowed: true, botLoop: { maxEventsPerWindow: 3 } });
  });
});
