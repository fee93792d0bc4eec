import { afterEach, describe, expect, it } from 'vitest';
import { ENGINES, freshStoreTarget } from '../../test/store-engines.js';
import { cardDestinations } from '../../adapters/common/adapter-deps.js';
import { parseConfig } from '../config/index.js';
import type { ScopeWhere } from '../policy/mention.js';
import { EventBus } from '../events/events.js';
import { openWardenStore } from '../app/migrations.js';
import { scopedApprovers } from './scoped-approvers.js';
import { ApprovalService } from './service.js';
import type { ApprovalRequestInput } from './types.js';

const RAW = {
  owners: { discord: ['owner'], slack: ['U-OWNER'] },
  channels: {
    discord: {
      token: 'x',
      guilds: {
        '100': { approvals: { approvers: ['guild-lead'] }, channels: { '200': { approvals: { approvers: ['ops-lead', 'ops-2'] } }, general: {}, '300': { approvals: { approvers: [] } } } },
        '*': {},
      },
    },
    slack: { botToken: 'xoxb-1', signingSecret: 's', channels: { 'C-OPS': { approvals: { approvers: ['U-OPS'] } } } },
  },
};

function configOf(raw: unknown) {
  const parsed = parseConfig(raw);
  if (!parsed.ok) throw parsed.error;
  return parsed.value.config;
}

describe('scopedApprovers: the most specific scope that names approvers', () => {
  const config = configOf(RAW);
  const table: Array<[string, ScopeWhere, string[] | undefined]> = [
    ['a channel with its own approvers', { provider: 'discord', guildId: '100', channelId: '200' }, ['ops-lead', 'ops-2']],
    ['a channel without: its guild decides', { provider: 'discord', guildId: '100', channelId: '555', channelName: 'general' }, ['guild-lead']],
    ['an empty list is kept (nobody approves there)', { provider: 'discord', guildId: '100', channelId: '300' }, []],
    ['a guild scope without approvers: the platform list', { provider: 'discord', guildId: '999', channelId: '1' }, undefined],
    ['a Discord DM (no guild): the platform list', { provider: 'discord', channelId: 'dm' }, undefined],
    ['a Slack channel, id in any case', { provider: 'slack', guildId: 'T1', channelId: 'c-ops' }, ['U-OPS']],
    ['another Slack channel', { provider: 'slack', guildId: 'T1', channelId: 'C-GEN' }, undefined],
    ['the web chat never has scopes', { provider: 'web', channelId: 'web' }, undefined],
  ];
  it.each(table)('%s', (_name, where, expected) => {
    expect(scopedApprovers(config, where)).toEqual(expected);
  });
});

describe.each(ENGINES)('a request asked in a scope with approvers, on %s', (engine) => {
  const cleanups: Array<() => void | Promise<void>> = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()!();
  });
  const INPUT: ApprovalRequestInput = { kind: 'tool', tool: 'write', title: 'Write a file', preview: 'x', fullText: '{}' };

  async function service() {
    const where = await freshStoreTarget(engine);
    const opened = await openWardenStore({ dataDir: where.dataDir, url: where.url });
    if (!opened.ok) throw new Error(opened.error.message);
    const svc = new ApprovalService({ store: opened.store, config: configOf(RAW), events: new EventBus(), pollMs: 10 });
    cleanups.push(() => opened.store.close(), () => svc.shutdown());
    return svc;
  }
  const ops = { agentId: 'ops', sessionKey: 'agent:ops:discord:channel:200', provider: 'discord', guildId: '100', channelId: '200', requesterId: 'alice' };

  it('stores them with the request and shows the card to them alone', async () => {
    const svc = await service();
    const request = await svc.open(INPUT, ops);
    expect(request.approvers).toEqual(['ops-lead', 'ops-2']);
    expect((await svc.get(request.id))!.approvers).toEqual(['ops-lead', 'ops-2']);
    expect(cardDestinations(request, 'discord', { approvers: ['owner'], approvalsTarget: 'dm' }).dmUserIds).toEqual(['ops-lead', 'ops-2']);
    // Ids of one platform mean nothing on another: no DM copies there.
    expect(cardDestinations(request, 'slack', { approvers: ['U-OWNER'], approvalsTarget: 'dm' }).dmUserIds).toEqual([]);
  });

  it.each([
    ['the platform owner is refused there', 'discord', 'owner', 'not-approver'],
    ['a scope approver decides', 'discord', 'ops-lead', 'resolved'],
    ['the same id on another platform is refused', 'slack', 'ops-lead', 'not-approver'],
  ])('%s', async (_name, provider, userId, kind) => {
    const svc = await service();
    const request = await svc.open(INPUT, ops);
    const result = await svc.resolve(request.id, 'allow-once', { provider, userId, via: { kind: 'typed' } });
    expect(result.kind).toBe(kind);
  });

  it('an empty scope list refuses everyone, the owner too (fail closed)', async () => {
    const svc = await service();
    const request = await svc.open(INPUT, { ...ops, channelId: '300', sessionKey: 'agent:ops:discord:channel:300' });
    const result = await svc.resolve(request.id, 'allow-once', { provider: 'discord', userId: 'owner', via: { kind: 'typed' } });
    expect(result).toEqual({ kind: 'not-approver', reason: expect.stringMatching(/no approvers are configured for this channel/) });
  });

  it('elsewhere the platform approvers decide, as before', async () => {
    const svc = await service();
    const request = await svc.open(INPUT, { ...ops, guildId: '999', channelId: '1', sessionKey: 'agent:ops:discord:channel:1' });
    expect(request.approvers).toBeUndefined();
    expect((await svc.resolve(request.id, 'allow-once', { provider: 'discord', userId: 'owner', via: { kind: 'typed' } })).kind).toBe('resolved');
  });
});
