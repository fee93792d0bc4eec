import type { Db } from '../store/db.js';
import type { Migration } from '../store/migrations.js';
import type { ApprovalDecision, ApprovalOutcome, ApprovalRequest, ApprovalRequestInput, ApprovalVote } from './types.js';

/** Who a request acts for and how it came about (the card's "requested by the agent for …"), and what it rests on. */
export const approvalsOriginMigration: Migration = {
  id: 'approvals-001-requester-name-via-shown',
  async up(db) {
    await db.exec(`
      ALTER TABLE approvals ADD COLUMN requester_name TEXT;
      ALTER TABLE approvals ADD COLUMN via TEXT;
      ALTER TABLE approvals ADD COLUMN shown TEXT;  -- JSON, what the decision rests on (ApprovalRequestInput.shown)
    `);
  },
};

/** A scope's own approvers, fixed when the request is asked (`ApprovalRequest.approvers`). */
export const approvalsScopedApproversMigration: Migration = {
  id: 'approvals-002-scoped-approvers',
  async up(db) {
    await db.exec(`ALTER TABLE approvals ADD COLUMN approvers TEXT;  -- JSON list; NULL: the platform's approvers`);
  },
};

/** The asking turn's guild/team, so a click is checked against the same workspace (NULL: none, or older). */
export const approvalsGuildMigration: Migration = {
  id: 'approvals-005-guild',
  async up(db) {
    await db.exec(`ALTER TABLE approvals ADD COLUMN guild_id TEXT;`);
  },
};

/** Rules, quorum votes, deny reasons and escalation (approvals.rules). */
export const approvalsRulesMigration: Migration = {
  id: 'approvals-003-rules-quorum-escalation',
  async up(db) {
    await db.exec(`
      ALTER TABLE approvals ADD COLUMN rule TEXT;
      ALTER TABLE approvals ADD COLUMN quorum INTEGER;
      ALTER TABLE approvals ADD COLUMN votes TEXT;  -- JSON [{by, at}]
      ALTER TABLE approvals ADD COLUMN deny_reason TEXT;
      ALTER TABLE approvals ADD COLUMN escalate_at BIGINT;
      ALTER TABLE approvals ADD COLUMN escalate_to TEXT;  -- JSON list
      ALTER TABLE approvals ADD COLUMN escalated_at BIGINT;
      ALTER TABLE approvals ADD COLUMN timed_grant_sec INTEGER;
    `);
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
  guild_id?: string | null | undefined;
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
  rule?: string | null;
  quorum?: number | null;
  votes?: string | null;
  deny_reason?: string | null;
  escalate_at?: number | string | null;
  escalate_to?: string | null;
  escalated_at?: number | string | null;
  timed_grant_sec?: number | null;
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
      ...(r.guild_id !== null && r.guild_id !== undefined ? { guildId: r.guild_id } : {}),
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
      ...(r.rule ? { rule: r.rule } : {}),
      ...(r.quorum !== null && r.quorum !== undefined ? { quorum: Number(r.quorum) } : {}),
      ...(r.votes ? { votes: JSON.parse(r.votes) as ApprovalVote[] } : {}),
      ...(r.deny_reason ? { denyReason: r.deny_reason } : {}),
      ...(r.escalate_at !== null && r.escalate_at !== undefined ? { escalateAt: Number(r.escalate_at) } : {}),
      ...(r.escalate_to ? { escalateTo: JSON.parse(r.escalate_to) as string[] } : {}),
      ...(r.escalated_at !== null && r.escalated_at !== undefined ? { escalatedAt: Number(r.escalated_at) } : {}),
      ...(r.timed_grant_sec !== null && r.timed_grant_sec !== undefined ? { timedGrantSec: Number(r.timed_grant_sec) } : {}),
    },
    grant: r.grant_spec === null ? undefined : (JSON.parse(r.grant_spec) as LedgerEntry['grant']),
    timeoutBehavior: r.timeout_behavior,
    waiter:
      r.waiter_pid === null || r.waiter_instance === null ? undefined : { pid: r.waiter_pid, instance: r.waiter_instance, seenAt: r.waiter_seen_at ?? 0 },
    renderedAt: r.rendered_at ?? undefined,
    shown: r.shown === null ? undefined : (JSON.parse(r.shown) as unknown),
  };
}

const INSERT = `INSERT INTO approvals (id, kind, agent_id, session_key, provider, channel_id, thread_id, requester_id, requester_name, via, tool, title, preview,
    full_text, facts, allowed_decisions, grant_spec, timeout_behavior, created_at, expires_at, status, waiter_pid, waiter_instance, waiter_seen_at, shown, approvers,
    rule, quorum, escalate_at, escalate_to, timed_grant_sec, guild_id)
  VALUES (@id, @kind, @agentId, @sessionKey, @provider, @channelId, @threadId, @requesterId, @requesterName, @via, @tool, @title, @preview,
    @fullText, @facts, @allowed, @grant, @timeoutBehavior, @createdAt, @expiresAt, @status, @pid, @instance, @seenAt, @shown, @approvers,
    @rule, @quorum, @escalateAt, @escalateTo, @timedGrantSec, @guildId)`;

/** The approvals table: plain reads and writes, no policy. Closing a request is atomic. */
export class ApprovalLedger {
  constructor(private readonly db: Db) {}

