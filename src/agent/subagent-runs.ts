import type { Database } from 'better-sqlite3';
import type { WardenConfig } from '../config/index.js';
import { buildTurnContext, conversationOf, intersectCeilings, type Actor } from '../gateway/turn-context.js';
import type { InheritedPolicy, TurnContext } from '../policy/context.js';
import type { Migration } from '../store/migrations.js';

/**
 * Subagent runs on disk, so a restart neither loses a parent's children nor their results.
 * Each row carries the child's persisted policy envelope (the parent's final surface as a
 * ceiling, its denies, the spawn depth and the parent key): a child turn after a restart is
 * built from it and never from a wider surface.
 */
export const subagentRunsMigration: Migration = {
  id: 'agent-001-subagent-runs',
  up(db) {
    db.exec(`
      CREATE TABLE subagent_runs (
        run_id           TEXT PRIMARY KEY,
        child_key        TEXT NOT NULL UNIQUE,
        parent_key       TEXT NOT NULL,
        agent_id         TEXT NOT NULL,
        label            TEXT NOT NULL,
        task             TEXT NOT NULL,
        depth            INTEGER NOT NULL CHECK (depth >= 1),
        role             TEXT NOT NULL CHECK (role IN ('orchestrator', 'leaf')),
        inherited_allow  TEXT,           -- JSON string[]; NULL: the parent had no restrictive allowlist
        inherited_deny   TEXT NOT NULL,  -- JSON string[]
        policy_version   INTEGER NOT NULL,
        turn             TEXT NOT NULL,  -- JSON: the child's TurnContext without the envelope
        status           TEXT NOT NULL CHECK (status IN ('running', 'done', 'failed', 'killed', 'interrupted')),
        result           TEXT,
        owner_pid        INTEGER NOT NULL,
        owner_instance   TEXT NOT NULL,
        started_at       INTEGER NOT NULL,
        ended_at         INTEGER,
        delivered_at     INTEGER         -- when the result went into a parent turn
      );
      CREATE INDEX subagent_runs_by_parent ON subagent_runs (parent_key, started_at);
      CREATE INDEX subagent_runs_by_status ON subagent_runs (status);
    `);
  },
};

/** The only envelope format a child turn trusts (OpenClaw's `inheritedToolPolicyVersion`). */
export const INHERITED_POLICY_VERSION = 1;

export type SubagentStatus = 'running' | 'done' | 'failed' | 'killed' | 'interrupted';
export type StoredSubagentRole = 'orchestrator' | 'leaf';

export interface SubagentRunRecord {
  runId: string;
  childKey: string;
  parentKey: string;
  agentId: string;
  label: string;
  task: string;
  depth: number;
  role: StoredSubagentRole;
  inherited: InheritedPolicy;
  policyVersion: number;
  /** The child's policy context as spawned, without `inherited` (that is the envelope above). */
  turn: Omit<TurnContext, 'inherited'>;
  status: SubagentStatus;
  result?: string | undefined;
  /** The process and runtime instance driving the run; a run whose owner is gone is interrupted. */
  owner: { pid: number; instance: string };
  startedAt: number;
  endedAt?: number | undefined;
  deliveredAt?: number | undefined;
}

interface Row {
  run_id: string;
  child_key: string;
  parent_key: string;
  agent_id: string;
  label: string;
  task: string;
  depth: number;
  role: StoredSubagentRole;
  inherited_allow: string | null;
  inherited_deny: string;
  policy_version: number;
  turn: string;
  status: SubagentStatus;
  result: string | null;
  owner_pid: number;
  owner_instance: string;
  started_at: number;
  ended_at: number | null;
  delivered_at: number | null;
}

export class SubagentRunStore {
  private readonly insertRow;
  private readonly byRunId;
  private readonly byChild;
  private readonly byParent;
  private readonly running;
  private readonly killRow;
  private readonly endRow;
  private readonly interruptRow;
  private readonly undelivered;
  private readonly markDelivered;

