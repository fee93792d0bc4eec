import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { bindingChange, type BoundFile } from '../exec/content-binding.js';
import type { Migration } from '../store/migrations.js';
import type { AuditLog } from '../store/audit.js';
import { globMatch } from './glob.js';
import type { Grant } from './types.js';

interface Row {
  id: string;
  agent_id: string;
  tool: string;
  pattern: string;
  arg_pattern: string | null;
  approval_id: string | null;
  created_by: string;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
  revoked_by: string | null;
  last_used_at: number | null;
  bound_files?: string | null;
}

/** `approvals-002-grant-bound-files`: hook and policy grants bind the files their arguments name (JSON BoundFile[]). */
export const grantBoundFilesMigration: Migration = {
  id: 'approvals-002-grant-bound-files',
  up(db) {
    db.exec('ALTER TABLE grants ADD COLUMN bound_files TEXT');
  },
};

/** A binding that cannot be read binds content no file has: the grant never matches a call that names a file. */
function parseBoundFiles(raw: string | null | undefined): BoundFile[] | undefined {
  if (raw === null || raw === undefined) return undefined;
  try {
    const parsed = JSON.parse(raw) as unknown;
    if (Array.isArray(parsed) && parsed.every((f) => typeof f?.path === 'string' && (f.realPath === null || typeof f.realPath === 'string') && (f.sha256 === null || typeof f.sha256 === 'string'))) {
      return parsed as BoundFile[];
    }
  } catch {
    // fall through
  }
  return [{ path: '(unreadable binding)', realPath: null, sha256: 'unreadable' }];
}

const toGrant = (r: Row): Grant => ({
  id: r.id,
  agentId: r.agent_id,
  tool: r.tool,
  pattern: r.pattern,
  argPattern: r.arg_pattern ?? undefined,
  approvalId: r.approval_id ?? undefined,
  createdBy: r.created_by,
  createdAt: r.created_at,
  expiresAt: r.expires_at ?? undefined,
  revokedAt: r.revoked_at ?? undefined,
  revokedBy: r.revoked_by ?? undefined,
  lastUsedAt: r.last_used_at ?? undefined,
  boundFiles: parseBoundFiles(r.bound_files),
});

/** Whether a grant still counts at `now`. */
export const isLive = (g: Grant, now: number): boolean => g.revokedAt === undefined && (g.expiresAt === undefined || g.expiresAt > now);

export type RevokeResult = { kind: 'revoked'; grant: Grant } | { kind: 'already-revoked'; grant: Grant } | { kind: 'not-found'; id: string };

/** allow-always grants: stored, matched, listed and revoked; every change is audited. */
export class GrantStore {
  constructor(
    private readonly db: Database,
    private readonly audit: AuditLog,
    private readonly now: () => number = Date.now,
  ) {}

  create(input: Omit<Grant, 'id' | 'createdAt' | 'revokedAt' | 'revokedBy' | 'lastUsedAt'>): Grant {
    const grant: Grant = { ...input, id: `g_${randomUUID()}`, createdAt: this.now() };
    this.db
      .prepare(
        `INSERT INTO grants (id, agent_id, tool, pattern, arg_pattern, approval_id, created_by, created_at, expires_at, bound_files)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(grant.id, grant.agentId, grant.tool, grant.pattern, grant.argPattern ?? null, grant.approvalId ?? null, grant.createdBy, grant.createdAt, grant.expiresAt ?? null, JSON.stringify(grant.boundFiles ?? []));
    this.audit.record({ type: 'grant.created', subject: grant.id, actor: grant.createdBy, data: { ...grant } });
    return grant;
  }

  get(id: string): Grant | undefined {
    const row = this.db.prepare('SELECT * FROM grants WHERE id = ?').get(id) as Row | undefined;
    return row ? toGrant(row) : undefined;
  }

  /** Newest first. By default only live grants; `all` includes revoked and expired ones. */
  list(filter: { agentId?: string; all?: boolean } = {}): Grant[] {
    const rows = (
      filter.agentId === undefined
        ? this.db.prepare('SELECT * FROM grants ORDER BY created_at DESC, id').all()
        : this.db.prepare('SELECT * FROM grants WHERE agent_id = ? ORDER BY created_at DESC, id').all(filter.agentId)
    ) as Row[];
    const now = this.now();
    return rows.map(toGrant).filter((g) => filter.all === true || isLive(g, now));
  }

  revoke(id: string, by: string): RevokeResult {
    const info = this.db.prepare('UPDATE grants SET revoked_at = ?, revoked_by = ? WHERE id = ? AND revoked_at IS NULL').run(this.now(), by, id);
    const grant = this.get(id);
    if (!grant) return { kind: 'not-found', id };
    if (info.changes === 0) return { kind: 'already-revoked', grant };
    this.audit.record({ type: 'grant.revoked', subject: id, actor: by, data: { tool: grant.tool, agentId: grant.agentId } });
    return { kind: 'revoked', grant };
  }

  /**
   * The live grant that covers a call, if any: same agent and tool, `pattern` matching the
   * target, `argPattern` (when set) matching the argument text, and the files the call names
   * (`boundFiles`, as they are now) the same by path, target and content as when it was
   * approved. Marks it used.
   */
  match(call: { agentId: string; tool: string; target: string; args?: string; boundFiles?: readonly BoundFile[] }): Grant | undefined {
    const now = this.now();
    const rows = this.db
      .prepare('SELECT * FROM grants WHERE agent_id = ? AND tool = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?) ORDER BY created_at')
      .all(call.agentId, call.tool, now) as Row[];
    for (const grant of rows.map(toGrant)) {
      if (!globMatch(grant.pattern, call.target)) continue;
      if (grant.argPattern !== undefined && !globMatch(grant.argPattern, call.args ?? '')) continue;
      const files = call.boundFiles ?? [];
      if (grant.boundFiles === undefined ? files.length > 0 : bindingChange(grant.boundFiles, files) !== null) continue;
      this.db.prepare('UPDATE grants SET last_used_at = ? WHERE id = ?').run(now, grant.id);
      this.audit.record({ type: 'grant.used', subject: grant.id, data: { tool: call.tool, agentId: call.agentId, target: call.target } });
      return { ...grant, lastUsedAt: now };
    }
    return undefined;
  }
}
