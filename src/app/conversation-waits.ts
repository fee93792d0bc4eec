// conversations_turn's waits: a post in another conversation, then the next human message there
// comes back to the caller's session as a follow-up turn (the gateway's followUp, behind the
// session's queue — the path deferred approvals use), or "no reply" at the deadline. The
// caller's conversation is never held. Waits live in the store (`conversation_waits`), so a
// restart keeps them and a reply that reaches another instance on a shared store answers them:
// every wait ends by one conditional write (`waiting` → `answered` | `expired`), and only the
// process whose write won queues the follow-up, so a wait is answered exactly once.
//
// A wait is stored (`pending`) BEFORE its question is posted, and anchored at the posted
// message's platform id once the platform accepted it (`waiting`): a reply that arrives while
// the post is still under way is kept as a candidate of the pending wait, not lost, and a
// message is taken only when the platform placed it after the post (ids compared, never
// clocks). A post that fails removes its pending wait.
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
  /** `pending` while its question is being posted; `waiting` once posted. */
  state?: WaitState | undefined;
  /** The posted question's platform id (Discord snowflake, Slack ts); absent before the post, or when the platform gave none. */
  anchor?: string | undefined;
}

export type WaitState = 'pending' | 'waiting' | 'answered' | 'expired';

/** A human message offered to a wait, kept until the wait is settled (the store's `conversation_wait_replies`). */
export interface WaitReply {
  messageId: string;
  provider: string;
  senderId: string;
  senderName?: string | undefined;
  text: string;
  /** The wait was already `waiting` (posted) when the message was offered: what decides when there is no anchor to compare with. */
  afterPost: boolean;
  offeredAt: number;
}

/** The NOTIFY channel that tells the instances sharing a store that a conversation has a new wait. */
export const WAIT_CHANNEL = 'warden_conversation_wait';

/** The longest reply text handed back (the rest is cut, and said so). */
const REPLY_CHARS = 4_000;
/** How often a process looks for waits past their deadline that no timer of its own covers (another instance's, one that died). */
const DEFAULT_SWEEP_MS = 15_000;

/**
 * Whether `message` is a human's, in the conversation `target` names. Whether it came after the
 * wait's question is `placedAfter`'s (platform ids), decided when the wait is settled.
 */
export function answersWait(target: MessageTarget, message: InboundMessage): boolean {
  if (message.senderIsBot || message.provider !== target.provider || message.text.trim() === '') return false;
  if (target.userId !== undefined) return message.chatType === 'dm' && message.senderId === target.userId;
  if (message.chatType === 'dm' || message.channelId !== target.channel) return false;
  // A wait on a thread takes a reply in that thread; a wait on a channel one in the channel itself.
  return target.threadId !== undefined ? message.threadId === target.threadId : message.chatType === 'channel';
}

const DIGITS = /^[0-9]{1,20}$/;
const SLACK_TS = /^([0-9]{1,12})\.([0-9]{1,9})$/;

/**
 * Whether the platform placed message `id` after message `anchor` in one conversation, from the
 * ids alone (no clock of this process is involved): Discord snowflakes grow with time (their
 * high bits are the creation time, then worker/sequence), so a larger one is later; Slack `ts`
 * values are `seconds.micro`, unique and increasing within a channel. `undefined` when either
 * is not an id of that platform: the caller treats it as not after (fail closed).
 */
export function placedAfter(provider: string, id: string, anchor: string): boolean | undefined {
  if (provider === 'discord') {
    if (!DIGITS.test(id) || !DIGITS.test(anchor)) return undefined;
    return BigInt(id) > BigInt(anchor);
  }
  if (provider === 'slack') {
    const a = SLACK_TS.exec(id);
    const b = SLACK_TS.exec(anchor);
    if (!a || !b) return undefined;
    const [sa, sb] = [BigInt(a[1]!), BigInt(b[1]!)];
    if (sa !== sb) return sa > sb;
    return BigInt(a[2]!.padEnd(9, '0')) > BigInt(b[2]!.padEnd(9, '0'));
  }
  return undefined;
}

