import { Cron } from 'croner';

/** When a job runs: a cron expression (optionally in a time zone), a fixed interval, or once. */
export type Schedule =
  | { kind: 'cron'; expr: string; tz?: string | undefined }
  | { kind: 'every'; everyMs: number }
  | { kind: 'at'; at: number };

/** The shortest interval a job may repeat at: a chat bot posting more often is a runaway, not a schedule. */
export const MIN_EVERY_MS = 60_000;

export type ScheduleResult = { ok: true; schedule: Schedule } | { ok: false; error: string };

/**
 * Reads the schedule a caller gave (`cron` + optional `tz`, `everyMs`, or `at` as ISO 8601) and
 * checks it: a bad cron field, an unknown zone, an interval under a minute or a time in the past
 * is an error naming the field.
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
    return { ok: true, schedule: { kind: 'cron', expr: input.cron, tz: input.tz } };
  }
  if (input.tz !== undefined) return { ok: false, error: 'tz: only applies to cron schedules' };
  if (input.everyMs !== undefined) {
    if (!Number.isInteger(input.everyMs) || input.everyMs < MIN_EVERY_MS) return { ok: false, error: `everyMs: at least ${MIN_EVERY_MS} (one minute)` };
    return { ok: true, schedule: { kind: 'every', everyMs: input.everyMs } };
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
