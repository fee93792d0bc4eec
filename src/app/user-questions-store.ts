// The ask_user questions as stored (`user_questions`): everything a process that did not ask
// needs to check a click and hand the agent the outcome — who was asked, the questions, the
// session, the tool call, where the conversation is, the deadline and the answers so far. Every
// change is one conditional UPDATE on the row's `version` (or its state), so two clicks on two
// instances sharing the store record one answer, and a question ends (answered, expired,
// stopped) once. Delivery of the outcome is its own conditional step (`delivered` 0 → 1): the
// asking turn's inline wait, or one follow-up turn, never both.
//
// The reply target is the conversation only (provider, channel, thread): no interaction token,
// no response URL — the same as deferred approvals keep (their turn context), nothing wider.
import { sameConversation, type ClickOrigin } from '../approvals/click-origin.js';
import type { ReplyTarget } from '../gateway/types.js';
import type { TurnContext } from '../policy/context.js';
import type { Db } from '../store/db.js';
import type { FeatureMigrations, Migration } from '../store/migrations.js';
import type { AskUserOutcome, AskUserSpec } from '../tools/core/ask-user/ask-user.js';

export type QuestionState = 'open' | 'answered' | 'expired' | 'stopped';

export interface StoredQuestion {
  id: string;
  provider: string;
  requesterId: string;
  agentId: string;
  sessionKey: string;
  toolCallId: string;
  spec: AskUserSpec;
  turn: TurnContext;
  target: ReplyTarget;
  /** One entry per question: its answer, or null while unanswered. */
  answers: Array<string[] | null>;
  state: QuestionState;
  /** The process whose tool still waits inline for the outcome; absent once its turn ended (`pending`). */
  owner?: string | undefined;
  /** Whether the outcome was handed over (inline or by the follow-up). */
  delivered: boolean;
  version: number;
  createdAt: number;
  expiresAt: number;
}

const columns = `
        id            TEXT PRIMARY KEY,
        provider      TEXT NOT NULL,
        requester_id  TEXT NOT NULL,
        agent_id      TEXT NOT NULL,
        session_key   TEXT NOT NULL,
        tool_call_id  TEXT NOT NULL,
        spec          TEXT NOT NULL,   -- JSON AskUserSpec
        turn          TEXT NOT NULL,   -- JSON TurnContext of the asking turn
        target        TEXT NOT NULL,   -- JSON {provider, channelId, threadId?}: no credentials
        answers       TEXT NOT NULL,   -- JSON (string[] | null)[]
        state         TEXT NOT NULL CHECK (state IN ('open', 'answered', 'expired', 'stopped')),
        owner         TEXT,            -- the instance whose turn waits inline
        delivered     INTEGER NOT NULL DEFAULT 0,
        version       INTEGER NOT NULL DEFAULT 0,`;

const sqlite001: Migration = {
  id: 'user-questions-001',
  async up(db) {
    await db.exec(`
      CREATE TABLE user_questions (${columns}
        created_at    INTEGER NOT NULL,
        expires_at    INTEGER NOT NULL,
        ended_at      INTEGER,
        ended_by      TEXT
      );
      CREATE INDEX user_questions_by_state ON user_questions (state, expires_at);
    `);
  },
};

const postgres001: Migration = {
  id: 'user-questions-pg-001',
  async up(db) {
    await db.exec(`
      CREATE TABLE user_questions (${columns}
        created_at    BIGINT NOT NULL,
        expires_at    BIGINT NOT NULL,
        ended_at      BIGINT,
        ended_by      TEXT
      );
      CREATE INDEX user_questions_by_state ON user_questions (state, expires_at);
    `);
  },
};

export const userQuestionsMigrations: FeatureMigrations = { feature: 'user-questions', sqlite: [sqlite001], postgres: [postgres001] };

