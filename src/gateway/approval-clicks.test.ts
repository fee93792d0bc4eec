import { describe, expect, it } from 'vitest';
import type { ApprovalDecision, ApprovalRequest } from '../approvals/types.js';
import { parseConfig } from '../config/index.js';
import { approvalClickHandler, approversFor, isApproverOn, type ApprovalLedger } from './approval-clicks.js';

function request(status: ApprovalRequest['status'] = 'pending'): ApprovalRequest {
  return {
    id: 'a1',
    kind: 'exec',
    tool: 'exec',
    title: 'Run a command',
    preview: 'ls',
    fullText: 'ls',
    agentId: 'main',
    sessionKey: 'agent:main:discord:channel:1',
    provider: 'discord',
    facts: [],
    allowedDecisions: ['allow-once', 'allow-always', 'deny'],
    createdAt: 0,
    expiresAt: 1,
    status,
  };
}

/** A ledger over one request, recording every decision applied. */
function ledger(initial: ApprovalRequest | undefined) {
  let current = initial;
  const decisions: Array<{ decision: ApprovalDecision; by: string }> = [];
  const l: ApprovalLedger = {
    get: () => current,
    async decide(_id, decision, by) {
      if (!current) return undefined;
      if (current.status !== 'pending') return { decided: false, request: current };
      decisions.push({ decision, by });
      current = { ...current, status: decision, decidedBy: by };
      return { decided: true, request: current };
    },
  };
  return { l, decisions };
}

describe('approvalClickHandler', () => {
  const approver = (id: string) => id === 'boss';

  it('refuses a non-approver and changes nothing', async () => {
    const { l, decisions } = ledger(request());
    expect(await approvalClickHandler(l, approver)({ approvalId: 'a1', decision: 'allow-once', userId: 'mallory' })).toEqual({ kind: 'not-approver' });
    expect(decisions).toEqual([]);
  });

  it('lets an approver decide once; a second click runs nothing', async () => {
    const { l, decisions } = ledger(request());
    const click = approvalClickHandler(l, approver);
    const first = await click({ approvalId: 'a1', decision: 'allow-once', userId: 'boss' });
    expect(first).toMatchObject({ kind: 'resolved', request: { status: 'allow-once', decidedBy: 'boss' } });
    const second = await click({ approvalId: 'a1', decision: 'deny', userId: 'boss' });
    expect(second).toMatchObject({ kind: 'already-resolved', request: { status: 'allow-once' } });
    expect(decisions).toEqual([{ decision: 'allow-once', by: 'boss' }]);
  });

  it.each([
    ['an expired request', request('expired'), 'already-resolved'],
    ['an unknown id', undefined, 'not-found'],
  ] as const)('answers %s', async (_name, req, kind) => {
    const { l } = ledger(req);
    expect((await approvalClickHandler(l, approver)({ approvalId: 'a1', decision: 'allow-once', userId: 'boss' })).kind).toBe(kind);
  });
});

describe('approvers', () => {
  const parse = (raw: object) => {
    const r = parseConfig(raw);
    if (!r.ok) throw r.error;
    return r.value.config;
  };

  it.each([
    [{ owners: { discord: ['1'] } }, 'discord', ['1']],
    [{ owners: { discord: ['1'] }, approvals: { approvers: { discord: ['2'] } } }, 'discord', ['2']],
    [{ owners: { discord: ['1'] } }, 'slack', []],
  ] as const)('%j on %s → %j', (raw, provider, ids) => {
    expect(approversFor(parse(raw), provider)).toEqual(ids);
  });

  it('the web chat local user is an approver there', () => {
    const check = isApproverOn(parse({}), 'web', 'local');
    expect([check('local'), check('someone')]).toEqual([true, false]);
    const discord = isApproverOn(parse({ owners: { discord: ['1'] } }), 'discord');
    expect([discord('1'), discord('local')]).toEqual([true, false]);
  });
});
