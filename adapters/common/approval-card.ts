import { APPROVAL_DECISIONS, type ApprovalDecision, type ApprovalOutcome, type ApprovalRequest } from '../../src/approvals/types.js';

/** Button labels, in the order the card shows them. */
export const DECISION_LABEL: Record<ApprovalDecision, string> = {
  'allow-once': 'Allow once',
  'allow-conversation': 'Allow in this conversation',
  'allow-timed': 'Allow for a while',
  'allow-always': 'Allow always',
  deny: 'Deny',
};

/** The label of a decision's button; the timed grant says for how long (`approvals.timedGrantSec`). */
export function decisionLabel(decision: ApprovalDecision, timedGrantSec?: number): string {
  if (decision === 'allow-timed' && timedGrantSec !== undefined) return `Allow for ${spanText(timedGrantSec)}`;
  return DECISION_LABEL[decision];
}

/** `3600` → `1 hour`, `5400` → `90 min`, `86400` → `1 day`. */
export function spanText(sec: number): string {
  if (sec % 86_400 === 0) return sec === 86_400 ? '1 day' : `${sec / 86_400} days`;
  if (sec % 3600 === 0) return sec === 3600 ? '1 hour' : `${sec / 3600} hours`;
  return `${Math.round(sec / 60)} min`;
}

/** The "Deny with reason" button's label; it opens a form, then denies with the typed reason. */
export const DENY_WITH_REASON_LABEL = 'Deny with reason';

/** How a finished card names its outcome. */
export const OUTCOME_LABEL: Record<ApprovalOutcome, string> = {
  'allow-once': 'Allowed once',
  'allow-always': 'Allowed always',
  'allow-conversation': 'Allowed in this conversation',
  'allow-timed': 'Allowed for a while',
  deny: 'Denied',
  expired: 'Expired',
  cancelled: 'Cancelled',
  interrupted: 'Interrupted',
};

export const NOT_APPROVER_TEXT = 'You are not allowed to approve this request.';
export const NOT_FOUND_TEXT = 'This approval request no longer exists. It may have expired before a restart.';
export const CLICK_FAILED_TEXT = 'Your decision could not be recorded. Nothing changed; try again.';
export const INVALID_ACTION_TEXT = 'This approval button is not valid.';

/** The buttons a request offers, in a fixed order, whatever order the request lists them in. */
export function offeredDecisions(request: Pick<ApprovalRequest, 'allowedDecisions'>): ApprovalDecision[] {
  return APPROVAL_DECISIONS.filter((d) => request.allowedDecisions.includes(d));
}

export function cardTitle(request: Pick<ApprovalRequest, 'kind' | 'tool' | 'status'>): string {
  const what = request.kind === 'exec' ? 'Exec approval' : `Approval for ${request.tool}`;
  return request.status === 'pending' ? `${what} required` : `${what}: ${OUTCOME_LABEL[request.status]}`;
}

/**
 * The line a finished card shows: who decided, or why nobody did. `mention` renders a user id
 * in the platform's syntax.
 */
export function outcomeLine(request: Pick<ApprovalRequest, 'status' | 'decidedBy'> & Partial<Pick<ApprovalRequest, 'votes' | 'denyReason'>>, mention: (id: string) => string): string {
  switch (request.status) {
    case 'pending':
      return '';
    case 'expired':
      return 'Expired: no decision before the deadline. Nothing ran.';
    case 'cancelled':
    case 'interrupted':
      return `${OUTCOME_LABEL[request.status]}: the turn that asked ended first. Nothing ran.`;
    default: {
      const votes = request.votes ?? [];
      const by = votes.length > 1 && request.status !== 'deny' ? votes.map((v) => decider(v.by, mention)).join(', ') : request.decidedBy ? decider(request.decidedBy, mention) : undefined;
      const reason = request.status === 'deny' && request.denyReason ? ` — reason: “${request.denyReason}”` : '';
      return `${OUTCOME_LABEL[request.status]}${by ? ` by ${by}` : ''}${reason}`;
    }
  }
}

/**
 * What a pending card says besides its buttons: the quorum's progress ("1 of 2 approved by
 * @a") and an escalation. Empty lines are left out.
 */
