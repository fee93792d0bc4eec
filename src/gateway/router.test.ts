import { describe, expect, it } from 'vitest';
import { parseConfig, type WardenConfig, type WardenConfigInput } from '../config/index.js';
import { routeMessage, stripLeadingMentions, ThreadParticipation, type RouteOptions } from './router.js';
import type { InboundMessage } from './types.js';

function config(raw: WardenConfigInput = {}): WardenConfig {
  const result = parseConfig(raw);
  if (!result.ok) throw result.error;
  return result.value.config;
}

const BASE_RAW = {
  owners: { discord: ['900'], slack: ['UOWNER'] },
  channels: {
    discord: {
      token: 't',
      guilds: {
        '111': {
          channels: {
            general: {},
            quiet: { requireMention: false },
            '777': { requireMention: false },
          },
        },
        '222': { requireMention: false, channels: { strict: { requireMention: true } } },
        'ops-team': { requireMention: false },
      },
    },
    slack: { botToken: 'x', signingSecret: 's', channels: { '#random': { requireMention: false } } },
  },
};
const base: WardenConfig = config(BASE_RAW);

function msg(over: Partial<InboundMessage>): InboundMessage {
  return {
    provider: 'discord',
    chatType: 'channel',
    guildId: '111',
    channelId: '501',
    channelName: 'general',
    senderId: '700',
    text: 'hello',
    mentionsBot: false,
    messageId: 'm1',
    receivedAt: 0,
    ...over,
  };
}

// Owner status comes from `owners` in the config (900 on Discord, UOWNER on Slack).
const options: RouteOptions = {
  isCommand: (text) => text.startsWith('/'),
};

describe('mention gating', () => {
  const cases: Array<{ name: string; m: Partial<InboundMessage>; inThread?: boolean; routed: boolean }> = [
    { name: 'guild channel without mention is ignored (default on)', m: {}, routed: false },
    { name: 'guild channel with mention is answered', m: { mentionsBot: true, text: '<@1> hi' }, routed: true },
    { name: 'channel scope can turn it off', m: { channelName: 'quiet' }, routed: true },
    { name: 'guild scope can turn it off', m: { guildId: '222', channelName: 'any' }, routed: true },
    { name: 'a channel scope beats its guild', m: { guildId: '222', channelName: 'strict' }, routed: false },
    { name: 'DMs never need a mention', m: { chatType: 'dm', guildId: undefined, channelId: 'dm1' }, routed: true },
    { name: 'a thread the bot is not in needs one', m: { chatType: 'thread', threadId: 't1' }, routed: false },
    { name: 'a thread the bot takes part in does not', m: { chatType: 'thread', threadId: 't1' }, inThread: true, routed: true },
    { name: 'a slash command passes without mention', m: { text: '/tools' }, routed: true },
    { name: 'slack channel default is on', m: { provider: 'slack', guildId: 'T1', channelId: 'C1', channelName: 'general' }, routed: false },
    // Members choose Slack channel names: a #name key sets nothing but restrictions unless the operator opts in.
    { name: 'a slack #name key does not turn the mention off', m: { provider: 'slack', guildId: 'T1', channelId: 'C2', channelName: 'random' }, routed: false },
    { name: 'discord channel scope by a slug of its name', m: { guildId: '111', channelName: 'Quiet' }, routed: true },
    { name: 'discord channel scope by id', m: { guildId: '111', channelId: '777', channelName: 'x' }, routed: true },
    { name: 'a discord guild slug key does not turn the mention off for a guild renamed to it', m: { guildId: '999', guildName: 'Ops Team', channelName: 'any' }, routed: false },
    { name: 'web chat never needs a mention', m: { provider: 'web', chatType: 'dm', guildId: undefined, channelId: 'web' }, routed: true },
    { name: 'empty text is ignored even in a DM', m: { chatType: 'dm', text: '   ' }, routed: false },
    { name: 'a bare mention is ignored as empty', m: { text: '<@1>', mentionsBot: true }, routed: false },
  ];
  it.each(cases)('$name', ({ m, inThread, routed }) => {
    const decision = routeMessage(base, msg(m), { ...options, botInThread: () => inThread ?? false });
    expect(decision.kind).toBe(routed ? 'route' : 'ignore');
  });

  it.each([
    ['slack channel scope by #name', { provider: 'slack', guildId: 'T1', channelId: 'C2', channelName: 'random' }],
    ['slack channel name in another case', { provider: 'slack', guildId: 'T1', channelId: 'C2', channelName: 'Random' }],
    ['discord guild scope by the slug of its name', { guildId: '999', guildName: 'Ops Team', channelName: 'any' }],
  ] as const)('with dangerouslyAllowNameMatching: %s turns the mention off', (_name, m) => {
    const raw = structuredClone(BASE_RAW) as any;
    raw.channels.discord.dangerouslyAllowNameMatching = true;
    raw.channels.slack.dangerouslyAllowNameMatching = true;
    expect(routeMessage(config(raw), msg(m as Partial<InboundMessage>), { ...options, botInThread: () => false }).kind).toBe('route');
  });

  it('with no platform section configured, mention gating stays on in channels', () => {
    const decision = routeMessage(config({}), msg({}), options);
    expect(decision).toEqual({ kind: 'ignore', reason: 'mention-required' });
  });
});

