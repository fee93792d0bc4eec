import type { Migration } from '../store/migrations.js';

export const cron001: Migration = {
  id: 'cron-001-jobs-runs',
  up(db) {
    db.exec(`
      CREATE TABLE cron_jobs (
        id            TEXT PRIMARY KEY,
        agent_id      TEXT NOT NULL,
        name          TEXT NOT NULL,
        schedule      TEXT NOT NULL,   -- JSON Schedule
        message       TEXT NOT NULL,   -- what the agent is asked when the job fires
        target        TEXT NOT NULL,   -- JSON CronTarget: where the answer goes
        created_by    TEXT NOT NULL,
        created_at    INTEGER NOT NULL,
        enabled       INTEGER NOT NULL DEFAULT 1,
        next_run_at   INTEGER,
        last_run_at   INTEGER,
        last_status   TEXT,
        last_error    TEXT,
        run_count     INTEGER NOT NULL DEFAULT 0
      );
      CREATE INDEX cron_jobs_due ON cron_jobs (enabled, next_run_at);

      CREATE TABLE cron_runs (
        id           INTEGER PRIMARY KEY AUTOINCREMENT,
        job_id       TEXT NOT NULL,
        started_at   INTEGER NOT NULL,
        finished_at  INTEGER,
        status       TEXT NOT NULL CHECK (status IN ('running', 'ok', 'error', 'interrupted')),
        detail       TEXT
      );
      CREATE INDEX cron_runs_by_job ON cron_runs (job_id, id);
    `);
  },
};

/**
 * Run history with durations and skips, and a missed-run policy per job. `cron_runs` is rebuilt
 * (SQLite cannot widen a CHECK): a run may now be queued (waiting for a slot) or skipped (its
 * job was still running, or it was missed while Warden was down), and says what started it.
 * One-off jobs made before this default to running once when missed; repeating ones skip.
 */
export const cron002: Migration = {
  id: 'cron-002-run-history-missed-policy',
  up(db) {
    db.exec(`
      ALTER TABLE cron_jobs ADD COLUMN missed TEXT NOT NULL DEFAULT 'skip' CHECK (missed IN ('skip', 'run-once'));
      UPDATE cron_jobs SET missed = 'run-once' WHERE json_extract(schedule, '$.kind') = 'at';

      CREATE TABLE cron_run_history (
        id           INTEGER PRIMARY KEY AUTOINCREMENT,
        job_id       TEXT NOT NULL,
        trigger      TEXT NOT NULL CHECK (trigger IN ('schedule', 'manual', 'missed')),
        due_at       INTEGER NOT NULL,   -- the slot the run fills, or when it was asked for
        started_at   INTEGER,            -- NULL while queued, and for a skipped run
        finished_at  INTEGER,
        duration_ms  INTEGER,
        status       TEXT NOT NULL CHECK (status IN ('queued', 'running', 'ok', 'error', 'skipped', 'interrupted')),
        detail       TEXT
      );
      INSERT INTO cron_run_history (id, job_id, trigger, due_at, started_at, finished_at, duration_ms, status, detail)
        SELECT id, job_id, 'schedule', started_at, started_at, finished_at,
               CASE WHEN finished_at IS NULL THEN NULL ELSE finished_at - started_at END, status, detail
        FROM cron_runs;
      DROP TABLE cron_runs;
      ALTER TABLE cron_run_history RENAME TO cron_runs;
      CREATE INDEX cron_runs_by_job ON cron_runs (job_id, id);
    `);
  },
};

/** The cron area's migrations, in order. */
export const CRON_MIGRATIONS: readonly Migration[] = [cron001, cron002];
