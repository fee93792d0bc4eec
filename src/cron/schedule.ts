import { Cron } from 'croner';

/** When a job runs: a cron expression (optionally in a time zone), a fixed interval, or once. */
export type Schedule =
  | { kind: 'cron'; expr: string; tz?: string | undefined }
  | { kind: 'every'; everyMs: number }
  | { kind: 'at'; at: number };

/** The shortest interval a job may repeat at: a chat bot posting more often is a runaway, not a schedule. */
export const MIN_EVERY_MS = 60_000;

/**
 * The shortest time between two runs of `schedule`; undefined for a one-off (`at`), which never
 * repeats. A cron expression repeats within a minute only through its seconds field, and then
 * does so in every minute it runs in, so the minute of its next run shows the shortest gap (or
 * shows one run: the expression never runs twice in a minute, which is all the minimum asks).
 */
export function shortestInterval(schedule: Schedule, now: number): number | undefined {
  switch (schedule.kind) {
    case 'every':
      return schedule.everyMs;
    case 'at':
      return undefined;
    case 'cron': {
      const cron = new Cron(schedule.expr, { timezone: schedule.tz, paused: true });
      const first = cron.nextRun(new Date(now))?.getTime();
      if (first === undefined) return undefined;
      const minute = first - (first % 60_000);
      let shortest: number | undefined;
      let prev = cron.nextRun(new Date(minute - 1))?.getTime();
      for (let t = prev === undefined ? undefined : cron.nextRun(new Date(prev))?.getTime(); t !== undefined && prev !== undefined && t < minute + 60_000; prev = t, t = cron.nextRun(new Date(t))?.getTime()) {
        shortest = Math.min(shortest ?? Infinity, t - prev);
      }
      return shortest ?? MIN_EVERY_MS;
    }
  }
}

/**
 * The one minimum for every schedule form (the cron tool, `/cron add` and the CLI all read a
 * schedule through `parseSchedule`, which asks this): a refusal naming the field, or undefined.
 */
export function intervalRefusal(schedule: Schedule, now: number): string | undefined {
  const shortest = shortestInterval(schedule, now);
  if (shortest === undefined || shortest >= MIN_EVERY_MS) return undefined;
  const field = schedule.kind === 'cron' ? 'cron' : 'everyMs';
  const what = schedule.kind === 'cron' ? `"${schedule.expr}" runs ${shortest / 1000} s apart; runs must be` : 'runs must be';
  return `${field}: ${what} at least ${MIN_EVERY_MS} ms (one minute) apart`;
}

export type ScheduleResult = { ok: true; schedule: Schedule } | { ok: false; error: string };

/**
 * Reads the schedule a caller gave (`cron` + optional `tz`, `everyMs`, or `at` as ISO 8601) and
 * checks it: a bad cron field, an unknown zone, runs less than a minute apart (any form, see
 * `intervalRefusal`) or a time in the past is an error naming the field.
 */
export function parseSchedule(input: { cron?: string; tz?: string; everyMs?: number; at?: string }, now: number): ScheduleResult {
  const given = [input.cron !== undefined, input.everyMs !== undefined, input.at !== undefined].filter(Boolean).length;
  if (given !== 1) return { ok: false, error: 'give exactly one of cron, everyMs or at' };
  if (input.cron !== undefined) {
    try {
      const probe = new Cron(input.cron, { timezone: input.tz, paused: true });
      if (!probe.nextRun(new Date(now))) return { ok: false, error: `cron: "${input.cron}" never runs again` };
    } catch (err) {
      return { ok: false, error: `cron: ${(err as Error).message}` };
    }
    const schedule: Schedule = { kind: 'cron', expr: input.cron, tz: input.tz };
    const refusal = intervalRefusal(schedule, now);
    return refusal ? { ok: false, error: refusal } : { ok: true, schedule };
  }
  if (input.tz !== undefined) return { ok: false, error: 'tz: only applies to cron schedules' };
  if (input.everyMs !== undefined) {
    if (!Number.isInteger(input.everyMs)) return { ok: false, error: `everyMs: a whole number of milliseconds, at least ${MIN_EVERY_MS} (one minute)` };
    const schedule: Schedule = { kind: 'every', everyMs: input.everyMs };
    const refusal = intervalRefusal(schedule, now);
    return refusal ? { ok: false, error: refusal } : { ok: true, schedule };
  }
  const at = Date.parse(input.at!);
  if (Number.isNaN(at)) return { ok: false, error: `at: "${input.at}" is not an ISO 8601 time` };
  if (at <= now) return { ok: false, error: `at: ${new Date(at).toISOString()} is in the past` };
  return { ok: true, schedule: { kind: 'at', at } };
}

/** The first run strictly after `after`; undefined when the schedule is spent. */
export function nextRunAt(schedule: Schedule, after: number, lastRunAt?: number): number | undefined {
  switch (schedule.kind) {
    case 'cron':
      return new Cron(schedule.expr, { timezone: schedule.tz, paused: true }).nextRun(new Date(after))?.getTime();
    case 'every': {
      const base = lastRunAt ?? after;
      const next = base + schedule.everyMs;
      // After downtime, skip the missed runs instead of firing them in a burst.
      return next > after ? next : after + schedule.everyMs - ((after - base) % schedule.everyMs);
    }
    case 'at':
      return lastRunAt === undefined && schedule.at > after ? schedule.at : undefined;
  }
}

/**
 * How many run times fell in `[from, to]`, `from` being one (the slot a job was waiting for):
 * what a job missed while Warden was down. Counting stops at `cap`.
 */
export function slotsBetween(schedule: Schedule, from: number, to: number, cap = 1000): number {
  if (to < from) return 0;
  switch (schedule.kind) {
    case 'at':
      return 1;
    case 'every':
      return Math.min(cap, Math.floor((to - from) / schedule.everyMs) + 1);
    case 'cron': {
      const cron = new Cron(schedule.expr, { timezone: schedule.tz, paused: true });
      let count = 1;
      for (let t = cron.nextRun(new Date(from))?.getTime(); t !== undefined && t <= to && count < cap; t = cron.nextRun(new Date(t))?.getTime()) count++;
      return count;
    }
  }
}

export function describeSchedule(schedule: Schedule): string {
  switch (schedule.kind) {
    case 'cron':
      return `cron "${schedule.expr}"${schedule.tz ? ` (${schedule.tz})` : ''}`;
    case 'every':
      return `every ${formatDuration(schedule.everyMs)}`;
    case 'at':
      return `once at ${new Date(schedule.at).toISOString()}`;
  }
}

function formatDuration(ms: number): string {
  if (ms % 86_400_000 === 0) return `${ms / 86_400_000} d`;
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  return `${ms / 1000} s`;
}
