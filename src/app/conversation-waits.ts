// conversations_turn's waits: a post in another conversation, then the next human message there
// comes back to the caller's session as a follow-up turn (the gateway's followUp, behind the
// session's queue — the path deferred approvals use), or "no reply" at the deadline. The
// caller's conversation is never held. Waits live in the store (`conversation_waits`), so a
// restart keeps them and a reply that reaches another instance on a shared store answers them:
// every wait ends by one conditional write (`waiting` → `answered` | `expired`), and only the
// process whose write won queues the follow-up, so a wait is answered exactly once.
import { randomUUID } from 'node:crypto';
import type { WardenConfig } from '../config/index.js';
import { replyTargetOf, type FollowUpTurn } from '../gateway/deferred-calls.js';
import { log } from '../log/log.js';
import type { TurnContext } from '../policy/context.js';
import type { InboundMessage } from '../policy/inbound.js';
import type { Db } from '../store/db.js';
import type { FeatureMigrations, Migration } from '../store/migrations.js';
import type { ConversationDirectory, ConversationWaitService, KnownConversation } from '../tools/core/conversations/conversations.js';
import type { MessageTarget } from '../tools/types.js';
import { wrapUntrusted } from '../tools/untrusted.js';
import { refreshTurnContext } from '../turn/turn-context.js';

/** A wait as stored: everything a process that did not start it needs to answer it. */
export interface StoredWait {
  id: string;
  agentId: string;
  sessionKey: string;
  toolCallId: string;
  target: MessageTarget;
  /** The calling turn's context; rebuilt under the config current at delivery. */
  turn: TurnContext;
  createdAt: number;
  expiresAt: number;
}

export type WaitState = 'waiting' | 'answered' | 'expired';

/** The longest reply text handed back (the rest is cut, and said so). */
const REPLY_CHARS = 4_000;
/** How often a process looks for waits past their deadline that no timer of its own covers (another instance's, one that died). */
const DEFAULT_SWEEP_MS = 15_000;

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

const sqlite001: Migration = {
  id: 'conversation-waits-001',
  async up(db) {
    await db.exec(`
      CREATE TABLE conversation_waits (
        id            TEXT PRIMARY KEY,
        agent_id      TEXT NOT NULL,
        session_key   TEXT NOT NULL,
        tool_call_id  TEXT NOT NULL,
        provider      TEXT NOT NULL,
        channel_id    TEXT,            -- the channel waited on (NULL for a DM)
        thread_id     TEXT,
        dm_user       TEXT,            -- the DM's person (NULL for a channel)
        turn          TEXT NOT NULL,   -- JSON TurnContext of the calling turn
        state         TEXT NOT NULL CHECK (state IN ('waiting', 'answered', 'expired')),
        created_at    INTEGER NOT NULL,
        expires_at    INTEGER NOT NULL,
        ended_at      INTEGER,
        ended_by      TEXT             -- the instance whose write ended it
      );
      CREATE INDEX conversation_waits_by_channel ON conversation_waits (provider, channel_id, state);
      CREATE INDEX conversation_waits_by_dm ON conversation_waits (provider, dm_user, state);
      CREATE INDEX conversation_waits_by_deadline ON conversation_waits (state, expires_at);
    `);
  },
};

const postgres001: Migration = {
  id: 'conversation-waits-pg-001',
  async up(db) {
    await db.exec(`
      CREATE TABLE conversation_waits (
        id            TEXT PRIMARY KEY,
        agent_id      TEXT NOT NULL,
        session_key   TEXT NOT NULL,
        tool_call_id  TEXT NOT NULL,
        provider      TEXT NOT NULL,
        channel_id    TEXT,
        thread_id     TEXT,
        dm_user       TEXT,
        turn          TEXT NOT NULL,
        state         TEXT NOT NULL CHECK (state IN ('waiting', 'answered', 'expired')),
        created_at    BIGINT NOT NULL,
        expires_at    BIGINT NOT NULL,
        ended_at      BIGINT,
        ended_by      TEXT
      );
      CREATE INDEX conversation_waits_by_channel ON conversation_waits (provider, channel_id, state);
      CREATE INDEX conversation_waits_by_dm ON conversation_waits (provider, dm_user, state);
      CREATE INDEX conversation_waits_by_deadline ON conversation_waits (state, expires_at);
    `);
  },
};