  constructor(private readonly db: Database) {
    this.insertRow = db.prepare(
      `INSERT INTO subagent_runs (run_id, child_key, parent_key, agent_id, label, task, depth, role, inherited_allow, inherited_deny,
         policy_version, turn, status, result, owner_pid, owner_instance, started_at, ended_at, delivered_at)
       VALUES (@run_id, @child_key, @parent_key, @agent_id, @label, @task, @depth, @role, @inherited_allow, @inherited_deny,
         @policy_version, @turn, @status, @result, @owner_pid, @owner_instance, @started_at, @ended_at, @delivered_at)`,
    );
    this.byRunId = db.prepare('SELECT * FROM subagent_runs WHERE run_id = ?');
    this.byChild = db.prepare('SELECT * FROM subagent_runs WHERE child_key = ?');
    this.byParent = db.prepare('SELECT * FROM subagent_runs WHERE parent_key = ? ORDER BY started_at, rowid');
    this.running = db.prepare("SELECT * FROM subagent_runs WHERE status = 'running' ORDER BY started_at, rowid");
    this.killRow = db.prepare("UPDATE subagent_runs SET status = 'killed' WHERE run_id = ? AND status = 'running'");
    // A run killed while its turn was finishing stays killed; the turn's reply is still its result.
    this.endRow = db.prepare(
      `UPDATE subagent_runs SET status = CASE WHEN status = 'running' THEN @status ELSE status END, result = @result, ended_at = @ended_at
       WHERE run_id = @run_id AND status IN ('running', 'killed')`,
    );
    this.interruptRow = db.prepare(
      "UPDATE subagent_runs SET status = 'interrupted', result = @result, ended_at = @ended_at WHERE run_id = @run_id AND status = 'running'",
    );
    this.undelivered = db.prepare(
      "SELECT * FROM subagent_runs WHERE parent_key = ? AND status != 'running' AND delivered_at IS NULL ORDER BY ended_at, rowid",
    );
    this.markDelivered = db.prepare('UPDATE subagent_runs SET delivered_at = ? WHERE run_id = ? AND delivered_at IS NULL');
  }

  insert(run: SubagentRunRecord): void {
    const { inherited: _i, ...turn } = run.turn as TurnContext;
    this.insertRow.run({
      run_id: run.runId,
      child_key: run.childKey,
      parent_key: run.parentKey,
      agent_id: run.agentId,
      label: run.label,
      task: run.task,
      depth: run.depth,
      role: run.role,
      inherited_allow: run.inherited.allow === undefined ? null : JSON.stringify(run.inherited.allow),
      inherited_deny: JSON.stringify(run.inherited.deny),
      policy_version: run.policyVersion,
      turn: JSON.stringify(turn),
      status: run.status,
      result: run.result ?? null,
      owner_pid: run.owner.pid,
      owner_instance: run.owner.instance,
      started_at: run.startedAt,
      ended_at: run.endedAt ?? null,
      delivered_at: run.deliveredAt ?? null,
    });
  }

  get(runId: string): SubagentRunRecord | undefined {
    return toRecord(this.byRunId.get(runId) as Row | undefined);
  }

  byChildKey(childKey: string): SubagentRunRecord | undefined {
    return toRecord(this.byChild.get(childKey) as Row | undefined);
  }

  /** Every run `parentKey` spawned, oldest first. */
  ofParent(parentKey: string): SubagentRunRecord[] {
    return (this.byParent.all(parentKey) as Row[]).map((r) => toRecord(r)!);
  }

  /** Marks a running run killed; false when it had already ended. */
  kill(runId: string): boolean {
    return this.killRow.run(runId).changes === 1;
  }

  /** Records how the run's turns ended (a killed run keeps its status). */
  end(runId: string, status: 'done' | 'failed', result: string, endedAt: number): void {
    this.endRow.run({ run_id: runId, status, result, ended_at: endedAt });
  }

  /**
   * Marks every running run whose owner is gone as interrupted, with `result` as what the
   * parent is told, and returns those runs as they are now.
   */
  interruptOrphans(isOrphan: (owner: SubagentRunRecord['owner']) => boolean, result: (run: SubagentRunRecord) => string, now: number): SubagentRunRecord[] {
    return this.db.transaction(() => {
      const orphans = (this.running.all() as Row[]).map((r) => toRecord(r)!).filter((r) => isOrphan(r.owner));
      for (const run of orphans) this.interruptRow.run({ run_id: run.runId, result: result(run), ended_at: now });
      return orphans.map((r) => this.get(r.runId)!);
    })();
  }

