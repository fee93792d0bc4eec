import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/index.js';
import { parseArgs } from '../cli/args.js';
import { contextFromArgs } from '../cli/context.js';
import { resolveBinding, type BindingInput, type BindingTier } from './bindings.js';
import { routeMessage } from './router.js';
import type { InboundMessage } from './types.js';

const agents = { list: [{ id: 'main', default: true }, { id: 'ops' }, { id: 'support' }, { id: 'dev' }, { id: 'lead' }] };

function config(bindings: unknown[]) {
  const parsed = parseConfig({ agents, bindings });
  if (!parsed.ok) throw parsed.error;
  return parsed.value.config;
}

const GUILD = '111';
const OPS = '222';
const THREAD = '333';
const ALICE = '444';

const inGuild = (extra: Partial<BindingInput> = {}): BindingInput => ({ provider: 'discord', chat: 'channel', guildId: GUILD, channelId: OPS, senderId: ALICE, ...extra });

describe('resolveBinding (OpenClaw tiers, config order within a tier)', () => {
  const table: Array<[string, unknown[], BindingInput, string, BindingTier]> = [
    ['no bindings: the default agent', [], inGuild(), 'main', 'default'],
    ['a channel peer', [{ agentId: 'ops', match: { channel: 'discord', peer: { kind: 'channel', id: OPS } } }], inGuild(), 'ops', 'binding.peer'],
    ['`group` is the same kind as `channel`', [{ agentId: 'ops', match: { channel: 'discord', peer: { kind: 'group', id: OPS } } }], inGuild(), 'ops', 'binding.peer'],
    ['another channel does not match', [{ agentId: 'ops', match: { channel: 'discord', peer: { kind: 'channel', id: '999' } } }], inGuild(), 'main', 'default'],
    ['another platform does not match', [{ agentId: 'ops', match: { channel: 'slack', peer: { kind: 'channel', id: OPS } } }], inGuild(), 'main', 'default'],
    ['a DM by its sender', [{ agentId: 'support', match: { channel: 'discord', peer: { kind: 'direct', id: ALICE } } }], { provider: 'discord', chat: 'dm', channelId: 'dm1', senderId: ALICE }, 'support', 'binding.peer'],
    ['a direct peer does not match a channel message', [{ agentId: 'support', match: { channel: 'discord', peer: { kind: 'direct', id: ALICE } } }], inGuild(), 'main', 'default'],
    ['a thread inherits its parent channel', [{ agentId: 'ops', match: { channel: 'discord', peer: { kind: 'channel', id: OPS } } }], inGuild({ chat: 'thread', threadId: THREAD }), 'ops', 'binding.peer.parent'],
    [
      'the thread itself beats its parent',
      [
        { agentId: 'ops', match: { channel: 'discord', peer: { kind: 'channel', id: OPS } } },
        { agentId: 'dev', match: { channel: 'discord', peer: { kind: 'channel', id: THREAD } } },
      ],
      inGuild({ chat: 'thread', threadId: THREAD }),
      'dev',
      'binding.peer',
    ],
    ['a peer wildcard of the kind', [{ agentId: 'support', match: { channel: 'discord', peer: { kind: 'direct', id: '*' } } }], { provider: 'discord', chat: 'dm', channelId: 'dm1', senderId: ALICE }, 'support', 'binding.peer.wildcard'],
    ['the wildcard does not take the other kind', [{ agentId: 'support', match: { channel: 'discord', peer: { kind: 'direct', id: '*' } } }], inGuild(), 'main', 'default'],
    [
      'an exact peer beats a wildcard written first',
      [
        { agentId: 'support', match: { channel: 'discord', peer: { kind: 'channel', id: '*' } } },
        { agentId: 'ops', match: { channel: 'discord', peer: { kind: 'channel', id: OPS } } },
      ],
      inGuild(),
      'ops',
      'binding.peer',
    ],
    ['guild and one of the sender\'s roles', [{ agentId: 'lead', match: { channel: 'discord', guildId: GUILD, roles: ['r1', 'r2'] } }], inGuild({ roles: ['r2'] }), 'lead', 'binding.guild+roles'],
    ['roles the sender lacks', [{ agentId: 'lead', match: { channel: 'discord', guildId: GUILD, roles: ['r1'] } }], inGuild({ roles: ['r9'] }), 'main', 'default'],
    [
      'guild+roles beats the plain guild written first',
      [
        { agentId: 'dev', match: { channel: 'discord', guildId: GUILD } },
        { agentId: 'lead', match: { channel: 'discord', guildId: GUILD, roles: ['r1'] } },
      ],
      inGuild({ roles: ['r1'] }),
      'lead',
      'binding.guild+roles',
    ],
    ['a guild', [{ agentId: 'dev', match: { channel: 'discord', guildId: GUILD } }], inGuild(), 'dev', 'binding.guild'],
    ['a guild id as a number', [{ agentId: 'dev', match: { channel: 'discord', guildId: 111 } }], inGuild(), 'dev', 'binding.guild'],
    ['another guild', [{ agentId: 'dev', match: { channel: 'discord', guildId: '999' } }], inGuild(), 'main', 'default'],
    ['a Slack team', [{ agentId: 'dev', match: { channel: 'slack', teamId: 'T1' } }], { provider: 'slack', chat: 'channel', guildId: 'T1', channelId: 'C1', senderId: 'U1' }, 'dev', 'binding.team'],
    ['a guildId never matches a Slack team', [{ agentId: 'dev', match: { channel: 'slack', guildId: 'T1' } }], { provider: 'slack', chat: 'channel', guildId: 'T1', channelId: 'C1', senderId: 'U1' }, 'main', 'default'],
    ['the platform\'s default account', [{ agentId: 'dev', match: { channel: 'discord' } }], inGuild(), 'dev', 'binding.account'],
    ['`accountId: default` is that account', [{ agentId: 'dev', match: { channel: 'discord', accountId: 'default' } }], inGuild(), 'dev', 'binding.account'],
    ['another named account never matches (one account per platform)', [{ agentId: 'dev', match: { channel: 'discord', accountId: 'coding' } }], inGuild(), 'main', 'default'],
    ['any account', [{ agentId: 'dev', match: { channel: 'discord', accountId: '*' } }], inGuild(), 'dev', 'binding.channel'],
    [
      'the account tier beats the channel tier written first',
      [
        { agentId: 'dev', match: { channel: 'discord', accountId: '*' } },
        { agentId: 'ops', match: { channel: 'discord' } },
      ],
      inGuild(),
      'ops',
      'binding.account',
    ],
    [
      'config order within a tier',
      [
        { agentId: 'ops', match: { channel: 'discord', guildId: GUILD } },
        { agentId: 'dev', match: { channel: 'discord', guildId: GUILD } },
      ],
      inGuild(),
      'ops',
      'binding.guild',
    ],
    ['AND: peer and guild both must match', [{ agentId: 'ops', match: { channel: 'discord', peer: { kind: 'channel', id: OPS }, guildId: '999' } }], inGuild(), 'main', 'default'],
    ['AND: a role condition at the account tier', [{ agentId: 'lead', match: { channel: 'discord', roles: ['r1'] } }], inGuild({ roles: [] }), 'main', 'default'],
    ['`webchat` is the web chat', [{ agentId: 'support', match: { channel: 'webchat' } }], { provider: 'web', chat: 'dm', channelId: 'web', senderId: 'local' }, 'support', 'binding.account'],
    ['agent ids match in any case', [{ agentId: 'OPS', match: { channel: 'discord' } }], inGuild(), 'ops', 'binding.account'],
  ];
  it.each(table)('%s', (_name, bindings, input, agentId, matchedBy) => {
    const decision = resolveBinding(config(bindings), input);
    expect({ agentId: decision.agentId, matchedBy: decision.matchedBy }).toEqual({ agentId, matchedBy });
  });

  it('names the binding that decided', () => {
    const decision = resolveBinding(config([{ agentId: 'dev', match: { channel: 'slack' } }, { agentId: 'ops', match: { channel: 'discord', peer: { kind: 'channel', id: OPS } } }]), inGuild());
    expect(decision).toEqual({ agentId: 'ops', matchedBy: 'binding.peer', index: 1 });
  });
});

