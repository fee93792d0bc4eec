import { log } from '../log/log.js';
import { scrubDeep, scrubSecrets } from '../redact/scrub.js';
import type { Db } from './db.js';

/** One line of the audit ledger: who did what to which subject. */
export interface AuditEvent {
  id: number;
  at: number;
  type: string;
  actor?: string | undefined;
  subject?: string | undefined;
  sessionKey?: string | undefined;
  data: Record<string, unknown>;
}

export type AuditInput = Omit<AuditEvent, 'id' | 'at'> & { at?: number };

interface Row {
  id: number;
  at: number;
  type: string;
  actor: string | null;
  subject: string | null;
  session_key: string | null;
  data: string;
}

/** Append-only audit events (approvals, decisions, grants, blocked calls). */
export class AuditLog {
  constructor(private readonly db: Db) {}

  /** Appends an event; resolves to its id. */
  async record(event: AuditInput): Promise<number> {
    const row = await this.db.get<{ id: number }>(
      'INSERT INTO audit_events (at, type, actor, subject, session_key, data) VALUES (@at, @type, @actor, @subject, @sessionKey, @data) RETURNING id',
      {
        at: event.at ?? Date.now(),
        type: event.type,
        actor: event.actor === undefined ? null : scrubSecrets(event.actor),
        subject: event.subject === undefined ? null : scrubSecrets(event.subject),
        sessionKey: event.sessionKey ?? null,
        // A row names what happened, never a secret it was about.
        data: JSON.stringify(scrubDeep(event.data ?? {})),
      },
    );
    return Number(row!.id);
  }

  /** Appends an event without waiting for the write (a path that must not stall on the ledger); a failed write is logged. */
  note(event: AuditInput): void {
    this.record(event).catch((err: unknown) => log.error({ err, type: event.type }, 'audit event not recorded'));
  }

  /** Appends an event and waits for the write; a failed write is logged, not thrown (the action it records has happened). */
  async recordOrLog(event: AuditInput): Promise<void> {
    await this.record(event).catch((err: unknown) => log.error({ err, type: event.type }, 'audit event not recorded'));
  }

  /** Newest last; filter by subject (an approval id, a grant id) or type prefix. */
  async list(filter: { subject?: string; typePrefix?: string; limit?: number } = {}): Promise<AuditEvent[]> {
    const where: string[] = [];
    const params: Record<string, string | number> = { limit: filter.limit ?? 1000 };
    if (filter.subject !== undefined) {
      where.push('subject = @subject');
      params.subject = filter.subject;
    }
    if (filter.typePrefix !== undefined) {
      where.push("type LIKE @prefix ESCAPE '\\'");
      params.prefix = `${filter.typePrefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    }
    const sql = `SELECT * FROM (SELECT * FROM audit_events ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT @limit) AS newest ORDER BY id`;
    return (await this.db.all<Row>(sql, params)).map((r) => ({
      id: r.id,
      at: r.at,
      type: r.type,
      actor: r.actor ?? undefined,
      subject: r.subject ?? undefined,
      sessionKey: r.session_key ?? undefined,
      data: JSON.parse(r.data) as Record<string, unknown>,
    }));
  }
}
