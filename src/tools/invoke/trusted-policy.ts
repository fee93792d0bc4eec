import { log } from '../../log/log.js';
import type { HookApprovalRequest } from '../../hooks/types.js';
import type { TurnContext } from '../../policy/context.js';
import { normalizeToolName } from '../../policy/tool-names.js';

/** A host or plugin policy consulted before the hooks (reference §5.4). */
export interface TrustedToolPolicy {
  id: string;
  description: string;
  /** Canonical tool ids it applies to; absent = every tool. */
  matcher?: readonly string[];
  evaluate(call: TrustedPolicyCall): TrustedPolicyDecision | void | Promise<TrustedPolicyDecision | void>;
}

export interface TrustedPolicyCall {
  toolName: string;
  params: Record<string, unknown>;
  agentId: string;
  sessionKey: string;
  senderId?: string | undefined;
  senderIsOwner: boolean;
  /** The call's turn (what a plugin policy's context is derived from). */
  turn?: TurnContext | undefined;
  toolCallId?: string | undefined;
  runId?: string | undefined;
}

export interface TrustedPolicyDecision {
  /** `false` blocks, like `block: true`. */
  allow?: boolean;
  block?: boolean;
  blockReason?: string;
  /** Replaces the params the next policies (and the hooks) see. */
  params?: Record<string, unknown>;
  requireApproval?: HookApprovalRequest;
}

export type TrustedPolicyOutcome =
  | { kind: 'continue'; params: Record<string, unknown>; approval?: HookApprovalRequest & { owner: string } }
  | { kind: 'block'; reason: string; policyId: string };

/**
 * Runs policies in registration order: the first block stops, params thread through, the first
 * approval request is kept. A throwing policy blocks (fail-closed).
 */
export async function runTrustedPolicies(policies: readonly TrustedToolPolicy[], call: TrustedPolicyCall): Promise<TrustedPolicyOutcome> {
  let params = call.params;
  let approval: (HookApprovalRequest & { owner: string }) | undefined;
  for (const policy of policies) {
    if (policy.matcher && !policy.matcher.map(normalizeToolName).includes(call.toolName)) continue;
    let decision: TrustedPolicyDecision | void;
    try {
      decision = await policy.evaluate({ ...call, params: structuredClone(params) });
    } catch (err) {
      log.warn({ err, policy: policy.id, tool: call.toolName }, 'trusted tool policy failed; blocking the call');
      return { kind: 'block', reason: `blocked by ${policy.id}: policy evaluation failed`, policyId: policy.id };
    }
    if (!decision) continue;
    if (decision.allow === false || decision.block === true) {
      const reason = decision.blockReason?.trim() ? decision.blockReason : `blocked by ${policy.id}`;
      return { kind: 'block', reason, policyId: policy.id };
    }
    if (decision.params && typeof decision.params === 'object') params = decision.params;
    if (decision.requireApproval && !approval) approval = { ...decision.requireApproval, owner: policy.id };
  }
  return { kind: 'continue', params, ...(approval ? { approval } : {}) };
}
