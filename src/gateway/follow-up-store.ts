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

// The sweep (every 15 s on every instance) asks only for takeable rows: parked ones, and the
// taken rows of instances other than this one. Both are found through this index, so a sweep
// that finds nothing reads no row, however many follow-ups are running on live instances.
const takeableIndex: Migration = {
  id: 'follow-ups-002-takeable-index',
  async up(db) {
    await db.exec('CREATE INDEX follow_ups_takeable ON follow_ups (state, taken_by, id);');
  },
};

export const followUpMigrations: FeatureMigrations = { feature: 'follow-ups', sqlite: [sqlite001, takeableIndex], postgres: [postgres001, { ...takeableIndex, id: 'follow-ups-pg-002-takeable-index' }] };

/** The most follow-ups one sweep takes; the next sweep takes the rest, in park order still. */
export const TAKE_LIMIT = 100;

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
   * Takes the parked follow-ups (and those taken by an instance that no longer runs), at most
   * `limit`, in park order, each by one conditional write: two instances taking at once never
   * both get one. Reads only takeable rows: a row taken by this instance (its turn is queued
   * here) or by a live one is never read, and `alive` is asked once per other instance.
   */
  async take(instance: string, alive: (instance: string) => Promise<boolean>, limit = TAKE_LIMIT): Promise<Array<ParkedFollowUp & { id: string }>> {
    const parked = await this.db.all<Row>("SELECT * FROM follow_ups WHERE state = 'parked' ORDER BY id LIMIT ?", [limit]);
    const holders = await this.db.all<{ taken_by: string | null }>("SELECT DISTINCT taken_by FROM follow_ups WHERE state = 'taken' AND (taken_by IS NULL OR taken_by <> ?)", [instance]);
    const dead: Array<string | null> = [];
    for (const { taken_by } of holders) if (taken_by === null || !(await alive(taken_by))) dead.push(taken_by);
    const orphaned = dead.length === 0 ? [] : await this.orphanedOf(dead, limit);
    // Both lists are in id order and limited: the first `limit` of their union are the first of all.
    const rows = orphaned.length === 0 ? parked : [...parked, ...orphaned].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).slice(0, limit);
    const taken: Array<ParkedFollowUp & { id: string }> = [];
    for (const r of rows) {
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

  /** The rows taken by instances that no longer run (null: a taken row that names none), in id order. */
  private orphanedOf(instances: ReadonlyArray<string | null>, limit: number): Promise<Row[]> {
    const named = instances.filter((i): i is string => i !== null);
    const where = [...(named.length > 0 ? [`taken_by IN (${named.map(() => '?').join(', ')})`] : []), ...(named.length < instances.length ? ['taken_by IS NULL'] : [])].join(' OR ');
    return this.db.all<Row>(`SELECT * FROM follow_ups WHERE state = 'taken' AND (${where}) ORDER BY id LIMIT ?`, [...named, limit]);
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
