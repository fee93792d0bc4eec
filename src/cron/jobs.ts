import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import type { InheritedPolicy } from '../policy/context.js';
import { nextRunAt, type Schedule } from './schedule.js';

/**
 * Where a job runs and answers: the conversation it was created in. The guild and channel name
 * are kept because the channel policy is resolved by them: a job in #general must run under
 * #general's policy, not a looser guild-wide one.
 */
export interface CronTarget {
  sessionKey: string;
  provider: string;
  chat: 'dm' | 'channel' | 'thread';
  guildId?: string | undefined;
  guildName?: string | undefined;
  channelId?: string | undefined;
  channelName?: string | undefined;
  threadId?: string | undefined;
  /** Deliver to this user's DM instead of the channel. */
  dmUserId?: string | undefined;
  /**
   * The ceiling of the turn that created the job, when it had one (a turn another session
   * started): every run stays under it, never under the wider policy of the conversation alone.
   */
  inherited?: InheritedPolicy | undefined;
}

export interface CronJob {
  id: string;
  agentId: string;
  name: string;
  schedule: Schedule;
  message: string;
  target: CronTarget;
  createdBy: string;
  createdAt: number;
  enabled: boolean;
  nextRunAt: number | undefined;
  lastRunAt: number | undefined;
  lastStatus: string | undefined;
  lastError: string | undefined;
  runCount: number;
}

export interface CronRun {
  id: number;
  jobId: string;
  startedAt: number;
  finishedAt: number | undefined;
  status: 'running' | 'ok' | 'error' | 'interrupted';
  detail: string | undefined;
}

interface JobRow {
  id: string;
  agent_id: string;
  name: string;
  schedule: string;
  message: string;
  target: string;
  created_by: string;
  created_at: number;
  enabled: number;
  next_run_at: number | null;
  last_run_at: number | null;
  last_status: string | null;
  last_error: string | null;
  run_count: number;
}

const toJob = (r: JobRow): CronJob => ({
  id: r.id,
  agentId: r.agent_id,
  name: r.name,
  schedule: JSON.parse(r.schedule) as Schedule,
  message: r.message,
  target: JSON.parse(r.target) as CronTarget,
  createdBy: r.created_by,
  createdAt: r.created_at,
  enabled: r.enabled === 1,
  nextRunAt: r.next_run_at ?? undefined,
  lastRunAt: r.last_run_at ?? undefined,
  lastStatus: r.last_status ?? undefined,
  lastError: r.last_error ?? undefined,
  runCount: r.run_count,
});

/** Jobs and their run history in SQLite; the database is the scheduler's only truth. */
export class CronJobs {
  constructor(private readonly db: Database) {}

  add(input: { agentId: string; name: string; schedule: Schedule; message: string; target: CronTarget; createdBy: string }, now: number): CronJob {
    const id = randomUUID().slice(0, 8);
    this.db
      .prepare(
        `INSERT INTO cron_jobs (id, agent_id, name, schedule, message, target, created_by, created_at, next_run_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(id, input.agentId, input.name, JSON.stringify(input.schedule), input.message, JSON.stringify(input.target), input.createdBy, now, nextRunAt(input.schedule, now) ?? null);
    return this.get(id)!;
  }

  get(id: string): CronJob | undefined {
    const row = this.db.prepare('SELECT * FROM cron_jobs WHERE id = ?').get(id) as JobRow | undefined;
    return row ? toJob(row) : undefined;
  }

  list(agentId?: string): CronJob[] {
    const rows = (agentId
      ? this.db.prepare('SELECT * FROM cron_jobs WHERE agent_id = ? ORDER BY created_at').all(agentId)
      : this.db.prepare('SELECT * FROM cron_jobs ORDER BY created_at').all()) as JobRow[];
    return rows.map(toJob);
  }

  setEnabled(id: string, enabled: boolean, now: number): CronJob | undefined {
    const job = this.get(id);
    if (!job) return undefined;
    const next = enabled ? nextRunAt(job.schedule, now, job.lastRunAt) ?? null : job.nextRunAt ?? null;
    this.db.prepare('UPDATE cron_jobs SET enabled = ?, next_run_at = ? WHERE id = ?').run(enabled ? 1 : 0, next, id);
    return this.get(id);
  }

  rename(id: string, name: string): void {
    this.db.prepare('UPDATE cron_jobs SET name = ? WHERE id = ?').run(name, id);
  }

  remove(id: string): boolean {
    return this.db.transaction(() => {
      this.db.prepare('DELETE FROM cron_runs WHERE job_id = ?').run(id);
      return this.db.prepare('DELETE FROM cron_jobs WHERE id = ?').run(id).changes > 0;
    })();
  }

  due(now: number): CronJob[] {
    return (this.db.prepare('SELECT * FROM cron_jobs WHERE enabled = 1 AND next_run_at IS NOT NULL AND next_run_at <= ? ORDER BY next_run_at').all(now) as JobRow[]).map(toJob);
  }

  earliestNextRun(): number | undefined {
    return (this.db.prepare('SELECT MIN(next_run_at) FROM cron_jobs WHERE enabled = 1').pluck().get() as number | null) ?? undefined;
  }

  /**
   * Records the start of a run and moves the job to its next time in one transaction, before the
   * run happens: a crash mid-run never makes the job fire again in a loop.
   */
  begin(job: CronJob, now: number, advance = true): number {
    return this.db.transaction(() => {
      // A manual run (`advance` false) leaves the regular schedule where it is.
      const next = advance ? nextRunAt(job.schedule, now, now) ?? null : job.nextRunAt ?? null;
      this.db
        .prepare('UPDATE cron_jobs SET next_run_at = ?, last_run_at = ?, run_count = run_count + 1, last_status = ? WHERE id = ?')
        .run(next, now, 'running', job.id);
      return Number(this.db.prepare("INSERT INTO cron_runs (job_id, started_at, status) VALUES (?, ?, 'running')").run(job.id, now).lastInsertRowid);
    })();
  }

  finish(runId: number, jobId: string, status: 'ok' | 'error', detail: string | undefined, now: number): void {
    this.db.transaction(() => {
      this.db.prepare('UPDATE cron_runs SET finished_at = ?, status = ?, detail = ? WHERE id = ?').run(now, status, detail ?? null, runId);
      this.db.prepare('UPDATE cron_jobs SET last_status = ?, last_error = ? WHERE id = ?').run(status, status === 'error' ? detail ?? null : null, jobId);
    })();
  }

  /** Runs left `running` by a process that died: recorded as interrupted, never silently lost. */
  markInterrupted(now: number): number {
    return this.db.transaction(() => {
      const changed = this.db.prepare("UPDATE cron_runs SET status = 'interrupted', finished_at = ?, detail = 'Warden stopped during this run' WHERE status = 'running'").run(now).changes;
      this.db.prepare("UPDATE cron_jobs SET last_status = 'interrupted' WHERE last_status = 'running'").run();
      return changed;
    })();
  }

  runs(jobId: string, limit = 20): CronRun[] {
    return (this.db.prepare('SELECT * FROM cron_runs WHERE job_id = ? ORDER BY id DESC LIMIT ?').all(jobId, limit) as Array<Record<string, unknown>>).map((r) => ({
      id: r.id as number,
      jobId: r.job_id as string,
      startedAt: r.started_at as number,
      finishedAt: (r.finished_at as number | null) ?? undefined,
      status: r.status as CronRun['status'],
      detail: (r.detail as string | null) ?? undefined,
    }));
  }
}
