import { describe, expect, it } from 'vitest';
import { BUILTIN_PROFILES, buildSafeBinPolicy, checkSafeBin, validateSafeBinArgs, type SafeBinProfile } from './safe-bins.js';

/** The validator's reading of argv, as GNU getopt reads it (the real binaries: test/security/exec-safe-bins.test.ts). */
const PROFILE: SafeBinProfile = {
  maxPositional: 0,
  allowedValueFlags: ['--lines', '-n'],
  allowedOptionalValueFlags: ['--group', '-g'],
  allowedBooleanFlags: ['--quiet', '-q'],
  deniedFlags: ['--output', '--quote', '-o'],
};
const SETS: SafeBinProfile = { minPositional: 1, maxPositional: 2, allowedBooleanFlags: ['-d'], optionsEndAtFirstOperand: true };
const OBSOLETE: SafeBinProfile = { maxPositional: 0, allowedValueFlags: ['-c'], allowedBooleanFlags: ['-q'], obsoleteWithOperand: ['-c'] };

describe('validateSafeBinArgs', () => {
  const profiles = { filter: PROFILE, sets: SETS, obsolete: OBSOLETE };
  it.each<[string[], keyof typeof profiles, boolean]>([
    // A required value: attached or the next word.
    [['-n', '5'], 'filter', true],
    [['-n5'], 'filter', true],
    [['-qn5'], 'filter', true],
    [['--lines', '5'], 'filter', true],
    [['--lines=5'], 'filter', true],
    [['--li=5'], 'filter', true],
    [['-n'], 'filter', false],
    // An optional value only attached: getopt leaves the next word as an operand.
    [['--group=both'], 'filter', true],
    [['--gr=both'], 'filter', true],
    [['-gboth'], 'filter', true],
    [['--group', 'in'], 'filter', false],
    [['--group'], 'filter', false],
    [['--group='], 'filter', false],
    [['-g', 'in'], 'filter', false],
    [['-qg'], 'filter', false],
    // No value on a flag, denied and unknown options, ambiguous prefixes.
    [['--quiet=1'], 'filter', false],
    [['-o', 'x'], 'filter', false],
    [['--ou=x'], 'filter', false],
    [['-x'], 'filter', false],
    [['--qu'], 'filter', false],
    [['--qui'], 'filter', true],
    // Operands: none, `-` is stdin, `--` ends the options.
    [['-'], 'filter', true],
    [['in'], 'filter', false],
    [['--', 'in'], 'filter', false],
    [['-n', '1', '--', '-'], 'filter', true],
    // An option after an operand is a file name under POSIXLY_CORRECT.
    [['-', '-n', '1'], 'filter', false],
    [['-', '--'], 'filter', false],
    [['-', '-'], 'filter', true],
    // A binary that stops at its first operand: everything after it is an operand.
    [['a', '-d'], 'sets', true],
    [['-d', 'a'], 'sets', true],
    [['a', 'b', '-d'], 'sets', false],
    [['-', 'a'], 'sets', true],
    // An obsolete parser's `OPTION FILE`: the pair alone asks, the value attached does not.
    [['-c', '5'], 'obsolete', false],
    [['-c5'], 'obsolete', true],
    [['-c', '5', '-q'], 'obsolete', true],
    // An empty word is an argument of its own (differs from OpenClaw, which skips it): an empty
    // operand is a file named '' (or an empty set), an empty value is no literal.
    [[''], 'filter', false],
    [['-n', '1', ''], 'filter', false],
    [['-n', '', '5'], 'filter', false],
    [['-n', ''], 'filter', false],
    [['--lines', ''], 'filter', false],
    [['--lines='], 'filter', false],
    [['--', ''], 'filter', false],
    [['a', 'b', ''], 'sets', false],
    [['', 'a'], 'sets', false],
    [['a', ''], 'sets', false],
  ])('%j (%s) → %s', (args, which, ok) => {
    const profile = profiles[which];
    expect(validateSafeBinArgs(args, profile).ok).toBe(ok);
  });
});

describe('checkSafeBin', () => {
  const policy = buildSafeBinPolicy({ trustedDirs: ['/opt/bin'] });
  it('a built-in profile covers the binary of its own name only', () => {
    expect(checkSafeBin(['uniq', '-c'], '/usr/bin/uniq', policy).ok).toBe(true);
    expect(checkSafeBin(['uniq', '-c'], '/opt/bin/busybox', policy)).toEqual({ ok: false, reason: expect.stringMatching(/not the program its built-in profile describes/) });
    expect(checkSafeBin(['tail', '-n', '1'], '/usr/bin/head', policy).ok).toBe(false);
  });
  it('an operator profile for the name is the operator’s: it applies to whatever the name resolves to', () => {
    const own = buildSafeBinPolicy({ safeBins: ['uniq'], trustedDirs: ['/opt/bin'], profiles: { uniq: { maxPositional: 0, allowedValueFlags: ['-f'] } } });
    expect(own.profiles.uniq).not.toBe(BUILTIN_PROFILES.uniq);
    expect(checkSafeBin(['uniq', '-f', '1'], '/opt/bin/busybox', own).ok).toBe(true);
  });
});