describe('route', () => {
  it('builds the policy context from the message', () => {
    const decision = routeMessage(base, msg({ text: '<@1> run it', mentionsBot: true, senderName: 'Alice', channelName: '#general' }), options);
    expect(decision.kind).toBe('route');
    if (decision.kind !== 'route') return;
    expect(decision.route).toEqual({
      agentId: 'main',
      binding: { agentId: 'main', matchedBy: 'default' },
      sessionKey: 'agent:main:discord:channel:501',
      text: 'run it',
      replyTo: { provider: 'discord', channelId: '501', threadId: undefined },
      context: {
        agentId: 'main',
        provider: 'discord',
        chat: 'channel',
        guildId: '111',
        guildName: undefined,
        channelId: '501',
        channelName: 'general',
        threadId: undefined,
        senderId: '700',
        senderName: 'Alice',
        senderIsOwner: false,
        senderUsername: undefined,
        model: undefined,
        spawnDepth: 0,
        // No tools.exec.host: sandboxed when bubblewrap is installed (the exec tool's own rule).
        sandboxed: expect.any(Boolean),
      },
    });
  });

  it.each([
    ['gateway', false],
    ['sandbox', true],
  ] as const)('exec host %s → sandboxed %s, the sandbox step follows', (host, sandboxed) => {
    const decision = routeMessage(config({ tools: { exec: { host } } }), msg({ chatType: 'dm' }), options);
    expect(decision.kind === 'route' && decision.route.context.sandboxed).toBe(sandboxed);
  });

  it.each([
    ['discord owner', msg({ chatType: 'dm', senderId: '900' }), true],
    ['discord non-owner', msg({ chatType: 'dm', senderId: '901' }), false],
    ['slack owner', msg({ provider: 'slack', chatType: 'dm', senderId: 'UOWNER' }), true],
    ['an owner id of another platform does not count', msg({ provider: 'slack', chatType: 'dm', senderId: '900' }), false],
    ['the web chat local user', msg({ provider: 'web', chatType: 'dm', senderId: 'local' }), true],
    ['any other web sender is not (owners.web decides, as in `warden tools --provider web`)', msg({ provider: 'web', chatType: 'dm', senderId: 'guest' }), false],
  ])('owner detection: %s', (_name, m, owner) => {
    const decision = routeMessage(base, m, options);
    expect(decision.kind === 'route' && decision.route.context.senderIsOwner).toBe(owner);
  });

  it('threads reply into the thread and key a session under the parent channel', () => {
    const decision = routeMessage(base, msg({ chatType: 'thread', threadId: '777', mentionsBot: true }), options);
    expect(decision.kind === 'route' && decision.route.sessionKey).toBe('agent:main:discord:channel:501:thread:777');
    expect(decision.kind === 'route' && decision.route.replyTo).toEqual({ provider: 'discord', channelId: '501', threadId: '777' });
    expect(decision.kind === 'route' && decision.route.context.threadId).toBe('777');
  });

  it('binds to the default agent and its model', () => {
    const cfg = config({
      models: { default: 'anthropic/claude-sonnet-4-5' },
      agents: { list: [{ id: 'helper' }, { id: 'ops', default: true, model: 'openai/gpt-5-mini' }] },
    });
    const decision = routeMessage(cfg, msg({ chatType: 'dm' }), options);
    expect(decision.kind === 'route' && decision.route.sessionKey).toBe('agent:ops:discord:direct:700');
    expect(decision.kind === 'route' && decision.route.context.model).toBe('openai/gpt-5-mini');
  });

  it('binds to the first listed agent when none is marked default', () => {
    const decision = routeMessage(config({ agents: { list: [{ id: 'first' }, { id: 'second' }] } }), msg({ chatType: 'dm' }), options);
    expect(decision.kind === 'route' && decision.route.agentId).toBe('first');
  });
});

describe('stripLeadingMentions', () => {
  it.each([
    ['<@123> hi', true, 'hi'],
    ['<@!123>, <@U999>: /tools', true, '/tools'],
    ['hi <@123>', true, 'hi <@123>'],
    ['<@123> hi', false, '<@123> hi'],
    ['  spaced  ', false, 'spaced'],
  ])('%j (mentioned=%s) → %j', (text, mentioned, out) => {
    expect(stripLeadingMentions(text, mentioned)).toBe(out);
  });
});

describe('ThreadParticipation', () => {
  it('remembers threads up to its limit, dropping the oldest', () => {
    const p = new ThreadParticipation(2);
    p.add('a');
    p.add('b');
    p.add('a');
    p.add('c');
    expect([p.has('a'), p.has('b'), p.has('c')]).toEqual([true, false, true]);
  });
});
