import { describe, expect, it } from 'vitest';
import type { ApprovalRequest } from '../approvals/types.js';
import { formatPendingApprovals, forWhom } from './approvals-command.js';

const NOW = 1_000_000_000;
const request = (over: Partial<ApprovalRequest>): ApprovalRequest => ({
  id: 'a1b2c3d4e5',
  kind: 'exec',
  tool: 'exec',
  title: 'Run a command',
  preview: 'make deploy',
  fullText: 'make deploy',
  agentId: 'main',
  sessionKey: 'agent:main:discord:channel:42',
  provider: 'discord',
  facts: [],
  allowedDecisions: ['allow-once', 'deny'],
  createdAt: NOW - 3 * 60_000,
  expiresAt: NOW + 27 * 60_000,
  status: 'pending',
  ...over,
});

describe('/approvals', () => {
  it('lists id, what, for whom, age and expiry, oldest first as given', () => {
    const text = formatPendingApprovals(
      [
        request({ requesterId: '7', requesterName: 'alice', via: 'agent' }),
        request({ id: 'f00', kind: 'tool', tool: 'web_fetch', title: 'Fetch an internal page', requesterName: 'bob', via: 'agent', createdAt: NOW - 45_000, expiresAt: NOW + 75_000 }),
        request({ id: 'e11', fullText: 'git push --force\n# and then some', requesterId: '9', via: 'command', createdAt: NOW - 2 * 3_600_000, expiresAt: NOW + 61 * 60_000 }),
      ],
      NOW,
    );
    expect(text.split('\n')).toEqual([
      'Pending approvals here (3):',
      '• a1b2c3d4e5 — exec `make deploy` — by the agent for alice — 3m old, expires in 27m',
      '• f00 — web_fetch: Fetch an internal page — by the agent for bob — 45s old, expires in 1m',
      '• e11 — exec `git push --force # and then some` — by 9 (/exec) — 2h old, expires in 1h 1m',
      '',
      'Approvers decide with the card’s buttons or `/approve <id> allow-once|allow-always|deny`.',
    ]);
  });

  it('says so when nothing waits', () => {
    expect(formatPendingApprovals([], NOW)).toBe('No approvals are pending in this conversation.');
  });

  it('names people without mention markup, so a list pings nobody', () => {
    expect(forWhom({ requesterId: '400000000000000001', via: 'agent' })).toBe('by the agent for 400000000000000001');
    expect(formatPendingApprovals([request({ fullText: 'echo <@&123> @everyone `x`' })], NOW)).toContain('exec `echo <@&123> @everyone ˋxˋ`');
  });
});
