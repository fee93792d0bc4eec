import type { Database } from 'better-sqlite3';
import type { Migration } from '../store/migrations.js';
import type { ApprovalDecision, ApprovalOutcome, ApprovalRequest, ApprovalRequestInput } from './types.js';

/** Who a request acts for and how it came about (the card's "requested by the agent for …"), and what it rests on. */
export const approvalsOriginMigration: Migration = {
  id: 'approvals-001-requester-name-via-shown',
  up(db) {
    db.exec(`
      ALTER TABLE approvals ADD COLUMN requester_name TEXT;
      ALTER TABLE approvals ADD COLUMN via TEXT;
      ALTER TABLE approvals ADD COLUMN shown TEXT;  -- JSON, what the decision rests on (ApprovalRequestInput.shown)
    `);
  },
};

/** A scope's own approvers, fixed when the request is asked (`ApprovalRequest.approvers`). */
export const approvalsScopedApproversMigration: Migration = {
  id: 'approvals-002-scoped-approvers',
  up(db) {
    db.exec(`ALTER TABLE approvals ADD COLUMN approvers TEXT;  -- JSON list; NULL: the platform's approvers`);
  },
};

/** A stored request plus what only the service needs (grant spec, who is waiting). */
export interface LedgerEntry {
  request: ApprovalRequest;
  grant?: ApprovalRequestInput['grant'] | undefined;
  timeoutBehavior: 'deny' | 'allow';
  waiter?: { pid: number; instance: string; seenAt: number } | undefined;
  renderedAt?: number | undefined;
  shown?: unknown;
}

interface Row {
  id: string;
  kind: 'exec' | 'tool';
  agent_id: string;
  session_key: string;
  provider: string;
  channel_id: string | null;
  thread_id: string | null;
  requester_id: string | null;
  requester_name: string | null;
  via: 'agent' | 'command' | null;
  shown: string | null;
  tool: string;
  title: string;
  preview: string;
  full_text: string;
  facts: string;
  allowed_decisions: string;
  grant_spec: string | null;
  timeout_behavior: 'deny' | 'allow';
  created_at: number;
  expires_at: number;
  status: ApprovalRequest['status'];
  decided_by: string | null;
  decided_at: number | null;
  approvers?: string | null;
  waiter_pid: number | null;
  waiter_instance: string | null;
  waiter_seen_at: number | null;
  rendered_at: number | null;
}

function toEntry(r: Row): LedgerEntry {
  return {
    request: {
      id: r.id,
      kind: r.kind,
      agentId: r.agent_id,
      sessionKey: r.session_key,
      provider: r.provider,
      channelId: r.channel_id ?? undefined,
      threadId: r.thread_id ?? undefined,
      requesterId: r.requester_id ?? undefined,
      ...(r.approvers !== null && r.approvers !== undefined ? { approvers: JSON.parse(r.approvers) as string[] } : {}),
      ...(r.requester_name !== null ? { requesterName: r.requester_name } : {}),
      ...(r.via !== null ? { via: r.via } : {}),
      tool: r.tool,
      title: r.title,
      preview: r.preview,
      fullText: r.full_text,
      facts: JSON.parse(r.facts) as ApprovalRequest['facts'],
      allowedDecisions: JSON.parse(r.allowed_decisions) as ApprovalDecision[],
      createdAt: r.created_at,
      expiresAt: r.expires_at,
      status: r.status,
      decidedBy: r.decided_by ?? undefined,
      decidedAt: r.decided_at ?? undefined,
    },
    grant: r.grant_spec === null ? undefined : (JSON.parse(r.grant_spec) as LedgerEntry['grant']),
    timeoutBehavior: r.timeout_behavior,
    waiter:
      r.waiter_pid === null || r.waiter_instance === null ? undefined : { pid: r.waiter_pid, instance: r.waiter_instance, seenAt: r.waiter_seen_at ?? 0 },
    renderedAt: r.rendered_at ?? undefined,
    shown: r.shown === null ? undefined : (JSON.parse(r.shown) as unknown),
  };
}

/** The approvals table: plain reads and writes, no policy. Closing a request is atomic. */
export class ApprovalLedger {
  private readonly getStmt;
  private readonly closeStmt;
  constructor(private readonly db: Database) {
    this.getStmt = db.prepare('SELECT * FROM approvals WHERE id = ?');
    // The WHERE status = 'pending' makes the first writer win, across processes too.
    this.closeStmt = db.prepare("UPDATE approvals SET status = ?, decided_by = ?, decided_at = ? WHERE id = ? AND status = 'pending'");
  }

