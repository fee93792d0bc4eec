import type { WardenConfig } from '../config/index.js';
import type { TurnContext } from '../policy/context.js';
import { resolveBinding, type BindingDecision } from './bindings.js';
import { requiresMention } from '../policy/mention.js';
import { sessionKeyFor } from '../policy/session-key.js';
import { buildTurnContext } from '../turn/turn-context.js';
import type { InboundMessage, ReplyTarget } from './types.js';

/** Where a message goes: a session of an agent, with the policy context of its turn. */
export interface Route {
  agentId: string;
  sessionKey: string;
  context: TurnContext;
  replyTo: ReplyTarget;
  /** The text addressed to the bot: leading bot mentions removed, trimmed. */
  text: string;
  /** Which binding chose the agent (`/status` shows it); absent for turns Warden starts itself. */
  binding?: BindingDecision | undefined;
  /** Why the sender was let in, in words (`/status`), set by the access gate. */
  access?: string | undefined;
  /** Files the message carried; taken in when its turn runs (`inbound-files.ts`). */
  attachments?: InboundMessage['attachments'];
}

export type RouteDecision =
  | { kind: 'route'; route: Route }
  | { kind: 'ignore'; reason: 'mention-required' | 'empty' };

export interface RouteOptions {
  /** Whether the bot takes part in the thread of this session (mention gating is off there). */
  botInThread?: (sessionKey: string) => boolean;
  /** Slash commands are addressed to the bot by their form and pass mention gating. */
  isCommand?: (text: string, message: InboundMessage) => boolean;
}

export { modelFor } from '../turn/turn-context.js';

/** Decides where an inbound message goes, or why it is ignored. Pure: no I/O, no state. */
export function routeMessage(config: WardenConfig, message: InboundMessage, options: RouteOptions = {}): RouteDecision {
  const text = stripLeadingMentions(message.text, message.mentionsBot);
  // A file alone is a message too (a pasted screenshot); nothing at all is not.
  if (text === '' && !(message.attachments && message.attachments.length > 0)) return { kind: 'ignore', reason: 'empty' };
  // The agent is chosen by `bindings` (the same function `warden tools` uses), else the default one.
  const binding = resolveBinding(config, {
    provider: message.provider,
    chat: message.chatType,
    guildId: message.guildId,
    channelId: message.channelId,
    threadId: message.threadId,
    senderId: message.senderId,
    roles: message.senderRoles,
  });
  const agentId = binding.agentId;
  const sessionKey = sessionKeyFor(agentId, message);
  const gated = requiresMention(config, message, options.botInThread?.(sessionKey) ?? false);
  if (gated && !message.mentionsBot && !(options.isCommand?.(text, message) ?? false)) return { kind: 'ignore', reason: 'mention-required' };

  const isThread = message.chatType === 'thread';
  // Owner status, model, sandbox: derived by the one context builder, as for every other path.
  const context: TurnContext = buildTurnContext(config, {
    agentId,
    conversation: {
      provider: message.provider,
      chat: message.chatType,
      guildId: message.guildId,
      guildName: message.guildName,
      channelId: message.channelId,
      channelName: message.channelName,
      threadId: message.threadId,
    },
    sender: { id: message.senderId, name: message.senderName, roleIds: message.senderRoles },
  });
  const replyTo: ReplyTarget = { provider: message.provider, channelId: message.channelId, threadId: isThread ? message.threadId : undefined };
  if (message.invocationId !== undefined) replyTo.invocationId = message.invocationId;
  // Field by field (no spreads): this runs for every message.
  const route: Route = { agentId, sessionKey, context, replyTo, text, binding };
  if (message.attachments && message.attachments.length > 0) route.attachments = message.attachments;
  return { kind: 'route', route };
}

/** `<@123> <@!456> hi` → `hi` when the bot was mentioned; mentions elsewhere in the text stay. */
export function stripLeadingMentions(text: string, mentionsBot: boolean): string {
  const trimmed = text.trim();
  return mentionsBot ? trimmed.replace(/^(?:<@[!&]?[A-Za-z0-9]+>[\s,:]*)+/, '').trim() : trimmed;
}

/**
 * Threads the bot takes part in (it replied there or was mentioned there), so follow-ups in the
 * thread need no mention. Bounded: the oldest entries go first.
 */
export class ThreadParticipation {
  private readonly keys = new Set<string>();
  constructor(private readonly limit = 10_000) {}

  has(sessionKey: string): boolean {
    return this.keys.has(sessionKey);
  }

  add(sessionKey: string): void {
    this.keys.delete(sessionKey);
    this.keys.add(sessionKey);
    if (this.keys.size > this.limit) this.keys.delete(this.keys.values().next().value as string);
  }
}
