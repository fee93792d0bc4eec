import { describe, expect, it } from 'vitest';
import { parseCronCommand, quotedSchedule, scheduleArgs } from './cron-command.js';

describe('parseCronCommand', () => {
  it.each([
    ['', { action: 'list' }],
    ['list', { action: 'list' }],
    ['add "0 9 * * 1-5" post the open incidents in #ops', { action: 'add', cron: '0 9 * * 1-5', message: 'post the open incidents in #ops', target: '#ops' }],
    ['add "0 9 * * 1-5" post the open incidents', { action: 'add', cron: '0 9 * * 1-5', message: 'post the open incidents' }],
    ['add “0 9 * * 1-5” summarise <#300000000000000003> please', { action: 'add', cron: '0 9 * * 1-5', message: 'summarise <#300000000000000003> please', target: '<#300000000000000003>' }],
    ["add '*/30 * * * *' ping", { action: 'add', cron: '*/30 * * * *', message: 'ping' }],
    ['add "0 9 * * 1-5 Europe/Paris" standup', { action: 'add', cron: '0 9 * * 1-5', tz: 'Europe/Paris', message: 'standup' }],
    ['add "every 2h" check the queue', { action: 'add', everyMs: 7_200_000, message: 'check the queue' }],
    ['add "at 2026-12-24T09:00:00Z" wish everyone a good break', { action: 'add', at: '2026-12-24T09:00:00Z', message: 'wish everyone a good break' }],
    ['add "0 9 * * *" report on <#C0123|ops> and mention #ops again', { action: 'add', cron: '0 9 * * *', message: 'report on <#C0123|ops> and mention #ops again', target: '<#C0123|ops>' }],
    ['run ab12cd34', { action: 'run', id: 'ab12cd34' }],
    ['pause ab12cd34', { action: 'update', id: 'ab12cd34', enabled: false }],
    ['resume ab12cd34', { action: 'update', id: 'ab12cd34', enabled: true }],
    ['remove ab12cd34', { action: 'remove', id: 'ab12cd34' }],
    ['RUNS ab12cd34', { action: 'runs', id: 'ab12cd34' }],
  ])('/cron %s', (args, call) => {
    expect(parseCronCommand(args)).toMatchObject({ ok: true, call });
  });

  it.each([
    ['frobnicate', /unknown \/cron subcommand "frobnicate"/],
    ['add 0 9 * * 1-5 no quotes', /needs a quoted schedule and a message/],
    ['add "0 9 * * *"', /needs a quoted schedule and a message/],
    ['add "0 9 * * *" post in #ops and #dev', /names 2 channels \(#ops, #dev\); a job posts in one/],
    ['run', /usage: \/cron run <id>/],
    ['pause a b', /usage: \/cron pause <id>/],
    ['list everything', /usage:/],
  ])('/cron %s is refused with its usage', (args, message) => {
    const parsed = parseCronCommand(args);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.message).toMatch(message);
  });

  it.each([
    ['every 30m', { everyMs: 1_800_000 }],
    ['every 1 d', { everyMs: 86_400_000 }],
    ['every 15 minutes', { everyMs: 900_000 }],
    ['0 9 * * 1-5 UTC', { cron: '0 9 * * 1-5', tz: 'UTC' }],
    ['0 0 9 * * 1-5', { cron: '0 0 9 * * 1-5' }],
  ])('schedule %s', (spec, args) => {
    expect(scheduleArgs(spec)).toEqual(args);
  });
});

describe('quotedSchedule', () => {
  const FORMER = /^(?:"([^"]+)"|'([^']+)'|`([^`]+)`|“([^”]+)”|‘([^’]+)’)\s+([\s\S]+)$/;
  it.each([
    '"0 9 * * *" post it',
    "'every 2h' check",
    '`at 2026-12-01T09:00:00Z` remind',
    '“0 9 * * *” summarise',
    '‘0 9 * * *’ summarise',
    '"0 9 * * *"post',
    '"0 9 * * *" ',
    '"0 9 * * *"  ',
    '"0 9 * * *"\n\nline two',
    '"" message',
    '"unclosed message',
    '“mixed" message',
    '"a"b" message',
    '“a“b” message',
    'no quotes',
    '',
  ])('%j as the former pattern reads it', (rest) => {
    const m = FORMER.exec(rest);
    expect(quotedSchedule(rest)).toEqual(m ? { spec: (m[1] ?? m[2] ?? m[3] ?? m[4] ?? m[5])!, message: m[6]!.trim() } : undefined);
  });

  it('returns at once on a schedule quote that never closes over 100,000 characters', () => {
    expect(quotedSchedule(`"${' '.repeat(100_000)}`)).toBeUndefined();
    expect(parseCronCommand(`add "0 9 * * *"${' '.repeat(100_000)}x`)).toMatchObject({ ok: true, call: { message: 'x' } });
  });
});