  async insert(entry: LedgerEntry): Promise<void> {
    const r = entry.request;
    await this.db.run(INSERT, {
      id: r.id,
      kind: r.kind,
      agentId: r.agentId,
      sessionKey: r.sessionKey,
      provider: r.provider,
      channelId: r.channelId ?? null,
      threadId: r.threadId ?? null,
      guildId: r.guildId ?? null,
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
      rule: r.rule ?? null,
      quorum: r.quorum ?? null,
      escalateAt: r.escalateAt ?? null,
      escalateTo: r.escalateTo === undefined ? null : JSON.stringify(r.escalateTo),
      timedGrantSec: r.timedGrantSec ?? null,
    });
  }

  /** `lock`: inside a transaction, hold the row until it ends (a close elsewhere waits for it). */
  async get(id: string, options: { lock?: boolean } = {}): Promise<LedgerEntry | undefined> {
    const row = await this.db.get<Row>(`SELECT * FROM approvals WHERE id = ?${options.lock ? this.db.forUpdate : ''}`, [id]);
    return row ? toEntry(row) : undefined;
  }

  /** Closes a pending request; false when it was no longer pending (someone else won). */
  async close(id: string, outcome: ApprovalOutcome, decidedBy: string | undefined, at: number, extra: { votes?: ApprovalVote[]; denyReason?: string | undefined } = {}): Promise<boolean> {
    // The WHERE status = 'pending' makes the first writer win, across processes too. The plain
    // close keeps its statement; a quorum's votes or a deny's reason ride in the same one write.
    const info =
      extra.votes === undefined && extra.denyReason === undefined
        ? await this.db.run("UPDATE approvals SET status = ?, decided_by = ?, decided_at = ? WHERE id = ? AND status = 'pending'", [outcome, decidedBy ?? null, at, id])
        : await this.db.run("UPDATE approvals SET status = ?, decided_by = ?, decided_at = ?, votes = COALESCE(?, votes), deny_reason = ? WHERE id = ? AND status = 'pending'", [
            outcome,
            decidedBy ?? null,
            at,
            extra.votes === undefined ? null : JSON.stringify(extra.votes),
            extra.denyReason ?? null,
            id,
          ]);
    return info.changes === 1;
  }

  /**
   * Records a vote towards a quorum: one conditional write that succeeds only while the request
   * is pending and its votes are still those the caller read (`before`), so two votes read at
   * once cannot both be counted against the same list; the loser reads again.
   */
  async vote(id: string, before: readonly ApprovalVote[], after: readonly ApprovalVote[]): Promise<boolean> {
    const was = before.length === 0 ? null : JSON.stringify(before);
    const info = await this.db.run(
      was === null
        ? "UPDATE approvals SET votes = ? WHERE id = ? AND status = 'pending' AND votes IS NULL"
        : "UPDATE approvals SET votes = ? WHERE id = ? AND status = 'pending' AND votes = ?",
      was === null ? [JSON.stringify(after), id] : [JSON.stringify(after), id, was],
    );
    return info.changes === 1;
  }

  /** Marks a pending request escalated; true for the one writer that did it (once across instances). */
  async escalate(id: string, at: number): Promise<boolean> {
    const info = await this.db.run("UPDATE approvals SET escalated_at = ? WHERE id = ? AND status = 'pending' AND escalated_at IS NULL", [at, id]);
    return info.changes === 1;
  }

  async pending(): Promise<LedgerEntry[]> {
    return (await this.db.all<Row>("SELECT * FROM approvals WHERE status = 'pending' ORDER BY created_at, id")).map(toEntry);
  }

  /** Closed requests, newest first. */
  async history(filter: { sessionKey?: string; limit?: number } = {}): Promise<LedgerEntry[]> {
    const limit = filter.limit ?? 100;
    const rows =
      filter.sessionKey === undefined
        ? await this.db.all<Row>("SELECT * FROM approvals WHERE status != 'pending' ORDER BY COALESCE(decided_at, created_at) DESC, id LIMIT ?", [limit])
        : await this.db.all<Row>("SELECT * FROM approvals WHERE status != 'pending' AND session_key = ? ORDER BY COALESCE(decided_at, created_at) DESC, id LIMIT ?", [
            filter.sessionKey,
            limit,
          ]);
    return rows.map(toEntry);
  }

  async markRendered(id: string, at: number): Promise<void> {
    await this.db.run('UPDATE approvals SET rendered_at = COALESCE(rendered_at, ?) WHERE id = ?', [at, id]);
  }

  /** No call waits for the request any more (it was deferred): recovery must not interrupt it for a dead waiter. */
  async clearWaiter(id: string): Promise<void> {
    await this.db.run('UPDATE approvals SET waiter_pid = NULL, waiter_instance = NULL, waiter_seen_at = NULL WHERE id = ?', [id]);
  }

  /** Refreshes the liveness stamp of every pending request this process waits for. */
  async heartbeat(instance: string, at: number): Promise<void> {
    await this.db.run("UPDATE approvals SET waiter_seen_at = ? WHERE waiter_instance = ? AND status = 'pending'", [at, instance]);
  }

  /** The grant an allow-always decision of this request created, if any. */
  async grantOf(id: string): Promise<string | undefined> {
    return (await this.db.value<string>('SELECT id FROM grants WHERE approval_id = ?', [id])) ?? undefined;
  }
}
