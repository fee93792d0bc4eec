import type { ApprovalDecision, ApprovalRequest } from '../approvals/types.js';
import type { WardenConfig } from '../config/index.js';
import type { ApprovalClick, ClickOutcome, OnApprovalClick } from './types.js';

/** The approval ledger as the click path needs it (backed by the approval service). */
export interface ApprovalLedger {
  get(id: string): ApprovalRequest | undefined | Promise<ApprovalRequest | undefined>;
  /**
   * Applies a decision to a pending request: the waiting call proceeds and every card is
   * updated. Returns the request in its final state and whether this call decided it (false:
   * someone or something — expiry — was first).
   */
  decide(id: string, decision: ApprovalDecision, decidedBy: string): Promise<{ decided: boolean; request: ApprovalRequest } | undefined>;
}

/** Platform user ids that may decide: `approvals.approvers.<provider>`, else that provider's owners. */
export function approversFor(config: Pick<WardenConfig, 'approvals' | 'owners'>, provider: 'discord' | 'slack' | 'web'): string[] {
  return config.approvals.approvers?.[provider] ?? config.owners[provider] ?? [];
}

/**
 * The click callback for one platform. Order matters: a non-approver is refused before
 * anything is looked up or changed, so a stranger cannot even learn whether a request is
 * still pending; a decided request answers "already resolved" and runs nothing again.
 */
export function approvalClickHandler(
  ledger: ApprovalLedger,
  isApprover: (userId: string) => boolean,
): OnApprovalClick {
  return async function onApprovalClick(click: ApprovalClick): Promise<ClickOutcome> {
    if (!isApprover(click.userId)) return { kind: 'not-approver' };
    const request = await ledger.get(click.approvalId);
    if (!request) return { kind: 'not-found' };
    if (request.status !== 'pending') return { kind: 'already-resolved', request };
    const result = await ledger.decide(click.approvalId, click.decision, click.userId);
    if (!result) return { kind: 'not-found' };
    return result.decided ? { kind: 'resolved', request: result.request } : { kind: 'already-resolved', request: result.request };
  };
}

/** The web chat's local user decides; anyone else only when listed for `web`. */
export function isApproverOn(config: Pick<WardenConfig, 'approvals' | 'owners'>, provider: 'discord' | 'slack' | 'web', localUser?: string) {
  const ids = new Set(approversFor(config, provider).map((id) => id.trim().toLowerCase()));
  return (userId: string): boolean => (localUser !== undefined && userId === localUser) || ids.has(userId.trim().toLowerCase());
}
