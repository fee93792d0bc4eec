import type { ExecJob } from './job.js';

/**
 * Background jobs per session (reference A15): a session sees, polls and kills only the jobs it
 * started; a job of another session does not exist for it. Finished jobs stay listed for the
 * configured time (30 min by default), then disappear.
 */
export interface JobRecord {
  sessionKey: string;
  job: ExecJob;
  /** The exec call returned before the job finished; `process` owns it from then on. */
  backgrounded: boolean;
}

export const DEFAULT_FINISHED_TTL_MS = 30 * 60_000;

export class ProcessRegistry {
  private readonly jobs = new Map<string, JobRecord>();

  constructor(
    private finishedTtlMs: number = DEFAULT_FINISHED_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  setFinishedTtl(ms: number): void {
    this.finishedTtlMs = ms;
  }

  add(sessionKey: string, job: ExecJob): JobRecord {
    const record = { sessionKey, job, backgrounded: false };
    this.jobs.set(job.id, record);
    return record;
  }

  get(sessionKey: string, id: string): JobRecord | undefined {
    this.sweep();
    const record = this.jobs.get(id);
    return record && record.sessionKey === sessionKey ? record : undefined;
  }

  /** Newest first. */
  list(sessionKey: string): JobRecord[] {
    this.sweep();
    return [...this.jobs.values()].filter((r) => r.sessionKey === sessionKey).sort((a, b) => b.job.startedAt - a.job.startedAt);
  }

  remove(sessionKey: string, id: string): boolean {
    const record = this.get(sessionKey, id);
    if (!record) return false;
    record.job.kill();
    return this.jobs.delete(id);
  }

  /** Every running job, for shutdown. */
  running(): ExecJob[] {
    return [...this.jobs.values()].map((r) => r.job).filter((j) => j.running);
  }

  private sweep(): void {
    const cutoff = this.now() - this.finishedTtlMs;
    for (const [id, record] of this.jobs) {
      if (record.job.endedAt !== null && record.job.endedAt <= cutoff) this.jobs.delete(id);
    }
  }
}

/** The process-wide registry the exec and process tools share. */
export const processRegistry = new ProcessRegistry();

// Commands run in their own process groups, so they would outlive Warden; end them with it.
process.once('exit', () => {
  for (const job of processRegistry.running()) job.killNow();
});
