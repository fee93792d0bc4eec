import { describe, expect, it } from 'vitest';
import { resolveChannelScope, slugify } from './channel-scope.js';
import { config, fate, surface, turn } from './testing.js';

const guild = {
  channels: {
    discord: {
      guilds: {
        '111': {
          tools: { deny: ['browser'] },
          toolsBySender: { 'id:77': { deny: ['read'] } },
          channels: {
            general: { tools: { deny: ['exec', 'process'] } },
            dev: { tools: { allow: ['*'] } },
            '222': { tools: { deny: ['web_fetch'] }, toolsBySender: { 'id:77': { deny: ['edit'] } } },
            '#ops': { tools: { deny: ['write'] } },
            quiet: { requireMention: false },
            '*': { tools: { deny: ['memory_get'] } },
          },
        },
        'team-two': { slug: 'acme-corp', tools: { deny: ['pdf'] } },
        'my-guild': { tools: { deny: ['image'] } },
        '*': { tools: { deny: ['tts'] } },
      },
    },
  },
};
const discord = (ctx: Record<string, unknown>) => ({ provider: 'discord', chat: 'channel' as const, ...ctx });

describe('Discord scopes (semantics §4)', () => {
  it.each([
    ['exec denied in #general', { guildId: '111', channelName: 'general' }, 'exec', 'channels.discord.guilds.111.channels.general.tools.deny'],
    ['exec allowed in #dev of the same guild', { guildId: '111', channelName: 'dev' }, 'exec', 'kept'],
    ["a guild's deny holds in a channel with its own tools", { guildId: '111', channelName: 'general' }, 'browser', 'channels.discord.guilds.111.tools.deny'],
    ["a channel's allow only narrows what its guild leaves", { guildId: '111', channelName: 'dev' }, 'browser', 'channels.discord.guilds.111.tools.deny'],
    ['a channel without a policy of its own falls to the guild', { guildId: '111', channelName: 'quiet', channelId: '999' }, 'browser', 'channels.discord.guilds.111.tools.deny'],
    ['channel by id', { guildId: '111', channelId: '222' }, 'web_fetch', 'channels.discord.guilds.111.channels.222.tools.deny'],
    ['channel by #name key', { guildId: '111', channelName: 'ops' }, 'write', 'channels.discord.guilds.111.channels["#ops"].tools.deny'],
    ['channel by slug of its display name', { guildId: '111', channelName: 'General' }, 'exec', 'channels.discord.guilds.111.channels.general.tools.deny'],
    ['channel * in the guild', { guildId: '111', channelName: 'random' }, 'memory_get', 'channels.discord.guilds.111.channels["*"].tools.deny'],
    ['the guild deny holds under channel * too', { guildId: '111', channelName: 'random' }, 'browser', 'channels.discord.guilds.111.tools.deny'],
    ['a guild slug key still restricts a guild of that name', { guildId: '555', guildName: 'My Guild' }, 'image', 'channels.discord.guilds.my-guild.tools.deny'],
    ['… and the * guild applies to it as well (a name never displaces *)', { guildId: '555', guildName: 'My Guild' }, 'tts', 'channels.discord.guilds["*"].tools.deny'],
    ['an entry slug field restricts the same way', { guildId: '666', guildName: 'Acme Corp' }, 'pdf', 'channels.discord.guilds.team-two.tools.deny'],
    ['guild * for any other guild', { guildId: '777' }, 'tts', 'channels.discord.guilds["*"].tools.deny'],
    ['a thread follows its parent channel', { chat: 'thread', guildId: '111', channelName: 'general', threadId: '333' }, 'exec', 'channels.discord.guilds.111.channels.general.tools.deny'],
    ['a DM has no channel scope', { chat: 'dm', guildId: undefined }, 'tts', 'kept'],
  ] as const)('%s', (_name, ctx, tool, expected) => {
    expect(fate(surface(guild, discord(ctx)), tool)).toBe(expected);
  });

  it("a thread never uses a scope keyed by the thread's own id", () => {
    const raw = { channels: { discord: { guilds: { '111': { channels: { general: { tools: { deny: ['exec'] } }, '333': { tools: { allow: ['*'] } } } } } } } };
    expect(fate(surface(raw, discord({ chat: 'thread', guildId: '111', channelName: 'general', threadId: '333' })), 'exec')).toBe('channels.discord.guilds.111.channels.general.tools.deny');
  });

  it.each([
    ['toolsBySender beats tools inside the channel scope', { guildId: '111', channelId: '222', senderId: '77' }, ['edit', 'web_fetch'], ['channels.discord.guilds.111.channels.222.toolsBySender["id:77"].deny', 'kept']],
    ['toolsBySender beats tools inside the guild scope', { guildId: '111', channelId: '999', channelName: 'quiet', senderId: '77' }, ['read', 'browser'], ['channels.discord.guilds.111.toolsBySender["id:77"].deny', 'kept']],
    ['another sender gets the scope tools', { guildId: '111', channelId: '222', senderId: '78' }, ['edit', 'web_fetch'], ['kept', 'channels.discord.guilds.111.channels.222.tools.deny']],
  ] as const)('%s', (_name, ctx, tools, expected) => {
    const result = surface(guild, discord(ctx));
    expect(tools.map((t) => fate(result, t))).toEqual(expected);
  });

  it('reports every scope that applies, most specific first', () => {
    const scope = resolveChannelScope(config(guild), turn(discord({ guildId: '111', channelName: 'general' })));
    expect(scope?.layers.map((l) => [l.path, l.trusted])).toEqual([
      ['channels.discord.guilds.111.channels.general.tools', true],
      ['channels.discord.guilds.111.tools', true],
    ]);
    expect(scope?.matched).toEqual(['channels.discord.guilds.111.channels.general', 'channels.discord.guilds.111']);
  });

  it('a name-matched scope is reported as such, after the trusted ones', () => {
    const scope = resolveChannelScope(config(guild), turn(discord({ guildId: '555', guildName: 'My Guild' })));
    expect(scope?.layers.map((l) => [l.path, l.trusted])).toEqual([
      ['channels.discord.guilds["*"].tools', true],
      ['channels.discord.guilds.my-guild.tools', false],
    ]);
  });
});