interface Row {
  id: string;
  provider: string;
  requester_id: string;
  agent_id: string;
  session_key: string;
  tool_call_id: string;
  spec: string;
  turn: string;
  target: string;
  answers: string;
  state: QuestionState;
  owner: string | null;
  delivered: number | string;
  version: number | string;
  created_at: number | string;
  expires_at: number | string;
}

const toQuestion = (r: Row): StoredQuestion => ({
  id: r.id,
  provider: r.provider,
  requesterId: r.requester_id,
  agentId: r.agent_id,
  sessionKey: r.session_key,
  toolCallId: r.tool_call_id,
  spec: JSON.parse(r.spec) as AskUserSpec,
  turn: JSON.parse(r.turn) as TurnContext,
  target: JSON.parse(r.target) as ReplyTarget,
  answers: JSON.parse(r.answers) as Array<string[] | null>,
  state: r.state,
  ...(r.owner !== null ? { owner: r.owner } : {}),
  delivered: Number(r.delivered) === 1,
  version: Number(r.version),
  createdAt: Number(r.created_at),
  expiresAt: Number(r.expires_at),
});

/** The conversation only: what a follow-up needs to answer there, nothing that authenticates. */
export function storedTarget(t: ReplyTarget): ReplyTarget {
  return { provider: t.provider, channelId: t.channelId, ...(t.threadId !== undefined ? { threadId: t.threadId } : {}) };
}

export type AnswerRefusal = 'not-found' | 'not-yours' | 'answered' | 'elsewhere';

/**
 * Whether `userId`, clicking on `provider` in the conversation `origin`, may answer question
 * number `question` of `q` now. Unknown id, another platform's question, an ended or expired
 * one, a question number it does not have → not found (nothing about the question is
 * revealed); someone other than the person asked who is not allowed to answer for them → not
 * yours; a click from any conversation but the one the question was asked in (a forged or
 * replayed id, a button in a DM or another channel, thread or guild) → elsewhere, for the
 * person asked and approvers alike; an already answered one → answered. `alsoMayAnswer` is
 * asked only for someone other than the person asked.
 */
export function answerRefusal(
  q: StoredQuestion | undefined,
  click: { provider: string; question: number; userId: string; origin: ClickOrigin | undefined; now: number },
  alsoMayAnswer: (provider: string, userId: string) => boolean,
): AnswerRefusal | undefined {
  if (!q || q.provider !== click.provider || q.state !== 'open' || q.expiresAt <= click.now) return 'not-found';
  if (!Number.isInteger(click.question) || click.question < 0 || click.question >= q.spec.questions.length) return 'not-found';
  if (q.requesterId !== click.userId && !alsoMayAnswer(click.provider, click.userId)) return 'not-yours';
  if (!sameConversation({ ...q.target, guildId: q.turn.guildId }, click.origin)) return 'elsewhere';
  if (q.answers[click.question] !== null && q.answers[click.question] !== undefined) return 'answered';
  return undefined;
}

/** The outcome an ended question hands the agent. */
export function outcomeOf(q: Pick<StoredQuestion, 'state' | 'spec' | 'answers'>): AskUserOutcome {
  if (q.state === 'answered') return { status: 'answered', answers: Object.fromEntries(q.spec.questions.map((s, i) => [s.id, q.answers[i] ?? []])) };
  if (q.state === 'stopped') return { status: 'no_answer', reason: 'The turn was stopped.' };
  return { status: 'no_answer', reason: 'The person did not answer before the question expired.' };
}

/** The `user_questions` table: plain reads and conditional writes; every change says whether it won. */
export class UserQuestionStore {
  constructor(private readonly db: Db) {}

  async insert(q: StoredQuestion): Promise<void> {
    await this.db.run(
      `INSERT INTO user_questions (id, provider, requester_id, agent_id, session_key, tool_call_id, spec, turn, target, answers, state, owner, delivered, version, created_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'open', ?, 0, 0, ?, ?)`,
      [q.id, q.provider, q.requesterId, q.agentId, q.sessionKey, q.toolCallId, JSON.stringify(q.spec), JSON.stringify(q.turn), JSON.stringify(storedTarget(q.target)), JSON.stringify(q.answers), q.owner ?? null, q.createdAt, q.expiresAt],
    );
  }

