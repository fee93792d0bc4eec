import type { WardenConfig } from '../../../config/schema/index.js';
import type { TurnContext } from '../../../policy/context.js';
import { crossContextText, messageTargetAllowed } from '../message/targets.js';
import type { MessageTarget, MessagingService, ToolImplementation, ToolResult } from '../../types.js';
import { wrapUntrusted } from '../../untrusted.js';
import type { ChannelPage, MessageActionPort } from '../message/actions.js';
import { conversationsListParameters, conversationsSendParameters, conversationsTurnParameters, TARGET_PROPERTIES, LIST_MAX, LIST_DEFAULT, MAX_TURN_TIMEOUT_SEC, DEFAULT_TURN_TIMEOUT_SEC } from './conversations-schema.js';

export { DEFAULT_TURN_TIMEOUT_SEC, LIST_DEFAULT, LIST_MAX, MAX_TURN_TIMEOUT_SEC };

/**
 * OpenClaw's conversation tools (owner-only there and here: `OWNER_ONLY_TOOLS`): list the
 * conversations the bot can reach, post into one exactly, and post then wait for the next human
 * reply there. The wait never holds the caller's conversation: the call ends at once (`pending`)
 * and the reply — or "no reply" at the timeout — reaches the agent in a follow-up turn, the
 * path deferred approvals and ask_user use.
 */

/** A conversation the bot has seen a message in (what the router recorded). */
export interface KnownConversation {
  provider: string;
  kind: 'channel' | 'thread' | 'dm';
  channelId?: string | undefined;
  channelName?: string | undefined;
  threadId?: string | undefined;
  /** The DM's person. */
  userId?: string | undefined;
  lastActiveAt: number;
}

export interface ConversationDirectory {
  /** The recorded conversations of `agentId`, most recently active first; `dmsOnly` keeps the DMs. */
  list(options: { agentId: string; limit: number; offset?: number | undefined; provider?: string | undefined; dmsOnly?: boolean | undefined }): Promise<KnownConversation[]>;
}

export interface ConversationWaitService {
  /**
   * Stores a pending wait for the next human message in `target`, BEFORE the question is posted
   * (a reply landing while the post is under way is kept, not lost); its text comes back as a
   * follow-up turn of `sessionKey`. `posted` or `cancel` must follow.
   */
  begin(input: { target: MessageTarget; turn: TurnContext; sessionKey: string; toolCallId: string; timeoutMs: number }): Promise<{ id: string; expiresAt: number }>;
  /** The question went out as platform message `messageId` (undefined when the platform gave none): only messages placed after it answer. */
  posted(id: string, messageId: string | undefined): Promise<void>;
  /** The question could not be posted: the pending wait is removed. */
  cancel(id: string): Promise<void>;
}

export interface ConversationTarget {
  provider: string;
  channel?: string;
  threadId?: string;
  userId?: string;
}

const fail = (message: string): ToolResult => ({ content: [{ type: 'text', text: message }], details: { status: 'error', error: message }, isError: true });

/** The exact target of a call, or why it is none: a channel id or a user id, never both, never a name. */
export function exactTarget(args: ConversationTarget): { ok: true; target: MessageTarget } | { ok: false; error: string } {
  if ((args.channel === undefined) === (args.userId === undefined)) return { ok: false, error: 'give exactly one of channel (an id) or userId' };
  if (args.userId !== undefined && args.threadId !== undefined) return { ok: false, error: 'threadId goes with a channel, not a DM' };
  return { ok: true, target: { provider: args.provider, channel: args.channel, threadId: args.threadId, userId: args.userId } };
}

/** The target of a call and whether it may be posted to, under the message tool's cross-context rules (one decision, one place). */
function postable(config: WardenConfig, messaging: MessagingService | undefined, args: ConversationTarget, turn: TurnContext): { ok: true; target: MessageTarget; messaging: MessagingService } | { ok: false; error: string } {
  if (!messaging) return { ok: false, error: 'conversation tools work only inside `warden start`, where the chat adapters run' };
  const exact = exactTarget(args);
  if (!exact.ok) return exact;
  const { target } = exact;
  if (!messaging.providers().includes(target.provider)) return { ok: false, error: `no ${target.provider} adapter is running` };
  const allowed = messageTargetAllowed(config, target, turn);
  if (!allowed.ok) return { ok: false, error: allowed.why };
  return { ok: true, target, messaging };
}

