import type { ApprovalActor } from '../approvals/types.js';

/**
 * Extra rules on who may decide particular approvals, checked on the chat decision path before
 * the approval service's own approver check: a config change that widens security is decided by
 * an owner other than the one whose turn asked, a node's pairing by an owner. In memory: such a
 * request is waited for by a call in this process, and a restart interrupts it.
 */
export type DeciderRule = (by: ApprovalActor) => string | undefined;

export class DeciderGuards {
  private readonly rules = new Map<string, DeciderRule>();

  /** Adds the rule for one approval until the returned function is called. */
  add(approvalId: string, rule: DeciderRule): () => void {
    this.rules.set(approvalId, rule);
    return () => {
      if (this.rules.get(approvalId) === rule) this.rules.delete(approvalId);
    };
  }

  /** Why `by` may not decide `approvalId`, or undefined when no rule objects. */
  refusal(approvalId: string, by: ApprovalActor): string | undefined {
    return this.rules.get(approvalId)?.(by);
  }
}