  async get(id: string): Promise<StoredQuestion | undefined> {
    const row = await this.db.get<Row>('SELECT * FROM user_questions WHERE id = ?', [id]);
    return row ? toQuestion(row) : undefined;
  }

  /** A question whose prompt could not be posted: nothing will answer it. */
  async remove(id: string): Promise<void> {
    await this.db.run("DELETE FROM user_questions WHERE id = ? AND state = 'open'", [id]);
  }

  /**
   * Records `answers` (and, when `complete`, ends the question answered) if nobody changed the
   * row since version `version` was read and it is still open and not past its deadline.
   */
  async answer(id: string, version: number, answers: Array<string[] | null>, complete: boolean, now: number, instance: string): Promise<boolean> {
    const info = await this.db.run(
      `UPDATE user_questions SET answers = ?, state = ?, version = version + 1, ended_at = ?, ended_by = ?
       WHERE id = ? AND version = ? AND state = 'open' AND expires_at > ?`,
      [JSON.stringify(answers), complete ? 'answered' : 'open', complete ? now : null, complete ? instance : null, id, version, now],
    );
    return info.changes === 1;
  }

  /** The asking turn stops waiting inline: from now on the outcome goes to a follow-up turn. */
  async release(id: string, instance: string): Promise<boolean> {
    const info = await this.db.run("UPDATE user_questions SET owner = NULL, version = version + 1 WHERE id = ? AND owner = ? AND state = 'open'", [id, instance]);
    return info.changes === 1;
  }

  /** The asking turn was stopped: the question ends with no follow-up. */
  async stop(id: string, now: number, instance: string): Promise<boolean> {
    const info = await this.db.run("UPDATE user_questions SET state = 'stopped', delivered = 1, version = version + 1, ended_at = ?, ended_by = ? WHERE id = ? AND state = 'open'", [now, instance, id]);
    return info.changes === 1;
  }

  /** The deadline ends the question; false when an answer (or another process) ended it first, or it is not due by `now`. */
  async expire(id: string, now: number, instance: string): Promise<boolean> {
    const info = await this.db.run("UPDATE user_questions SET state = 'expired', version = version + 1, ended_at = ?, ended_by = ? WHERE id = ? AND state = 'open' AND expires_at <= ?", [now, instance, id, now]);
    return info.changes === 1;
  }

  /** Takes the handing over of an ended question's outcome; false when it was handed over already. */
  async claimDelivery(id: string): Promise<boolean> {
    const info = await this.db.run("UPDATE user_questions SET delivered = 1 WHERE id = ? AND state IN ('answered', 'expired') AND delivered = 0", [id]);
    return info.changes === 1;
  }

  /** Open questions (a start schedules their deadlines). */
  async open(): Promise<StoredQuestion[]> {
    return (await this.db.all<Row>("SELECT * FROM user_questions WHERE state = 'open' ORDER BY expires_at, id")).map(toQuestion);
  }

  /** Open questions past their deadline. */
  async overdue(now: number): Promise<StoredQuestion[]> {
    return (await this.db.all<Row>("SELECT * FROM user_questions WHERE state = 'open' AND expires_at <= ? ORDER BY expires_at, id", [now])).map(toQuestion);
  }

  /** Ended questions whose outcome nobody handed over yet. */
  async undelivered(): Promise<StoredQuestion[]> {
    return (await this.db.all<Row>("SELECT * FROM user_questions WHERE state IN ('answered', 'expired') AND delivered = 0 ORDER BY expires_at, id")).map(toQuestion);
  }

  /** Forgets questions that ended before `before` (their outcome is in the transcript). */
  async prune(before: number): Promise<void> {
    await this.db.run("DELETE FROM user_questions WHERE state <> 'open' AND delivered = 1 AND ended_at < ?", [before]);
  }
}
