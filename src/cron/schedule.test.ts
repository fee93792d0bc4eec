import { describe, expect, it } from 'vitest';
import { nextRunAt, parseSchedule } from './schedule.js';

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
    [{ everyMs: 1000 }, 'everyMs: at least 60000 (one minute)'],
    [{ everyMs: 1.5e6 + 0.5 }, 'everyMs: at least 60000 (one minute)'],
    [{ at: 'tomorrow' }, 'at: "tomorrow" is not an ISO 8601 time'],
    [{ at: '2020-01-01T00:00:00Z' }, 'at: 2020-01-01T00:00:00.000Z is in the past'],
    [{ everyMs: 60_000, tz: 'UTC' }, 'tz: only applies to cron schedules'],
  ])('rejects %o', (input, error) => {
    const result = parseSchedule(input, NOW);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error).toContain(error);
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
