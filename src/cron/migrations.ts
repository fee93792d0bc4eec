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