/** Posts `text` to a target `postable` allowed. */
async function deliver(config: WardenConfig, messaging: MessagingService, target: MessageTarget, text: string, turn: TurnContext) {
  const sent = await messaging.send(target, crossContextText(config, target, turn, text));
  if (!sent.ok) return { ok: false as const, error: `could not post: ${sent.error}` };
  return { ok: true as const, target, channelId: sent.channelId, messageId: sent.messageId };
}

async function post(config: WardenConfig, messaging: MessagingService | undefined, args: ConversationTarget & { text: string }, turn: TurnContext) {
  const ready = postable(config, messaging, args, turn);
  if (!ready.ok) return ready;
  return deliver(config, ready.messaging, ready.target, args.text, turn);
}

const where = (t: MessageTarget) => (t.userId ? `the DM with ${t.provider} user ${t.userId}` : `${t.provider} channel ${t.channel}${t.threadId ? ` (thread ${t.threadId})` : ''}`);

/** Where a listing resumes: a provider, its platform phase (with the platform's cursor) or its known DMs (an offset). */
interface ListCursor {
  p: string;
  s: 'platform' | 'dms';
  c?: string | undefined;
  o?: number | undefined;
}

const encodeCursor = (c: ListCursor) => Buffer.from(JSON.stringify(c)).toString('base64url');

/** A cursor this tool gave, or why the text is none (a model may pass anything). */
export function decodeCursor(text: string, providers: readonly string[]): { ok: true; cursor: ListCursor } | { ok: false; error: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return { ok: false, error: 'cursor is not one conversations_list gave' };
  }
  const c = raw as Partial<ListCursor> | null;
  const valid =
    c !== null &&
    typeof c === 'object' &&
    typeof c.p === 'string' &&
    providers.includes(c.p) &&
    (c.s === 'platform' ? c.c === undefined || (typeof c.c === 'string' && c.c.length <= 512) : c.s === 'dms' && Number.isSafeInteger(c.o) && c.o! >= 0);
  return valid ? { ok: true, cursor: { p: c.p!, s: c.s!, c: c.c, o: c.o } } : { ok: false, error: 'cursor is not one conversations_list gave (or names a platform not listed here)' };
}

/** One listed conversation as the model reads it. */
interface Listed {
  provider: string;
  kind: 'channel' | 'thread' | 'dm';
  channelId?: string | undefined;
  channelName?: string | undefined;
  threadId?: string | undefined;
  parentId?: string | undefined;
  guildId?: string | undefined;
  private?: boolean | undefined;
  userId?: string | undefined;
  lastActiveAt?: string | undefined;
}

/**
 * conversations_list: what the bot can reach on each running platform — the channels and
 * threads the platform says it may view (Discord) or is a member of (Slack) — then the DMs
 * people have opened with it (the platforms list no DMs a bot could start). Paged by an opaque
 * cursor; channel names are chosen by others, so the listing comes back wrapped as untrusted.
 */
