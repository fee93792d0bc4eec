import type { ApprovalActor, DecisionInput, ResolveResult } from '../approvals/types.js';
import type { WardenConfig } from '../config/index.js';
import { log } from '../log/log.js';
import { WEB_LOCAL_USER } from '../policy/owners.js';
import type { ClickOutcome, OnApprovalClick } from './types.js';

/** The approval service's decision entry point (approver check, first-writer-wins, grants). */
export type ResolveApproval = (id: string, decision: string, by: ApprovalActor, input?: DecisionInput) => Promise<ResolveResult>;

/** A click from a conversation the card was not posted in (the clicker may be an approver). */
export const WRONG_CONVERSATION_TEXT = 'This card can only be decided where it was posted (its conversation, or your direct messages when cards are sent there). Nothing changed.';

/** What `/approve` answers: a click's outcome, or a decision the request does not offer. */
export type ApproveOutcome = ClickOutcome | { kind: 'decision-not-allowed'; allowed: string[] };

/**
 * The decision path of one platform: `/approve` typed there (`kind: 'typed'`, decided by id) and,
 * through `clickHandlerOn`, every click (`kind: 'click'`, its origin checked) is decided by the
 * approval service as `<provider>:<userId>`, so a Slack approver cannot decide through a
 * Discord account that merely shares an id.
 */
export function approveOn(resolve: ResolveApproval, provider: string, kind: 'typed' | 'click'): (click: Parameters<OnApprovalClick>[0]) => Promise<ApproveOutcome> {
  return async function approve(click): Promise<ApproveOutcome> {
    const result = await resolve(
      click.approvalId,
      click.decision,
      { provider, userId: click.userId, ...(click.roleIds ? { roleIds: click.roleIds } : {}), ...(click.usergroupIds ? { usergroupIds: click.usergroupIds } : {}), via: kind === 'typed' ? { kind } : { kind, origin: click.origin ?? null } },
      click.reason !== undefined ? { reason: click.reason } : {},
    );
    switch (result.kind) {
      case 'resolved':
      case 'counted':
        // A vote towards a quorum: the card shows the count and stays decidable.
        return { kind: 'resolved', request: result.request };
      case 'already-resolved':
        return { kind: 'already-resolved', request: result.request };
      case 'not-approver':
        log.info({ provider, userId: click.userId, approval: click.approvalId, reason: result.reason }, 'approval click refused');
        return result.wrongConversation ? { kind: 'not-approver', text: WRONG_CONVERSATION_TEXT } : { kind: 'not-approver' };
      case 'not-found':
        return { kind: 'not-found' };
      case 'decision-not-allowed':
        return { kind: 'decision-not-allowed', allowed: result.allowed };
    }
  };
}

/** The same path shaped for adapters' buttons, which only offer allowed decisions. */
export function clickHandlerOn(resolve: ResolveApproval, provider: string): OnApprovalClick {
  // A button or form: judged by the conversation it came from as well (click-origin.ts).
  const approve = approveOn(resolve, provider, 'click');
  return async function onApprovalClick(click): Promise<ClickOutcome> {
    const outcome = await approve(click);
    if (outcome.kind !== 'decision-not-allowed') return outcome;
    // A button for a decision the card never offered: a forged or stale payload.
    log.warn({ provider, approval: click.approvalId, decision: click.decision }, 'approval click with a decision the request does not offer');
    return { kind: 'not-found' };
  };
}

// The web chat's local user is an identity: defined with the owners, named here for the adapters.
export { WEB_LOCAL_USER };

/**
 * The config the approval service decides with: the web chat's local user is the owner and so
 * an approver on `web` (added to `owners.web`, and to `approvals.approvers.web` when that list
 * is set). Nobody else gains anything.
 */
export function withWebLocalOwner<C extends Pick<WardenConfig, 'owners' | 'approvals'>>(config: C): C {
  const add = (ids: string[] | undefined) => [...new Set([...(ids ?? []), WEB_LOCAL_USER])];
  const approvers = config.approvals.approvers;
  return {
    ...config,
    owners: { ...config.owners, web: add(config.owners.web) },
    approvals: { ...config.approvals, ...(approvers?.web ? { approvers: { ...approvers, web: add(approvers.web) } } : {}) },
  };
}
