import { describe, expect, it } from 'vitest';
import { accessGroupsConfig } from '../config/schema/access-groups.js';
import { describeMatch, matchPrincipal, needsMemberships, type Principal } from './principals.js';

const groups = accessGroupsConfig.parse({
  ops: ['U1', 'role:900', 'usergroup:S77'],
  oncall: { type: 'message.senders', members: { '*': ['42'], discord: ['discord:555'], slack: ['U9'] } },
});

const alice: Principal = { provider: 'discord', userId: '555', roleIds: ['900', '901'] };
const bob: Principal = { provider: 'discord', userId: '556', roleIds: ['901'] };
const sue: Principal = { provider: 'slack', userId: 'U9', usergroupIds: ['S77'] };
const noLookup: Principal = { provider: 'slack', userId: 'U10' };

describe('matchPrincipal: the one reading of a list of people', () => {
  const cases: Array<[string, readonly string[], Principal, string | undefined, boolean?]> = [
    ['a bare id', ['555'], alice, '555'],
    ['ids compare case-insensitively', ['u9'], sue, 'u9'],
    ['id: and user: prefixes', ['id:556', 'user:555'], alice, 'user:555'],
    ['a provider prefix matches on that provider', ['discord:555'], alice, 'discord:555'],
    ['a provider prefix does not cross platforms', ['slack:555'], alice, undefined],
    ['a role the member holds', ['role:900'], alice, 'role:900'],
    ['a role the member lacks', ['role:900'], bob, undefined],
    ['a role never matches on Slack', ['role:S77'], sue, undefined],
    ['a user group the member is in', ['usergroup:S77'], sue, 'usergroup:S77'],
    ['memberships not looked up never match', ['usergroup:S77'], noLookup, undefined],
    ['a plain-list group through a role', ['group:ops'], alice, 'group:ops'],
    ["OpenClaw's accessGroup: spelling", ['accessGroup:ops'], sue, 'accessGroup:ops'],
    ['an OpenClaw group: shared members', ['group:oncall'], { provider: 'web', userId: '42' }, 'group:oncall'],
    ["an OpenClaw group: the provider's own members", ['group:oncall'], alice, 'group:oncall'],
    ["an OpenClaw group: another provider's members do not count", ['group:oncall'], { provider: 'web', userId: 'U9' }, undefined],
    ['an unknown group names nobody', ['group:nope'], alice, undefined],
    ['a group named like an Object prototype key names nobody', ['group:constructor', 'group:__proto__'], alice, undefined],
    ['* is ignored unless the list honours it', ['*'], alice, undefined],
    ['* where the list honours it', ['*'], alice, '*', true],
    ['the first matching entry is named', ['role:901', '555'], alice, 'role:901'],
    ['an empty list names nobody', [], alice, undefined],
  ];
  it.each(cases)('%s', (_name, entries, who, expected, wildcard) => {
    expect(matchPrincipal(entries, who, groups, { wildcard: wildcard ?? false })?.entry).toBe(expected);
  });

  it('names the group and the member entry that matched', () => {
    const m = matchPrincipal(['group:ops'], alice, groups)!;
    expect(m).toMatchObject({ via: 'role', group: 'ops', member: 'role:900' });
    expect(describeMatch(m)).toBe('group:ops (role:900)');
  });

  it('says which memberships a list depends on', () => {
    expect(needsMemberships(['group:ops'], groups)).toEqual({ roles: true, usergroups: true });
    expect(needsMemberships(['U1', 'group:oncall'], groups)).toEqual({ roles: false, usergroups: false });
  });
});

describe('accessGroups config', () => {
  const bad: Array<[string, unknown, string]> = [
    ['a group referencing a group', { a: ['group:b'], b: ['1'] }, 'may not reference another group'],
    ['an OpenClaw group referencing a group', { a: { type: 'message.senders', members: { discord: ['accessGroup:b'] } } }, 'may not reference another group'],
    ['a channel-audience group', { a: { type: 'discord.channelAudience', guildId: '1', channelId: '2' } }, 'does not resolve'],
    ['an empty entry', { a: [' '] }, 'names nobody'],
    ['a bad name', { 'a b': ['1'] }, 'group name'],
  ];
  it.each(bad)('refuses %s, naming the key', (_n, value, message) => {
    const r = accessGroupsConfig.safeParse(value);
    expect(r.success).toBe(false);
    expect(JSON.stringify(r.error?.issues)).toContain(message);
  });
});
