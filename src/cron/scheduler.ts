import type { Logger } from 'pino';
import { log as rootLog } from '../log/log.js';
import type { CronJob, CronJobs, CronTrigger } from './jobs.js';
import { slotsBetween } from './schedule.js';

/**
 * What a run gets besides its job. `park` says the run is waiting on a person (an approval
 * card) rather than working: its slot goes to the next job until `resume`. A resumed run
 * continues at once — a turn cannot be paused half-way — so for that moment more runs may be
 * working than `maxConcurrent`; new runs start only once the count is back under it.
 */
export interface CronRunControl {
  readonly signal: AbortSignal;
  park(reason: string): void;
  resume(): void;
}

/** Runs one job: asks the agent the job's message in its target session. */
export type CronDeliver = (job: CronJob, run: CronRunControl) => Promise<{ ok: true; detail?: string } | { ok: false; error: string }>;

export type CronSchedulerEvent =
  | { type: 'queued'; jobId: string; runId: number; trigger: CronTrigger }
  | { type: 'started'; jobId: string; runId: number; trigger: CronTrigger }
  | { type: 'parked'; jobId: string; runId: number; reason: string }
  | { type: 'resumed'; jobId: string; runId: number }
  | { type: 'finished'; jobId: string; runId: number; status: 'ok' | 'error' | 'interrupted'; detail?: string | undefined }
  | { type: 'skipped'; jobId: string; runId: number; trigger: CronTrigger; reason: 'overlap' | 'missed' };

/** Where a job's current run is: waiting for a slot, working, or waiting on a person. */
export type RunState = 'queued' | 'running' | 'parked';

export type RunNowResult = { ok: true; runId: number; done: Promise<void> } | { ok: false; reason: string };

export interface CronSchedulerOptions {
  jobs: CronJobs;
  deliver: CronDeliver;
  /** The clock: what is due, and every time recorded in the history. */
  now?: () => number;
  log?: Logger;
  /** Longest sleep between checks, so clock jumps and jobs added elsewhere are picked up. */
  maxSleepMs?: number;
  /** Runs working at once (`cron.maxConcurrent`). */
  maxConcurrent?: number;
  /** Every queue, start, park, finish and skip, as it happens (tests wait on these). */
  onEvent?: (event: CronSchedulerEvent) => void;
  /**
   * Other instances share the store and run this same scheduler: a slot goes to the instance
   * whose claim moves the job on first, a job never overlaps a run another live instance still
   * has, and at each tick the runs of instances that died are recorded as interrupted.
   */
  shared?: boolean | undefined;
}

interface ActiveRun {
  runId: number;
  state: RunState;
  /** What a parked run waits for. */
  waitingFor?: string | undefined;
  done: Promise<void>;
}

export const DEFAULT_MAX_CONCURRENT = 3;

/**
 * One timer for all jobs: sleep until the earliest `next_run_at` (or at most `maxSleepMs`),
 * then start what is due. Runs work concurrently, up to `maxConcurrent`; more wait in order for
 * a slot. A job never overlaps itself: a slot that comes while its previous run is still queued,
 * working or waiting is skipped and recorded as such. The database is the truth, so jobs survive
 * restarts; at start, runs cut short by the last stop are recorded as interrupted and each job's
 * missed-run policy decides about the slots that passed while Warden was down.
 */
export class CronScheduler {
  private timer: NodeJS.Timeout | undefined;
  private readonly abort = new AbortController();
  private readonly now: () => number;
  private readonly log: Logger;
  private readonly maxConcurrent: number;
  private stopped = true;
  private readonly active = new Map<string, ActiveRun>();
  private claims: Promise<void> = Promise.resolve();
  /** Slots taken by working runs (parked runs hold none). */
  private working = 0;
  private readonly waiting: Array<() => void> = [];
  /** The unsubscribe of the change notifications (shared store only). */
  private watching: Promise<(() => Promise<void>) | undefined> | undefined;

  constructor(private readonly options: CronSchedulerOptions) {
    this.now = options.now ?? Date.now;
    this.log = (options.log ?? rootLog).child({ module: 'cron' });
    this.maxConcurrent = Math.max(1, options.maxConcurrent ?? DEFAULT_MAX_CONCURRENT);
  }

  /**
   * Records runs the last stop cut short, applies each job's missed-run policy to slots that
   * passed while Warden was down, and arms the timer. Returns the runs started for missed slots.
   */
  async start(): Promise<Promise<void>[]> {
    if (!this.stopped) return [];
    this.stopped = false;
    // On a shared store a job added or changed through another instance re-arms this one's timer
    // at once (its first slot may be a second away); without notifications, the idle timer still does.
    if (this.options.shared) {
      this.watching = this.options.jobs.watch(() => this.poke()).then(
        (off) => off,
        (err: unknown) => {
          this.log.warn({ err: (err as Error).message }, 'cron: change notifications unavailable; jobs added elsewhere are seen at the next idle check');
          return undefined;
        },
      );
      await this.watching;
    }
    return this.claiming(async () => {
      const started = await this.startMissed();
      await this.arm();
      return started;
    });
  }

