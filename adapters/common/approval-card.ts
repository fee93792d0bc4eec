import { APPROVAL_DECISIONS, type ApprovalDecision, type ApprovalOutcome, type ApprovalRequest } from '../../src/approvals/types.js';

/** Button labels, in the order the card shows them. */
export const DECISION_LABEL: Record<ApprovalDecision, string> = {
  'allow-once': 'Allow once',
  'allow-always': 'Allow always',
  deny: 'Deny',
};

/** How a finished card names its outcome. */
export const OUTCOME_LABEL: Record<ApprovalOutcome, string> = {
  'allow-once': 'Allowed once',
  'allow-always': 'Allowed always',
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
export function outcomeLine(request: Pick<ApprovalRequest, 'status' | 'decidedBy'>, mention: (id: string) => string): string {
  switch (request.status) {
    case 'pending':
      return '';
    case 'expired':
      return 'Expired: no decision before the deadline. Nothing ran.';
    case 'cancelled':
    case 'interrupted':
      return `${OUTCOME_LABEL[request.status]}: the turn that asked ended first. Nothing ran.`;
    default:
      return `${OUTCOME_LABEL[request.status]}${request.decidedBy ? ` by ${decider(request.decidedBy, mention)}` : ''}`;
  }
}

/**
 * The approval service records deciders as `<provider>:<userId>` (`cli:<operator>` for the
 * local CLI): a platform user is mentioned by their id, anyone else is named as recorded.
 */
function decider(decidedBy: string, mention: (id: string) => string): string {
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
  const match = /^warden:approval:(allow-once|allow-always|deny):(.+)$/.exec(value);
  if (!match) return undefined;
  return { decision: match[1] as ApprovalDecision, approvalId: match[2]! };
}

export const isApprovalAction = (value: string): boolean => value.startsWith(`${ACTION_PREFIX}:`);
