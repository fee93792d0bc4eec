import { describe, expect, it } from 'vitest';
import { closesOnExec, inheritedDescriptors } from './descriptors.js';

const info = (flags: string) => `pos:\t0\nflags:\t${flags}\nmnt_id:\t15\nino:\t1234\n`;

describe('which of Warden\'s descriptors a child would inherit', () => {
  it.each<[string, string, boolean | null]>([
    ['close-on-exec, read-only', info('02000000'), true],
    ['close-on-exec, non-blocking read-write', info('02004002'), true],
    ['no close-on-exec (an inherited pipe)', info('01'), false],
    ['no close-on-exec, with O_LARGEFILE', info('0100002'), false],
    ['no flags line', 'pos:\t0\n', null],
    ['flags that are not octal', info('zz'), null],
  ])('fdinfo: %s', (_what, text, expected) => {
    expect(closesOnExec(text)).toBe(expected);
  });

  it('lists descriptors above stdio without close-on-exec, and any it could not read', () => {
    const infos = new Map<number, string | null>([
      [0, info('02')], [1, info('01')], [2, info('01')], // stdio: replaced by every spawn
      [3, info('02004002')], [7, info('01')], [251, info('01')], [12, null], [1023, info('0100000')], [40, info('02000000')],
    ]);
    expect(inheritedDescriptors(infos)).toEqual([7, 12, 251, 1023]);
  });
});
