import type { WardenConfig } from '../../../config/schema/index.js';
import { messageActionConfigRefusal, type MessageAction } from '../../../config/schema/message-actions.js';
import type { TurnContext } from '../../../policy/context.js';
import type { MessageTarget } from '../../types.js';
import { READ_MAX_MESSAGES, POLL_MAX_OPTIONS, POLL_QUESTION_MAX, POLL_OPTION_MAX, POLL_MAX_HOURS, THREAD_NAME_MAX } from './message-schema.js';

export { POLL_MAX_HOURS, POLL_MAX_OPTIONS, POLL_OPTION_MAX, POLL_QUESTION_MAX, READ_MAX_MESSAGES, THREAD_NAME_MAX };

/**
 * The message tool's actions beyond `send`: the one gate every action passes (which actions
 * are on, where they may reach) and the contract a platform adapter implements. The gate is
 * pure; the adapter does only what the gate let through, and checks what only the platform
 * knows (who wrote a message, what a channel is, where a file is hosted).
 */

export type { MessageAction } from '../../../config/schema/message-actions.js';

/** Actions that bring content back to the model: their reach is also bounded by `tools.sessions.visibility`. */
export const READ_ACTIONS: ReadonlySet<MessageAction> = new Set(['read', 'list-pins', 'download-file']);

/** Where each action works. The web chat has no reactions, threads, pins or polls; only posting. */
export const ACTION_PROVIDERS: Readonly<Record<MessageAction, readonly string[]>> = {
  send: ['discord', 'slack', 'web'],
  react: ['discord', 'slack'],
  'thread-create': ['discord', 'slack'],
  'thread-reply': ['discord', 'slack'],
  pin: ['discord', 'slack'],
  unpin: ['discord', 'slack'],
  'list-pins': ['discord', 'slack'],
  poll: ['discord', 'slack'],
  edit: ['discord', 'slack'],
  delete: ['discord', 'slack'],
  read: ['discord', 'slack'],
  'download-file': ['discord', 'slack'],
};

export const READ_DEFAULT_MESSAGES = 20;
export const DOWNLOAD_MAX_BYTES = 20 * 1024 * 1024;

/** What the platform says a channel is; `undefined` when it does not know the channel. */
export type ChannelKind = 'dm' | 'channel';

export type GateDecision = { ok: true } | { ok: false; why: string };

/**
 * Whether this turn may take `action` on `target`. `targetKind` is what the platform said the
 * channel is (asked only for a target outside this conversation; unknown there fails closed).
 *
 * 1. The config enables it for this agent on this platform: the agent's own
 *    `tools.message.actions.allow`, else the global one (default `send` only), and then the
 *    platform's action group (`channels.<platform>.actions.<group>`, OpenClaw's; unset is on).
 * 2. The platform has it (the web chat only posts).
 * 3. This conversation (its channel, or the thread it runs in) is always reachable.
 * 4. Elsewhere: another person's DM only for owners; reads only when `tools.sessions.visibility`
 *    lets the conversation see beyond itself; and then the posting rule (`allowedTargets`,
 *    owners, `crossContext`), the same function `send` uses.
 */
export function decideMessageAction(
  config: WardenConfig,
  action: MessageAction,
  target: MessageTarget,
  turn: TurnContext,
  targetKind: ChannelKind | undefined,
  targetAllowed: (config: WardenConfig, target: MessageTarget, turn: TurnContext) => GateDecision,
): GateDecision {
  const refused = messageActionConfigRefusal(config, turn.agentId, target.provider, action);
  if (refused) return { ok: false, why: refused };
  if (!ACTION_PROVIDERS[action].includes(target.provider)) return { ok: false, why: `the message action "${action}" is not available on ${target.provider}` };
  if (action === 'send') return targetAllowed(config, target, turn);
  if (target.userId !== undefined) return { ok: false, why: `the message action "${action}" takes a channel id, not a user` };
  if (isThisConversation(target, turn)) return { ok: true };
  if (targetKind === undefined) return { ok: false, why: `${target.provider} does not know the channel ${target.channel ?? '(none)'} here` };
  if (targetKind === 'dm' && !turn.senderIsOwner) return { ok: false, why: "another conversation's direct messages are for owners only" };
  const visibility = config.tools.sessions?.visibility;
  if (READ_ACTIONS.has(action) && (visibility === 'self' || visibility === 'tree')) {
    return { ok: false, why: `reading another conversation is off here (tools.sessions.visibility: ${visibility})` };
  }
  return targetAllowed(config, target, turn);
}

