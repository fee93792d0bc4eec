import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import type { Migration } from '../store/migrations.js';
import type { AllowlistEntry } from './allowlist.js';
import type { BoundFile } from './content-binding.js';

/**
 * Stored exec allowlist entries per agent: allow-always grants and imported OpenClaw entries.
 * Config entries (`tools.exec.allowlist`) are not stored; the gate puts them first.
 * The table comes from the store's first migration; `exec-001-allowlist` adds what the exec
 * tool records about use.
 */
export const execAllowlistMigration: Migration = {
  id: 'exec-001-allowlist',
  up(db) {
    db.exec(`
      ALTER TABLE exec_allowlist ADD COLUMN last_used_command TEXT;
      ALTER TABLE exec_allowlist ADD COLUMN last_resolved_path TEXT;
      CREATE INDEX exec_allowlist_by_agent ON exec_allowlist (agent_id, created_at);
    `);
  },
};

/**
 * `exec-002-bound-files`: allow-always grants bind the script files they ran by content (JSON
 * `[{path, realPath, sha256}]`). Rows from before keep NULL, which the gate reads as "approved
 * before content binding": such a grant still covers a command that runs no script file, and
 * asks again for one that does.
 */
export const execBoundFilesMigration: Migration = {
  id: 'exec-002-bound-files',
  up(db) {
    db.exec('ALTER TABLE exec_allowlist ADD COLUMN bound_files TEXT');
  },
};

/** Entries under this agent id apply to every agent (OpenClaw's `agents["*"]`). */
export const ANY_AGENT = '*';

export interface StoredAllowlistEntry extends AllowlistEntry {
  id: string;
  agentId: string;
  source: 'allow-always' | 'import';
  createdAt: number;
  lastUsedCommand?: string | undefined;
  lastResolvedPath?: string | undefined;
}

interface Row {
  id: string;
  agent_id: string;
  pattern: string;
  arg_pattern: string | null;
  source: string;
  created_at: number;
  last_used_at: number | null;
  expires_at: number | null;
  last_used_command: string | null;
  last_resolved_path: string | null;
  /** Absent on a database the migration has not reached (a read-only open). */
  bound_files?: string | null;
}

const toEntry = (row: Row): StoredAllowlistEntry => ({
  id: row.id,
  agentId: row.agent_id,
  pattern: row.pattern,
  argPattern: row.arg_pattern ?? undefined,
  source: row.source === 'import' ? 'import' : 'allow-always',
  createdAt: row.created_at,
  expiresAt: row.expires_at ?? undefined,
  lastUsedAt: row.last_used_at ?? undefined,
  lastUsedCommand: row.last_used_command ?? undefined,
  lastResolvedPath: row.last_resolved_path ?? undefined,
  boundFiles: parseBoundFiles(row.bound_files),
});

/** A row that cannot be read as a list of files binds content that no file has: it never matches one. */
function parseBoundFiles(raw: string | null | undefined): BoundFile[] | undefined {
  if (raw === null || raw === undefined) return undefined;
  try {
    const parsed = JSON.parse(raw) as unknown;
    if (Array.isArray(parsed) && parsed.every(isBoundFile)) return parsed;
  } catch {
    // fall through
  }
  return [{ path: '(unreadable binding)', realPath: null, sha256: 'unreadable' }];
}

function isBoundFile(v: unknown): v is BoundFile {
  if (typeof v !== 'object' || v === null) return false;
  const f = v as Record<string, unknown>;
  return typeof f.path === 'string' && (f.realPath === null || typeof f.realPath === 'string') && (f.sha256 === null || typeof f.sha256 === 'string');
}

export interface AddEntryInput {
  pattern: string;
  argPattern?: string | undefined;
  source: 'allow-always' | 'import';
  expiresAt?: number | undefined;
  lastUsedAt?: number | undefined;
  lastUsedCommand?: string | undefined;
  lastResolvedPath?: string | undefined;
  /** allow-always: the script files approved, by content; absent = none. */
  boundFiles?: readonly BoundFile[] | undefined;
}

