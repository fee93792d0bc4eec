import type { FeatureMigrations, Migration } from '../store/migrations.js';
import { deferredCallsMigration } from './deferred.js';
import { grantBoundFilesMigration, grantScopeMigration } from './grants.js';
import { approvalsGuildMigration, approvalsOriginMigration, approvalsRulesMigration, approvalsScopedApproversMigration } from './ledger.js';

/** The approval ledger, allow-always grants and deferred calls, as PostgreSQL first gets them. */
const approvalsPg001: Migration = {
  id: 'approvals-pg-001-ledger-grants-deferred',
  async up(db) {
    await db.exec(`
      CREATE TABLE approvals (
        id                 TEXT PRIMARY KEY,
        kind               TEXT NOT NULL CHECK (kind IN ('exec', 'tool')),
        agent_id           TEXT NOT NULL,
        session_key        TEXT NOT NULL,
        provider           TEXT NOT NULL,
        channel_id         TEXT,
        thread_id          TEXT,
        requester_id       TEXT,
        requester_name     TEXT,
        via                TEXT,
        tool               TEXT NOT NULL,
        title              TEXT NOT NULL,
        preview            TEXT NOT NULL,
        full_text          TEXT NOT NULL,
        facts              TEXT NOT NULL,
        allowed_decisions  TEXT NOT NULL,
        grant_spec         TEXT,
        shown              TEXT,
        timeout_behavior   TEXT NOT NULL DEFAULT 'deny',
        created_at         BIGINT NOT NULL,
        expires_at         BIGINT NOT NULL,
        status             TEXT NOT NULL,
        decided_by         TEXT,
        decided_at         BIGINT,
        waiter_pid         INTEGER,
        waiter_instance    TEXT,
        waiter_seen_at     BIGINT,
        rendered_at        BIGINT
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
        created_at    BIGINT NOT NULL,
        expires_at    BIGINT,
        revoked_at    BIGINT,
        revoked_by    TEXT,
        last_used_at  BIGINT
      );
      CREATE INDEX grants_by_agent_tool ON grants (agent_id, tool);
      CREATE INDEX grants_by_approval ON grants (approval_id);

      CREATE TABLE deferred_calls (
        approval_id     TEXT PRIMARY KEY,
        agent_id        TEXT NOT NULL,
        session_key     TEXT NOT NULL,
        origin          TEXT NOT NULL CHECK (origin IN ('turn', 'command')),
        tool            TEXT NOT NULL,
        tool_call_id    TEXT NOT NULL,
        args            TEXT NOT NULL,
        turn            TEXT NOT NULL,
        surface         TEXT NOT NULL,
        state           TEXT NOT NULL CHECK (state IN ('waiting', 'deferred', 'running', 'done', 'lost')),
        owner_instance  TEXT,
        owner_pid       INTEGER,
        created_at      BIGINT NOT NULL,
        claimed_at      BIGINT,
        finished_at     BIGINT,
        result          TEXT
      );
      CREATE INDEX deferred_calls_by_state ON deferred_calls (state);
    `);
  },
};

/** The approvals area: on SQLite its tables come from the core schema, then these changes. */
export const approvalsMigrations: FeatureMigrations = {
  feature: 'approvals',
  sqlite: [approvalsOriginMigration, deferredCallsMigration, grantBoundFilesMigration, approvalsScopedApproversMigration, approvalsRulesMigration, grantScopeMigration, approvalsGuildMigration],
  postgres: [approvalsPg001, grantBoundFilesMigration, approvalsScopedApproversMigration, approvalsRulesMigration, grantScopeMigration, approvalsGuildMigration],
};