describe('bindings in the config', () => {
  const problems = (bindings: unknown[]) => {
    const parsed = parseConfig({ agents, bindings });
    return parsed.ok ? [] : parsed.error.problems.map((p) => `${p.path}: ${p.message}`);
  };
  it.each([
    ['an unknown agent', [{ agentId: 'nobody', match: { channel: 'discord' } }], /bindings\[0\]\.agentId: unknown agent "nobody"/],
    ['a platform Warden has no adapter for', [{ agentId: 'ops', match: { channel: 'whatsapp' } }], /bindings\[0\]\.match\.channel: Warden has no whatsapp adapter/],
    ["OpenClaw's session scope", [{ agentId: 'ops', match: { channel: 'discord' }, session: { dmScope: 'main' } }], /bindings\[0\]\.session: OpenClaw's `bindings\[\]\.session` is not supported/],
    ['an ACP binding', [{ agentId: 'ops', type: 'acp', match: { channel: 'discord', peer: { kind: 'channel', id: '1' } } }], /bindings\[0\]\.type: OpenClaw's `bindings\[\]\.type` is not supported/],
    ['a peer kind OpenClaw does not have', [{ agentId: 'ops', match: { channel: 'discord', peer: { kind: 'room', id: '1' } } }], /bindings\[0\]\.match\.peer\.kind/],
  ])('%s is refused with its path', (_name, bindings, expected) => {
    expect(problems(bindings).join('\n')).toMatch(expected);
  });
  it('a binding with a comment loads', () => {
    expect(problems([{ agentId: 'ops', comment: 'the ops room', match: { channel: 'discord', peer: { kind: 'channel', id: OPS } } }])).toEqual([]);
  });
});

describe('the router and `warden tools` pick the same agent', () => {
  const cfg = config([
    { agentId: 'ops', match: { channel: 'discord', peer: { kind: 'channel', id: OPS } } },
    { agentId: 'lead', match: { channel: 'discord', guildId: GUILD, roles: ['r1'] } },
    { agentId: 'support', match: { channel: 'discord', peer: { kind: 'direct', id: '*' } } },
    { agentId: 'dev', match: { channel: 'slack', teamId: 'T1' } },
  ]);
  const cases: Array<[string, Partial<InboundMessage>, string]> = [
    ['#ops', { chatType: 'channel', guildId: GUILD, channelId: OPS }, '--provider discord --guild 111 --channel 222'],
    ['a thread of #ops', { chatType: 'thread', guildId: GUILD, channelId: OPS, threadId: THREAD }, '--provider discord --guild 111 --channel 222 --thread 333'],
    ['#general by a lead', { chatType: 'channel', guildId: GUILD, channelId: '555', senderRoles: ['r1'] }, '--provider discord --guild 111 --channel 555 --roles r1'],
    ['#general by anyone', { chatType: 'channel', guildId: GUILD, channelId: '555' }, '--provider discord --guild 111 --channel 555'],
    ['a Discord DM', { chatType: 'dm', channelId: 'dm1' }, '--provider discord --chat dm'],
    ['Slack', { provider: 'slack', chatType: 'channel', guildId: 'T1', channelId: 'C1' }, '--provider slack --guild T1 --channel C1'],
    ['the web chat', { provider: 'web', chatType: 'dm', channelId: 'web', senderId: 'local' }, '--provider web --sender local'],
  ];
  it.each(cases)('%s', (_name, message, flags) => {
    const inbound: InboundMessage = { provider: 'discord', chatType: 'channel', channelId: '', senderId: ALICE, text: 'hi', mentionsBot: true, messageId: 'm', receivedAt: 0, ...message };
    const routed = routeMessage(cfg, inbound);
    if (routed.kind !== 'route') throw new Error('not routed');
    const cli = contextFromArgs(parseArgs(['tools', ...`${flags} --sender ${inbound.senderId}`.split(' ')]), cfg);
    if (!cli.ok) throw new Error(cli.problems.join('; '));
    expect(cli.ctx.agentId).toBe(routed.route.agentId);
    expect(cli.binding).toEqual(routed.route.binding);
    expect(routed.route.sessionKey.startsWith(`agent:${routed.route.agentId}:`)).toBe(true);
  });
});
