import type { WardenConfig } from '../../../config/schema/index.js';
import type { TurnContext } from '../../../policy/context.js';
import { crossContextText, messageTargetAllowed } from '../message/message.js';
import type { MessageTarget, MessagingService, ToolImplementation, ToolResult } from '../../types.js';

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
  list(options: { agentId: string; limit: number }): Promise<KnownConversation[]>;
}

export interface ConversationWaitService {
  /** Waits for the next human message in `target` after now; its text comes back as a follow-up turn of `sessionKey`. */
  wait(input: { target: MessageTarget; turn: TurnContext; sessionKey: string; toolCallId: string; timeoutMs: number }): Promise<{ id: string; expiresAt: number }>;
}

export interface ConversationTarget {
  provider: string;
  channel?: string;
  threadId?: string;
  userId?: string;
}

const TARGET_PROPERTIES = {
  provider: { type: 'string', enum: ['discord', 'slack'], description: 'Platform of the conversation.' },
  channel: { type: 'string', pattern: '^[A-Za-z0-9]+$', description: 'Exact channel id (from conversations_list).' },
  threadId: { type: 'string', pattern: '^[A-Za-z0-9.]+$', description: 'A thread of that channel.' },
  userId: { type: 'string', pattern: '^[A-Za-z0-9]+$', description: 'A user id: the conversation is the DM with them.' },
} as const;

export const DEFAULT_TURN_TIMEOUT_SEC = 600;
export const MAX_TURN_TIMEOUT_SEC = 3_600;

const fail = (message: string): ToolResult => ({ content: [{ type: 'text', text: message }], details: { status: 'error', error: message }, isError: true });

/** The exact target of a call, or why it is none: a channel id or a user id, never both, never a name. */
export function exactTarget(args: ConversationTarget): { ok: true; target: MessageTarget } | { ok: false; error: string } {
  if ((args.channel === undefined) === (args.userId === undefined)) return { ok: false, error: 'give exactly one of channel (an id) or userId' };
  if (args.userId !== undefined && args.threadId !== undefined) return { ok: false, error: 'threadId goes with a channel, not a DM' };
  return { ok: true, target: { provider: args.provider, channel: args.channel, threadId: args.threadId, userId: args.userId } };
}

/** Posts `text` to `target` under the message tool's cross-context rules (one decision, one place). */
async function post(config: WardenConfig, messaging: MessagingService | undefined, args: ConversationTarget & { text: string }, turn: TurnContext) {
  if (!messaging) return { ok: false as const, error: 'conversation tools work only inside `warden start`, where the chat adapters run' };
  const exact = exactTarget(args);
  if (!exact.ok) return exact;
  const { target } = exact;
  if (!messaging.providers().includes(target.provider)) return { ok: false as const, error: `no ${target.provider} adapter is running` };
  const allowed = messageTargetAllowed(config, target, turn);
  if (!allowed.ok) return { ok: false as const, error: allowed.why };
  const sent = await messaging.send(target, crossContextText(config, target, turn, args.text));
  if (!sent.ok) return { ok: false as const, error: `could not post: ${sent.error}` };
  return { ok: true as const, target, channelId: sent.channelId };
}

const where = (t: MessageTarget) => (t.userId ? `the DM with ${t.provider} user ${t.userId}` : `${t.provider} channel ${t.channel}${t.threadId ? ` (thread ${t.threadId})` : ''}`);

export function createConversationsListTool(directory: () => ConversationDirectory | undefined): ToolImplementation<{ provider?: string; limit?: number }> {
  return {
    id: 'conversations_list',
    parameters: {
      type: 'object',
      properties: { provider: TARGET_PROPERTIES.provider, limit: { type: 'integer', minimum: 1, maximum: 200, description: 'How many (default 50), most recently active first.' } },
      additionalProperties: false,
    },
    async execute(args, ctx) {
      const dir = directory();
      if (!dir) return fail('conversations_list needs the store of a running Warden');
      const all = await dir.list({ agentId: ctx.turn.agentId, limit: 1_000 });
      const list = all.filter((c) => args.provider === undefined || c.provider === args.provider).slice(0, args.limit ?? 50);
      return {
        content: [{ type: 'text', text: JSON.stringify({ conversations: list.map((c) => ({ ...c, lastActiveAt: new Date(c.lastActiveAt).toISOString() })) }, null, 2) }],
        details: { count: list.length },
      };
    },
  };
}

export function createConversationsSendTool(config: WardenConfig, messaging: MessagingService | undefined): ToolImplementation<ConversationTarget & { text: string }> {
  return {
    id: 'conversations_send',
    parameters: {
      type: 'object',
      properties: { ...TARGET_PROPERTIES, text: { type: 'string', minLength: 1, maxLength: 4000, description: 'The message to post.' } },
      required: ['provider', 'text'],
      additionalProperties: false,
    },
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
    parameters: {
      type: 'object',
      properties: {
        ...TARGET_PROPERTIES,
        text: { type: 'string', minLength: 1, maxLength: 4000, description: 'The message to post there.' },
        timeoutSeconds: { type: 'integer', minimum: 10, maximum: MAX_TURN_TIMEOUT_SEC, description: `How long to wait for a reply (default ${DEFAULT_TURN_TIMEOUT_SEC}).` },
      },
      required: ['provider', 'text'],
      additionalProperties: false,
    },
    async execute(args, ctx) {
      const service = waits();
      if (!service) return fail('conversations_turn: no chat platform runs here to wait for a reply');
      const sent = await post(config, messaging, args, ctx.turn);
      if (!sent.ok) return fail(`conversations_turn: ${sent.error}`);
      const wait = await service.wait({ target: sent.target, turn: ctx.turn, sessionKey: ctx.sessionKey, toolCallId: ctx.toolCallId, timeoutMs: (args.timeoutSeconds ?? DEFAULT_TURN_TIMEOUT_SEC) * 1000 });
      const text =
        `Posted to ${where(sent.target)}; waiting for the next reply there (id ${wait.id}, until ${new Date(wait.expiresAt).toISOString()}). ` +
        'This conversation is not held: the reply comes back as a follow-up message. End your turn now.';
      return { content: [{ type: 'text', text }], details: { status: 'pending', waitId: wait.id, expiresAt: wait.expiresAt, ...sent.target } };
    },
  };
}