export const conversationWaitsMigrations: FeatureMigrations = { feature: 'conversation-waits', sqlite: [sqlite001], postgres: [postgres001] };

interface Row {
  id: string;
  agent_id: string;
  session_key: string;
  tool_call_id: string;
  provider: string;
  channel_id: string | null;
  thread_id: string | null;
  dm_user: string | null;
  turn: string;
  created_at: number | string;
  expires_at: number | string;
}

const toWait = (r: Row): StoredWait => ({
  id: r.id,
  agentId: r.agent_id,
  sessionKey: r.session_key,
  toolCallId: r.tool_call_id,
  target: r.dm_user !== null ? { provider: r.provider, userId: r.dm_user } : { provider: r.provider, channel: r.channel_id ?? undefined, ...(r.thread_id !== null ? { threadId: r.thread_id } : {}) },
  turn: JSON.parse(r.turn) as TurnContext,
  createdAt: Number(r.created_at),
  expiresAt: Number(r.expires_at),
});

/** The `conversation_waits` table: plain reads and conditional writes; every ending says whether it won. */
export class ConversationWaitStore {
  constructor(private readonly db: Db) {}

  async insert(w: StoredWait): Promise<void> {
    const t = w.target;
    await this.db.run(
      `INSERT INTO conversation_waits (id, agent_id, session_key, tool_call_id, provider, channel_id, thread_id, dm_user, turn, state, created_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'waiting', ?, ?)`,
      [w.id, w.agentId, w.sessionKey, w.toolCallId, t.provider, t.userId !== undefined ? null : (t.channel ?? null), t.userId !== undefined ? null : (t.threadId ?? null), t.userId ?? null, JSON.stringify(w.turn), w.createdAt, w.expiresAt],
    );
  }

  /** The open waits `message` may answer, oldest first (the exact match is `answersWait`'s). */
  async openFor(message: InboundMessage): Promise<StoredWait[]> {
    const rows =
      message.chatType === 'dm'
        ? await this.db.all<Row>("SELECT * FROM conversation_waits WHERE provider = ? AND dm_user = ? AND state = 'waiting' ORDER BY created_at, id", [message.provider, message.senderId])
        : await this.db.all<Row>("SELECT * FROM conversation_waits WHERE provider = ? AND channel_id = ? AND state = 'waiting' ORDER BY created_at, id", [message.provider, message.channelId]);
    return rows.map(toWait).filter((w) => answersWait(w.target, message));
  }

  /** Every open wait (a start schedules their deadlines). */
  async open(): Promise<StoredWait[]> {
    return (await this.db.all<Row>("SELECT * FROM conversation_waits WHERE state = 'waiting' ORDER BY expires_at, id")).map(toWait);
  }

  /** Open waits whose deadline has passed. */
  async overdue(now: number): Promise<StoredWait[]> {
    return (await this.db.all<Row>("SELECT * FROM conversation_waits WHERE state = 'waiting' AND expires_at <= ? ORDER BY expires_at, id", [now])).map(toWait);
  }

  async state(id: string): Promise<WaitState | undefined> {
    return (await this.db.value<WaitState>('SELECT state FROM conversation_waits WHERE id = ?', [id])) ?? undefined;
  }

  /** A reply ends the wait; false when another reply, process or the deadline ended it first. */
  async answer(id: string, now: number, instance: string): Promise<boolean> {
    const info = await this.db.run("UPDATE conversation_waits SET state = 'answered', ended_at = ?, ended_by = ? WHERE id = ? AND state = 'waiting' AND expires_at > ?", [now, instance, id, now]);
    return info.changes === 1;
  }

  /** The deadline ends the wait; false when a reply (or another process) ended it first. */
  async expire(id: string, now: number, instance: string): Promise<boolean> {
    const info = await this.db.run("UPDATE conversation_waits SET state = 'expired', ended_at = ?, ended_by = ? WHERE id = ? AND state = 'waiting' AND expires_at <= ?", [now, instance, id, now]);
    return info.changes === 1;
  }
}

