import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { canSeeSession, sessionAccessFor } from '../../src/agent/tools/visibility.js';

/**
 * Attack class: reading another person's conversation through the session tools. Whatever
 * tools.sessions.visibility and tools.agentToAgent say, a member never reaches someone else's
 * DM (in their agent or another), another session's subagents, or an agent the operator did
 * not open; key spellings do not help.
 */
const member = { agentId: 'main', provider: 'discord', senderId: '111', senderIsOwner: false };
const FROM = 'agent:main:discord:channel:c1';
const parents: Record<string, string> = { 'agent:main:subagent:theirs': 'agent:main:discord:channel:c2' };
const see = (tools: Record<string, unknown>, key: string) => {
  const r = parseConfig({ tools });
  if (!r.ok) throw r.error;
  return canSeeSession(member, FROM, key, (k) => parents[k], sessionAccessFor(r.value.config));
};

const SETTINGS: Array<Record<string, unknown>> = [
  {},
  { sessions: { visibility: 'agent' } },
  { sessions: { visibility: 'all' } },
  { sessions: { visibility: 'all' }, agentToAgent: { enabled: true, allow: ['*'] } },
  { sessions: { visibility: 'tree' } },
];

describe('session visibility as an attacker would try it', () => {
  it.each(
    SETTINGS.flatMap((tools) =>
      [
        'agent:main:discord:direct:222',
        'agent:work:discord:direct:222',
        'agent:main:slack:direct:111',
        'agent:main:discord:direct:111:extra',
        'agent:main:discord:direct:111%3a222',
        'agent:main:subagent:theirs',
        'agent:main:discord:direct:222'.toUpperCase(),
      ].map((key) => [JSON.stringify(tools), key, tools] as const),
    ),
  )('with %s, %s stays out of reach', (_label, key, tools) => {
    expect(see(tools, key)).toBe(false);
  });

  it.each([
    [{ sessions: { visibility: 'all' }, agentToAgent: { enabled: false } }, 'agent:work:discord:channel:c9'],
    [{ sessions: { visibility: 'all' }, agentToAgent: { allow: ['work'] } }, 'agent:work:discord:channel:c9'],
    [{ sessions: { visibility: 'all' }, agentToAgent: { allow: [' '] } }, 'agent:work:discord:channel:c9'],
    [{ sessions: { visibility: 'agent' } }, 'agent:work:discord:channel:c9'],
  ])('%j keeps other agents closed', (tools, key) => {
    expect(see(tools, key)).toBe(false);
  });
});