/**
 * The reply that answers a wait anchored at `anchor`: the earliest, in the platform's order, of
 * the replies placed after it; with no anchor (a platform that gave no id), the earliest offered
 * once the wait was posted — one offered while the post was under way cannot be placed and is
 * not taken.
 */
export function firstReply(provider: string, anchor: string | undefined, replies: readonly WaitReply[]): WaitReply | undefined {
  if (anchor === undefined) return [...replies].filter((r) => r.afterPost).sort((x, y) => x.offeredAt - y.offeredAt || (x.messageId < y.messageId ? -1 : 1))[0];
  const after = replies.filter((r) => placedAfter(provider, r.messageId, anchor) === true);
  return after.sort((x, y) => (placedAfter(provider, x.messageId, y.messageId) ? 1 : -1))[0];
}

/** The key of the conversation a wait is on, as the per-process gate knows it. */
export function conversationKey(target: MessageTarget): string {
  return target.userId !== undefined ? `${target.provider}:dm:${target.userId}` : `${target.provider}:ch:${target.channel ?? ''}`;
}

/** The key of the conversation a message is in (a thread's is its channel's). */
export function messageConversationKey(message: InboundMessage): string {
  return message.chatType === 'dm' ? `${message.provider}:dm:${message.senderId}` : `${message.provider}:ch:${message.channelId}`;
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

/** `pending` waits (stored before the post), the posted question's id, and the replies offered to a wait not yet settled. */
const sqlite002: Migration = {
  id: 'conversation-waits-002',
  async up(db) {
    // SQLite cannot change a CHECK constraint: the table is rebuilt, its rows kept.
    await db.exec(`
      CREATE TABLE conversation_waits_next (
        id            TEXT PRIMARY KEY,
        agent_id      TEXT NOT NULL,
        session_key   TEXT NOT NULL,
        tool_call_id  TEXT NOT NULL,
        provider      TEXT NOT NULL,
        channel_id    TEXT,
        thread_id     TEXT,
        dm_user       TEXT,
        turn          TEXT NOT NULL,
        state         TEXT NOT NULL CHECK (state IN ('pending', 'waiting', 'answered', 'expired')),
        created_at    INTEGER NOT NULL,
        expires_at    INTEGER NOT NULL,
        ended_at      INTEGER,
        ended_by      TEXT,
        anchor        TEXT             -- the posted question's platform id
      );
      INSERT INTO conversation_waits_next (id, agent_id, session_key, tool_call_id, provider, channel_id, thread_id, dm_user, turn, state, created_at, expires_at, ended_at, ended_by)
        SELECT id, agent_id, session_key, tool_call_id, provider, channel_id, thread_id, dm_user, turn, state, created_at, expires_at, ended_at, ended_by FROM conversation_waits;
      DROP TABLE conversation_waits;
      ALTER TABLE conversation_waits_next RENAME TO conversation_waits;
      CREATE INDEX conversation_waits_by_channel ON conversation_waits (provider, channel_id, state);
      CREATE INDEX conversation_waits_by_dm ON conversation_waits (provider, dm_user, state);
      CREATE INDEX conversation_waits_by_deadline ON conversation_waits (state, expires_at);
      CREATE TABLE conversation_wait_replies (
        wait_id      TEXT NOT NULL,
        message_id   TEXT NOT NULL,
        provider     TEXT NOT NULL,
        sender_id    TEXT NOT NULL,
        sender_name  TEXT,
        text         TEXT NOT NULL,
        after_post   INTEGER NOT NULL,
        offered_at   INTEGER NOT NULL,
        PRIMARY KEY (wait_id, message_id)
      );
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

const postgres002: Migration = {
  id: 'conversation-waits-pg-002',
  async up(db) {
    await db.exec(`
      ALTER TABLE conversation_waits DROP CONSTRAINT IF EXISTS conversation_waits_state_check;
      ALTER TABLE conversation_waits ADD CONSTRAINT conversation_waits_state_check CHECK (state IN ('pending', 'waiting', 'answered', 'expired'));
      ALTER TABLE conversation_waits ADD COLUMN anchor TEXT;
      CREATE TABLE conversation_wait_replies (
        wait_id      TEXT NOT NULL,
        message_id   TEXT NOT NULL,
        provider     TEXT NOT NULL,
        sender_id    TEXT NOT NULL,
        sender_name  TEXT,
        text         TEXT NOT NULL,
        after_post   INTEGER NOT NULL,
        offered_at   BIGINT NOT NULL,
        PRIMARY KEY (wait_id, message_id)
      );
    `);
  },
};

export const conversationWaitsMigrations: FeatureMigrations = { feature: 'conversation-waits', sqlite: [sqlite001, sqlite002], postgres: [postgres001, postgres002] };

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
  state: WaitState;
  anchor: string | null;
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
  state: r.state,
  ...(r.anchor !== null ? { anchor: r.anchor } : {}),
});

interface ReplyRow {
  message_id: string;
  provider: string;
  sender_id: string;
  sender_name: string | null;
  text: string;
  after_post: number | string;
  offered_at: number | string;
}

const OPEN = "state IN ('pending', 'waiting')";

/** The `conversation_waits` table: plain reads and conditional writes; every ending says whether it won. */
export class ConversationWaitStore {
  constructor(private readonly db: Db) {}

  /** Stores `w` (`waiting` unless said `pending`); on a shared store the other instances are told its conversation has a wait, at commit. */
  async insert(w: StoredWait): Promise<void> {
    const t = w.target;
    const sql = `INSERT INTO conversation_waits (id, agent_id, session_key, tool_call_id, provider, channel_id, thread_id, dm_user, turn, state, created_at, expires_at, anchor)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
    const params = [w.id, w.agentId, w.sessionKey, w.toolCallId, t.provider, t.userId !== undefined ? null : (t.channel ?? null), t.userId !== undefined ? null : (t.threadId ?? null), t.userId ?? null, JSON.stringify(w.turn), w.state ?? 'waiting', w.createdAt, w.expiresAt, w.anchor ?? null];
    if (!this.db.shared) {
      await this.db.run(sql, params);
      return;
    }
    await this.db.batch([{ sql, params }, { notify: WAIT_CHANNEL, payload: conversationKey(t) }]);
  }

  /** The open (pending or waiting) waits `message` may answer, oldest first (the exact match is `answersWait`'s). */
  async openFor(message: InboundMessage): Promise<StoredWait[]> {
    const rows =
      message.chatType === 'dm'
        ? await this.db.all<Row>(`SELECT * FROM conversation_waits WHERE provider = ? AND dm_user = ? AND ${OPEN} ORDER BY created_at, id`, [message.provider, message.senderId])
        : await this.db.all<Row>(`SELECT * FROM conversation_waits WHERE provider = ? AND channel_id = ? AND ${OPEN} ORDER BY created_at, id`, [message.provider, message.channelId]);
    return rows.map(toWait).filter((w) => answersWait(w.target, message));
  }

  /** Every open wait (a start schedules their deadlines and learns their conversations). */
  async open(): Promise<StoredWait[]> {
    return (await this.db.all<Row>(`SELECT * FROM conversation_waits WHERE ${OPEN} ORDER BY expires_at, id`)).map(toWait);
  }

  /** The conversations with an open wait (the gate's keys). */
  async openConversations(): Promise<string[]> {
    const rows = await this.db.all<{ provider: string; channel_id: string | null; dm_user: string | null }>(`SELECT DISTINCT provider, channel_id, dm_user FROM conversation_waits WHERE ${OPEN}`);
    return rows.map((r) => conversationKey(r.dm_user !== null ? { provider: r.provider, userId: r.dm_user } : { provider: r.provider, channel: r.channel_id ?? undefined }));
  }

  async get(id: string): Promise<StoredWait | undefined> {
    const row = await this.db.get<Row>('SELECT * FROM conversation_waits WHERE id = ?', [id]);
    return row ? toWait(row) : undefined;
  }

  /** Open waits whose deadline has passed. */
  async overdue(now: number): Promise<StoredWait[]> {
    return (await this.db.all<Row>(`SELECT * FROM conversation_waits WHERE ${OPEN} AND expires_at <= ? ORDER BY expires_at, id`, [now])).map(toWait);
  }

  async state(id: string): Promise<WaitState | undefined> {
    return (await this.db.value<WaitState>('SELECT state FROM conversation_waits WHERE id = ?', [id])) ?? undefined;
  }

  /** The question went out: the pending wait waits, anchored at the posted message. False when it is no longer pending. */
  async posted(id: string, anchor: string | undefined): Promise<boolean> {
    const info = await this.db.run("UPDATE conversation_waits SET state = 'waiting', anchor = ? WHERE id = ? AND state = 'pending'", [anchor ?? null, id]);
    return info.changes === 1;
  }

  /** The question could not be posted: the pending wait and anything offered to it are gone. */
  async cancel(id: string): Promise<void> {
    await this.db.batch([
      { sql: "DELETE FROM conversation_waits WHERE id = ? AND state = 'pending'", params: [id] },
      { sql: 'DELETE FROM conversation_wait_replies WHERE wait_id = ?', params: [id] },
    ]);
  }

  /** Keeps `reply` for wait `id` until it is settled (the same message offered twice is kept once). */
  async addReply(id: string, reply: WaitReply): Promise<void> {
    await this.db.run(
      'INSERT INTO conversation_wait_replies (wait_id, message_id, provider, sender_id, sender_name, text, after_post, offered_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
      [id, reply.messageId, reply.provider, reply.senderId, reply.senderName ?? null, reply.text, reply.afterPost ? 1 : 0, reply.offeredAt],
    );
  }

  async replies(id: string): Promise<WaitReply[]> {
    const rows = await this.db.all<ReplyRow>('SELECT * FROM conversation_wait_replies WHERE wait_id = ? ORDER BY offered_at, message_id', [id]);
    return rows.map((r) => ({ messageId: r.message_id, provider: r.provider, senderId: r.sender_id, ...(r.sender_name !== null ? { senderName: r.sender_name } : {}), text: r.text, afterPost: Number(r.after_post) === 1, offeredAt: Number(r.offered_at) }));
  }

  /** The replies of an ended wait are no longer needed. */
  async dropReplies(id: string): Promise<void> {
    await this.db.run('DELETE FROM conversation_wait_replies WHERE wait_id = ?', [id]);
  }

  /** A reply ends the wait; false when another reply, process or the deadline ended it first. */
  async answer(id: string, now: number, instance: string): Promise<boolean> {
    const info = await this.db.run("UPDATE conversation_waits SET state = 'answered', ended_at = ?, ended_by = ? WHERE id = ? AND state = 'waiting' AND expires_at > ?", [now, instance, id, now]);
    return info.changes === 1;
  }

  /** The deadline ends the wait (pending or waiting); false when a reply (or another process) ended it first. */
  async expire(id: string, now: number, instance: string): Promise<boolean> {
    const info = await this.db.run(`UPDATE conversation_waits SET state = 'expired', ended_at = ?, ended_by = ? WHERE id = ? AND ${OPEN} AND expires_at <= ?`, [now, instance, id, now]);
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

type WaitInput = { target: MessageTarget; turn: TurnContext; sessionKey: string; toolCallId: string; timeoutMs: number };

export class ConversationWaits implements ConversationWaitService {
  readonly store: ConversationWaitStore;
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private sweeper: NodeJS.Timeout | undefined;
  private checks: Promise<unknown> = Promise.resolve();
  private followUp: ((turn: FollowUpTurn) => boolean) | undefined;
  private accepting: () => boolean = () => true;
  private stopped = false;
  private readonly instance: string;
  /**
   * The conversations with an open wait, as far as this process knows: a message anywhere else
   * does no store work. Filled at start from the store, by this process's waits, and on a shared
   * store by other instances' notifications (and, should one be missed, by the sweep). A key is
   * dropped only when a look finds no open wait there and nothing was added since the look began
   * (`added` counts additions), so a wait announced meanwhile is never forgotten.
   */
  private readonly watched = new Set<string>();
  private added = 0;
  private unlisten: (() => Promise<void>) | undefined;
  /** Store reads an offered message caused (tests: a message in an unwatched conversation causes none). */
  storeLooks = 0;

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

  private watch(key: string): void {
    this.watched.add(key);
    this.added++;
  }

  /** Whether a message in `key`'s conversation would be looked at (tests). */
  watching(key: string): boolean {
    return this.watched.has(key);
  }

  /**
   * Subscribes to other instances' new waits (on a shared store, over the store's one listener
   * connection), then schedules the deadlines of the waits already stored (a restart) and learns
   * their conversations; looks for overdue ones now and then.
   */
  async start(): Promise<void> {
    if (this.deps.db.shared) {
      try {
        this.unlisten = await this.deps.db.listen(WAIT_CHANNEL, (payload) => {
          if (payload !== undefined) this.watch(payload);
          // A reconnect: notifications may have been missed; look again.
          else this.track(this.learnOpen());
        });
      } catch (err) {
        // Not fatal: the sweep learns other instances' waits, later.
        log.warn({ err }, 'conversations_turn: other instances’ new waits are learnt by the sweep only (no notification channel)');
      }
    }
    for (const w of await this.store.open()) {
      this.watch(conversationKey(w.target));
      this.schedule(w);
    }
    const sweepMs = this.deps.sweepMs ?? DEFAULT_SWEEP_MS;
    this.sweeper = setInterval(() => this.track(this.sweep()), sweepMs);
    this.sweeper.unref?.();
  }

  private async learnOpen(): Promise<void> {
    for (const key of await this.store.openConversations()) this.watch(key);
  }

  /** Stops timers and waits for the checks under way; the waits stay stored for the next start or another instance. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.sweeper) clearInterval(this.sweeper);
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    await this.unlisten?.().catch((err: unknown) => log.debug({ err }, 'conversations_turn: unsubscribing failed'));
    await this.checks.catch(() => undefined);
  }

  /** Settles once every message offered so far has been checked (tests). */
  async idle(): Promise<void> {
    await this.checks;
  }

  /**
   * Stores a `pending` wait, before its question is posted: from here a reply in that
   * conversation is kept, wherever it lands. `posted` or `cancel` follows.
   */
  async begin(input: WaitInput): Promise<{ id: string; expiresAt: number }> {
    const createdAt = this.now();
    const wait: StoredWait = { id: randomUUID(), agentId: input.turn.agentId, sessionKey: input.sessionKey, toolCallId: input.toolCallId, target: input.target, turn: input.turn, createdAt, expiresAt: createdAt + input.timeoutMs, state: 'pending' };
    this.watch(conversationKey(wait.target));
    await this.store.insert(wait);
    this.schedule(wait);
    return { id: wait.id, expiresAt: wait.expiresAt };
  }

  /**
   * The question of wait `id` went out as platform message `messageId`: the wait now waits,
   * anchored there, and the replies offered while the post was under way are settled — a reply
   * the platform placed after the question answers it.
   */
  async posted(id: string, messageId: string | undefined): Promise<void> {
    await this.store.posted(id, messageId);
    await this.serial(() => this.settle(id));
  }

  /** The question of wait `id` could not be posted: the wait is removed, nothing will answer it. */
  async cancel(id: string): Promise<void> {
    this.forget(id);
    await this.store.cancel(id);
  }

  /** A wait stored and posted at once, with no platform id to anchor it (messages offered from now on answer it). */
  async wait(input: WaitInput): Promise<{ id: string; expiresAt: number }> {
    const begun = await this.begin(input);
    await this.posted(begun.id, undefined);
    return begun;
  }

  /** Runs `work` after the checks before it (one at a time, so the first admitted reply is the one kept first). */
  private serial(work: () => Promise<void>): Promise<void> {
    const next = this.checks.then(work);
    // A failed check (the store unreachable) leaves the next message its turn.
    this.checks = next.catch(() => undefined);
    return next;
  }

  /**
   * Every inbound message, before routing (a reply need not mention the bot). `admitted` is the
   * access gate's rules for its sender: a person Warden refuses to hear reaches the agent
   * through a wait no more than directly. A message is kept for a wait only once the sender is
   * let in, so a refused message leaves the wait open. A message in a conversation with no open
   * wait known here does no store work at all.
   */
  offer(message: InboundMessage, admitted: () => Promise<boolean> = async () => true): void {
    if (message.senderIsBot || message.text.trim() === '' || this.stopped) return;
    const key = messageConversationKey(message);
    if (!this.watched.has(key)) return;
    this.track(
      this.serial(async () => {
        // A process that cannot queue the follow-up leaves the message to one that can.
        if (!this.ready()) return;
        const since = this.added;
        this.storeLooks++;
        const open = await this.store.openFor(message);
        if (open.length === 0) {
          if (this.added === since && !(await this.anyOpenIn(message))) this.unwatch(key, since);
          return;
        }
        // A message the platform placed before an anchored wait's question is no answer to it.
        const candidates = open.filter((w) => w.state === 'pending' || w.anchor === undefined || placedAfter(message.provider, message.messageId, w.anchor) === true);
        if (candidates.length === 0) return;
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
        const reply: Omit<WaitReply, 'afterPost'> = { messageId: message.messageId, provider: message.provider, senderId: message.senderId, senderName: message.senderName, text: message.text, offeredAt: this.now() };
        for (const w of candidates) {
          await this.store.addReply(w.id, { ...reply, afterPost: w.state === 'waiting' });
          // Settled again after the reply is stored: a wait that stopped pending meanwhile is
          // answered here if its own settle (after its post) did not see this reply yet.
          await this.settle(w.id);
        }
      }),
    );
  }

  /** Whether any wait at all (in any thread) is open in the conversation of `message` (a DM's person, or a channel). */
  private async anyOpenIn(message: InboundMessage): Promise<boolean> {
    const sql = message.chatType === 'dm' ? `SELECT 1 FROM conversation_waits WHERE provider = ? AND dm_user = ? AND ${OPEN} LIMIT 1` : `SELECT 1 FROM conversation_waits WHERE provider = ? AND channel_id = ? AND ${OPEN} LIMIT 1`;
    return (await this.deps.db.value(sql, [message.provider, message.chatType === 'dm' ? message.senderId : message.channelId])) !== undefined;
  }

  private unwatch(key: string, since: number): void {
    if (this.added === since) this.watched.delete(key);
  }

  /** Answers wait `id` with the first reply kept for it that came after its question, if it is waiting and has one. */
  private async settle(id: string): Promise<void> {
    const w = await this.store.get(id);
    if (!w || w.state === 'pending') return;
    if (w.state !== 'waiting') {
      await this.store.dropReplies(id);
      return;
    }
    const reply = firstReply(w.target.provider, w.anchor, await this.store.replies(id));
    if (reply) await this.answer(w, reply);
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

  /**
   * Ends the waits past their deadline that no timer here covers (their process died or is
   * another); on a shared store also learns the conversations of waits a missed notification
   * did not announce.
   */
  async sweep(): Promise<void> {
    if (this.deps.db.shared) await this.learnOpen();
    for (const w of await this.store.overdue(this.now())) await this.expire(w);
  }

  private ready(): boolean {
    return !this.stopped && this.followUp !== undefined && this.accepting();
  }

  private async answer(w: StoredWait, reply: WaitReply): Promise<void> {
    if (!this.ready() || !(await this.store.answer(w.id, this.now(), this.instance))) return;
    this.forget(w.id);
    await this.store.dropReplies(w.id);
    const text = reply.text.length > REPLY_CHARS ? `${reply.text.slice(0, REPLY_CHARS)} […${reply.text.length - REPLY_CHARS} more chars]` : reply.text;
    // The name is the platform's display name, written by that person: inside the wrapper too.
    const who = `${reply.senderName ?? reply.senderId} (${reply.provider} user ${reply.senderId})`;
    this.deliver(w, `[Reply ${w.id}] Your earlier conversations_turn call (call ${w.toolCallId}) got a reply in ${describe(w.target)}:\n${wrapUntrusted(`conversation:${describe(w.target)}`, `${who}: ${text}`)}\nContinue the task with this reply.`);
  }

  private async expire(w: StoredWait): Promise<void> {
    if (!this.ready()) return;
    if (!(await this.store.expire(w.id, this.now(), this.instance))) {
      // Not yet due by this clock (a timer fired early), or ended by someone else.
      const state = await this.store.state(w.id);
      if (state === 'waiting' || state === 'pending') this.schedule(w);
      return;
    }
    this.forget(w.id);
    await this.store.dropReplies(w.id);
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