  /** The ended runs of `parentKey` whose results no parent turn has seen yet; marks them seen. */
  takeUndelivered(parentKey: string, now: number): SubagentRunRecord[] {
    return this.db.transaction(() => {
      const runs = (this.undelivered.all(parentKey) as Row[]).map((r) => toRecord(r)!);
      for (const run of runs) this.markDelivered.run(now, run.runId);
      return runs;
    })();
  }
}

function toRecord(row: Row | undefined): SubagentRunRecord | undefined {
  if (!row) return undefined;
  return {
    runId: row.run_id,
    childKey: row.child_key,
    parentKey: row.parent_key,
    agentId: row.agent_id,
    label: row.label,
    task: row.task,
    depth: row.depth,
    role: row.role,
    inherited: parseEnvelope(row.inherited_allow, row.inherited_deny),
    policyVersion: row.policy_version,
    turn: parseTurn(row.turn),
    status: row.status,
    result: row.result ?? undefined,
    owner: { pid: row.owner_pid, instance: row.owner_instance },
    startedAt: row.started_at,
    endedAt: row.ended_at ?? undefined,
    deliveredAt: row.delivered_at ?? undefined,
  };
}

/**
 * A stored list that does not parse as strings leaves the child an empty ceiling (no tools)
 * rather than no ceiling or no denies: fail closed.
 */
function parseEnvelope(allow: string | null, deny: string): InheritedPolicy {
  const denied = parseStrings(deny);
  const allowed = allow === null ? undefined : parseStrings(allow);
  if (denied === null || allowed === null) return { allow: [], deny: [] };
  return { ...(allowed === undefined ? {} : { allow: allowed }), deny: denied };
}

function parseStrings(json: string): string[] | null {
  try {
    const value: unknown = JSON.parse(json);
    if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value;
  } catch {
    // falls through to the closed answer
  }
  return null;
}

/** A context that does not parse fails the envelope check below (its agent does not match). */
function parseTurn(json: string): Omit<TurnContext, 'inherited'> {
  try {
    return JSON.parse(json) as Omit<TurnContext, 'inherited'>;
  } catch {
    return {} as Omit<TurnContext, 'inherited'>;
  }
}

export type EnvelopeCheck = { ok: true; turn: TurnContext } | { ok: false; reason: string };

/**
 * The policy context of a child turn that runs from the store (after a restart, or a message
 * another session sends it), or why it may not run. The envelope is trusted only with the known
 * version, a parent key and a depth ≥ 1; the turn is rebuilt by the context builder from the
 * stored conversation under the stored ceiling and depth (and `extra`, the ceiling of a sending
 * turn, when one is given). Nobody in the child's session wrote the message, so it never runs as
 * an owner (fail closed).
 */
export function childTurnFrom(
  config: WardenConfig,
  run: Pick<SubagentRunRecord, 'parentKey' | 'agentId' | 'depth' | 'policyVersion' | 'inherited' | 'turn'>,
  actingFor?: { sender: Actor; ceiling: InheritedPolicy },
): EnvelopeCheck {
  if (run.policyVersion !== INHERITED_POLICY_VERSION) return { ok: false, reason: `its stored tool policy has version ${run.policyVersion}, not ${INHERITED_POLICY_VERSION}` };
  if (!run.parentKey) return { ok: false, reason: 'its stored tool policy names no parent session' };
  if (!Number.isInteger(run.depth) || run.depth < 1) return { ok: false, reason: `its stored spawn depth ${run.depth} is not a subagent depth` };
  if (run.turn.agentId !== run.agentId || typeof run.turn.provider !== 'string' || typeof run.turn.chat !== 'string') {
    return { ok: false, reason: 'its stored policy context does not match the run' };
  }
  const stored = run.turn as TurnContext;
  return {
    ok: true,
    turn: buildTurnContext(config, {
      agentId: run.agentId,
      conversation: conversationOf(stored),
      sender: actingFor?.sender ?? { id: stored.senderId, name: stored.senderName, username: stored.senderUsername },
      mayBeOwner: false,
      model: stored.model,
      spawnDepth: run.depth,
      inherited: intersectCeilings(run.inherited, actingFor?.ceiling),
    }),
  };
}
