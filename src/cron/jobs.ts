import { randomUUID } from 'node:crypto';
import { serverNow } from '../cluster/clock.js';
import type { Db } from '../store/db.js';
import type { InheritedPolicy } from '../policy/context.js';
import { nextRunAt, type Schedule } from './schedule.js';

/**
 * Where a job runs and answers: the conversation it was created in, or one its owner named. The
 * guild and channel name are kept because the channel policy is resolved by them: a job in
 * #general must run under #general's policy, not a looser guild-wide one.
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

/**
 * What happens to runs that fell due while Warden was not running, decided at the next start:
 * `skip` records them as skipped and waits for the next slot; `run-once` runs the job once
 * (however many slots were missed), then keeps to its schedule.
 */
export type MissedRunPolicy = 'skip' | 'run-once';
export const MISSED_RUN_POLICIES: readonly MissedRunPolicy[] = ['skip', 'run-once'];

/** A one-off that was missed is still worth doing; a repeating job's next slot is close. */
export const defaultMissedPolicy = (schedule: Schedule): MissedRunPolicy => (schedule.kind === 'at' ? 'run-once' : 'skip');

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
  missed: MissedRunPolicy;
  nextRunAt: number | undefined;
  lastRunAt: number | undefined;
  lastStatus: string | undefined;
  lastError: string | undefined;
  runCount: number;
}

/** What started a run: its schedule, a person (`run`), or the missed-run policy at start. */
export type CronTrigger = 'schedule' | 'manual' | 'missed';
export type CronRunStatus = 'queued' | 'running' | 'ok' | 'error' | 'skipped' | 'interrupted';

export interface CronRun {
  id: number;
  jobId: string;
  trigger: CronTrigger;
  /** The slot the run fills, or when it was asked for. */
  dueAt: number;
  /** When it got its slot and started; undefined while queued and for a skipped run. */
  startedAt: number | undefined;
  finishedAt: number | undefined;
  durationMs: number | undefined;
  status: CronRunStatus;
  detail: string | undefined;
}

export interface JobPatch {
  name?: string | undefined;
  message?: string | undefined;
  schedule?: Schedule | undefined;
  target?: CronTarget | undefined;
  enabled?: boolean | undefined;
  missed?: MissedRunPolicy | undefined;
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
  missed: MissedRunPolicy;
  next_run_at: number | null;
  last_run_at: number | null;
  last_status: string | null;
  last_error: string | null;
  run_count: number;
}

interface RunRow {
  id: number;
  job_id: string;
  trigger: CronTrigger;
  due_at: number;
  started_at: number | null;
  finished_at: number | null;
  duration_ms: number | null;
  status: CronRunStatus;
  detail: string | null;
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
  missed: r.missed,
  nextRunAt: r.next_run_at ?? undefined,
  lastRunAt: r.last_run_at ?? undefined,
  lastStatus: r.last_status ?? undefined,
  lastError: r.last_error ?? undefined,
  runCount: r.run_count,
});

const toRun = (r: RunRow): CronRun => ({
  id: r.id,
  jobId: r.job_id,
  trigger: r.trigger,
  dueAt: r.due_at,
  startedAt: r.started_at ?? undefined,
  finishedAt: r.finished_at ?? undefined,
  durationMs: r.duration_ms ?? undefined,
  status: r.status,
  detail: r.detail ?? undefined,
});

export const DEFAULT_KEEP_RUNS = 50;

/** The notification channel on which a job added, changed or removed is announced (payload: its id). */
export const CRON_CHANNEL = 'warden_cron';

/** Jobs and their run history in the store; the database is the scheduler's only truth. */
export class CronJobs {
  private readonly keepRuns: number;
  /** The instance whose runs these are (recorded on each run, so a dead instance's runs are told apart). */
  private readonly instanceId: string | null;

  constructor(
    private readonly db: Db,
    options: { keepRuns?: number | undefined; instanceId?: string | undefined } = {},
  ) {
    this.keepRuns = options.keepRuns ?? DEFAULT_KEEP_RUNS;
    this.instanceId = options.instanceId ?? null;
  }