export class ExecAllowlistStore {
  constructor(
    private readonly db: Database,
    private readonly now: () => number = Date.now,
  ) {}

  /** Live entries for an agent: the `*` agent's first, then its own, oldest first. */
  list(agentId: string): StoredAllowlistEntry[] {
    const rows = this.db
      .prepare(
        `SELECT * FROM exec_allowlist WHERE agent_id IN (?, ?) AND (expires_at IS NULL OR expires_at > ?)
         ORDER BY agent_id = ? DESC, created_at, rowid`,
      )
      .all(agentId, ANY_AGENT, this.now(), ANY_AGENT) as Row[];
    return rows.map(toEntry);
  }

  /** Every entry of every agent, expired ones included (for export and audit). */
  all(): StoredAllowlistEntry[] {
    return (this.db.prepare('SELECT * FROM exec_allowlist ORDER BY agent_id, created_at, rowid').all() as Row[]).map(toEntry);
  }

  /**
   * Adds an entry, or updates the one with the same pattern and argPattern (a fresh expiry and
   * use stamp, and the content approved this time), so repeated allow-always clicks do not pile
   * up rows.
   */
  add(agentId: string, input: AddEntryInput): StoredAllowlistEntry {
    const at = this.now();
    // Every new allow-always grant records what it binds, an empty list included: NULL means "from before binding".
    const bound = input.source === 'allow-always' ? JSON.stringify(input.boundFiles ?? []) : null;
    const write = this.db.transaction((): string => {
      const existing = this.db
        .prepare('SELECT id FROM exec_allowlist WHERE agent_id = ? AND pattern = ? AND arg_pattern IS ?')
        .pluck()
        .get(agentId, input.pattern, input.argPattern ?? null) as string | undefined;
      if (existing) {
        this.db
          .prepare('UPDATE exec_allowlist SET source = ?, expires_at = ?, last_used_at = coalesce(?, last_used_at), bound_files = ? WHERE id = ?')
          .run(input.source, input.expiresAt ?? null, input.lastUsedAt ?? null, bound, existing);
        return existing;
      }
      const id = randomUUID();
      this.db
        .prepare(
          `INSERT INTO exec_allowlist (id, agent_id, pattern, arg_pattern, source, created_at, last_used_at, expires_at, last_used_command, last_resolved_path, bound_files)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(id, agentId, input.pattern, input.argPattern ?? null, input.source, at, input.lastUsedAt ?? null, input.expiresAt ?? null, input.lastUsedCommand ?? null, input.lastResolvedPath ?? null, bound);
      return id;
    });
    const id = write();
    return toEntry(this.db.prepare('SELECT * FROM exec_allowlist WHERE id = ?').get(id) as Row);
  }

  markUsed(id: string, command: string, resolvedPath: string | null): void {
    this.db
      .prepare('UPDATE exec_allowlist SET last_used_at = ?, last_used_command = ?, last_resolved_path = ? WHERE id = ?')
      .run(this.now(), command, resolvedPath, id);
  }

  remove(id: string): boolean {
    return this.db.prepare('DELETE FROM exec_allowlist WHERE id = ?').run(id).changes > 0;
  }
}

/**
 * Every stored entry in a database file, opened read-only and only when it exists (for
 * `warden audit`, which must not create or migrate the data dir).
 */
export function readStoredAllowlist(file: string): { ok: true; entries: StoredAllowlistEntry[] } | { ok: false; error: string } {
  if (!existsSync(file)) return { ok: true, entries: [] };
  let db: Database | undefined;
  try {
    db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
    const hasTable = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'exec_allowlist'").get();
    return { ok: true, entries: hasTable ? new ExecAllowlistStore(db).all() : [] };
  } catch (err) {
    return { ok: false, error: `cannot read the stored allowlist in ${file}: ${(err as Error).message}` };
  } finally {
    db?.close();
  }
}
