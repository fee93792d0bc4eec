import type { Database } from 'better-sqlite3';
import type { TurnContext } from '../policy/context.js';
import type { Migration } from '../store/migrations.js';
import type { DeferredCall, DeferredCallSpec, DeferredCallState } from './types.js';

/**
 * Deferred calls: a tool call whose approval did not come within `approvals.waitSec` goes on
 * without its turn. Each row holds what is needed to run it later — in any process sharing the
 * data dir, after a restart too — and a state machine whose every step is one conditional
 * UPDATE, so exactly one party ever runs a call:
 *
 *   waiting ──(wait over, still pending)──▶ deferred ──(closed, claimed)──▶ running ──▶ done
 *      │                                        ▲                             │
 *      ├──(decided within the wait)──▶ done     └──(its turn's process died)   └──(runner died)──▶ lost
 *
 * `waiting` belongs to the turn that asked (owner = its process); nobody else runs it unless
 * that process is gone. `deferred` belongs to nobody: whoever sees the approval closed claims
 * it. A `running` call whose runner died is never run again (it may have run in part): it is
 * reported as lost.
 */
export const deferredCallsMigration: Migration = {
  id: 'approvals-002-deferred-calls',
  up(db) {
    db.exec(`
      CREATE TABLE deferred_calls (
        approval_id     TEXT PRIMARY KEY,
        agent_id        TEXT NOT NULL,
        session_key     TEXT NOT NULL,
        origin          TEXT NOT NULL CHECK (origin IN ('turn', 'command')),
        tool            TEXT NOT NULL,
        tool_call_id    TEXT NOT NULL,
        args            TEXT NOT NULL,  -- JSON, as the model or the command gave them
        turn            TEXT NOT NULL,  -- JSON TurnContext of the turn that asked
        surface         TEXT NOT NULL,  -- JSON string[], that turn's tool ids: the ceiling
        state           TEXT NOT NULL CHECK (state IN ('waiting', 'deferred', 'running', 'done', 'lost')),
        owner_instance  TEXT,
        owner_pid       INTEGER,
        created_at      INTEGER NOT NULL,
        claimed_at      INTEGER,
        finished_at     INTEGER,
        result          TEXT            -- JSON {outcome, text}
      );
      CREATE INDEX deferred_calls_by_state ON deferred_calls (state);
    `);
  },
};

interface Row {
  approval_id: string;
  agent_id: string;
  session_key: string;
  origin: 'turn' | 'command';
  tool: string;
  tool_call_id: string;
  args: string;
  turn: string;
  surface: string;
  state: DeferredCallState;
  owner_instance: string | null;
  owner_pid: number | null;
  created_at: number;
  claimed_at: number | null;
  finished_at: number | null;
  result: string | null;
}

function toCall(r: Row): DeferredCall {
  return {
    approvalId: r.approval_id,
    agentId: r.agent_id,
    sessionKey: r.session_key,
    origin: r.origin,
    tool: r.tool,
    toolCallId: r.tool_call_id,
    args: JSON.parse(r.args) as Record<string, unknown>,
    turn: JSON.parse(r.turn) as TurnContext,
    surface: JSON.parse(r.surface) as string[],
    state: r.state,
    owner: r.owner_instance === null || r.owner_pid === null ? undefined : { instance: r.owner_instance, pid: r.owner_pid },
    createdAt: r.created_at,
    claimedAt: r.claimed_at ?? undefined,
    finishedAt: r.finished_at ?? undefined,
    result: r.result === null ? undefined : (JSON.parse(r.result) as DeferredCall['result']),
  };
}

/** The `deferred_calls` table: plain reads and conditional writes; every transition says whether it won. */
export class DeferredCallStore {
  private readonly getStmt;
  private readonly deferStmt;
  private readonly inlineStmt;
  private readonly claimStmt;
  private readonly endStmt;
  constructor(private readonly db: Database) {
    this.getStmt = db.prepare('SELECT * FROM deferred_calls WHERE approval_id = ?');
    this.deferStmt = db.prepare("UPDATE deferred_calls SET state = 'deferred', owner_instance = NULL, owner_pid = NULL WHERE approval_id = ? AND state = 'waiting'");
    this.inlineStmt = db.prepare(
      "UPDATE deferred_calls SET state = 'done', finished_at = ?, result = ? WHERE approval_id = ? AND state = 'waiting' AND owner_instance = ?",
    );
    this.claimStmt = db.prepare("UPDATE deferred_calls SET state = 'running', owner_instance = ?, owner_pid = ?, claimed_at = ? WHERE approval_id = ? AND state = 'deferred'");
    this.endStmt = db.prepare("UPDATE deferred_calls SET state = ?, finished_at = ?, result = ? WHERE approval_id = ? AND state = 'running'");
  }

  /** Records a call as `waiting` for the turn of `owner`. */
  insert(approvalId: string, where: { agentId: string; sessionKey: string }, spec: DeferredCallSpec, owner: { instance: string; pid: number }, now: number): void {
    this.db
      .prepare(
        `INSERT INTO deferred_calls (approval_id, agent_id, session_key, origin, tool, tool_call_id, args, turn, surface, state, owner_instance, owner_pid, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'waiting', ?, ?, ?)`,
      )
      .run(approvalId, where.agentId, where.sessionKey, spec.origin, spec.tool, spec.toolCallId, JSON.stringify(spec.args), JSON.stringify(spec.turn), JSON.stringify(spec.surface), owner.instance, owner.pid, now);
  }

  get(approvalId: string): DeferredCall | undefined {
    const row = this.getStmt.get(approvalId) as Row | undefined;
    return row ? toCall(row) : undefined;
  }

  inState(...states: DeferredCallState[]): DeferredCall[] {
    const marks = states.map(() => '?').join(', ');
    return (this.db.prepare(`SELECT * FROM deferred_calls WHERE state IN (${marks}) ORDER BY created_at, approval_id`).all(...states) as Row[]).map(toCall);
  }

  /** The waiting turn gave up waiting (or died): anyone may run the call once it is decided. */
  defer(approvalId: string): boolean {
    return this.deferStmt.run(approvalId).changes === 1;
  }

  /** The waiting turn of `instance` got its decision in time and handles the call itself. */
  takeInline(approvalId: string, instance: string, now: number, outcome: string): boolean {
    return this.inlineStmt.run(now, JSON.stringify({ outcome, text: 'handled by its own turn' }), approvalId, instance).changes === 1;
  }

  /** Takes a deferred call to run it; false when another process (or click) got it first. */
  claim(approvalId: string, owner: { instance: string; pid: number }, now: number): boolean {
    return this.claimStmt.run(owner.instance, owner.pid, now, approvalId).changes === 1;
  }

  finish(approvalId: string, now: number, result: { outcome: string; text: string }): boolean {
    return this.endStmt.run('done', now, JSON.stringify(result), approvalId).changes === 1;
  }

  /** A running call whose runner died: it is never run again. */
  lose(approvalId: string, now: number, text: string): boolean {
    return this.endStmt.run('lost', now, JSON.stringify({ outcome: 'lost', text }), approvalId).changes === 1;
  }
}
