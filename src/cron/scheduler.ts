import type { Logger } from 'pino';
import { log as rootLog } from '../log.js';
import type { CronJob, CronJobs } from './jobs.js';

/** Runs one job: asks the agent the job's message in its target session. */
export type CronDeliver = (job: CronJob, signal: AbortSignal) => Promise<{ ok: true; detail?: string } | { ok: false; error: string }>;

export interface CronSchedulerOptions {
  jobs: CronJobs;
  deliver: CronDeliver;
  now?: () => number;
  log?: Logger;
  /** Longest sleep between checks, so clock jumps and jobs added elsewhere are picked up. */
  maxSleepMs?: number;
}

/**
 * One timer for all jobs: sleep until the earliest `next_run_at` (or at most `maxSleepMs`), run
 * what is due one at a time, repeat. The database is the truth, so jobs survive restarts and a
 * run interrupted by a crash is recorded as such.
 */
export class CronScheduler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private readonly abort = new AbortController();
  private readonly now: () => number;
  private readonly log: Logger;
  private stopped = true;

  constructor(private readonly options: CronSchedulerOptions) {
    this.now = options.now ?? Date.now;
    this.log = (options.log ?? rootLog).child({ module: 'cron' });
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    const interrupted = this.options.jobs.markInterrupted(this.now());
    if (interrupted > 0) this.log.warn({ interrupted }, 'cron runs interrupted by the last shutdown were recorded');
    this.arm();
  }

  /** Re-reads the earliest next run (call after adding or enabling a job). */
  poke(): void {
    if (!this.stopped) this.arm();
  }

  /** Runs every due job now; returns how many ran. Used by the timer and by tests. */
  async tick(): Promise<number> {
    if (this.running) await this.running;
    let count = 0;
    const work = (async () => {
      for (const job of this.options.jobs.due(this.now())) {
        if (this.abort.signal.aborted) break;
        await this.runJob(job);
        count++;
      }
    })();
    this.running = work;
    try {
      await work;
    } finally {
      this.running = undefined;
    }
    return count;
  }

  /** Runs one job immediately, whatever its schedule (the `run` action). */
  async runNow(job: CronJob): Promise<void> {
    await this.runJob(job, false);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.abort.abort();
    await this.running;
  }

  private async runJob(job: CronJob, scheduled = true): Promise<void> {
    const jobs = this.options.jobs;
    const runId = jobs.begin(job, this.now(), scheduled);
    this.log.info({ job: job.id, name: job.name }, 'cron job started');
    try {
      const outcome = await this.options.deliver(job, this.abort.signal);
      jobs.finish(runId, job.id, outcome.ok ? 'ok' : 'error', outcome.ok ? outcome.detail : outcome.error, this.now());
      if (!outcome.ok) this.log.warn({ job: job.id, error: outcome.error }, 'cron job failed');
    } catch (err) {
      jobs.finish(runId, job.id, 'error', (err as Error).message, this.now());
      this.log.error({ job: job.id, err }, 'cron job threw');
    }
  }

  private arm(): void {
    if (this.timer) clearTimeout(this.timer);
    const earliest = this.options.jobs.earliestNextRun();
    const maxSleep = this.options.maxSleepMs ?? 60_000;
    const wait = earliest === undefined ? maxSleep : Math.max(0, Math.min(maxSleep, earliest - this.now()));
    this.timer = setTimeout(() => {
      void this.tick()
        .catch((err) => this.log.error({ err }, 'cron tick failed'))
        .finally(() => {
          if (!this.stopped) this.arm();
        });
    }, wait);
    this.timer.unref();
  }
}
