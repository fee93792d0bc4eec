import { randomUUID } from 'node:crypto';
import { bindingChange } from '../exec/binding-change.js';
import type { BoundFile } from '../exec/file-binding.js';
import type { Migration } from '../store/migrations.js';
import type { AuditLog } from '../store/audit.js';
import type { Db } from '../store/db.js';
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
  session_key?: string | null;
  rule_key?: string | null;
}

/** `approvals-002-grant-bound-files`: hook and policy grants bind the files their arguments name (JSON BoundFile[]). */
export const grantBoundFilesMigration: Migration = {
  id: 'approvals-002-grant-bound-files',
  async up(db) {
    await db.exec('ALTER TABLE grants ADD COLUMN bound_files TEXT');
  },
};

/** Scoped grants: "allow for this conversation" (session_key) and grants given under a rule (rule_key). */
export const grantScopeMigration: Migration = {
  id: 'approvals-004-grant-scope',
  async up(db) {
    await db.exec(`
      ALTER TABLE grants ADD COLUMN session_key TEXT;
      ALTER TABLE grants ADD COLUMN rule_key TEXT;
    `);
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
  ...(r.session_key ? { sessionKey: r.session_key } : {}),
  ...(r.rule_key ? { ruleKey: r.rule_key } : {}),
});

/** Whether a grant still counts at `now`. */
export const isLive = (g: Grant, now: number): boolean => g.revokedAt === undefined && (g.expiresAt === undefined || g.expiresAt > now);

export type RevokeResult = { kind: 'revoked'; grant: Grant } | { kind: 'already-revoked'; grant: Grant } | { kind: 'not-found'; id: string };

/** allow-always grants: stored, matched, listed and revoked; every change is audited. */
export class GrantStore {
  constructor(
    private readonly db: Db,
    private readonly audit: AuditLog,
    private readonly now: () => number = Date.now,
  ) {}

  async create(input: Omit<Grant, 'id' | 'createdAt' | 'revokedAt' | 'revokedBy' | 'lastUsedAt'>): Promise<Grant> {
    const grant: Grant = { ...input, id: `g_${randomUUID()}`, createdAt: this.now() };
    await this.db.run(
      `INSERT INTO grants (id, agent_id, tool, pattern, arg_pattern, approval_id, created_by, created_at, expires_at, bound_files, session_key, rule_key)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        grant.id,
        grant.agentId,
        grant.tool,
        grant.pattern,
        grant.argPattern ?? null,
        grant.approvalId ?? null,
        grant.createdBy,
        grant.createdAt,
        grant.expiresAt ?? null,
        JSON.stringify(grant.boundFiles ?? []),
        grant.sessionKey ?? null,
        grant.ruleKey ?? null,
      ],
    );
    await this.audit.record({ type: 'grant.created', subject: grant.id, actor: grant.createdBy, data: { ...grant } });
    return grant;
  }

  async get(id: string): Promise<Grant | undefined> {
    const row = await this.db.get<Row>('SELECT * FROM grants WHERE id = ?', [id]);
    return row ? toGrant(row) : undefined;
  }

  /** Newest first. By default only live grants; `all` includes revoked and expired ones. */
  async list(filter: { agentId?: string; all?: boolean } = {}): Promise<Grant[]> {
    const rows =
      filter.agentId === undefined
        ? await this.db.all<Row>('SELECT * FROM grants ORDER BY created_at DESC, id')
        : await this.db.all<Row>('SELECT * FROM grants WHERE agent_id = ? ORDER BY created_at DESC, id', [filter.agentId]);
    const now = this.now();
    return rows.map(toGrant).filter((g) => filter.all === true || isLive(g, now));
  }

  async revoke(id: string, by: string): Promise<RevokeResult> {
    const info = await this.db.run('UPDATE grants SET revoked_at = ?, revoked_by = ? WHERE id = ? AND revoked_at IS NULL', [this.now(), by, id]);
    const grant = await this.get(id);
    if (!grant) return { kind: 'not-found', id };
    if (info.changes === 0) return { kind: 'already-revoked', grant };
    await this.audit.record({ type: 'grant.revoked', subject: id, actor: by, data: { tool: grant.tool, agentId: grant.agentId } });
    return { kind: 'revoked', grant };
  }

  /**
   * The live grant that covers a call, if any: same agent and tool, `pattern` matching the
   * target, `argPattern` (when set) matching the argument text, and the files the call names
   * (`boundFiles`, as they are now) the same by path, target and content as when it was
   * approved. Marks it used.
   */
  async match(call: { agentId: string; tool: string; target: string; args?: string; boundFiles?: readonly BoundFile[]; sessionKey?: string | undefined; ruleKey?: string | undefined }): Promise<Grant | undefined> {
    const now = this.now();
    const rows = await this.db.all<Row>(
      'SELECT * FROM grants WHERE agent_id = ? AND tool = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?) ORDER BY created_at',
      [call.agentId, call.tool, now],
    );
    for (const grant of rows.map(toGrant)) {
      // A conversation grant covers its own conversation only; a rule's grant only calls under that same rule, and a grant given under no rule never answers a rule.
      if (grant.sessionKey !== undefined && grant.sessionKey !== call.sessionKey) continue;
      if (grant.ruleKey !== call.ruleKey) continue;
      if (!globMatch(grant.pattern, call.target)) continue;
      if (grant.argPattern !== undefined && !globMatch(grant.argPattern, call.args ?? '')) continue;
      const files = call.boundFiles ?? [];
      if (grant.boundFiles === undefined ? files.length > 0 : bindingChange(grant.boundFiles, files) !== null) continue;
      await this.db.run('UPDATE grants SET last_used_at = ? WHERE id = ?', [now, grant.id]);
      await this.audit.record({ type: 'grant.used', subject: grant.id, data: { tool: call.tool, agentId: call.agentId, target: call.target } });
      return { ...grant, lastUsedAt: now };
    }
    return undefined;
  }
}
