// conversations_turn's waits: a post in another conversation, then the next human message there
// comes back to the caller's session as a follow-up turn (the gateway's followUp, behind the
// session's queue — the path deferred approvals and ask_user use), or "no reply" at the
// timeout. The caller's conversation is never held. Waits live in this process: a restart
// drops them (the follow-up never comes), as ask_user's questions.
import { randomUUID } from 'node:crypto';
import { replyTargetOf, type FollowUpTurn } from '../gateway/deferred-calls.js';
import { log } from '../log/log.js';
import type { TurnContext } from '../policy/context.js';
import type { InboundMessage } from '../policy/inbound.js';
import type { Db } from '../store/db.js';
import type { ConversationDirectory, ConversationWaitService, KnownConversation } from '../tools/core/conversations/conversations.js';
import type { MessageTarget } from '../tools/types.js';
import { wrapUntrusted } from '../tools/untrusted.js';

interface Waiting {
  id: string;
  target: MessageTarget;
  turn: TurnContext;
  sessionKey: string;
  toolCallId: string;
  expiresAt: number;
  timer: NodeJS.Timeout;
}

/** The longest reply text handed back (the rest is cut, and said so). */
const REPLY_CHARS = 4_000;

/**
 * Whether `message` is a human's, in the conversation `target` names. Only messages delivered
 * after the wait began are offered to it (platform timestamps are not compared: a platform's
 * clock is not this one's).
 */
export function answersWait(target: MessageTarget, message: InboundMessage): boolean {
  if (message.senderIsBot || message.provider !== target.provider || message.text.trim() === '') return false;
  if (target.userId !== undefined) return message.chatType === 'dm' && message.senderId === target.userId;
  if (message.chatType === 'dm' || message.channelId !== target.channel) return false;
  // A wait on a thread takes a reply in that thread; a wait on a channel one in the channel itself.
  return target.threadId !== undefined ? message.threadId === target.threadId : message.chatType === 'channel';
}

export class ConversationWaits implements ConversationWaitService {
  private readonly waiting = new Map<string, Waiting>();
  private checks: Promise<unknown> = Promise.resolve();
  private followUp: ((turn: FollowUpTurn) => boolean) | undefined;

  constructor(private readonly now: () => number = Date.now) {}

  /** The gateway's follow-up queue, bound once it exists. */
  bindFollowUp(followUp: (turn: FollowUpTurn) => boolean): void {
    this.followUp = followUp;
  }

  wait(input: { target: MessageTarget; turn: TurnContext; sessionKey: string; toolCallId: string; timeoutMs: number }) {
    const id = randomUUID();
    const expiresAt = this.now() + input.timeoutMs;
    const timer = setTimeout(() => this.expire(id), input.timeoutMs);
    timer.unref?.();
    this.waiting.set(id, { id, ...input, expiresAt, timer });
    return { id, expiresAt };
  }

  /** Every inbound message, before routing (a reply need not mention the bot): the first human reply ends each wait on its conversation. */
  /**
   * A message that may answer waits. `admitted` is the access gate's rules for its sender: a
   * person Warden refuses to hear reaches the agent through a wait no more than directly. Waits
   * are claimed only once the sender is let in, so a refused message leaves them open.
   */
  offer(message: InboundMessage, admitted: () => Promise<boolean> = async () => true): void {
    if (![...this.waiting.values()].some((w) => answersWait(w.target, message))) return;
    // One after another, so the first admitted reply is the one that answers, whatever each check costs.
    this.checks = this.checks.then(admitted).then(
      (ok) => {
        if (ok) this.answer(message);
        else log.info({ provider: message.provider, channelId: message.channelId, senderId: message.senderId }, 'conversations_turn: reply from a sender the access rules refuse; ignored');
      },
      (err: unknown) => log.warn({ err }, 'conversations_turn: the sender could not be checked; reply ignored'),
    );
  }

  private answer(message: InboundMessage): void {
    for (const w of [...this.waiting.values()]) {
      if (!answersWait(w.target, message)) continue;
      this.drop(w.id);
      const text = message.text.length > REPLY_CHARS ? `${message.text.slice(0, REPLY_CHARS)} […${message.text.length - REPLY_CHARS} more chars]` : message.text;
      // The name is the platform's display name, written by that person: inside the wrapper too.
      const who = `${message.senderName ?? message.senderId} (${message.provider} user ${message.senderId})`;
      this.deliver(w, `[Reply ${w.id}] Your earlier conversations_turn call (call ${w.toolCallId}) got a reply in ${describe(w.target)}:\n${wrapUntrusted(`conversation:${describe(w.target)}`, `${who}: ${text}`)}\nContinue the task with this reply.`);
    }
  }

  private drop(id: string): void {
    const w = this.waiting.get(id);
    if (!w) return;
    clearTimeout(w.timer);
    this.waiting.delete(id);
  }

  private expire(id: string): void {
    const w = this.waiting.get(id);
    if (!w) return;
    this.waiting.delete(id);
    this.deliver(w, `[Reply ${w.id}] Your earlier conversations_turn call (call ${w.toolCallId}) got no reply in ${describe(w.target)} before it expired. Continue with your best judgment.`);
  }

  private deliver(w: Waiting, text: string): void {
    const replyTo = replyTargetOf(w.turn);
    const queued = replyTo ? (this.followUp?.({ sessionKey: w.sessionKey, agentId: w.turn.agentId, context: w.turn, replyTo, text }) ?? false) : false;
    if (!queued) log.warn({ wait: w.id, sessionKey: w.sessionKey }, 'conversations_turn follow-up could not be queued');
  }
}

const describe = (t: MessageTarget) => (t.userId ? `the DM with ${t.provider} user ${t.userId}` : `${t.provider} channel ${t.channel}${t.threadId ? ` thread ${t.threadId}` : ''}`);

/** The conversations the router recorded (`session_contexts`): where the bot has been spoken to. */
export function conversationDirectory(db: Db): ConversationDirectory {
  return {
    async list({ agentId, limit }) {
      const rows = await db.all<{ provider: string; chat: 'dm' | 'channel' | 'thread'; channel_id: string | null; channel_name: string | null; thread_id: string | null; created_by: string | null; updated_at: number }>(
        'SELECT provider, chat, channel_id, channel_name, thread_id, created_by, updated_at FROM session_contexts WHERE agent_id = ? ORDER BY updated_at DESC LIMIT ?',
        [agentId, limit],
      );
      return rows.map((r): KnownConversation => ({
        provider: r.provider,
        kind: r.chat,
        ...(r.chat === 'dm' ? { userId: r.created_by ?? undefined } : { channelId: r.channel_id ?? undefined, channelName: r.channel_name ?? undefined }),
        ...(r.chat === 'thread' ? { threadId: r.thread_id ?? undefined } : {}),
        lastActiveAt: Number(r.updated_at),
      }));
    },
  };
}
