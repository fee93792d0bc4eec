import type { ApprovalDecision, ApprovalRequest } from '../../src/approvals/types.js';
import {
  cardTitle,
  commandBlock,
  cutNotice,
  decisionLabel,
  DENY_WITH_REASON_LABEL,
  encodeApprovalAction,
  encodeReasonAction,
  progressLines,
  expiryUnix,
  offeredDecisions,
  outcomeLine,
  requesterLine,
} from '../common/approval-card.js';

/** Section text is limited to 3,000 characters; the command block leaves room for escaping. */
export const COMMAND_MAX = 2_600;
const CONTEXT_ELEMENT_MAX = 2_000;
const ACTION_ID_PREFIX = 'warden_approval_';

export const mention = (id: string): string => `<@${id}>`;

/** Slack mrkdwn gives `&`, `<` and `>` meaning; a shell command uses them literally. */
export const escapeMrkdwn = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export const approvalActionId = (decision: ApprovalDecision): string => `${ACTION_ID_PREFIX}${decision}`;
export const APPROVAL_ACTION_PATTERN = /^warden_approval_/;

/** The "Deny with reason" button: opens a form (views.open) instead of deciding. */
export const REASON_ACTION_ID = 'warden_approval_reason';

const STYLE: Record<ApprovalDecision, 'primary' | 'danger' | undefined> = {
  'allow-once': 'primary',
  'allow-conversation': undefined,
  'allow-timed': undefined,
  'allow-always': undefined,
  deny: 'danger',
};

/** `<!date^…>` renders in each reader's time zone; the fallback is for clients that cannot. */
export function slackDate(unix: number): string {
  return `<!date^${unix}^{date_short_pretty} at {time}|${new Date(unix * 1000).toISOString()}>`;
}

const mrkdwn = (text: string) => ({ type: 'mrkdwn', text: text.length > CONTEXT_ELEMENT_MAX ? `${text.slice(0, CONTEXT_ELEMENT_MAX - 1)}…` : text });

export interface SlackCard {
  text: string;
  blocks: any[];
  /** Set when the command did not fit: post it in the card's thread. */
  fullText?: string | undefined;
}

/**
 * The Block Kit card for a request in any state. Pending cards end in one button per allowed
 * decision; finished cards replace the buttons with the outcome and who decided.
 */
export function slackCard(request: ApprovalRequest): SlackCard {
  const title = cardTitle(request);
  const { block, cut } = commandBlock(escapeMrkdwn(request.fullText), COMMAND_MAX);
  const pending = request.status === 'pending';
  const where = request.provider === 'slack' && request.channelId ? `<#${request.channelId}>` : (request.channelId ?? '—');
  const meta = [
    `*Agent:* ${escapeMrkdwn(request.agentId)}`,
    `*Session:* ${escapeMrkdwn(request.sessionKey)}`,
    `*Channel:* ${where}`,
    `*Requested by:* ${requesterLine(request, mention) || '—'}`,
    pending ? `*Expires:* ${slackDate(expiryUnix(request))}` : `*Decided:* ${request.decidedAt ? slackDate(Math.floor(request.decidedAt / 1000)) : '—'}`,
    // A context block holds at most 10 elements.
    ...request.facts.slice(0, 5).map((f) => `*${escapeMrkdwn(f.label)}:* ${escapeMrkdwn(f.value)}`),
  ];
  const blocks: any[] = [
    { type: 'section', block_id: 'warden_approval_header', text: { type: 'mrkdwn', text: `*${title}*\n${escapeMrkdwn(request.title)}` } },
    { type: 'section', block_id: 'warden_approval_command', text: { type: 'mrkdwn', text: block } },
  ];
  if (cut) blocks.push({ type: 'context', elements: [mrkdwn(cutNotice(request.fullText, 'the full text is in the thread of this message'))] });
  const progress = progressLines(request, mention);
  if (progress.length > 0) blocks.push({ type: 'section', block_id: 'warden_approval_progress', text: { type: 'mrkdwn', text: progress.map((l) => `*${escapeMrkdwn(l)}*`).join('\n') } });
  blocks.push({ type: 'context', elements: meta.map(mrkdwn) });
  if (pending) {
    const buttons = offeredDecisions(request).map((decision) => ({
      type: 'button',
      action_id: approvalActionId(decision),
      text: { type: 'plain_text', text: decisionLabel(decision, request.timedGrantSec) },
      value: encodeApprovalAction(request.id, decision),
      ...(STYLE[decision] ? { style: STYLE[decision] } : {}),
    }));
    if (request.allowedDecisions.includes('deny')) {
      buttons.push({ type: 'button', action_id: REASON_ACTION_ID, text: { type: 'plain_text', text: DENY_WITH_REASON_LABEL }, value: encodeReasonAction(request.id) });
    }
    if (buttons.length > 0) blocks.push({ type: 'actions', block_id: 'warden_approval_actions', elements: buttons });
  } else {
    blocks.push({ type: 'section', block_id: 'warden_approval_outcome', text: { type: 'mrkdwn', text: `*${outcomeLine(request, mention)}*` } });
  }
  blocks.push({ type: 'context', elements: [mrkdwn(`ID: ${request.id}`)] });
  const summary = pending ? `${title}: ${request.title}` : `${title}. ${outcomeLine(request, mention)}`;
  return { text: summary, blocks, fullText: cut ? request.fullText : undefined };
}
