import { describe, expect, it } from 'vitest';
import { intervalRefusal, MIN_EVERY_MS, nextRunAt, parseSchedule, shortestInterval, type Schedule } from './schedule.js';

const NOW = Date.parse('2026-11-30T10:00:00Z');

describe('parseSchedule', () => {
  it.each([
    [{ cron: '0 9 * * 1-5' }, { kind: 'cron', expr: '0 9 * * 1-5', tz: undefined }],
    [{ cron: '0 9 * * *', tz: 'Europe/Paris' }, { kind: 'cron', expr: '0 9 * * *', tz: 'Europe/Paris' }],
    [{ everyMs: 3_600_000 }, { kind: 'every', everyMs: 3_600_000 }],
    [{ at: '2026-12-01T09:00:00Z' }, { kind: 'at', at: Date.parse('2026-12-01T09:00:00Z') }],
  ])('accepts %o', (input, schedule) => {
    expect(parseSchedule(input, NOW)).toEqual({ ok: true, schedule });
  });

  it.each([
    [{}, 'give exactly one of cron, everyMs or at'],
    [{ cron: '* * * * *', everyMs: 60_000 }, 'give exactly one of cron, everyMs or at'],
    [{ cron: '61 * * * *' }, 'cron: CronPattern: Invalid value for minute: 61'],
    [{ cron: '0 9 * * *', tz: 'Mars/Olympus' }, 'cron:'],
    [{ everyMs: 1000 }, 'everyMs: runs must be at least 60000 ms (one minute) apart'],
    [{ everyMs: 1.5e6 + 0.5 }, 'everyMs: a whole number of milliseconds, at least 60000 (one minute)'],
    [{ cron: '* * * * * *' }, 'cron: "* * * * * *" runs 1 s apart; runs must be at least 60000 ms (one minute) apart'],
    [{ at: 'tomorrow' }, 'at: "tomorrow" is not an ISO 8601 time'],
    [{ at: '2020-01-01T00:00:00Z' }, 'at: 2020-01-01T00:00:00.000Z is in the past'],
    [{ everyMs: 60_000, tz: 'UTC' }, 'tz: only applies to cron schedules'],
  ])('rejects %o', (input, error) => {
    const result = parseSchedule(input, NOW);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error).toContain(error);
  });
});

describe('one minimum interval for every schedule form', () => {
  const cron = (expr: string, tz?: string): Schedule => ({ kind: 'cron', expr, tz });
  // [schedule, shortest time between two runs (undefined: never repeats), refused?]
  it.each<[Schedule, number | undefined, boolean]>([
    [cron('* * * * * *'), 1000, true],
    [cron('*/10 * * * * *'), 10_000, true],
    [cron('0,30 * * * * *'), 30_000, true],
    [cron('0,59 * * * * *'), 59_000, true],
    // Two seconds in one minute of one day a year: still twice within a minute.
    [cron('0,1 0 0 1 1 *'), 1000, true],
    [cron('5-6 0 12 * * *', 'Asia/Kolkata'), 1000, true],
    [cron('15 * * * * *'), MIN_EVERY_MS, false],
    [cron('0 * * * * *'), MIN_EVERY_MS, false],
    [cron('* * * * *'), MIN_EVERY_MS, false],
    [cron('0 9 * * 1-5', 'Europe/Paris'), MIN_EVERY_MS, false],
    [{ kind: 'every', everyMs: 1000 }, 1000, true],
    [{ kind: 'every', everyMs: MIN_EVERY_MS - 1 }, MIN_EVERY_MS - 1, true],
    [{ kind: 'every', everyMs: MIN_EVERY_MS }, MIN_EVERY_MS, false],
    [{ kind: 'every', everyMs: 3_600_000 }, 3_600_000, false],
    [{ kind: 'at', at: NOW + 1000 }, undefined, false],
  ])('%o: shortest %s ms, refused %s', (schedule, shortest, refused) => {
    expect(shortestInterval(schedule, NOW)).toBe(shortest);
    expect(intervalRefusal(schedule, NOW) !== undefined).toBe(refused);
    // parseSchedule (the tool's, /cron add's and the CLI's reading) gives the same answer.
    const input = schedule.kind === 'cron' ? { cron: schedule.expr, ...(schedule.tz ? { tz: schedule.tz } : {}) } : schedule.kind === 'every' ? { everyMs: schedule.everyMs } : { at: new Date(schedule.at).toISOString() };
    const parsed = parseSchedule(input, NOW);
    expect(parsed.ok).toBe(!refused);
    if (!parsed.ok) expect(parsed.error).toBe(intervalRefusal(schedule, NOW));
  });
});

describe('nextRunAt', () => {
  it('follows the cron expression in its time zone', () => {
    expect(nextRunAt({ kind: 'cron', expr: '0 9 * * *', tz: 'Europe/Paris' }, NOW)).toBe(Date.parse('2026-12-01T08:00:00Z'));
  });

  it('repeats an interval from the last run and skips runs missed while down', () => {
    const every = { kind: 'every' as const, everyMs: 3_600_000 };
    expect(nextRunAt(every, NOW)).toBe(NOW + 3_600_000);
    expect(nextRunAt(every, NOW, NOW - 600_000)).toBe(NOW + 3_000_000);
    expect(nextRunAt(every, NOW, NOW - 3 * 3_600_000 - 600_000)).toBe(NOW + 3_000_000);
  });

  it('runs a one-off once', () => {
    const at = { kind: 'at' as const, at: NOW + 1000 };
    expect(nextRunAt(at, NOW)).toBe(NOW + 1000);
    expect(nextRunAt(at, NOW + 2000, NOW + 1000)).toBeUndefined();
  });
});