export interface ConversationWaitsDeps {
  db: Db;
  /** The config current at delivery: the follow-up's context is rebuilt under it. */
  config: () => WardenConfig;
  /** This process among those sharing the store (recorded with each ending). */
  instance?: string | undefined;
  now?: () => number;
  sweepMs?: number | undefined;
}

export class ConversationWaits implements ConversationWaitService {
  readonly store: ConversationWaitStore;
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private sweeper: NodeJS.Timeout | undefined;
  private checks: Promise<unknown> = Promise.resolve();
  private followUp: ((turn: FollowUpTurn) => boolean) | undefined;
  private accepting: () => boolean = () => true;
  private stopped = false;
  private readonly instance: string;

  constructor(private readonly deps: ConversationWaitsDeps) {
    this.store = new ConversationWaitStore(deps.db);
    this.instance = deps.instance ?? `pid-${process.pid}`;
  }

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }

  /**
   * The gateway's follow-up queue, bound once it exists, and whether it takes work: a process
   * that cannot queue the follow-up never ends a wait (another one, or the next start, will).
   */
  bindFollowUp(followUp: (turn: FollowUpTurn) => boolean, accepting?: () => boolean): void {
    this.followUp = followUp;
    if (accepting) this.accepting = accepting;
  }

  /** Schedules the deadlines of the waits already stored (a restart) and looks for overdue ones now and then. */
  async start(): Promise<void> {
    for (const w of await this.store.open()) this.schedule(w);
    const sweepMs = this.deps.sweepMs ?? DEFAULT_SWEEP_MS;
    this.sweeper = setInterval(() => this.track(this.sweep()), sweepMs);
    this.sweeper.unref?.();
  }

  /** Stops timers and waits for the checks under way; the waits stay stored for the next start or another instance. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.sweeper) clearInterval(this.sweeper);
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    await this.checks.catch(() => undefined);
  }

  /** Settles once every message offered so far has been checked (tests). */
  async idle(): Promise<void> {
    await this.checks;
  }

  async wait(input: { target: MessageTarget; turn: TurnContext; sessionKey: string; toolCallId: string; timeoutMs: number }) {
    const createdAt = this.now();
    const wait: StoredWait = { id: randomUUID(), agentId: input.turn.agentId, sessionKey: input.sessionKey, toolCallId: input.toolCallId, target: input.target, turn: input.turn, createdAt, expiresAt: createdAt + input.timeoutMs };
    await this.store.insert(wait);
    this.schedule(wait);
    return { id: wait.id, expiresAt: wait.expiresAt };
  }

  /**
   * Every inbound message, before routing (a reply need not mention the bot). `admitted` is the
   * access gate's rules for its sender: a person Warden refuses to hear reaches the agent
   * through a wait no more than directly. Waits are ended only once the sender is let in, so a
   * refused message leaves them open. Messages are taken one after another, so the first
   * admitted reply is the one that answers, whatever each check costs.
   */
  offer(message: InboundMessage, admitted: () => Promise<boolean> = async () => true): void {
    if (message.senderIsBot || message.text.trim() === '' || this.stopped) return;
    const next = this.checks.then(async () => {
      const open = await this.store.openFor(message);
      if (open.length === 0) return;
      let ok: boolean;
      try {
        ok = await admitted();
      } catch (err) {
        log.warn({ err }, 'conversations_turn: the sender could not be checked; reply ignored');
        return;
      }
      if (!ok) {
        log.info({ provider: message.provider, channelId: message.channelId, senderId: message.senderId }, 'conversations_turn: reply from a sender the access rules refuse; ignored');
        return;
      }
      for (const w of open) await this.answer(w, message);
    });
    // A failed check (the store unreachable) leaves the next message its turn.
    this.checks = next.catch(() => undefined);
    this.track(next);
  }

  private track(work: Promise<unknown>): void {
    work.catch((err: unknown) => log.warn({ err }, 'conversations_turn: a wait could not be checked'));
  }

  private schedule(w: StoredWait): void {
    if (this.stopped || this.timers.has(w.id)) return;
    const timer = setTimeout(() => {
      this.timers.delete(w.id);
      this.track(this.expire(w));
    }, Math.max(0, w.expiresAt - this.now()));
    timer.unref?.();
    this.timers.set(w.id, timer);
  }

  private forget(id: string): void {
    const timer = this.timers.get(id);
    if (timer) clearTimeout(timer);
    this.timers.delete(id);
  }

  /** Ends the waits past their deadline that no timer here covers (their process died or is another). */
  async sweep(): Promise<void> {
    for (const w of await this.store.overdue(this.now())) await this.expire(w);
  }

  private ready(): boolean {
    return !this.stopped && this.followUp !== undefined && this.accepting();
  }

  private async answer(w: StoredWait, message: InboundMessage): Promise<void> {
    if (!this.ready() || !(await this.store.answer(w.id, this.now(), this.instance))) return;
    this.forget(w.id);
    const text = message.text.length > REPLY_CHARS ? `${message.text.slice(0, REPLY_CHARS)} […${message.text.length - REPLY_CHARS} more chars]` : message.text;
    // The name is the platform's display name, written by that person: inside the wrapper too.
    const who = `${message.senderName ?? message.senderId} (${message.provider} user ${message.senderId})`;
    this.deliver(w, `[Reply ${w.id}] Your earlier conversations_turn call (call ${w.toolCallId}) got a reply in ${describe(w.target)}:\n${wrapUntrusted(`conversation:${describe(w.target)}`, `${who}: ${text}`)}\nContinue the task with this reply.`);
  }

  private async expire(w: StoredWait): Promise<void> {
    if (!this.ready()) return;
    if (!(await this.store.expire(w.id, this.now(), this.instance))) {
      // Not yet due by this clock (a timer fired early), or ended by someone else.
      if ((await this.store.state(w.id)) === 'waiting') this.schedule(w);
      return;
    }
    this.forget(w.id);
    this.deliver(w, `[Reply ${w.id}] Your earlier conversations_turn call (call ${w.toolCallId}) got no reply in ${describe(w.target)} before it expired. Continue with your best judgment.`);
  }

  private deliver(w: StoredWait, text: string): void {
    // Under the config current now: never more owner than the caller is today, the surface derived again.
    const context = refreshTurnContext(this.deps.config(), w.turn);
    const replyTo = replyTargetOf(context);
    const queued = replyTo ? (this.followUp?.({ sessionKey: w.sessionKey, agentId: context.agentId, context, replyTo, text }) ?? false) : false;
    if (queued) log.info({ wait: w.id, sessionKey: w.sessionKey }, 'conversations_turn: follow-up queued');
    else log.warn({ wait: w.id, sessionKey: w.sessionKey }, 'conversations_turn follow-up could not be queued');
  }
}

const describe = (t: MessageTarget) => (t.userId ? `the DM with ${t.provider} user ${t.userId}` : `${t.provider} channel ${t.channel}${t.threadId ? ` thread ${t.threadId}` : ''}`);

/** The conversations the router recorded (`session_contexts`): where the bot has been spoken to. */
export function conversationDirectory(db: Db): ConversationDirectory {
  return {
    async list({ agentId, limit, offset, provider, dmsOnly }) {
      const where = ['agent_id = ?', ...(provider !== undefined ? ['provider = ?'] : []), ...(dmsOnly ? ["chat = 'dm'"] : [])];
      const rows = await db.all<{ provider: string; chat: 'dm' | 'channel' | 'thread'; channel_id: string | null; channel_name: string | null; thread_id: string | null; created_by: string | null; updated_at: number }>(
        `SELECT provider, chat, channel_id, channel_name, thread_id, created_by, updated_at FROM session_contexts WHERE ${where.join(' AND ')} ORDER BY updated_at DESC, session_key LIMIT ? OFFSET ?`,
        [agentId, ...(provider !== undefined ? [provider] : []), limit, offset ?? 0],
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
