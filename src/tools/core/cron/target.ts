import type { StoredSessionContext } from '../../../turn/session-contexts.js';
import type { WardenConfig } from '../../../config/index.js';
import { sessionKeyFor } from '../../../policy/session-key.js';
import { personIn } from '../../../policy/people.js';
import type { InboundMessage } from '../../../policy/inbound.js';
import type { TurnContext } from '../../../policy/context.js';
import { messageTargetAllowed } from '../message/targets.js';
import type { CronTarget } from '../../../cron/jobs.js';

/** The conversations Warden has been addressed in (what the router records for every routed message). */
export interface KnownConversations {
  get(sessionKey: string): Promise<StoredSessionContext | undefined> | StoredSessionContext | undefined;
  channelsNamed(agentId: string, provider: string, name: string): Promise<StoredSessionContext[]> | StoredSessionContext[];
}

export type TargetResult = { ok: true; target: CronTarget } | { ok: false; error: string };

/** The conversation a turn runs in, as a job's target. */
export function targetHere(turn: TurnContext, sessionKey: string): CronTarget {
  return {
    sessionKey,
    provider: turn.provider,
    chat: turn.chat,
    guildId: turn.guildId,
    guildName: turn.guildName,
    channelId: turn.channelId,
    channelName: turn.channelName,
    threadId: turn.threadId,
    dmUserId: turn.chat === 'dm' ? turn.senderId : undefined,
    // A job never runs wider than the turn that made it.
    ...(turn.inherited ? { inherited: turn.inherited } : {}),
  };
}

/** A channel as a person names it: Discord's `<#id>`, Slack's `<#C123|name>`, `#name`, or a bare id. */
export type ChannelRef = { kind: 'id'; id: string; label: string } | { kind: 'name'; name: string; label: string };

/** A channel mention in a text: where it stands, its id, and the name Slack writes after `|`. */
export interface ChannelMention {
  index: number;
  text: string;
  id: string;
  name?: string;
}

const isIdChar = (c: string | undefined) => c !== undefined && /^[A-Za-z0-9]$/.test(c);

/**
 * Every `<#id>` and `<#id|name>` of a text, as `/<#([A-Za-z0-9]+)(?:\|([^>]*))?>/g` finds them.
 * Scanned with indexOf: the text is a person's, and that pattern reads it to the end again from
 * every `<#id|` that is never closed. With no `>` left, no later mention can close either.
 */
export function channelMentionsIn(text: string): ChannelMention[] {
  const found: ChannelMention[] = [];
  for (let at = text.indexOf('<#'); at >= 0; at = text.indexOf('<#', at + 1)) {
    let end = at + 2;
    while (isIdChar(text[end])) end++;
    if (end === at + 2) continue;
    const id = text.slice(at + 2, end);
    if (text[end] === '>') {
      found.push({ index: at, text: text.slice(at, end + 1), id });
      at = end;
    } else if (text[end] === '|') {
      const close = text.indexOf('>', end + 1);
      if (close < 0) break;
      found.push({ index: at, text: text.slice(at, close + 1), id, name: text.slice(end + 1, close) });
      at = close;
    }
  }
  return found;
}

