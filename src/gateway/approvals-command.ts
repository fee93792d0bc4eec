import type { ApprovalRequest } from '../approvals/types.js';

/**
 * `/approvals`: what waits for a decision in this conversation — id, what, for whom, how old,
 * when it expires — so anyone can find a card scrolled out of view and an approver can answer
 * with `/approve <id> …`. Needs no model; the same on every surface. Pure.
 */
export function formatPendingApprovals(requests: readonly ApprovalRequest[], now: number): string {
  if (requests.length === 0) return 'No approvals are pending in this conversation.';
  const lines = [`Pending approvals here (${requests.length}):`];
  for (const r of requests) {
    lines.push(`• ${r.id} — ${what(r)} — ${forWhom(r)} — ${duration(now - r.createdAt)} old, expires in ${duration(r.expiresAt - now)}`);
  }
  lines.push('', 'Approvers decide with the card’s buttons or `/approve <id> allow-once|allow-always|deny`.');
  return lines.join('\n');
}

/** The call in one line, as the card's preview starts. */
function what(r: ApprovalRequest): string {
  const text = (r.kind === 'exec' ? r.fullText : `${r.tool}: ${r.title}`).replace(/\s+/g, ' ').trim();
  const short = text.length > 80 ? `${text.slice(0, 79)}…` : text;
  return r.kind === 'exec' ? `exec \`${short.replaceAll('`', 'ˋ')}\`` : short;
}

/** Named, never mentioned: a list must not ping everyone on it. */
export function forWhom(r: Pick<ApprovalRequest, 'requesterId' | 'requesterName' | 'via'>): string {
  const who = r.requesterName ?? r.requesterId;
  if (who === undefined) return r.via === 'command' ? 'by a command' : 'for the agent’s own turn';
  return r.via === 'command' ? `by ${who} (/exec)` : `by the agent for ${who}`;
}

function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  return m % 60 === 0 ? `${h}h` : `${h}h ${m % 60}m`;
}