export function progressLines(request: Pick<ApprovalRequest, 'status' | 'quorum' | 'votes' | 'escalatedAt' | 'escalateTo' | 'rule'>, mention: (id: string) => string): string[] {
  const lines: string[] = [];
  const quorum = request.quorum ?? 1;
  if (quorum > 1 && request.status === 'pending') {
    const votes = request.votes ?? [];
    lines.push(votes.length === 0 ? `0 of ${quorum} approved` : `${votes.length} of ${quorum} approved by ${votes.map((v) => decider(v.by, mention)).join(', ')}`);
  }
  if (request.escalatedAt !== undefined) lines.push(`Escalated to ${(request.escalateTo ?? []).join(', ')}: nobody decided in time`);
  return lines;
}

/**
 * The approval service records deciders as `<provider>:<userId>` (`cli:<operator>` for the
 * local CLI): a platform user is mentioned by their id, anyone else is named as recorded.
 */
export function decider(decidedBy: string, mention: (id: string) => string): string {
  const platform = /^(?:discord|slack|web):(.+)$/.exec(decidedBy);
  if (platform) return mention(platform[1]!);
  return decidedBy.includes(':') ? decidedBy : mention(decidedBy);
}

/**
 * Who the request is for and who made the call: "the agent for @alice" when the model asked in
 * alice's turn, "@alice with /exec" when she typed it. Empty when nobody is known.
 */
export function requesterLine(request: Pick<ApprovalRequest, 'requesterId' | 'requesterName' | 'via'>, mention: (id: string) => string): string {
  if (request.requesterId === undefined) return request.via === 'agent' ? 'the agent' : '';
  const who = mention(request.requesterId);
  if (request.via === 'agent') return `the agent for ${who}`;
  if (request.via === 'command') return `${who} with /exec`;
  return who;
}

export function alreadyResolvedText(request: Pick<ApprovalRequest, 'status' | 'decidedBy'>, mention: (id: string) => string): string {
  return `This approval was already resolved: ${outcomeLine(request, mention)}`;
}

/**
 * Fits the full command into a code block of at most `max` characters. Triple backticks in
 * the command would end the block early, so a zero-width space breaks them up. When the text
 * does not fit, `cut` is true and the caller must say so and deliver the full text another
 * way: a card never truncates silently.
 */
export function commandBlock(fullText: string, max: number): { block: string; cut: boolean } {
  const safe = fullText.replace(/```/g, '`\u200b``');
  const room = max - '```\n\n```'.length;
  if (safe.length <= room) return { block: `\`\`\`\n${safe}\n\`\`\``, cut: false };
  return { block: `\`\`\`\n${safe.slice(0, room - 1)}…\n\`\`\``, cut: true };
}

export function cutNotice(fullText: string, where: string): string {
  return `The command is ${fullText.length.toLocaleString('en-US')} characters, too long for this card; ${where}.`;
}

/** Unix seconds of the expiry, for the platforms' relative-time markup. */
export const expiryUnix = (request: Pick<ApprovalRequest, 'expiresAt'>): number => Math.floor(request.expiresAt / 1000);

const ACTION_PREFIX = 'warden:approval';

/** A button's id: decision and approval id, readable back by `decodeApprovalAction`. */
export function encodeApprovalAction(approvalId: string, decision: ApprovalDecision): string {
  return `${ACTION_PREFIX}:${decision}:${approvalId}`;
}

export function decodeApprovalAction(value: string): { approvalId: string; decision: ApprovalDecision } | undefined {
  if (!value.startsWith(`${ACTION_PREFIX}:`)) return undefined;
  const rest = value.slice(ACTION_PREFIX.length + 1);
  const colon = rest.indexOf(':');
  if (colon <= 0) return undefined;
  const decision = rest.slice(0, colon);
  const approvalId = rest.slice(colon + 1);
  if (!(APPROVAL_DECISIONS as readonly string[]).includes(decision) || approvalId === '') return undefined;
  return { decision: decision as ApprovalDecision, approvalId };
}

const REASON_PREFIX = 'warden:approval-reason';

/** The "Deny with reason" button's id (and its form's): it opens a form instead of deciding. */
export function encodeReasonAction(approvalId: string): string {
  return `${REASON_PREFIX}:${approvalId}`;
}

export function decodeReasonAction(value: string): { approvalId: string } | undefined {
  if (!value.startsWith(`${REASON_PREFIX}:`)) return undefined;
  const approvalId = value.slice(REASON_PREFIX.length + 1);
  return approvalId === '' ? undefined : { approvalId };
}

/** The form's text field id and limits. */
export const REASON_FIELD = 'reason';
export const REASON_MAX = 500;

export const isApprovalAction = (value: string): boolean => value.startsWith(`${ACTION_PREFIX}:`);
