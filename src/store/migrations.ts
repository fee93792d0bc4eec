import type { Database } from 'better-sqlite3';
import { execAllowlistMigration, execBoundFilesMigration } from '../exec/allowlist-store.js';
import { cron001, cron002 } from '../cron/migrations.js';
import { gatewayCardsMigration } from '../gateway/card-store.js';
import { subagentRunsMigration } from '../agent/subagent-runs.js';
import { sessionContextsMigration } from '../agent/session-contexts.js';
import { nodesMigration } from '../gateway/nodes/store.js';
import { webInboundMigration } from '../../adapters/web/migrations.js';
import { grantBoundFilesMigration } from '../approvals/grants.js';
import { approvalsOriginMigration, approvalsScopedApproversMigration } from '../approvals/ledger.js';
import { deferredCallsMigration } from '../approvals/deferred.js';

/**
 * One schema change. Ids are recorded in `schema_migrations` once applied, so an entry must
 * never change after it has shipped: add a new one instead. Ids start with the area that owns
 * them (`callpath-…`, `exec-…`) so parallel work does not collide.
 */
export interface Migration {
  id: string;
  up(db: Database): void;
}

const callpath001: Migration = {
  id: 'callpath-001-sessions-transcript-approvals-grants-audit',
  up(db) {
    db.exec(`
      CREATE TABLE sessions (
        key         TEXT PRIMARY KEY,
        agent_id    TEXT NOT NULL,
        provider    TEXT NOT NULL,
        created_at  INTEGER NOT NULL,
        updated_at  INTEGER NOT NULL
      );

      CREATE TABLE transcript_entries (
        id            INTEGER PRIMARY KEY AUTOINCREMENT,
        session_key   TEXT NOT NULL,
        role          TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool', 'system')),
        tool          TEXT,
        tool_call_id  TEXT,
        content       TEXT NOT NULL,  -- JSON: ToolContent[] or a text string
        details       TEXT,           -- JSON, capped; never sent to the model
        is_error      INTEGER NOT NULL DEFAULT 0,
        created_at    INTEGER NOT NULL
      );
      CREATE INDEX transcript_by_session ON transcript_entries (session_key, id);

      CREATE TABLE approvals (
        id                 TEXT PRIMARY KEY,
        kind               TEXT NOT NULL CHECK (kind IN ('exec', 'tool')),
        agent_id           TEXT NOT NULL,
        session_key        TEXT NOT NULL,
        provider           TEXT NOT NULL,
        channel_id         TEXT,
        thread_id          TEXT,
        requester_id       TEXT,
        tool               TEXT NOT NULL,
        title              TEXT NOT NULL,
        preview            TEXT NOT NULL,
        full_text          TEXT NOT NULL,
        facts              TEXT NOT NULL,  -- JSON [{label, value}]
        allowed_decisions  TEXT NOT NULL,  -- JSON ApprovalDecision[]
        grant_spec         TEXT,           -- JSON {pattern, argPattern?, ttlMs?}
        timeout_behavior   TEXT NOT NULL DEFAULT 'deny',
        created_at         INTEGER NOT NULL,
        expires_at         INTEGER NOT NULL,
        status             TEXT NOT NULL,
        decided_by         TEXT,
        decided_at         INTEGER,
        waiter_pid         INTEGER,
        waiter_instance    TEXT,
        waiter_seen_at     INTEGER,
        rendered_at        INTEGER
      );
      CREATE INDEX approvals_by_status ON approvals (status, expires_at);
      CREATE INDEX approvals_by_session ON approvals (session_key, created_at);

      CREATE TABLE grants (
        id            TEXT PRIMARY KEY,
        agent_id      TEXT NOT NULL,
        tool          TEXT NOT NULL,
        pattern       TEXT NOT NULL,
        arg_pattern   TEXT,
        approval_id   TEXT,
        created_by    TEXT NOT NULL,
        created_at    INTEGER NOT NULL,
        expires_at    INTEGER,
        revoked_at    INTEGER,
        revoked_by    TEXT,
        last_used_at  INTEGER
      );
      CREATE INDEX grants_by_agent_tool ON grants (agent_id, tool);

      CREATE TABLE audit_events (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        at          INTEGER NOT NULL,
        type        TEXT NOT NULL,
        actor       TEXT,
        subject     TEXT,
        session_key TEXT,
        data        TEXT NOT NULL  -- JSON
      );
      CREATE INDEX audit_by_subject ON audit_events (subject, id);

      -- Exec allowlist entries per agent (reference A4/A6 shape); written by the exec tool.
      CREATE TABLE exec_allowlist (
        id            TEXT PRIMARY KEY,
        agent_id      TEXT NOT NULL,
        pattern       TEXT NOT NULL,
        arg_pattern   TEXT,
        source        TEXT NOT NULL,
        created_at    INTEGER NOT NULL,
        last_used_at  INTEGER,
        expires_at    INTEGER,
        UNIQUE (agent_id, pattern, arg_pattern)
      );
    `);
  },
};

/** Every migration, in the order it runs. Append new entries at the end. */
export const MIGRATIONS: readonly Migration[] = [callpath001, cron001, execAllowlistMigration, gatewayCardsMigration, subagentRunsMigration, sessionContextsMigration, execBoundFilesMigration, webInboundMigration, cron002, approvalsOriginMigration, deferredCallsMigration, nodesMigration, grantBoundFilesMigration, approvalsScopedApproversMigration];

/**
 * Applies the migrations not yet recorded, each in its own transaction. Returns the ids it
 * applied. A failing migration throws (a bug in the migration, not bad input) and leaves the
 * database at the last good version.
 */
export function applyMigrations(db: Database, migrations: readonly Migration[] = MIGRATIONS): string[] {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (id TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)');
  const done = new Set(db.prepare('SELECT id FROM schema_migrations').pluck().all() as string[]);
  const seen = new Set<string>();
  const applied: string[] = [];
  for (const migration of migrations) {
    if (seen.has(migration.id)) throw new Error(`duplicate migration id ${migration.id}`);
    seen.add(migration.id);
    if (done.has(migration.id)) continue;
    db.transaction(() => {
      migration.up(db);
      db.prepare('INSERT INTO schema_migrations (id, applied_at) VALUES (?, ?)').run(migration.id, Date.now());
    })();
    applied.push(migration.id);
  }
  return applied;
}