  insert(entry: LedgerEntry): void {
    const r = entry.request;
    this.db
      .prepare(
        `INSERT INTO approvals (id, kind, agent_id, session_key, provider, channel_id, thread_id, requester_id, requester_name, via, tool, title, preview,
           full_text, facts, allowed_decisions, grant_spec, timeout_behavior, created_at, expires_at, status, waiter_pid, waiter_instance, waiter_seen_at, shown, approvers)
         VALUES (@id, @kind, @agentId, @sessionKey, @provider, @channelId, @threadId, @requesterId, @requesterName, @via, @tool, @title, @preview,
           @fullText, @facts, @allowed, @grant, @timeoutBehavior, @createdAt, @expiresAt, @status, @pid, @instance, @seenAt, @shown, @approvers)`,
      )
      .run({
        id: r.id,
        kind: r.kind,
        agentId: r.agentId,
        sessionKey: r.sessionKey,
        provider: r.provider,
        channelId: r.channelId ?? null,
        threadId: r.threadId ?? null,
        requesterId: r.requesterId ?? null,
        approvers: r.approvers === undefined ? null : JSON.stringify(r.approvers),
        requesterName: r.requesterName ?? null,
        via: r.via ?? null,
        tool: r.tool,
        title: r.title,
        preview: r.preview,
        fullText: r.fullText,
        facts: JSON.stringify(r.facts),
        allowed: JSON.stringify(r.allowedDecisions),
        grant: entry.grant === undefined ? null : JSON.stringify(entry.grant),
        timeoutBehavior: entry.timeoutBehavior,
        createdAt: r.createdAt,
        expiresAt: r.expiresAt,
        status: r.status,
        pid: entry.waiter?.pid ?? null,
        instance: entry.waiter?.instance ?? null,
        seenAt: entry.waiter?.seenAt ?? null,
        shown: entry.shown === undefined ? null : JSON.stringify(entry.shown),
      });
  }

  get(id: string): LedgerEntry | undefined {
    const row = this.getStmt.get(id) as Row | undefined;
    return row ? toEntry(row) : undefined;
  }

  /** Closes a pending request; false when it was no longer pending (someone else won). */
  close(id: string, outcome: ApprovalOutcome, decidedBy: string | undefined, at: number): boolean {
    return this.closeStmt.run(outcome, decidedBy ?? null, at, id).changes === 1;
  }

  pending(): LedgerEntry[] {
    return (this.db.prepare("SELECT * FROM approvals WHERE status = 'pending' ORDER BY created_at, id").all() as Row[]).map(toEntry);
  }

  /** Closed requests, newest first. */
  history(filter: { sessionKey?: string; limit?: number } = {}): LedgerEntry[] {
    const limit = filter.limit ?? 100;
    const rows = (
      filter.sessionKey === undefined
        ? this.db.prepare("SELECT * FROM approvals WHERE status != 'pending' ORDER BY COALESCE(decided_at, created_at) DESC, id LIMIT ?").all(limit)
        : this.db
            .prepare("SELECT * FROM approvals WHERE status != 'pending' AND session_key = ? ORDER BY COALESCE(decided_at, created_at) DESC, id LIMIT ?")
            .all(filter.sessionKey, limit)
    ) as Row[];
    return rows.map(toEntry);
  }

  markRendered(id: string, at: number): void {
    this.db.prepare('UPDATE approvals SET rendered_at = COALESCE(rendered_at, ?) WHERE id = ?').run(at, id);
  }

  /** No call waits for the request any more (it was deferred): recovery must not interrupt it for a dead waiter. */
  clearWaiter(id: string): void {
    this.db.prepare('UPDATE approvals SET waiter_pid = NULL, waiter_instance = NULL, waiter_seen_at = NULL WHERE id = ?').run(id);
  }

  /** Refreshes the liveness stamp of every pending request this process waits for. */
  heartbeat(instance: string, at: number): void {
    this.db.prepare("UPDATE approvals SET waiter_seen_at = ? WHERE waiter_instance = ? AND status = 'pending'").run(at, instance);
  }
}