describe('Slack scopes', () => {
  const slack = {
    channels: {
      slack: {
        channels: {
          C0123ABC: { tools: { deny: ['exec'] } },
          '#general': { tools: { deny: ['browser'] } },
          random: { tools: { deny: ['pdf'] } },
          '*': { tools: { deny: ['tts'] } },
        },
      },
    },
  };
  const ctx = (c: Record<string, unknown>) => ({ provider: 'slack', chat: 'channel' as const, ...c });
  it.each([
    ['by id', { channelId: 'C0123ABC' }, 'exec', 'channels.slack.channels.C0123ABC.tools.deny'],
    ['by id in any case', { channelId: 'c0123abc' }, 'exec', 'channels.slack.channels.C0123ABC.tools.deny'],
    ['a #name key restricts a channel of that name', { channelId: 'C9', channelName: 'general' }, 'browser', 'channels.slack.channels["#general"].tools.deny'],
    ['… without displacing *', { channelId: 'C9', channelName: 'general' }, 'tts', 'channels.slack.channels["*"].tools.deny'],
    ['a plain name key the same', { channelId: 'C9', channelName: 'random' }, 'pdf', 'channels.slack.channels.random.tools.deny'],
    ['a channel named like an id key takes nothing from it', { channelId: 'C9', channelName: 'c0123abc' }, 'exec', 'kept'],
    ['by *', { channelId: 'C9', channelName: 'other' }, 'tts', 'channels.slack.channels["*"].tools.deny'],
    ['the most specific key alone', { channelId: 'C0123ABC', channelName: 'general' }, 'browser', 'kept'],
    ['a thread by its parent', { chat: 'thread', channelId: 'C0123ABC', threadId: '1700000000.000100' }, 'exec', 'channels.slack.channels.C0123ABC.tools.deny'],
    ['a DM has no channel scope', { chat: 'dm', channelId: 'D1' }, 'tts', 'kept'],
  ] as const)('%s', (_name, c, tool, expected) => {
    expect(fate(surface(slack, ctx(c)), tool)).toBe(expected);
  });
});

describe('web scope', () => {
  it('channels.web.tools applies to web chats, toolsBySender first', () => {
    const raw = { channels: { web: { tools: { deny: ['exec'] }, toolsBySender: { 'id:u1': { deny: ['read'] } } } } };
    expect(fate(surface(raw, { provider: 'web' }), 'exec')).toBe('channels.web.tools.deny');
    const u1 = surface(raw, { provider: 'web', senderId: 'u1' });
    expect([fate(u1, 'read'), fate(u1, 'exec')]).toEqual(['channels.web.toolsBySender["id:u1"].deny', 'kept']);
  });
});

describe('slugify', () => {
  it.each([
    ['My Guild', 'my-guild'],
    ['#General', 'general'],
    ['  Dev  Ops!! ', 'dev-ops'],
    ['--dev--', 'dev'],
    ['---', ''],
    ['-', ''],
    ['', ''],
    ['a-b', 'a-b'],
    ['Ünïcode näme', 'n-code-n-me'],
  ])('%j → %j', (input, expected) => {
    expect(slugify(input)).toBe(expected);
  });

  it('returns at once on 100,000 dashes before a letter', () => {
    expect(slugify(`${'-'.repeat(100_000)}x${'-'.repeat(100_000)}`)).toBe('x');
  });
});