export function createConversationsListTool(directory: () => ConversationDirectory | undefined, messaging?: MessagingService | undefined): ToolImplementation<{ provider?: string; limit?: number; cursor?: string }> {
  return {
    id: 'conversations_list',
    parameters: conversationsListParameters,
    async execute(args, ctx) {
      const dir = directory();
      if (!dir) return fail('conversations_list needs the store of a running Warden');
      const running: string[] = (messaging?.providers() ?? []).filter((p) => p === 'discord' || p === 'slack');
      const providers: string[] = (args.provider !== undefined ? [args.provider] : running.length > 0 ? running : ['discord', 'slack']).sort();
      const limit = args.limit ?? LIST_DEFAULT;
      let at: ListCursor | undefined = { p: providers[0]!, s: 'platform' };
      if (args.cursor !== undefined) {
        const decoded = decodeCursor(args.cursor, providers);
        if (!decoded.ok) return fail(`conversations_list: ${decoded.error}`);
        at = decoded.cursor;
      }
      const listed: Listed[] = [];
      const warnings: string[] = [];
      // Each step fills the page from one phase and says where the next starts; a bounded number of steps.
      for (let steps = 0; at && listed.length < limit && steps < providers.length * 2 + 2; steps++) {
        const want = limit - listed.length;
        const nextProvider: string | undefined = providers[providers.indexOf(at.p) + 1];
        if (at.s === 'platform') {
          const port: MessageActionPort | undefined = running.includes(at.p) ? messaging?.actions?.(at.p) : undefined;
          let nextCursor: string | undefined;
          if (port?.listChannels) {
            try {
              const page: ChannelPage = await port.listChannels({ cursor: at.c, limit: want });
              for (const ch of page.channels.slice(0, want)) {
                listed.push(ch.kind === 'thread' ? { provider: at.p, kind: 'thread', channelId: ch.parentId, threadId: ch.id, channelName: ch.name, guildId: ch.guildId, private: ch.private } : { provider: at.p, kind: 'channel', channelId: ch.id, channelName: ch.name, guildId: ch.guildId, private: ch.private });
              }
              nextCursor = page.nextCursor;
            } catch (err) {
              warnings.push(`${at.p}: the platform's channel list could not be read (${(err as Error).message}); only known DMs are listed`);
            }
          } else if (!running.includes(at.p)) warnings.push(`${at.p}: no adapter runs here; only known DMs are listed`);
          at = nextCursor ? { p: at.p, s: 'platform', c: nextCursor } : { p: at.p, s: 'dms', o: 0 };
          continue;
        }
        const offset: number = at.o ?? 0;
        const dms = await dir.list({ agentId: ctx.turn.agentId, provider: at.p, dmsOnly: true, limit: want + 1, offset });
        for (const dm of dms.slice(0, want)) listed.push({ provider: dm.provider, kind: 'dm', userId: dm.userId, lastActiveAt: new Date(dm.lastActiveAt).toISOString() });
        at = dms.length > want ? { p: at.p, s: 'dms', o: offset + want } : nextProvider ? { p: nextProvider, s: 'platform' } : undefined;
      }
      const body = JSON.stringify({ conversations: listed.map((c) => Object.fromEntries(Object.entries(c).filter(([, v]) => v !== undefined))), ...(warnings.length > 0 ? { warnings } : {}) }, null, 2);
      const more = at ? `\nMore: call conversations_list again with cursor "${encodeCursor(at)}".` : '\nThat is all.';
      return {
        // One wrapper around all of it (the turn loop adds none to a result that is exactly one).
        content: [{ type: 'text', text: wrapUntrusted('conversations_list', `${listed.length} conversation(s).\n${body}${more}`) }],
        details: { count: listed.length, ...(at ? { nextCursor: encodeCursor(at) } : {}) },
      };
    },
  };
}

export function createConversationsSendTool(config: WardenConfig, messaging: MessagingService | undefined): ToolImplementation<ConversationTarget & { text: string }> {
  return {
    id: 'conversations_send',
    parameters: conversationsSendParameters,
    async execute(args, ctx) {
      const sent = await post(config, messaging, args, ctx.turn);
      if (!sent.ok) return fail(`conversations_send: ${sent.error}`);
      return { content: [{ type: 'text', text: `Posted to ${where(sent.target)}.` }], details: { status: 'ok', ...sent.target, channelId: sent.channelId } };
    },
  };
}

export function createConversationsTurnTool(config: WardenConfig, messaging: MessagingService | undefined, waits: () => ConversationWaitService | undefined): ToolImplementation<ConversationTarget & { text: string; timeoutSeconds?: number }> {
  return {
    id: 'conversations_turn',
    parameters: conversationsTurnParameters,
    async execute(args, ctx) {
      const service = waits();
      if (!service) return fail('conversations_turn: no chat platform runs here to wait for a reply');
      const ready = postable(config, messaging, args, ctx.turn);
      if (!ready.ok) return fail(`conversations_turn: ${ready.error}`);
      // The wait is stored before the post: a reply that lands the moment the platform accepted
      // the question (on this instance or another) is kept for it, never missed.
      const wait = await service.begin({ target: ready.target, turn: ctx.turn, sessionKey: ctx.sessionKey, toolCallId: ctx.toolCallId, timeoutMs: (args.timeoutSeconds ?? DEFAULT_TURN_TIMEOUT_SEC) * 1000 });
      let sent: Awaited<ReturnType<typeof deliver>>;
      try {
        sent = await deliver(config, ready.messaging, ready.target, args.text, ctx.turn);
      } catch (err) {
        sent = { ok: false, error: `could not post: ${(err as Error).message}` };
      }
      if (!sent.ok) {
        await service.cancel(wait.id);
        return fail(`conversations_turn: ${sent.error}`);
      }
      await service.posted(wait.id, sent.messageId);
      const text =
        `Posted to ${where(sent.target)}; waiting for the next reply there (id ${wait.id}, until ${new Date(wait.expiresAt).toISOString()}). ` +
        'This conversation is not held: the reply comes back as a follow-up message. End your turn now.';
      return { content: [{ type: 'text', text }], details: { status: 'pending', waitId: wait.id, expiresAt: wait.expiresAt, ...sent.target } };
    },
  };
}
