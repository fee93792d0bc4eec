import { describe, expect, it } from 'vitest';
import { matchSender } from './sender.js';

const map = {
  '*': {},
  'name:alice smith': {},
  'username:@alice': {},
  '123': {},
  'id:123': {},
  'channel:discord:123': {},
};

describe('toolsBySender key matching (reference §3.4)', () => {
  it.each([
    ['channel-scoped id first', map, { provider: 'discord', senderId: '123' }, 'channel:discord:123'],
    ['typed id before a legacy bare id', { '123': {}, 'id:123': {} }, { provider: 'slack', senderId: '123' }, 'id:123'],
    ['a legacy bare key is an id', { '123': {}, '*': {} }, { provider: 'slack', senderId: '123' }, '123'],
    ['username, leading @ ignored, any case', { 'username:@Alice': {}, '*': {} }, { provider: 'slack', senderId: '9', senderUsername: 'alice' }, 'username:@Alice'],
    ['name', { 'name:alice smith': {}, '*': {} }, { provider: 'slack', senderId: '9', senderName: 'Alice Smith' }, 'name:alice smith'],
    ['wildcard last', map, { provider: 'slack', senderId: '9' }, '*'],
    ['a name never matches an id key', { 'id:alice': {} }, { provider: 'slack', senderName: 'alice' }, undefined],
    ['another provider does not match a channel-scoped key', { 'channel:slack:123': {} }, { provider: 'discord', senderId: '123' }, undefined],
    ['ids compare case-insensitively', { 'id:U0123ABCD': {} }, { provider: 'slack', senderId: 'u0123abcd' }, 'id:U0123ABCD'],
  ] as const)('%s', (_name, m, who, expected) => {
    expect(matchSender(m, who, 'tools.toolsBySender')?.key).toBe(expected);
  });

  it('gives the key path', () => {
    expect(matchSender({ 'id:1': {} }, { provider: 'web', senderId: '1' }, 'tools.toolsBySender')?.path).toBe('tools.toolsBySender["id:1"]');
  });
});

describe('matchSender: membership keys (roles, user groups, access groups)', () => {
  const map = { 'role:900': { deny: ['exec'] }, 'group:ops': { allow: ['*'] }, 'id:7': { deny: ['*'] }, 'name:bob': { deny: ['read'] } } as const;
  const groups = { ops: ['usergroup:S1'] };
  const cases: Array<[string, Record<string, unknown>, string | undefined, string | undefined]> = [
    ['a role the sender holds', { provider: 'discord', senderId: '5', senderRoleIds: ['900'] }, 'role:900', undefined],
    ['a user whose id is the role id holds no role', { provider: 'discord', senderId: '900' }, undefined, undefined],
    ['a role key never matches on Slack', { provider: 'slack', senderId: 'U5', senderRoleIds: ['900'] }, undefined, undefined],
    ['a user group through an access group', { provider: 'slack', senderId: 'U5', senderUsergroupIds: ['S1'] }, 'group:ops', 'group:ops (usergroup:S1)'],
    ["the person's own id beats their role", { provider: 'discord', senderId: '7', senderRoleIds: ['900'] }, 'id:7', undefined],
    ['a role beats a display name (anyone picks a name)', { provider: 'discord', senderId: '5', senderName: 'bob', senderRoleIds: ['900'] }, 'role:900', undefined],
  ];
  it.each(cases)('%s', (_n, who, key, via) => {
    const m = matchSender(map as never, who as never, 'tools.toolsBySender', groups);
    expect(m?.key).toBe(key);
    if (via) expect(m?.via).toBe(via);
  });
});
