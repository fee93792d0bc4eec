import type { ExecJob } from './job.js';

/**
 * Background jobs per session and per sender (reference A15). A job belongs to the session it
 * was started in and to the sender whose exec call started it — the requester, also when an
 * approver's click let the command run: the approver decided whether it may run, not whose it
 * is. A job of another session does not exist for a caller; inside a shared session (a channel,
 * a thread) another sender's job is refused, running or finished, and only an owner reaches
 * every job of the session. A turn without a sender (a message another session sent) reaches
 * no job, and a job it started is reachable by owners only. Finished jobs stay listed for the
 * configured time (30 min by default), then disappear.
 */

/** Who asks: the session and sender of the turn making the call. */
export interface JobParty {
  sessionKey: string;
  provider: string;
  senderId?: string | undefined;
  /** Owners reach every job of their session. */
  isOwner: boolean;
}

/** The sender a job belongs to. */
export interface JobStarter {
  provider: string;
  senderId: string | undefined;
}

export interface JobRecord {
  sessionKey: string;
  startedBy: JobStarter;
  job: ExecJob;
  /** The exec call returned before the job finished; `process` owns it from then on. */
  backgrounded: boolean;
}

/** What a lookup found: the job, nothing (another session, unknown id, expired), or a job of another sender. */
export type JobLookup = { ok: true; record: JobRecord } | { ok: false; reason: 'not-found' | 'not-yours' };

export const DEFAULT_FINISHED_TTL_MS = 30 * 60_000;

/** The party of a tool call: its session and the sender of its turn. */
export function partyOf(call: { sessionKey: string; turn: { provider: string; senderId?: string | undefined; senderIsOwner: boolean } }): JobParty {
  return { sessionKey: call.sessionKey, provider: call.turn.provider, senderId: call.turn.senderId, isOwner: call.turn.senderIsOwner };
}

const norm = (s: string) => s.trim().toLowerCase();

/** Whether `party` started the job: same provider and the same, known sender. */
export function isStarter(record: Pick<JobRecord, 'startedBy'>, party: Pick<JobParty, 'provider' | 'senderId'>): boolean {
  const { startedBy } = record;
  if (startedBy.senderId === undefined || party.senderId === undefined) return false;
  if (norm(startedBy.senderId) === '' || norm(party.senderId) === '') return false;
  return norm(startedBy.provider) === norm(party.provider) && norm(startedBy.senderId) === norm(party.senderId);
}

/** The access decision for one job (pure): other sessions see nothing; in the session, the starter and owners. */
export function reach(record: JobRecord, party: JobParty): 'yes' | 'not-found' | 'not-yours' {
  if (record.sessionKey !== party.sessionKey) return 'not-found';
  return party.isOwner || isStarter(record, party) ? 'yes' : 'not-yours';
}

export class ProcessRegistry {
  private readonly jobs = new Map<string, JobRecord>();

  constructor(
    private finishedTtlMs: number = DEFAULT_FINISHED_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  setFinishedTtl(ms: number): void {
    this.finishedTtlMs = ms;
  }

  /**
   * Files a job under its id. An id already in use is refused (undefined), never replaced: the
   * job there belongs to someone else, and overwriting it would hand its id to the newcomer.
   */
  add(starter: Pick<JobParty, 'sessionKey' | 'provider' | 'senderId'>, job: ExecJob): JobRecord | undefined {
    if (this.jobs.has(job.id)) return undefined;
    const record: JobRecord = { sessionKey: starter.sessionKey, startedBy: { provider: starter.provider, senderId: starter.senderId }, job, backgrounded: false };
    this.jobs.set(job.id, record);
    return record;
  }

  lookup(party: JobParty, id: string): JobLookup {
    this.sweep();
    const record = this.jobs.get(id);
    if (!record) return { ok: false, reason: 'not-found' };
    const verdict = reach(record, party);
    return verdict === 'yes' ? { ok: true, record } : { ok: false, reason: verdict };
  }

  /** The jobs `party` may reach, newest first. */
  list(party: JobParty): JobRecord[] {
    this.sweep();
    return [...this.jobs.values()].filter((r) => reach(r, party) === 'yes').sort((a, b) => b.job.startedAt - a.job.startedAt);
  }

  /** Kills and forgets a job `party` may reach; false when it may not (or there is none). */
  remove(party: JobParty, id: string): boolean {
    const found = this.lookup(party, id);
    if (!found.ok) return false;
    found.record.job.kill();
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