const HASHTAG = /(?<![\w&<#])#([A-Za-z0-9][\w-]*)/g;

export function parseChannelRef(spec: string): ChannelRef | undefined {
  const s = spec.trim();
  const mention = /^<#([A-Za-z0-9]+)(?:\|[^>]*)?>$/.exec(s);
  if (mention) return { kind: 'id', id: mention[1]!, label: s };
  const name = /^#([A-Za-z0-9][\w-]*)$/.exec(s);
  if (name) return { kind: 'name', name: name[1]!, label: s };
  if (/^[A-Za-z0-9]+$/.test(s)) return { kind: 'id', id: s, label: s };
  return undefined;
}

/** Every distinct channel a text names (`post the incidents in #ops`), in order. */
export function channelRefsIn(text: string): ChannelRef[] {
  const refs: ChannelRef[] = [];
  const seen = new Set<string>();
  const mentions = channelMentionsIn(text);
  let rest = '';
  let from = 0;
  for (const m of mentions) {
    if (!seen.has(`id:${m.id}`)) refs.push({ kind: 'id', id: m.id, label: m.text });
    seen.add(`id:${m.id}`);
    // Slack's `<#C123|ops>` carries the name: a later `#ops` is the same channel.
    if (m.name) seen.add(`name:${m.name.toLowerCase()}`);
    rest += `${text.slice(from, m.index)} `;
    from = m.index + m.text.length;
  }
  rest += text.slice(from);
  for (const m of rest.matchAll(HASHTAG)) {
    const key = `name:${m[1]!.toLowerCase()}`;
    if (!seen.has(key)) refs.push({ kind: 'name', name: m[1]!, label: m[0] });
    seen.add(key);
  }
  return refs;
}

/**
 * Where a job the turn creates (or moves) should post: `here` (or nothing) is the turn's own
 * conversation; a channel reference must name a channel of this agent on this provider that
 * Warden has been addressed in — its guild, id and name are then known, so the job runs under
 * that channel's policy, never a looser one guessed from an id — and one the turn may post in
 * (the message tool's rule). A name is looked up in the turn's guild; outside a guild it must be
 * unique. The job keeps the creating turn's ceiling wherever it posts.
 */
export async function resolveCronTarget(spec: string | undefined, turn: TurnContext, sessionKey: string, known: KnownConversations | undefined, config: WardenConfig): Promise<TargetResult> {
  if (spec === undefined || spec.trim() === '' || spec.trim().toLowerCase() === 'here') return { ok: true, target: targetHere(turn, sessionKey) };
  const ref = parseChannelRef(spec);
  if (!ref) return { ok: false, error: `target: "${spec}" is not a channel; give #name, a channel mention, a channel id, or "here"` };
  if (!known) return { ok: false, error: 'target: other conversations cannot be looked up in this process; the job can only post here' };
  let found: StoredSessionContext | undefined;
  if (ref.kind === 'id') {
    found = await known.get(sessionKeyFor(turn.agentId, { provider: turn.provider as InboundMessage['provider'], chatType: 'channel', channelId: ref.id, senderId: '' }));
    if (found && found.agentId !== turn.agentId) found = undefined;
  } else {
    const named = (await known.channelsNamed(turn.agentId, turn.provider, ref.name)).filter((c) => turn.guildId === undefined || c.conversation.guildId === turn.guildId);
    if (named.length > 1) {
      return { ok: false, error: `target: ${ref.label} names ${named.length} channels (${named.map((c) => `${c.conversation.guildName ?? c.conversation.guildId ?? '?'}/${c.conversation.channelId}`).join(', ')}); give the channel's mention or id` };
    }
    found = named[0];
  }
  if (!found || found.conversation.chat !== 'channel' || !found.conversation.channelId) {
    return { ok: false, error: `target: ${ref.label} is not a ${turn.provider} channel Warden has been addressed in; mention Warden there once, or create the job from there` };
  }
  const c = found.conversation;
  const allowed = messageTargetAllowed(config, { provider: c.provider, channel: c.channelId }, turn);
  if (!allowed.ok) return { ok: false, error: `target: ${allowed.why}` };
  return {
    ok: true,
    target: {
      sessionKey: found.sessionKey,
      provider: c.provider,
      chat: 'channel',
      guildId: c.guildId,
      guildName: c.guildName,
      channelId: c.channelId,
      channelName: c.channelName,
      ...(turn.inherited ? { inherited: turn.inherited } : {}),
    },
  };
}

/** `#ops`, or the channel id when its name is not known; `DM with <@id>` (`DM with you` in the web chat) for a direct message. */
export function describeTarget(target: CronTarget): string {
  if (target.chat === 'dm') return target.dmUserId ? `DM with ${personIn(target.provider, target.dmUserId)}` : 'DM';
  const channel = target.channelName ? `#${target.channelName}` : `channel ${target.channelId ?? '?'}`;
  return target.chat === 'thread' && target.threadId ? `${channel} (thread ${target.threadId})` : channel;
}