/** The conversation the turn runs in: its channel, or (Discord, where a thread is a channel) its thread. */
export function isThisConversation(target: MessageTarget, turn: TurnContext): boolean {
  if (target.provider !== turn.provider || target.channel === undefined) return false;
  return target.channel === turn.channelId || (turn.threadId !== undefined && target.channel === turn.threadId);
}

// ---- what the model may name ----

const isDigits = (s: string, min: number, max: number) => s.length >= min && s.length <= max && [...s].every((c) => c >= '0' && c <= '9');
const isUpperAlnum = (s: string) => [...s].every((c) => (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'));

/**
 * A channel id as the platform spells it: a Discord snowflake, a Slack `C…`/`G…`/`D…` id. A
 * `channel:` prefix (OpenClaw's target form) is dropped; `user:`, mentions and names are refused,
 * so a target can never be read as a different kind of thing than the gate judged.
 */
export function parseChannelId(provider: string, raw: string): { ok: true; id: string } | { ok: false; why: string } {
  const value = raw.startsWith('channel:') ? raw.slice('channel:'.length) : raw;
  if (provider === 'discord' && isDigits(value, 17, 20)) return { ok: true, id: value };
  if (provider === 'slack' && value.length >= 3 && value.length <= 24 && 'CGD'.includes(value[0]!) && isUpperAlnum(value)) return { ok: true, id: value };
  return { ok: false, why: `"${raw.slice(0, 80)}" is not a ${provider} channel id (actions take the id itself; a DM is its channel id)` };
}

/** A message id: a Discord snowflake; a Slack timestamp `1700000000.000100`. */
export function parseMessageId(provider: string, raw: string): { ok: true; id: string } | { ok: false; why: string } {
  if (provider === 'discord' && isDigits(raw, 17, 20)) return { ok: true, id: raw };
  const [secs, micros, ...rest] = raw.split('.');
  if (provider === 'slack' && rest.length === 0 && secs !== undefined && micros !== undefined && isDigits(secs, 9, 11) && isDigits(micros, 6, 6)) return { ok: true, id: raw };
  return { ok: false, why: `"${raw.slice(0, 80)}" is not a ${provider} message id` };
}

const isWordChar = (c: string) => (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c === '_';

/**
 * An emoji a reaction may use. Discord: a Unicode emoji (at most 32 UTF-16 units, no ASCII
 * letters or spaces: a keycap's digit is fine) or a custom `name:id` / `<:name:id>` /
 * `<a:name:id>`. Slack: a shortcode `thumbsup` or `:thumbsup:` (lowercase, digits, `_+-'`,
 * at most 100). Returns the form the platform's API takes.
 */
export function parseEmoji(provider: string, raw: string): { ok: true; emoji: string } | { ok: false; why: string } {
  const bad = { ok: false as const, why: `"${raw.slice(0, 40)}" is not a ${provider} emoji` };
  if (provider === 'slack') {
    const name = raw.length > 2 && raw.startsWith(':') && raw.endsWith(':') ? raw.slice(1, -1) : raw;
    const ok = name.length >= 1 && name.length <= 100 && [...name].every((c) => (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || "_+-'".includes(c));
    return ok ? { ok: true, emoji: name } : bad;
  }
  if (provider !== 'discord' || raw.length === 0) return bad;
  const inner = raw.startsWith('<') && raw.endsWith('>') ? raw.slice(raw.startsWith('<a:') ? 3 : 2, -1) : raw;
  const colon = inner.indexOf(':');
  if (colon > 0 && (raw.startsWith('<:') || raw.startsWith('<a:') || !raw.startsWith('<'))) {
    const name = inner.slice(0, colon);
    const id = inner.slice(colon + 1);
    if (name.length >= 2 && name.length <= 32 && [...name].every(isWordChar) && isDigits(id, 17, 20)) return { ok: true, emoji: `${name}:${id}` };
    return bad;
  }
  if (raw.length > 32) return bad;
  const ok = [...raw].every((c) => {
    const code = c.codePointAt(0)!;
    return code > 0x7f ? !/\s/u.test(c) : (c >= '0' && c <= '9') || c === '#' || c === '*';
  }) && [...raw].some((c) => c.codePointAt(0)! > 0x7f);
  return ok ? { ok: true, emoji: raw } : bad;
}

// ---- the platform contract ----

/** One message as `read` returns it. */
export interface ReadMessage {
  id: string;
  authorId: string;
  authorName?: string | undefined;
  /** Posted by this bot. */
  fromBot: boolean;
  text: string;
  at?: string | undefined;
  threadId?: string | undefined;
  files: Array<{ id: string; name: string; size?: number | undefined }>;
  reactions?: Array<{ emoji: string; count: number }> | undefined;
}

/** A request the platform carries out once the gate has let it through (ids already parsed). */
export type PlatformActionRequest =
  | { action: 'react'; channel: string; threadId?: string | undefined; messageId: string; emoji: string; remove: boolean }
  | { action: 'thread-create'; channel: string; threadId?: string | undefined; messageId?: string | undefined; name: string; text?: string | undefined }
  | { action: 'pin' | 'unpin'; channel: string; threadId?: string | undefined; messageId: string }
  | { action: 'list-pins'; channel: string; threadId?: string | undefined }
  | { action: 'poll'; channel: string; threadId?: string | undefined; question: string; options: string[]; hours: number }
  | { action: 'edit'; channel: string; threadId?: string | undefined; messageId: string; text: string }
  | { action: 'delete'; channel: string; threadId?: string | undefined; messageId: string }
  | { action: 'read'; channel: string; threadId?: string | undefined; limit: number }
  | { action: 'download-file'; channel: string; threadId?: string | undefined; messageId: string; fileId: string; maxBytes: number };

export type PlatformActionResult =
  | {
      ok: true;
      /** One line for the model. */
      summary: string;
      /** The message or thread the action made. */
      id?: string | undefined;
      messages?: ReadMessage[] | undefined;
      file?: { name: string; data: Buffer } | undefined;
      /** How a poll was posted: natively (Discord), as buttons with stored votes (Slack), or as Slack's numbered-reaction fallback (no store to keep votes in). */
      pollKind?: 'native' | 'buttons' | 'numbered-reactions' | undefined;
    }
  | { ok: false; error: string };

/** What a chat adapter implements for the actions; absent on a platform without them. */
/** A channel or thread the platform says the bot can reach (conversations_list). Names are chosen by others. */
export interface PlatformChannel {
  id: string;
  name?: string | undefined;
  kind: 'channel' | 'thread';
  /** A thread's channel. */
  parentId?: string | undefined;
  /** Discord's guild (Slack: the workspace the bot token belongs to, not named). */
  guildId?: string | undefined;
  private?: boolean | undefined;
}

/** One page of the platform's channels; `nextCursor` is the platform's (Slack) or the last id (Discord). */
export interface ChannelPage {
  channels: PlatformChannel[];
  nextCursor?: string | undefined;
}

export interface MessageActionPort {
  /** What the platform says a channel id is, or undefined when it does not know it (or the bot cannot see it). */
  channelKind(channel: string): Promise<ChannelKind | undefined>;
  /** The channels and threads the bot can reach on the platform, at most `limit`, after `cursor`. */
  listChannels?(page: { cursor?: string | undefined; limit: number }): Promise<ChannelPage>;
  /** Whether `threadId` is a thread of `channel` (a thread of another channel is refused, whatever the gate judged). */
  threadIn(channel: string, threadId: string): Promise<boolean>;
  run(request: PlatformActionRequest): Promise<PlatformActionResult>;
}

/**
 * The edit/delete rule, applied by each adapter to the author the platform reports for the
 * message (never to anything the model said): only the bot's own messages.
 */
export function ownMessageRefusal(action: 'edit' | 'delete', authorId: string | undefined, botId: string | undefined): string | undefined {
  if (botId === undefined || authorId === undefined) return `cannot ${action} the message: its author could not be verified`;
  if (authorId !== botId) return `refused: the message was not posted by this bot; it may ${action} only its own messages`;
  return undefined;
}

/** Slack's keycap shortcodes for the numbered-reaction poll fallback (1–10). */
export const SLACK_POLL_EMOJI = ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'keycap_ten'] as const;
/** The same numbers as Unicode, for the text of the fallback message. */
export const POLL_NUMBER_GLYPHS = ['1️⃣', '2️⃣', '3️⃣', '4️⃣', '5️⃣', '6️⃣', '7️⃣', '8️⃣', '9️⃣', '🔟'] as const;
