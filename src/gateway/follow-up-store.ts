// Follow-up turns that a process claimed but could not run: the outcome of a deferred call, an
// ask_user answer or a conversation wait is claimed from the store by one conditional write (so
// only one process hands it over), then queued as a turn in memory. A shutdown that comes between
// the claim and the turn's start would drop it: the claim says "handed over", the queue is gone.
// Such a follow-up is parked here instead (`follow_ups`), and taken back by one conditional
// write — by this process's next start or by any instance sharing the store — so it runs once.
//
// What is parked is what the turn needs, as plain data: the session, the turn context, where to
// answer, the text, and the tool call a dead turn left unanswered (repaired first). No token,
// no closure.
import { randomUUID } from 'node:crypto';
import type { TurnContext } from '../policy/context.js';
import type { Db } from '../store/db.js';
import type { FeatureMigrations, Migration } from '../store/migrations.js';
import type { ReplyTarget } from './types.js';

/** A follow-up as parked: enough to queue it again anywhere. */
export interface ParkedFollowUp {
  sessionKey: string;
  agentId: string;
  context: TurnContext;
  replyTo: ReplyTarget;
  text: string;
  /** The tool call a turn that died mid-wait left open: answered first (answerDanglingCall). */
  dangling?: { approvalId: string; toolCallId: string; pendingText?: string | undefined } | undefined;
}

const columns = `
        id            TEXT PRIMARY KEY,
        session_key   TEXT NOT NULL,
        agent_id      TEXT NOT NULL,
        context       TEXT NOT NULL,   -- JSON TurnContext
        reply_to      TEXT NOT NULL,   -- JSON {provider, channelId, threadId?}: no credentials
        text          TEXT NOT NULL,
        dangling      TEXT,            -- JSON {approvalId, toolCallId, pendingText?}
        state         TEXT NOT NULL CHECK (state IN ('parked', 'taken')),
        taken_by      TEXT,            -- the instance that took it to run`;

const sqlite001: Migration = {
  id: 'follow-ups-001',
  async up(db) {
    await db.exec(`CREATE TABLE follow_ups (${columns}
        created_at    INTEGER NOT NULL
      );`);
  },
};

const postgres001: Migration = {
  id: 'follow-ups-pg-001',
  async up(db) {
    await db.exec(`CREATE TABLE follow_ups (${columns}
        created_at    BIGINT NOT NULL
      );`);
  },
};

export const followUpMigrations: FeatureMigrations = { feature: 'follow-ups', sqlite: [sqlite001], postgres: [postgres001] };

interface Row {
  id: string;
  session_key: string;
  agent_id: string;
  context: string;
  reply_to: string;
  text: string;
  dangling: string | null;
  state: 'parked' | 'taken';
  taken_by: string | null;
}

const replyPlace = (t: ReplyTarget): ReplyTarget => ({ provider: t.provider, channelId: t.channelId, ...(t.threadId !== undefined ? { threadId: t.threadId } : {}), ...(t.dmUserId !== undefined ? { dmUserId: t.dmUserId } : {}) });

let parkedHere = 0;
/**
 * An id that sorts in park order: follow-ups of one conversation parked in the same millisecond
 * (a shutdown parks them in a burst) must run in the order they were parked, and a random id
 * alone would order them by chance. Time first, then this process's count, then randomness.
 */
function orderedId(): string {
  parkedHere = (parkedHere + 1) % 1e9;
  return `${Date.now().toString().padStart(15, '0')}-${parkedHere.toString().padStart(9, '0')}-${randomUUID()}`;
}

/** The `follow_ups` table: park, take (one conditional write), finish, put back. */
export class FollowUpStore {
  constructor(private readonly db: Db) {}

  async park(f: ParkedFollowUp): Promise<string> {
    const id = orderedId();
    await this.db.run(
      `INSERT INTO follow_ups (id, session_key, agent_id, context, reply_to, text, dangling, state, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'parked', ?)`,
      [id, f.sessionKey, f.agentId, JSON.stringify(f.context), JSON.stringify(replyPlace(f.replyTo)), f.text, f.dangling ? JSON.stringify(f.dangling) : null, Date.now()],
    );
    return id;
  }

  /**
   * Takes every parked follow-up for `instance` (and those taken by an instance that no longer
   * runs), each by one conditional write: two instances taking at once never both get one.
   */
  async take(instance: string, alive: (instance: string) => Promise<boolean>): Promise<Array<ParkedFollowUp & { id: string }>> {
    const rows = await this.db.all<Row>('SELECT * FROM follow_ups ORDER BY id');
    const taken: Array<ParkedFollowUp & { id: string }> = [];
    for (const r of rows) {
      if (r.state === 'taken' && (r.taken_by === instance || (r.taken_by !== null && (await alive(r.taken_by))))) continue;
      const info = await this.db.run("UPDATE follow_ups SET state = 'taken', taken_by = ? WHERE id = ? AND state = ? AND (taken_by IS NULL OR taken_by = ?)", [instance, r.id, r.state, r.taken_by ?? '']);
      if (info.changes !== 1) continue;
      taken.push({
        id: r.id,
        sessionKey: r.session_key,
        agentId: r.agent_id,
        context: JSON.parse(r.context) as TurnContext,
        replyTo: JSON.parse(r.reply_to) as ReplyTarget,
        text: r.text,
        ...(r.dangling !== null ? { dangling: JSON.parse(r.dangling) as ParkedFollowUp['dangling'] } : {}),
      });
    }
    return taken;
  }

  /** Its turn began: it is the transcript's now. */
  async finish(id: string): Promise<void> {
    await this.db.run('DELETE FROM follow_ups WHERE id = ?', [id]);
  }

  /** Taken but not begun when this instance stopped: parked again for the next taker. */
  async putBack(id: string, instance: string): Promise<void> {
    await this.db.run("UPDATE follow_ups SET state = 'parked', taken_by = NULL WHERE id = ? AND state = 'taken' AND taken_by = ?", [id, instance]);
  }
}
