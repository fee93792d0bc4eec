import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../config/index.js';
import { agentsMayTalk, canSeeSession, sessionAccessFor, type SessionAccess } from './visibility.js';

/** tools.sessions.visibility and tools.agentToAgent, as a table of who sees which session. */
const FROM = 'agent:main:discord:channel:c1';
const KEYS = {
  self: FROM,
  otherChannel: 'agent:main:discord:channel:c2',
  myDm: 'agent:main:discord:direct:111',
  theirDm: 'agent:main:discord:direct:222',
  myChild: 'agent:main:subagent:aaa',
  myGrandchild: 'agent:main:subagent:bbb',
  theirChild: 'agent:main:subagent:ccc',
  myChildInWork: 'agent:work:subagent:ddd',
  workChannel: 'agent:work:discord:channel:c9',
  workDmMine: 'agent:work:discord:direct:111',
  workDmTheirs: 'agent:work:discord:direct:222',
  homeChannel: 'agent:home:discord:channel:c8',
};
const PARENTS: Record<string, string> = {
  [KEYS.myChild]: FROM,
  [KEYS.myGrandchild]: KEYS.myChild,
  [KEYS.theirChild]: KEYS.otherChannel,
  [KEYS.myChildInWork]: FROM,
};
const spawnedBy = (k: string) => PARENTS[k];
const member = { agentId: 'main', provider: 'discord', senderId: '111', senderIsOwner: false };
const owner = { ...member, senderIsOwner: true };

const access = (tools: Record<string, unknown>): SessionAccess => {
  const r = parseConfig({ tools });
  if (!r.ok) throw r.error;
  return sessionAccessFor(r.value.config);
};
const visible = (a: SessionAccess, who = member) => Object.entries(KEYS).filter(([, key]) => canSeeSession(who, FROM, key, spawnedBy, a)).map(([name]) => name);

describe('which sessions the session tools see', () => {
  it.each<[string, Record<string, unknown>, typeof member, string[]]>([
    ["unset: Warden's rule (channels, your DM, your subagents)", {}, member, ['self', 'otherChannel', 'myDm', 'myChild']],
    ['unset, as an owner: the whole agent', {}, owner, ['self', 'otherChannel', 'myDm', 'theirDm', 'myChild', 'myGrandchild', 'theirChild']],
    ['self', { sessions: { visibility: 'self' } }, member, ['self']],
    ['self holds for owners too', { sessions: { visibility: 'self' } }, owner, ['self']],
    ['tree: this session and what it spawned, at any depth and in any agent', { sessions: { visibility: 'tree' } }, member, ['self', 'myChild', 'myGrandchild', 'myChildInWork']],
    ['agent', { sessions: { visibility: 'agent' } }, member, ['self', 'otherChannel', 'myDm', 'myChild']],
    [
      'all: other agents too, never another person\'s DM',
      { sessions: { visibility: 'all' } },
      member,
      ['self', 'otherChannel', 'myDm', 'myChild', 'myGrandchild', 'myChildInWork', 'workChannel', 'workDmMine', 'homeChannel'],
    ],
    ['all with agentToAgent off: own children across agents only', { sessions: { visibility: 'all' }, agentToAgent: { enabled: false } }, member, ['self', 'otherChannel', 'myDm', 'myChild', 'myGrandchild', 'myChildInWork']],
    [
      'all with agentToAgent.allow naming main and work',
      { sessions: { visibility: 'all' }, agentToAgent: { allow: ['main', 'work'] } },
      member,
      ['self', 'otherChannel', 'myDm', 'myChild', 'myGrandchild', 'myChildInWork', 'workChannel', 'workDmMine'],
    ],
  ])('%s', (_name, tools, who, expected) => {
    expect(visible(access(tools), who)).toEqual(expected);
  });
});

describe('agentToAgent.allow', () => {
  const a = (allow: string[] | undefined, enabled = true): SessionAccess => ({ visibility: 'all', agentToAgent: { enabled, allow } });
  it.each<[string, SessionAccess, string, string, boolean]>([
    ['unset allows every pair', a(undefined), 'main', 'work', true],
    ['empty allows every pair', a([]), 'main', 'work', true],
    ['both sides must match', a(['main']), 'main', 'work', false],
    ['exact ids are case-sensitive', a(['Main', 'work']), 'main', 'work', false],
    ['globs are case-insensitive', a(['MA*', 'w*']), 'main', 'work', true],
    ['only blank entries deny all', a(['', ' ']), 'main', 'work', false],
    ['disabled denies all', a(undefined, false), 'main', 'work', false],
  ])('%s', (_name, access, from, to, expected) => {
    expect(agentsMayTalk(access, from, to)).toBe(expected);
  });
});
