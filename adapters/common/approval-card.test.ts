import { describe, expect, it } from 'vitest';
import {
  commandBlock,
  decodeApprovalAction,
  encodeApprovalAction,
  offeredDecisions,
  outcomeLine,
  requesterLine,
} from './approval-card.js';

const mention = (id: string) => `<@${id}>`;

describe('approval card text', () => {
  it.each([
    { status: 'allow-once', decidedBy: 'U1', line: 'Allowed once by <@U1>' },
    { status: 'allow-always', decidedBy: 'U2', line: 'Allowed always by <@U2>' },
    { status: 'deny', decidedBy: 'U3', line: 'Denied by <@U3>' },
    { status: 'deny', decidedBy: undefined, line: 'Denied' },
    { status: 'allow-once', decidedBy: 'discord:400000000000000009', line: 'Allowed once by <@400000000000000009>' },
    { status: 'deny', decidedBy: 'cli:ops', line: 'Denied by cli:ops' },
    { status: 'expired', decidedBy: undefined, line: 'Expired: no decision before the deadline. Nothing ran.' },
    { status: 'pending', decidedBy: undefined, line: '' },
  ] as const)('$status by $decidedBy → "$line"', ({ status, decidedBy, line }) => {
    expect(outcomeLine({ status, decidedBy }, mention)).toBe(line);
  });

  it.each([
    { via: 'agent', requesterId: 'U7', line: 'the agent for <@U7>' },
    { via: 'command', requesterId: 'U7', line: '<@U7> with /exec' },
    { via: undefined, requesterId: 'U7', line: '<@U7>' },
    { via: 'agent', requesterId: undefined, line: 'the agent' },
    { via: undefined, requesterId: undefined, line: '' },
  ] as const)('requested via $via for $requesterId → "$line"', ({ via, requesterId, line }) => {
    expect(requesterLine({ via, requesterId }, mention)).toBe(line);
  });

  it('offers only the allowed decisions, in card order', () => {
    expect(offeredDecisions({ allowedDecisions: ['deny', 'allow-once'] })).toEqual(['allow-once', 'deny']);
  });

  it('round-trips button ids and refuses foreign ones', () => {
    const id = encodeApprovalAction('7f3a-1', 'allow-always');
    expect(decodeApprovalAction(id)).toEqual({ approvalId: '7f3a-1', decision: 'allow-always' });
    expect(decodeApprovalAction('warden:approval:allow-twice:1')).toBeUndefined();
    expect(decodeApprovalAction('other:allow-once:1')).toBeUndefined();
  });

  it('keeps a command that fits whole and marks one that does not', () => {
    expect(commandBlock('ls -la', 100)).toEqual({ block: '```\nls -la\n```', cut: false });
    const long = commandBlock('x'.repeat(200), 100);
    expect(long.cut).toBe(true);
    expect(long.block.length).toBeLessThanOrEqual(100);
  });

  it('cannot be broken out of by backticks in the command', () => {
    const { block } = commandBlock('echo ```; rm -rf /', 100);
    expect(block.slice(3, -3)).not.toContain('```');
  });
});
