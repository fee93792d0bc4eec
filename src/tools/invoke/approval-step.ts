import { argumentBinding } from '../../approvals/argument-files.js';
import { escapeGlob } from '../../approvals/glob.js';
import { bindingChange } from '../../exec/binding-change.js';
import type { Binding } from '../../exec/file-binding.js';
import type { ApprovalService } from '../../approvals/service.js';
import { isPending, type ApprovalRequestContext, type ApprovalRequester, type ApprovalRequestInput, type ApprovalResolution } from '../../approvals/types.js';
import type { HookApprovalRequest } from '../../hooks/types.js';
import { stableJson } from '../../util/stable-json.js';
import type { RuleHit } from '../../approvals/rules.js';

/** What the model reads after a human said no (reference §5.3, OpenClaw's wording). */
export const DENIED_TEXT = [
  'Denied by user. The tool call did not run.',
  'This denial is final: the approval request is closed. Do not mention /approve or any other approval command to the user.',
  'Do not run the tool call again or ask the user to approve it again.',
  'If the user still wants the action, explain that a new tool call will trigger a fresh approval request.',
].join('\n');

/** A deny with the approver's reason: the reason is quoted as the approver typed it, for the model to act on. */
export function deniedText(reason: string | undefined): string {
  if (reason === undefined) return DENIED_TEXT;
  return `${DENIED_TEXT}\nThe approver's reason: ${JSON.stringify(reason)}. Take it into account when you answer the user.`;
}

export const TIMED_OUT_TEXT = 'Approval timed out';
const TIMED_OUT_GUIDANCE = [
  'The tool call did not run: nobody approved it in time.',
  'Do not run the tool call again on your own. If the user still wants the action, tell them a new tool call will ask for approval again.',
].join('\n');

export const APPROVAL_UNAVAILABLE_TEXT = 'Approval required, but no approval service is available for this call. The tool call did not run.';

/**
 * What the model reads when nobody decided within `approvals.waitSec`: the call waits on its
 * own, and the model must neither retry nor poll — its outcome arrives as a new message.
 */
export function pendingApprovalText(id: string, expiresAt?: number, now = Date.now()): string {
  const expiry = expiresAt === undefined ? '' : ` (or the request expires in about ${Math.max(1, Math.round((expiresAt - now) / 60_000))} min)`;
  return [
    `pending approval ${id}: it runs when an approver decides; the result will be posted here.`,
    `Do not call it again and do not poll or check on it: when an approver decides${expiry}, you get the outcome in a new message and can finish the task then.`,
    'For now, tell the user briefly that it waits for an approval, and go on with anything that does not need it.',
  ].join('\n');
}

export type ApprovalStepOutcome =
  | { kind: 'approved'; resolution?: ApprovalResolution; grantId?: string | undefined }
  | { kind: 'refused'; text: string; deniedReason: string; status: 'denied' | 'blocked'; resolution?: ApprovalResolution }
  | { kind: 'pending'; id: string; expiresAt: number };

const PREVIEW_CHARS = 300;

/** Stable JSON of the arguments: what a grant's argPattern is matched against. */
export function argumentText(params: Record<string, unknown>): string {
  return stableJson(params);
}

/**
 * Asks a human for a hook- or policy-requested approval. A live grant for the same agent, tool
 * and exact arguments, whose files (those the arguments name, see `argumentBinding`) are
 * unchanged, answers without asking. allow-always stores a grant bound to those exact arguments
 * and those files' content; when the files cannot be bound (unreadable, too large), the card
 * offers no grant. Deny and expiry come back as results the model is told not to retry. Asked
 * through the call's requester: one that can defer answers `pending` after `approvals.waitSec`,
 * and a resumed call's requester answers with the decision it was resumed for.
 */