  async add(
    input: { agentId: string; name: string; schedule: Schedule; message: string; target: CronTarget; createdBy: string; missed?: MissedRunPolicy | undefined },
    now: number,
  ): Promise<CronJob> {
    const id = randomUUID().slice(0, 8);
    await this.db.run(
      `INSERT INTO cron_jobs (id, agent_id, name, schedule, message, target, created_by, created_at, missed, next_run_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        id,
        input.agentId,
        input.name,
        JSON.stringify(input.schedule),
        input.message,
        JSON.stringify(input.target),
        input.createdBy,
        now,
        input.missed ?? defaultMissedPolicy(input.schedule),
        nextRunAt(input.schedule, now) ?? null,
      ],
    );
    await this.changed(id);
    return (await this.get(id))!;
  }

  /**
   * Tells every scheduler on the store that the job's times may have moved: without it another
   * instance would sleep through a new job's first slots until its idle timer (up to a minute).
   */
  private async changed(id: string): Promise<void> {
    if (this.db.shared) await this.db.notify(CRON_CHANNEL, id);
  }

  /** Calls `handler` whenever a job is added, changed or removed, here or in another instance; resolves to the unsubscribe function. */
  watch(handler: () => void): Promise<() => Promise<void>> {
    return this.db.listen(CRON_CHANNEL, () => handler());
  }

  async get(id: string): Promise<CronJob | undefined> {
    const row = await this.db.get<JobRow>('SELECT * FROM cron_jobs WHERE id = ?', [id]);
    return row ? toJob(row) : undefined;
  }

  async list(agentId?: string): Promise<CronJob[]> {
    const rows = agentId
      ? await this.db.all<JobRow>('SELECT * FROM cron_jobs WHERE agent_id = ? ORDER BY created_at, rowid', [agentId])
      : await this.db.all<JobRow>('SELECT * FROM cron_jobs ORDER BY created_at, rowid');
    return rows.map(toJob);
  }

  /**
   * Changes what is given. A new schedule starts counting from `now`; resuming a job picks its
   * next slot after `now` (the slots it was paused through are not made up).
   */
  async update(id: string, patch: JobPatch, now: number): Promise<CronJob | undefined> {
    const job = await this.get(id);
    if (!job) return undefined;
    const schedule = patch.schedule ?? job.schedule;
    const enabled = patch.enabled ?? job.enabled;
    const rescheduled = patch.schedule !== undefined || (patch.enabled === true && !job.enabled);
    const next = rescheduled ? (nextRunAt(schedule, now, patch.schedule ? undefined : job.lastRunAt) ?? null) : (job.nextRunAt ?? null);
    await this.db.run('UPDATE cron_jobs SET name = ?, message = ?, schedule = ?, target = ?, enabled = ?, missed = ?, next_run_at = ? WHERE id = ?', [
      patch.name ?? job.name,
      patch.message ?? job.message,
      JSON.stringify(schedule),
      JSON.stringify(patch.target ?? job.target),
      enabled ? 1 : 0,
      patch.missed ?? job.missed,
      next,
      id,
    ]);
    await this.changed(id);
    return this.get(id);
  }

  setEnabled(id: string, enabled: boolean, now: number): Promise<CronJob | undefined> {
    return this.update(id, { enabled }, now);
  }

  async rename(id: string, name: string): Promise<void> {
    await this.db.run('UPDATE cron_jobs SET name = ? WHERE id = ?', [name, id]);
  }

  remove(id: string): Promise<boolean> {
    return this.db.tx(async () => {
      await this.db.run('DELETE FROM cron_runs WHERE job_id = ?', [id]);
      const removed = (await this.db.run('DELETE FROM cron_jobs WHERE id = ?', [id])).changes > 0;
      // Inside the transaction: sent at commit.
      if (removed) await this.changed(id);
      return removed;
    });
  }

  async due(now: number): Promise<CronJob[]> {
    return (await this.db.all<JobRow>('SELECT * FROM cron_jobs WHERE enabled = 1 AND next_run_at IS NOT NULL AND next_run_at <= ? ORDER BY next_run_at, rowid', [now])).map(toJob);
  }

  async earliestNextRun(): Promise<number | undefined> {
    return (await this.db.value<number | null>('SELECT MIN(next_run_at) FROM cron_jobs WHERE enabled = 1')) ?? undefined;
  }

  /**
   * Takes a run of the job: records it as queued and, for a scheduled (or missed) run, moves the
   * job to its next time, in one transaction and before the run happens, so a crash mid-run
   * never makes the job fire again in a loop. A manual run leaves the schedule where it is.
   */
  claim(job: CronJob, trigger: CronTrigger, now: number): Promise<number> {
    return this.db.tx(async () => {
      const dueAt = trigger === 'schedule' ? (job.nextRunAt ?? now) : now;
      // Counted from the slot it fills, so a run that started late keeps the job on its grid.
      const next = trigger === 'manual' ? (job.nextRunAt ?? null) : (nextRunAt(job.schedule, now, job.nextRunAt ?? now) ?? null);
      await this.db.run('UPDATE cron_jobs SET next_run_at = ?, last_run_at = ?, run_count = run_count + 1 WHERE id = ?', [next, now, job.id]);
      const row = await this.insertRun(job.id, trigger, dueAt);
      await this.prune(job.id);
      return Number(row!.id);
    });
  }

  /**
   * `claim` for a slot of the schedule, against every instance sharing the store: the job moves
   * on only if it is still at the slot this instance read (one conditional write), so of several
   * instances whose timers fire together exactly one gets the run. Undefined: another took it.
   */
  claimSlot(job: CronJob, trigger: 'schedule' | 'missed', now: number): Promise<number | undefined> {
    return this.db.tx(async () => {
      if (!(await this.moveOn(job, now))) return undefined;
      const row = await this.insertRun(job.id, trigger, job.nextRunAt ?? now);
      await this.db.run('UPDATE cron_jobs SET last_run_at = ?, run_count = run_count + 1 WHERE id = ?', [now, job.id]);
      await this.prune(job.id);
      return Number(row!.id);
    });
  }

  /** `skip` of a schedule slot, by whichever instance moves the job on first; undefined: another did. */
  skipSlot(job: CronJob, trigger: 'schedule' | 'missed', detail: string, now: number): Promise<number | undefined> {
    return this.db.tx(async () => {
      if (!(await this.moveOn(job, now))) return undefined;
      const row = await this.db.get<{ id: number }>("INSERT INTO cron_runs (job_id, trigger, due_at, finished_at, status, detail) VALUES (?, ?, ?, ?, 'skipped', ?) RETURNING id", [
        job.id,
        trigger,
        job.nextRunAt ?? now,
        now,
        detail,
      ]);
      await this.prune(job.id);
      return Number(row!.id);
    });
  }

  /** A queued run; on a shared store it names the instance that runs it. */
  private insertRun(jobId: string, trigger: CronTrigger, dueAt: number): Promise<{ id: number } | undefined> {
    if (this.instanceId === null) return this.db.get("INSERT INTO cron_runs (job_id, trigger, due_at, status) VALUES (?, ?, ?, 'queued') RETURNING id", [jobId, trigger, dueAt]);
    return this.db.get("INSERT INTO cron_runs (job_id, trigger, due_at, status, instance_id) VALUES (?, ?, ?, 'queued', ?) RETURNING id", [jobId, trigger, dueAt, this.instanceId]);
  }

  /** Moves the job to its next slot if it still stands at the one `job` was read at. */
  private async moveOn(job: CronJob, now: number): Promise<boolean> {
    const next = nextRunAt(job.schedule, now, job.nextRunAt ?? now) ?? null;
    return (await this.db.run('UPDATE cron_jobs SET next_run_at = ? WHERE id = ? AND next_run_at IS NOT DISTINCT FROM ?', [next, job.id, job.nextRunAt ?? null])).changes > 0;
  }

  /** The job's run still queued or running (in any instance), if any. */
  async activeRun(jobId: string): Promise<{ id: number; instanceId: string | null; status: string } | undefined> {
    return this.db.get('SELECT id, instance_id AS "instanceId", status FROM cron_runs WHERE job_id = ? AND status IN (\'queued\', \'running\') ORDER BY id DESC LIMIT 1', [jobId]);
  }

  /** The run got its slot. */
  start(runId: number, jobId: string, now: number): Promise<void> {
    return this.db.tx(async () => {
      await this.db.run("UPDATE cron_runs SET status = 'running', started_at = ? WHERE id = ?", [now, runId]);
      await this.db.run("UPDATE cron_jobs SET last_status = 'running' WHERE id = ?", [jobId]);
    });
  }

  finish(runId: number, jobId: string, status: 'ok' | 'error' | 'interrupted', detail: string | undefined, now: number): Promise<void> {
    return this.db.tx(async () => {
      await this.db.run('UPDATE cron_runs SET finished_at = ?, duration_ms = CASE WHEN started_at IS NULL THEN NULL ELSE ? - started_at END, status = ?, detail = ? WHERE id = ?', [
        now,
        now,
        status,
        detail ?? null,
        runId,
      ]);
      await this.db.run('UPDATE cron_jobs SET last_status = ?, last_error = ? WHERE id = ?', [status, status === 'ok' ? null : (detail ?? null), jobId]);
    });
  }

  /**
   * A run that did not happen, recorded with why: the job was still running at its next slot,
   * or its slots passed while Warden was down (`advance` moves it past them to the next one).
   */
  skip(job: CronJob, trigger: CronTrigger, detail: string, now: number, advance: boolean): Promise<number> {
    return this.db.tx(async () => {
      if (advance) await this.db.run('UPDATE cron_jobs SET next_run_at = ? WHERE id = ?', [nextRunAt(job.schedule, now, job.nextRunAt ?? job.lastRunAt) ?? null, job.id]);
      const dueAt = trigger === 'manual' ? now : (job.nextRunAt ?? now);
      const row = await this.db.get<{ id: number }>("INSERT INTO cron_runs (job_id, trigger, due_at, finished_at, status, detail) VALUES (?, ?, ?, ?, 'skipped', ?) RETURNING id", [
        job.id,
        trigger,
        dueAt,
        now,
        detail,
      ]);
      await this.prune(job.id);
      return Number(row!.id);
    });
  }

  /**
   * Runs left queued or running by a process that stopped: recorded as interrupted, never
   * silently lost. On a shared store only the runs of instances whose lease ran out (or that
   * recorded none): a live instance's runs are its own.
   */
  markInterrupted(now: number): Promise<number> {
    return this.db.tx(async () => {
      const changed = (
        await this.db.run(
          `UPDATE cron_runs SET status = 'interrupted', finished_at = ?,
             duration_ms = CASE WHEN started_at IS NULL THEN NULL ELSE ? - started_at END,
             detail = CASE WHEN status = 'queued' THEN 'Warden stopped before this run started' ELSE 'Warden stopped during this run' END
           WHERE status IN ('running', 'queued')${this.instanceId === null ? '' : `
             AND (instance_id IS NULL OR instance_id NOT IN (SELECT id FROM instances WHERE lease_until > ${serverNow(this.db)}))`}`,
          [now, now],
        )
      ).changes;
      await this.db.run("UPDATE cron_jobs SET last_status = 'interrupted' WHERE last_status = 'running' AND id NOT IN (SELECT job_id FROM cron_runs WHERE status IN ('running', 'queued'))");
      return changed;
    });
  }

  /** The job's runs, newest first. */
  async runs(jobId: string, limit = 20): Promise<CronRun[]> {
    return (await this.db.all<RunRow>('SELECT * FROM cron_runs WHERE job_id = ? ORDER BY id DESC LIMIT ?', [jobId, limit])).map(toRun);
  }

  /** Keeps the newest `keepRuns` runs of a job; a run still queued or running is never dropped. */
  private async prune(jobId: string): Promise<void> {
    await this.db.run(
      `DELETE FROM cron_runs WHERE job_id = ? AND status NOT IN ('queued', 'running')
         AND id NOT IN (SELECT id FROM cron_runs WHERE job_id = ? ORDER BY id DESC LIMIT ?)`,
      [jobId, jobId, this.keepRuns],
    );
  }
}
