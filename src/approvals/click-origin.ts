// Where a click or a form came FROM, and whether that conversation may answer what was asked.
// Identity alone is not enough: an approver is an approver everywhere, but a card, a question or
// a secret prompt was shown in one conversation (and, for approvals, in the documented copies:
// approvers' DMs, escalation channels). A click that names an id from anywhere else — a forged
// or replayed interaction, a button copied into another channel, a Slack payload whose channel
// differs — is refused, whoever clicks. The adapters fill the origin from what the platform
// itself reports about the interaction (Discord's interaction channel and guild, Slack's
// payload channel/container, a modal's opening click), never from the button's own id.

/** The conversation a click or form submission came from, as the adapter saw it. */
export interface ClickOrigin {
  provider: string;
  /** Discord guild or Slack team; absent in a DM (and on the web chat). */
  guildId?: string | undefined;
  /** Warden's channel id: for a thread, its parent channel (as in a TurnContext). */
  channelId: string;
  /** The thread (Discord thread channel, Slack root ts) when the click was in one. */
  threadId?: string | undefined;
  /** The clicker's own direct conversation with the bot. */
  dm: boolean;
}

/** A conversation as stored with what was asked (a ReplyTarget's place, a request's channel). */
export interface AskedIn {
  provider: string;
  channelId?: string | undefined;
  threadId?: string | undefined;
  /**
   * The asking turn's guild/team (undefined: none — a DM, the web chat, or a row stored before
   * the guild was kept). Compared exactly: a click from another guild, or one whose guild differs
   * from what was stored in either direction, is another conversation.
   */
  guildId?: string | undefined;
}

/**
 * Whether `origin` is the conversation `asked` names: same platform, channel and thread (a
 * click in the parent channel is not one in the thread, nor the other way round), and the same
 * guild/team: both absent or both the same id. A row stored with a guild is not answered by a
 * click that reports none (an adapter that lost it), and a row stored without one (a DM, or older
 * than the column) is not answered from a guild channel: there it is left to a typed `/approve`
 * or the person's DM, or expires. Nothing stored → no conversation matches.
 */
export function sameConversation(asked: AskedIn, origin: ClickOrigin | undefined): boolean {
  if (!origin || asked.channelId === undefined || asked.channelId === '') return false;
  if (asked.provider !== origin.provider || asked.channelId !== origin.channelId) return false;
  if ((asked.threadId ?? undefined) !== (origin.threadId ?? undefined)) return false;
  if ((asked.guildId ?? undefined) !== (origin.guildId ?? undefined)) return false;
  return true;
}

/** How a decision arrived: typed by id, or a click/form from a conversation (null: none reported). */
export type ApprovalVia = { kind: 'typed' } | { kind: 'click'; origin: ClickOrigin | null };

/** What of an approval request says where its cards went. */
export interface ApprovalPlaces {
  provider: string;
  /** The asking turn's guild/team (sameConversation compares it). */
  guildId?: string | undefined;
  channelId?: string | undefined;
  threadId?: string | undefined;
  escalateTo?: readonly string[] | undefined;
  escalatedAt?: number | undefined;
}

/**
 * Undefined when an approval card may be decided from `origin`; else why not. The card's
 * documented places (docs/approvals.md): the request's own conversation; on the web chat, its
 * pending panel (every web session's cards); an approver's DM with the bot when cards go to
 * DMs there (`approvals.target` dm or both, a request from another platform or with no
 * conversation, or an escalation to a person); a channel it was escalated to. Anywhere else is
 * refused, for every clicker: who may decide is asked separately (approverRefusal).
 */
export function approvalOriginRefusal(request: ApprovalPlaces, origin: ClickOrigin | undefined, cardTarget: 'channel' | 'dm' | 'both'): string | undefined {
  if (!origin) return 'the click carried no conversation';
  if (origin.provider === 'web') return request.provider === 'web' ? undefined : `a ${request.provider} request is not decided from the web chat`;
  if (request.provider === 'web') return `a web chat request is not decided from ${origin.provider}`;
  const fromHere = request.provider === origin.provider && request.channelId !== undefined && request.channelId !== '';
  if (fromHere && cardTarget !== 'dm' && sameConversation(request, origin)) return undefined;
  if (origin.dm) {
    const escalatedToPeople = request.escalatedAt !== undefined && (request.escalateTo ?? []).some((t) => !t.startsWith('channel:') && !t.startsWith('#') && !t.startsWith('role:') && !t.startsWith('usergroup:'));
    if (cardTarget !== 'channel' || !fromHere || escalatedToPeople) return undefined;
    return 'approval cards of this conversation are not sent to direct messages (approvals.target: channel)';
  }
  if (request.escalatedAt !== undefined && request.provider === origin.provider) {
    const channels = (request.escalateTo ?? []).map((t) => t.trim()).flatMap((t) => (t.startsWith('channel:') ? [t.slice('channel:'.length)] : t.startsWith('#') ? [t.slice(1)] : []));
    // An escalation copy is posted in the channel itself (not a thread of it).
    if (channels.includes(origin.channelId) && origin.threadId === undefined) return undefined;
  }
  return 'this card was not posted in the conversation the click came from';
}

/**
 * Undefined when a decision that arrived `via` may decide the card; else why not. Only an
 * explicit typed command skips the place check; anything else — a click, or an actor whose
 * kind is missing or unknown (an adapter that forgot it) — is a click, and a click with no
 * origin is refused.
 */
export function actorOriginRefusal(request: ApprovalPlaces, via: ApprovalVia | undefined, cardTarget: 'channel' | 'dm' | 'both'): string | undefined {
  if (via?.kind === 'typed') return undefined;
  return approvalOriginRefusal(request, via?.kind === 'click' ? (via.origin ?? undefined) : undefined, cardTarget);
}

/** The origin as an audit row records it (ids only; nothing that authenticates). */
export function originForAudit(origin: ClickOrigin | null | undefined): Record<string, unknown> | null {
  if (!origin) return null;
  return { provider: origin.provider, ...(origin.guildId !== undefined ? { guildId: origin.guildId } : {}), channelId: origin.channelId, ...(origin.threadId !== undefined ? { threadId: origin.threadId } : {}), dm: origin.dm };
}
