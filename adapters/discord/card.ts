import { ButtonStyle, ComponentType, type APIEmbed, type APIMessageTopLevelComponent } from 'discord.js';
import type { ApprovalDecision, ApprovalOutcome, ApprovalRequest } from '../../src/approvals/types.js';
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

/** Room for the command inside an embed description (limit 4,096) next to title and notices. */
export const COMMAND_MAX = 3_000;
const FIELD_MAX = 1_024;
/** Facts are secondary; capped so the whole embed stays under Discord's 6,000 characters. */
const FACTS_MAX = 10;
const FACT_VALUE_MAX = 200;

const COLOUR: Record<'pending' | ApprovalOutcome, number> = {
  pending: 0xffa500,
  'allow-once': 0x57f287,
  'allow-always': 0x5865f2,
  'allow-conversation': 0x57f287,
  'allow-timed': 0x57f287,
  deny: 0xed4245,
  expired: 0x99aab5,
  cancelled: 0x99aab5,
  interrupted: 0x99aab5,
};

const STYLE: Record<ApprovalDecision, ButtonStyle> = {
  'allow-once': ButtonStyle.Success,
  'allow-conversation': ButtonStyle.Secondary,
  'allow-timed': ButtonStyle.Secondary,
  'allow-always': ButtonStyle.Primary,
  deny: ButtonStyle.Danger,
};

export const mention = (id: string): string => `<@${id}>`;

/** The file that carries a command too long for the card. */
export const fullTextFileName = (request: Pick<ApprovalRequest, 'id'>): string => `approval-${request.id}.txt`;

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

const field = (name: string, value: string, inline = true, max = FIELD_MAX) => ({ name: clip(name, 256), value: clip(value, max) || '—', inline });

export interface DiscordCard {
  body: { content: string; embeds: APIEmbed[]; components: APIMessageTopLevelComponent[]; allowed_mentions: { parse: [] } };
  /** Set when the command did not fit: it must be attached to the first post of the card. */
  fullText?: { name: string; content: string } | undefined;
}

/**
 * The card for a request in any state: pending cards carry one button per allowed decision;
 * finished cards say the outcome and who decided, and have no buttons. Mentions render but
 * never ping (`allowed_mentions`).
 */
export function discordCard(request: ApprovalRequest): DiscordCard {
  const { block, cut } = commandBlock(request.fullText, COMMAND_MAX);
  const pending = request.status === 'pending';
  const description = [
    request.title,
    block,
    cut ? cutNotice(request.fullText, `the full text is attached as ${fullTextFileName(request)}`) : '',
    ...progressLines(request, mention).map((l) => `**${l}**`),
    pending ? '' : `**${outcomeLine(request, mention)}**`,
  ]
    .filter(Boolean)
    .join('\n');
  const where = request.provider === 'discord' && request.channelId ? `<#${request.threadId ?? request.channelId}>` : request.channelId ?? '';
  const fields = [
    field('Agent', request.agentId),
    field('Session', request.sessionKey),
    field('Channel', where),
    field('Requested by', requesterLine(request, mention)),
    pending
      ? field('Expires', `<t:${expiryUnix(request)}:R>`)
      : field('Decided', request.decidedAt ? `<t:${Math.floor(request.decidedAt / 1000)}:R>` : '—'),
    ...request.facts.slice(0, FACTS_MAX).map((f) => field(f.label, f.value, false, FACT_VALUE_MAX)),
  ];
  const buttons = offeredDecisions(request).map((decision) => ({
    type: ComponentType.Button as const,
    style: STYLE[decision] as ButtonStyle.Success,
    label: decisionLabel(decision, request.timedGrantSec),
    custom_id: encodeApprovalAction(request.id, decision),
  }));
  // A second row: a row holds at most five buttons, and the form-opening one reads apart from the decisions.
  const reasonRow = request.allowedDecisions.includes('deny')
    ? [{ type: ComponentType.ActionRow as const, components: [{ type: ComponentType.Button as const, style: ButtonStyle.Secondary as ButtonStyle.Secondary, label: DENY_WITH_REASON_LABEL, custom_id: encodeReasonAction(request.id) }] }]
    : [];
  return {
    body: {
      content: '',
      embeds: [{ title: cardTitle(request), description, color: COLOUR[request.status], fields, footer: { text: `ID: ${request.id}` } }],
      components: pending && buttons.length > 0 ? [{ type: ComponentType.ActionRow, components: buttons }, ...reasonRow] : [],
      allowed_mentions: { parse: [] },
    },
    fullText: cut ? { name: fullTextFileName(request), content: request.fullText } : undefined,
  };
}