export async function runApprovalStep(
  approvals: ApprovalService | undefined,
  requester: ApprovalRequester,
  ask: HookApprovalRequest & { owner?: string | undefined; facts?: ReadonlyArray<{ label: string; value: string }> | undefined; rule?: RuleHit | undefined },
  call: { tool: string; params: Record<string, unknown>; context: ApprovalRequestContext; signal?: AbortSignal | undefined; workspaceDir?: string | undefined },
): Promise<ApprovalStepOutcome> {
  if (!approvals) return { kind: 'refused', text: APPROVAL_UNAVAILABLE_TEXT, deniedReason: 'approval-unavailable', status: 'blocked' };
  const args = argumentText(call.params);
  const rule = ask.rule;
  // A rule that always asks, or needs several people, never lets a grant answer for it (and offers none).
  const grantsCount = rule === undefined || (rule.rule.ask === 'on-miss' && rule.rule.quorum <= 1);
  // Without a workspace, relative names resolve against the process's directory: still a binding, never none.
  const binding = argumentBinding(call.params, call.workspaceDir ?? process.cwd());
  if (binding.ok && grantsCount) {
    const grant = await approvals.grants.match({
      agentId: call.context.agentId,
      tool: call.tool,
      target: call.tool,
      args,
      boundFiles: binding.files,
      sessionKey: call.context.sessionKey,
      ruleKey: rule?.key,
    });
    if (grant) return { kind: 'approved', grantId: grant.id };
  }
  const bound = binding.ok ? binding.files : [];

  const pretty = JSON.stringify(call.params, null, 2);
  const input: ApprovalRequestInput = {
    kind: 'tool',
    tool: call.tool,
    title: ask.title,
    preview: `${ask.description}\n${args.length > PREVIEW_CHARS ? `${args.slice(0, PREVIEW_CHARS)}…` : args}`,
    fullText: pretty,
    facts: [
      ...(rule ? [{ label: 'Risk', value: rule.risk }, { label: 'Rule', value: rule.path }] : []),
      ...(rule && rule.rule.quorum > 1 ? [{ label: 'Needs', value: `${rule.rule.quorum} approvers (not the requester)` }] : []),
      ...(ask.owner ? [{ label: 'Requested by', value: ask.owner }] : []),
      ...(ask.severity ? [{ label: 'Severity', value: ask.severity }] : []),
      ...(ask.facts ?? []),
      ...(bound.length > 0 ? [{ label: 'Binds', value: bound.map((f) => `${f.path} (${f.sha256 === null ? 'absent' : `sha256 ${f.sha256.slice(0, 12)}…`})`).join(', ') }] : []),
      ...(!binding.ok ? [{ label: 'Allow always', value: `not offered: ${binding.why}` }] : []),
    ],
    ...(ask.allowedDecisions ? { allowedDecisions: ask.allowedDecisions } : {}),
    ...(ask.timeoutMs !== undefined ? { timeoutMs: ask.timeoutMs } : {}),
    ...(ask.timeoutBehavior ? { timeoutBehavior: ask.timeoutBehavior } : {}),
    ...(binding.ok && grantsCount ? { grant: { pattern: escapeGlob(call.tool), argPattern: escapeGlob(args), boundFiles: binding.files, ...(rule ? { ruleKey: rule.key } : {}) } } : {}),
    ...(rule
      ? {
          scopedGrants: true,
          rule: {
            path: rule.path,
            quorum: rule.rule.quorum,
            ...(rule.rule.approvers ? { approvers: rule.rule.approvers } : {}),
            ...(rule.rule.escalateAfterSec !== undefined ? { escalateAfterSec: rule.rule.escalateAfterSec } : {}),
            ...(rule.rule.escalateTo ? { escalateTo: rule.rule.escalateTo } : {}),
          },
          ...(rule.rule.expiresSec !== undefined ? { timeoutMs: rule.rule.expiresSec * 1000 } : {}),
        }
      : {}),
  };
  const asked = requester.requestOrDefer ? await requester.requestOrDefer(input, call.signal) : await requester.request(input, call.signal);
  if (isPending(asked)) return { kind: 'pending', id: asked.id, expiresAt: asked.expiresAt };
  const resolution = asked;
  switch (resolution.outcome) {
    case 'allow-once':
    case 'allow-conversation':
    case 'allow-timed':
    case 'allow-always': {
      // The decision covers the files as the card bound them: one rewritten while the card waited is refused.
      const changed = bindingChangedSince(binding, call.params, call.workspaceDir);
      if (changed !== null) return { kind: 'refused', text: `${changed}. The tool call did not run; a new call asks again.`, deniedReason: 'approval-changed', status: 'blocked', resolution };
      return { kind: 'approved', resolution, grantId: resolution.grantId };
    }
    case 'deny':
      return { kind: 'refused', text: deniedText(resolution.denyReason), deniedReason: 'approval-denied', status: 'denied', resolution };
    case 'expired':
      if (resolution.timeoutBehavior === 'allow') return { kind: 'approved', resolution };
      return { kind: 'refused', text: `${ask.timeoutReason?.trim() || TIMED_OUT_TEXT}\n${TIMED_OUT_GUIDANCE}`, deniedReason: 'approval-timeout', status: 'blocked', resolution };
    default:
      return { kind: 'refused', text: `Approval ${resolution.outcome}. The tool call did not run.`, deniedReason: `approval-${resolution.outcome}`, status: 'blocked', resolution };
  }
}

/** Why the files a call names differ from `approved` now, or null when they are the same. */
function bindingChangedSince(approved: Binding, params: Record<string, unknown>, workspaceDir: string | undefined): string | null {
  if (!approved.ok) return null; // nothing was bound, and no grant was offered
  const now = argumentBinding(params, workspaceDir ?? process.cwd());
  if (!now.ok) return `the files this call names cannot be checked: ${now.why}`;
  const change = bindingChange(approved.files, now.files);
  return change === null ? null : `the files this call names ${change.startsWith('changed') ? `have ${change}` : `differ: ${change}`}`;
}
