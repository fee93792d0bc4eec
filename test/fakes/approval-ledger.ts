import type { ApprovalRequest } from '../../src/approvals/types.js';
import type { ApprovalClick, ClickOutcome, OnApprovalClick } from '../../src/gateway/types.js';

/**
 * The router's side of a click, reduced to its rules so adapter tests can drive cards: only an
 * approver decides, a decision happens once, later clicks learn the outcome.
 */
export class ApprovalLedger {
  readonly requests = new Map<string, ApprovalRequest>();
  readonly clicks: Array<ApprovalClick & { outcome: ClickOutcome['kind'] }> = [];
  private counter = 0;

  constructor(readonly approvers: string[]) {}

  create(overrides: Partial<ApprovalRequest> & Pick<ApprovalRequest, 'provider'>): ApprovalRequest {
    const now = Date.now();
    const request: ApprovalRequest = {
      id: `appr-${++this.counter}-${now.toString(36)}`,
      kind: 'exec',
      tool: 'exec',
      title: 'Run a shell command',
      preview: 'git status',
      fullText: 'git status --short',
      agentId: 'main',
      sessionKey: 'agent:main:test',
      facts: [],
      allowedDecisions: ['allow-once', 'allow-always', 'deny'],
      createdAt: now,
      expiresAt: now + 30 * 60_000,
      status: 'pending',
      ...overrides,
    };
    this.requests.set(request.id, request);
    return request;
  }

  expire(id: string): ApprovalRequest {
    const request = { ...this.requests.get(id)!, status: 'expired' as const };
    this.requests.set(id, request);
    return request;
  }

  onApprovalClick: OnApprovalClick = async (click) => {
    const outcome = this.decide(click);
    this.clicks.push({ ...click, outcome: outcome.kind });
    return outcome;
  };

  private decide(click: ApprovalClick): ClickOutcome {
    const request = this.requests.get(click.approvalId);
    if (!request) return { kind: 'not-found' };
    if (!this.approvers.includes(click.userId)) return { kind: 'not-approver' };
    if (request.status !== 'pending') return { kind: 'already-resolved', request };
    const decided: ApprovalRequest = { ...request, status: click.decision, decidedBy: click.userId, decidedAt: Date.now() };
    this.requests.set(decided.id, decided);
    return { kind: 'resolved', request: decided };
  }

  get resolved(): ApprovalRequest[] {
    return [...this.requests.values()].filter((r) => r.status !== 'pending');
  }
}