  private async startMissed(): Promise<Promise<void>[]> {
    const now = this.now();
    const interrupted = await this.options.jobs.markInterrupted(now);
    if (interrupted > 0) this.log.warn({ interrupted }, 'cron runs interrupted by the last shutdown were recorded');
    const started: Promise<void>[] = [];
    for (const job of await this.options.jobs.due(now)) {
      const missed = slotsBetween(job.schedule, job.nextRunAt ?? now, now);
      const when = `while Warden was not running (first due ${new Date(job.nextRunAt ?? now).toISOString()})`;
      if (job.missed === 'run-once') {
        const run = await this.launch(job, 'missed', now, `${missed} run${missed === 1 ? '' : 's'} missed ${when}; run once now`);
        if (run) this.log.info({ job: job.id, missed }, 'cron job missed runs; running it once now');
        if (run) started.push(run.done);
      } else {
        const runId = await this.options.jobs.skipSlot(job, 'missed', `skipped ${missed} missed run${missed === 1 ? '' : 's'} ${when}`, now);
        if (runId !== undefined) this.emit({ type: 'skipped', jobId: job.id, runId, trigger: 'missed', reason: 'missed' });
      }
    }
    return started;
  }

  /**
   * Claim phases (reading what is due, recording its runs, moving its jobs on) run one after
   * another: two overlapping ticks must never both claim one slot between their reads.
   */
  private claiming<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.claims.then(fn);
    this.claims = next.then(
      () => undefined,
      () => undefined,
    );
    return next;
  }

  /** Re-reads the earliest next run (call after adding, changing or enabling a job). */
  poke(): void {
    if (!this.stopped) void this.claiming(() => this.arm()).catch((err: unknown) => this.log.error({ err }, 'cron timer could not be armed'));
  }

  /**
   * Starts every due job now (a job still running is skipped for this slot) and resolves, with
   * how many it started, once those runs have finished. The timer does not wait for that.
   */
  async tick(): Promise<number> {
    const runs = await this.claiming(() => this.claimDue());
    await Promise.all(runs);
    return runs.length;
  }

  /** Claims every due slot; resolves, once they are recorded, to the runs it started. */
  private async claimDue(): Promise<Promise<void>[]> {
    if (this.abort.signal.aborted) return [];
    const runs: Promise<void>[] = [];
    {
      const now = this.now();
      const due = await this.options.jobs.due(now);
      // A dead instance's runs end as interrupted, so its jobs move on rather than look busy forever.
      if (this.options.shared && due.length > 0) {
        const interrupted = await this.options.jobs.markInterrupted(now);
        if (interrupted > 0) this.log.warn({ interrupted }, 'cron runs of an instance that stopped answering were recorded as interrupted');
      }
      for (const job of due) {
        const previous = this.active.get(job.id);
        const elsewhere = previous || !this.options.shared ? undefined : await this.options.jobs.activeRun(job.id);
        if (previous || elsewhere) {
          const still = previous ? `(run ${previous.runId}) was still ${describeState(previous)}` : `(run ${elsewhere!.id}) was still ${elsewhere!.status} in another instance`;
          const runId = await this.options.jobs.skipSlot(job, 'schedule', `skipped: the run for an earlier slot ${still}`, now);
          if (runId === undefined) continue;
          this.log.info({ job: job.id, previous: previous?.runId ?? elsewhere?.id }, 'cron job still running at its next slot; skipped');
          this.emit({ type: 'skipped', jobId: job.id, runId, trigger: 'schedule', reason: 'overlap' });
          continue;
        }
        const run = await this.launch(job, 'schedule', now);
        if (run) runs.push(run.done);
      }
    }
    return runs;
  }

  /**
   * Runs one job now, whatever its schedule (`run`), by the same path as a scheduled slot. A job
   * still running is not started twice: the refusal is recorded and returned.
   */
  runNow(job: CronJob): Promise<RunNowResult> {
    return this.claiming(async () => {
      if (this.abort.signal.aborted) return { ok: false, reason: 'the scheduler has stopped' };
      const now = this.now();
      const previous = this.active.get(job.id);
      const elsewhere = previous || !this.options.shared ? undefined : await this.options.jobs.activeRun(job.id);
      if (previous || elsewhere) {
        const reason = previous
          ? `job ${job.id} is still ${describeState(previous)} (run ${previous.runId}); it was not started again`
          : `job ${job.id} is still ${elsewhere!.status} in another instance (run ${elsewhere!.id}); it was not started again`;
        const runId = await this.options.jobs.skip(job, 'manual', `skipped: ${reason}`, now, false);
        this.emit({ type: 'skipped', jobId: job.id, runId, trigger: 'manual', reason: 'overlap' });
        return { ok: false, reason };
      }
      const run = await this.launch(job, 'manual', now);
      if (!run) return { ok: false, reason: 'the run could not be claimed' };
      return { ok: true, runId: run.runId, done: run.done };
    });
  }

  /** Where the job's current run is, if it has one. */
  state(jobId: string): RunState | undefined {
    return this.active.get(jobId)?.state;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    const off = await this.watching;
    this.watching = undefined;
    await off?.().catch(() => undefined);
    this.abort.abort();
    // Runs still waiting for a slot end now, as interrupted.
    for (const wake of this.waiting.splice(0)) wake();
    await Promise.allSettled([...this.active.values()].map((r) => r.done));
  }

  /** Claims the run (inside a claim phase) and starts it; resolves once it is recorded and tracked. */
  private async launch(job: CronJob, trigger: CronTrigger, now: number, note?: string): Promise<ActiveRun | undefined> {
    const jobs = this.options.jobs;
    // A slot of the schedule is claimed against every instance; undefined: another one took it.
    const runId = trigger === 'manual' ? await jobs.claim(job, trigger, now) : await jobs.claimSlot(job, trigger, now);
    if (runId === undefined) return undefined;
    const run: ActiveRun = { runId, state: 'queued', done: Promise.resolve() };
    this.active.set(job.id, run);
    this.emit({ type: 'queued', jobId: job.id, runId, trigger });
    run.done = (async () => {
      let holding = false;
      try {
        await this.acquire();
        holding = true;
        if (this.abort.signal.aborted) {
          await jobs.finish(runId, job.id, 'interrupted', 'Warden stopped before this run started', this.now());
          this.emit({ type: 'finished', jobId: job.id, runId, status: 'interrupted' });
          return;
        }
        run.state = 'running';
        await jobs.start(runId, job.id, this.now());
        this.log.info({ job: job.id, name: job.name, trigger, runId }, 'cron job started');
        this.emit({ type: 'started', jobId: job.id, runId, trigger });
        const control: CronRunControl = {
          signal: this.abort.signal,
          park: (reason) => {
            if (run.state !== 'running') return;
            run.state = 'parked';
            run.waitingFor = reason;
            holding = false;
            this.release();
            this.emit({ type: 'parked', jobId: job.id, runId, reason });
          },
          resume: () => {
            if (run.state !== 'parked') return;
            run.state = 'running';
            holding = true;
            this.working++;
            this.emit({ type: 'resumed', jobId: job.id, runId });
          },
        };
        let status: 'ok' | 'error' | 'interrupted';
        let detail: string | undefined;
        try {
          const outcome = await this.options.deliver(job, control);
          status = this.abort.signal.aborted ? 'interrupted' : outcome.ok ? 'ok' : 'error';
          detail = outcome.ok ? outcome.detail : outcome.error;
          if (!outcome.ok) this.log.warn({ job: job.id, error: outcome.error }, 'cron job failed');
        } catch (err) {
          status = 'error';
          detail = (err as Error).message;
          this.log.error({ job: job.id, err }, 'cron job threw');
        }
        if (note) detail = detail ? `${note}. ${detail}` : note;
        await jobs.finish(runId, job.id, status, detail, this.now());
        this.emit({ type: 'finished', jobId: job.id, runId, status, detail });
      } catch (err) {
        // The store closed under a stopping Warden; the next start records the run as interrupted.
        this.log.warn({ job: job.id, err }, 'cron run could not be recorded');
      } finally {
        if (holding) this.release();
        if (this.active.get(job.id) === run) this.active.delete(job.id);
      }
    })();
    return run;
  }

  private acquire(): Promise<void> {
    // A stopping scheduler lets every run through at once, to record it as interrupted.
    if (this.abort.signal.aborted || (this.working < this.maxConcurrent && this.waiting.length === 0)) {
      this.working++;
      return Promise.resolve();
    }
    return new Promise((resolve) =>
      this.waiting.push(() => {
        this.working++;
        resolve();
      }),
    );
  }

  private release(): void {
    this.working--;
    while (this.working < this.maxConcurrent && this.waiting.length > 0) this.waiting.shift()!();
  }

  private emit(event: CronSchedulerEvent): void {
    try {
      this.options.onEvent?.(event);
    } catch (err) {
      this.log.error({ err, event: event.type }, 'cron event listener failed');
    }
  }

  /** Sets the timer for the earliest next run (inside a claim phase, so it sees the slots just claimed). */
  private async arm(): Promise<void> {
    const earliest = await this.options.jobs.earliestNextRun();
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    const maxSleep = this.options.maxSleepMs ?? 60_000;
    const wait = earliest === undefined ? maxSleep : Math.max(0, Math.min(maxSleep, earliest - this.now()));
    this.timer = setTimeout(() => {
      // Due jobs are claimed (and moved to their next slot) before the timer is set again, so it
      // is set for the slot after; runs in flight never delay it.
      void this.claiming(async () => {
        const runs = await this.claimDue();
        if (!this.stopped) await this.arm();
        return runs;
      }).catch((err: unknown) => this.log.error({ err }, 'cron tick failed'));
    }, wait);
    this.timer.unref();
  }
}

const describeState = (run: Pick<ActiveRun, 'state' | 'waitingFor'>): string =>
  run.state === 'parked' ? (run.waitingFor ?? 'waiting') : run.state === 'queued' ? 'waiting for a free slot' : 'running';
