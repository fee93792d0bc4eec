import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { execConfig } from '../../src/config/schema/exec.js';
import { execPolicyFromConfig } from '../../src/exec/check.js';
import { evaluateExec } from '../../src/exec/decide.js';
import { splitShellArgs } from '../../src/exec/analysis.js';
import { DEFAULT_PATH_DIRS } from '../../src/exec/resolve.js';
import {
  BUILTIN_PROFILES,
  DEFAULT_SAFE_BINS,
  resolveProfileLongFlag,
  validateSafeBinArgs,
  type SafeBinProfile,
} from '../../src/exec/safe-bins.js';
import { filesTouched, filesTouchedEach, probeGnuOptions, runBinary, secretOf, type ArgKind, type ProbeSetup, type ProbedOptions } from '../exec/getopt-probe.js';

/**
 * Attack class: a safe-bin profile that reads an option otherwise than the binary does lets the
 * binary open a file the validator took for a value. `uniq --group X` was "a flag with a value"
 * while GNU uniq's `--group[=METHOD]` takes an optional argument, so X is uniq's INPUT and a
 * second such word its OUTPUT. Every built-in profile is checked here against the real binary:
 * its options (from `--help`, the executable's own words and every short letter), how each one's
 * argument is parsed, how abbreviations resolve, whether options may follow operands — and every
 * argv the validator accepts is run on the binary under strace to show it touches no file.
 */
const probeDir = mkdtempSync(path.join(tmpdir(), 'warden-getopt-'));
const proofDir = mkdtempSync(path.join(tmpdir(), 'warden-safebin-'));
afterAll(() => {
  rmSync(probeDir, { recursive: true, force: true });
  rmSync(proofDir, { recursive: true, force: true });
});
// Every word a value or operand below uses names a file here, holding a content unique to it.
for (const name of ['in', 'probe', '1', '2', 'a', 'b', 'x', 'separate', 'both', 'patterns', 'etc/secret']) {
  mkdirSync(path.dirname(path.join(proofDir, name)), { recursive: true });
  writeFileSync(path.join(proofDir, name), `${secretOf(name)}\n`);
}
writeFileSync(path.join(proofDir, 'list'), 'in\0');
mkdirSync(path.join(proofDir, 'dir'));

/** How each binary is made to show its parsing. */
const SETUP: Record<string, Omit<ProbeSetup, 'scratch'>> = {
  // A dead --pid ends tail's follow modes at once, and keeps its obsolete `-l`/`+N` parser out.
  tail: { lead: ['--pid=2147483647'], fileLead: ['--pid=2147483647'] },
  // grep's first operand is its pattern; cut reads nothing without a list; tr's operands are strings.
  grep: { fileLead: ['-e', 'x'] },
  cut: { fileLead: ['-f', '1'] },
  tr: { fileLead: null },
};

const binaryOf = (name: string): string | null => ['/usr/bin', '/bin'].map((d) => path.join(d, name)).find((p) => existsSync(p)) ?? null;
const NAMES = Object.keys(BUILTIN_PROFILES).sort();
const PROBED = new Map<string, ProbedOptions>();
for (const name of NAMES) {
  const binary = binaryOf(name);
  if (binary) PROBED.set(name, probeGnuOptions(binary, { scratch: probeDir, ...SETUP[name] }));
}

type ProfileKind = ArgKind | 'denied';
function profileKinds(profile: SafeBinProfile): Map<string, ProfileKind> {
  const out = new Map<string, ProfileKind>();
  for (const f of profile.deniedFlags ?? []) out.set(f, 'denied');
  for (const f of profile.allowedBooleanFlags ?? []) out.set(f, 'none');
  for (const f of profile.allowedValueFlags ?? []) out.set(f, 'required');
  for (const f of profile.allowedOptionalValueFlags ?? []) out.set(f, 'optional');
  return out;
}

describe('every built-in safe-bin profile agrees with the real binary', () => {
  it('every built-in profile has its binary on this machine', () => {
    expect([...PROBED.keys()]).toEqual(NAMES);
  });

  const perOption = [...PROBED].flatMap(([name, probed]) => [...probed.options].map(([flag, kind]) => [name, flag, kind] as const));
  it.each(perOption)('%s %s: the binary reads its argument as %s; the profile knows it and agrees', (name, flag, kind) => {
    const profile = profileKinds(BUILTIN_PROFILES[name]!);
    const known = profile.get(flag);
    expect(known, `${name} ${flag} (${kind} argument) is not in the profile`).toBeDefined();
    if (known !== 'denied') expect(known).toBe(kind);
  });

  describe.each([...PROBED])('%s', (name, probed) => {
    const profile = BUILTIN_PROFILES[name]!;
    it('is the GNU program the profile describes', () => {
      expect(runBinary(probed.binary, ['--version'], probeDir).stdout).toMatch(/GNU/);
    });
    it('names no option the binary lacks', () => {
      expect([...profileKinds(profile).keys()].filter((f) => !probed.options.has(f) && !probed.inconsistent.includes(f))).toEqual([]);
    });
    it('allows no option whose parsing the probes could not pin down', () => {
      const kinds = profileKinds(profile);
      expect(probed.inconsistent.filter((f) => kinds.get(f) !== undefined && kinds.get(f) !== 'denied')).toEqual([]);
    });
    it(`reads options after operands as the binary does (${probed.permutes ? 'permutes' : 'stops at the first operand'})`, () => {
      expect(profile.optionsEndAtFirstOperand ?? false).toBe(!probed.permutes);
    });
  });
});

/** getopt_long on the binary's whole table: an exact name, else the one option it abbreviates. */
function getoptResolves(options: ReadonlyMap<string, ArgKind>, written: string): string | null {
  if (options.has(written)) return written;
  const matches = [...options.keys()].filter((f) => f.startsWith('--') && f.startsWith(written));
  return matches.length === 1 ? matches[0]! : null;
}

describe('abbreviated long options resolve as getopt resolves them', () => {
  const cases = [...PROBED].flatMap(([name, probed]) =>
    [...probed.options.keys()].filter((f) => f.startsWith('--')).map((flag) => [name, flag] as const),
  );
  it.each(cases)('%s: every abbreviation of %s', (name, flag) => {
    const probed = PROBED.get(name)!;
    const profile = BUILTIN_PROFILES[name]!;
    const kinds = profileKinds(profile);
    for (let len = 3; len < flag.length; len++) {
      const written = flag.slice(0, len);
      const mine = resolveProfileLongFlag(profile, written);
      if (mine === null) continue;
      expect(mine, `${name} ${written}`).toBe(getoptResolves(probed.options, written));
      if (kinds.get(mine) === 'denied') continue;
      // And the binary itself names the option it read `written` as.
      const lead = SETUP[name]?.lead ?? [];
      const kind = probed.options.get(mine)!;
      const r = runBinary(probed.binary, [...lead, kind === 'required' ? written : `${written}=@`], probeDir);
      expect(r.stderr, `${name} ${written}`).not.toMatch(/ambiguous|unrecognized/);
      if (kind === 'required') expect(r.stderr).toContain(`option '${mine}' requires an argument`);
      if (kind === 'none') expect(r.stderr).toContain(`option '${mine}' doesn't allow an argument`);
    }
  });
});

/**
 * Argv forms built from each profile's allowed options: values attached, separate, missing; short
 * clusters with a value attached (`-qn5`); abbreviations; `-`, `--`, operands before and after
 * options. The validator's verdict on each is checked against the binary: whatever it accepts
 * touches no file.
 */
function formsFor(name: string): string[][] {
  const profile = BUILTIN_PROFILES[name]!;
  const kinds = [...profileKinds(profile)].filter(([, k]) => k !== 'denied') as Array<[string, ArgKind]>;
  const booleans = kinds.filter(([f, k]) => k === 'none' && /^-\w$/.test(f)).map(([f]) => f[1]!);
  const forms: string[][] = [[], ['-'], ['--'], ['-', '-'], ['--', '-'], ['probe'], ['--', 'probe'], ['-', 'probe']];
  for (const [flag] of kinds) {
    const long = flag.startsWith('--');
    const abbreviated = long && resolveProfileLongFlag(profile, flag.slice(0, -1)) === flag ? flag.slice(0, -1) : null;
    for (const written of [flag, ...(abbreviated ? [abbreviated] : [])]) {
      forms.push([written], [written, '1'], [written, 'probe'], ['probe', written, '1'], [written, '--', 'probe']);
      forms.push(long ? [`${written}=1`] : [`${written}1`], long ? [`${written}=separate`, 'probe'] : [`${written}separate`, 'probe']);
      forms.push(long ? [`${written}=`] : [written, '']);
    }
    // A boolean letter before it in one cluster: `-qn5`, `-qn 5`.
    if (!long && booleans[0]) forms.push([`-${booleans[0]}${flag[1]}`, '1'], [`-${booleans[0]}${flag[1]}1`], [`-${booleans[0]}${flag[1]}`, 'probe']);
  }
  // grep needs a pattern, cut a list, tr its sets: without them the binary stops before any input.
  const frame: Record<string, [string[], string[]]> = { grep: [['-e', 'b'], []], cut: [['-f', '1'], []], tr: [[], ['a', 'b']] };
  const [before, after] = frame[name] ?? [[], []];
  return forms.map((f) => [...before, ...f, ...after]);
}

describe('every argv the validator accepts reads stdin only on the real binary', () => {
  const cases = [...PROBED].flatMap(([name, probed]) => {
    const seen = new Set<string>();
    return formsFor(name)
      .filter((form) => validateSafeBinArgs(form, BUILTIN_PROFILES[name]!).ok)
      .filter((form) => !seen.has(form.join('\0')) && seen.add(form.join('\0')))
      .map((form) => [name, form.join(' ') || '(no arguments)', form] as const);
  });
  it('covers every safe bin with accepted forms', () => {
    expect(new Set(cases.map(([name]) => name))).toEqual(new Set(PROBED.keys()));
  });
  // One traced session per binary runs all of its accepted forms.
  const touched = new Map<string, Map<string, string[]>>();
  const touchedBy = (name: string, form: readonly string[]): string[] => {
    if (!touched.has(name)) {
      const forms = cases.filter(([n]) => n === name).map(([, , f]) => f);
      const results = filesTouchedEach(PROBED.get(name)!.binary, forms, proofDir);
      touched.set(name, new Map(forms.map((f, i) => [f.join('\0'), results[i]!])));
    }
    return touched.get(name)!.get(form.join('\0'))!;
  };
  it.each(cases)('%s %s', (name, _label, form) => {
    expect(touchedBy(name, form)).toEqual([]);
  });
});

/**
 * The attacker's forms, judged in the attack setting (allowlist: ls and echo; safe bins: the
 * defaults plus grep and sort), and for each that asks because of a file, the proof on the real
 * binary that it would open that file.
 */
const ATTACK_POLICY = execPolicyFromConfig(
  // The default read-only list (exec-default-allowlist.test.ts) is off: this judges the safe-bin profiles alone.
  execConfig.parse({ allowlist: [{ pattern: '/usr/bin/ls' }, { pattern: '/usr/bin/echo' }], safeBins: [...DEFAULT_SAFE_BINS, 'grep', 'sort'], defaultAllowlist: false }),
  [],
);
const judge = (command: string) => evaluateExec(command, ATTACK_POLICY, { cwd: proofDir, pathDirs: DEFAULT_PATH_DIRS, home: proofDir });

/** The files the real binary touches running the command in the proof dir (what it creates is removed again). */
function touchedBy(command: string, env?: Record<string, string>): string[] {
  const [name, ...args] = splitShellArgs(command)!;
  const existed = new Set(readdirSync(proofDir));
  try {
    return filesTouched(binaryOf(name!)!, args, proofDir, env ? { env } : {});
  } finally {
    for (const f of readdirSync(proofDir)) if (!existed.has(f)) rmSync(path.join(proofDir, f), { recursive: true, force: true });
  }
}

describe('attacks on safe-bin parsing', () => {
  it.each<[command: string, verdict: 'allow' | 'ask', opens: string[] | null]>([
    // uniq: --group[=METHOD] takes an optional argument, so the next word is INPUT, then OUTPUT.
    ['uniq --group in', 'ask', ['in']],
    ['uniq --group etc/secret', 'ask', ['etc/secret']],
    ['uniq --group in --group out', 'ask', ['in', 'out']],
    ['uniq --gr in', 'ask', ['in']],
    ['uniq --group', 'ask', []],
    ['uniq --group=separate', 'allow', []],
    ['uniq --gro=both', 'allow', []],
    ['uniq --group=both in', 'ask', ['in']],
    ['uniq --all-repeated in', 'ask', ['in']],
    ['uniq -D', 'ask', []],
    ['uniq -c in out', 'ask', ['in', 'out']],
    ['uniq in -c', 'ask', ['in']],
    ['uniq - out', 'ask', ['out']],
    ['uniq -- - out', 'ask', ['out']],
    ['uniq -c -- in', 'ask', ['in']],
    ['uniq -f 1', 'allow', []],
    ['uniq -cf1 -w2', 'allow', []],
    ['uniq -2', 'ask', []],
    ['uniq +2 in', 'ask', ['in']],
    // sort: files named by option values, read or written.
    ['sort -o out', 'ask', ['out']],
    ['sort --output=out', 'ask', ['out']],
    ['sort --ou=out', 'ask', ['out']],
    ['sort -k1 -o out', 'ask', ['out']],
    ['sort -k 1 in', 'ask', ['in']],
    ['sort --files0-from=list', 'ask', ['list', 'in']],
    ['sort --files0=list', 'ask', ['list', 'in']],
    ['sort -R --random-source=in', 'ask', ['in']],
    ['sort -T dir', 'ask', null],
    ['sort --temporary-directory=dir', 'ask', null],
    ['sort --compress-program=x', 'ask', null],
    ['sort -c in', 'ask', ['in']],
    ['sort -t , -k 2', 'allow', []],
    ['sort --key=1 --field-separator=,', 'allow', []],
    ['sort -S 1M --parallel=2', 'allow', []],
    // grep: patterns only through -e, no file operand, no recursion, no pattern files.
    ['grep -f patterns -e x', 'ask', ['patterns']],
    ['grep --file=patterns', 'ask', ['patterns']],
    ['grep --exclude-f=list -e x', 'ask', ['list']],
    ['grep -e x --exclude-from=list', 'ask', ['list']],
    ['grep -e x -r', 'ask', ['.', 'in', 'patterns']],
    ['grep -e x -d recurse', 'ask', ['.', 'in', 'patterns']],
    ['grep -e x --directories=recurse', 'ask', ['.', 'in', 'patterns']],
    ['grep -e x in', 'ask', ['in']],
    ['grep in -e x', 'ask', ['in']],
    ['grep -e x -- in', 'ask', ['in']],
    ['grep b', 'ask', []],
    ['grep -3 -e b', 'ask', []],
    ['grep --color -e b', 'ask', []],
    ['grep -e b', 'allow', []],
    ['grep -m 1 -A1 -e b', 'allow', []],
    ['grep -e b --exclude=in', 'allow', []],
    // wc
    ['wc --files0-from=list', 'ask', ['list', 'in']],
    ['wc --files0=list', 'ask', ['list', 'in']],
    ['wc -l in', 'ask', ['in']],
    ['wc in -l', 'ask', ['in']],
    ['wc -l -- in', 'ask', ['in']],
    ['wc --li -', 'allow', []],
    ['wc -lwc', 'allow', []],
    // head and tail: numeric shorthand and obsolete forms, operands anywhere.
    ['head -n 5', 'allow', []],
    ['head -qn5', 'allow', []],
    ['head -cn5', 'allow', []],
    ['head --li=5', 'allow', []],
    ['head -5', 'ask', []],
    ['head -5 in', 'ask', ['in']],
    ['head -n 1 in', 'ask', ['in']],
    ['head in -n 1', 'ask', ['in']],
    ['head -n 1 -- in', 'ask', ['in']],
    ['head -n -', 'allow', []],
    ['tail -n +2', 'allow', []],
    ['tail -c5', 'allow', []],
    ['tail +2 in', 'ask', ['in']],
    ['tail -l in', 'ask', ['in']],
    ['tail -2 in', 'ask', ['in']],
    ['tail -n 1 in', 'ask', ['in']],
    ['tail -f in', 'ask', null],
    ['tail --retry', 'ask', []],
    ['tail -s 1', 'ask', []],
    ['tail --pid=1 -n 1', 'allow', []],
    // cut
    ['cut -f 1', 'allow', []],
    ['cut -d , -f 1 --complement', 'allow', []],
    ['cut -f1 in', 'ask', ['in']],
    ['cut in -f1', 'ask', ['in']],
    ['cut -f1 -- in', 'ask', ['in']],
    // tr: its operands are sets, never files, and an option after one is a set too.
    ['tr a b', 'allow', []],
    ['tr a -d', 'allow', []],
    ['tr -d a', 'allow', []],
    ['tr a b in', 'ask', []],
    ['tr -A a b', 'ask', []],
    ['tail ---presume-input-pipe -n 1', 'ask', []],
  ])('`%s` → %s', (command, verdict, opens) => {
    expect(judge(command).decision).toBe(verdict);
    expect(judge(`cd / && ${command}`).decision).toBe(verdict);
    if (opens === null) return;
    const touched = touchedBy(command);
    if (opens.length === 0) expect(touched).toEqual([]);
    else expect(touched).toEqual(expect.arrayContaining(opens));
  });

  // exec's `env` may set POSIXLY_CORRECT: getopt then stops at the first operand, and the
  // options after it are file names.
  it.each<[string, string[]]>([
    ['head - -n 1', ['-n', '1']],
    ['uniq - -c', ['-c']],
    ['wc - -l', ['-l']],
    ['head - --', ['--']],
    ['cut -f1 - -s', ['-s']],
  ])('`%s` asks: under POSIXLY_CORRECT it opens %j', (command, opens) => {
    expect(judge(command).decision).toBe('ask');
    expect(touchedBy(command, { POSIXLY_CORRECT: '1' })).toEqual(expect.arrayContaining(opens));
  });

  // …or _POSIX2_VERSION: tail's obsolete parser then reads `-c N` alone as `-c` and file N.
  it('`tail -c 1` asks: with _POSIX2_VERSION=199209 it opens `1`; `tail -c1` and longer argv do not', () => {
    expect(judge('tail -c 1').decision).toBe('ask');
    expect(touchedBy('tail -c 1', { _POSIX2_VERSION: '199209' })).toEqual(['1']);
    for (const command of ['tail -c1', 'tail -c 1 -q', 'tail -q -c 1', 'tail --bytes 1', 'tail -n 1']) {
      expect(judge(command).decision, command).toBe('allow');
      expect(touchedBy(command, { _POSIX2_VERSION: '199209' }), command).toEqual([]);
    }
  });
});

describe('a built-in profile covers only the program it describes', () => {
  const trusted = path.join(proofDir, 'trusted');
  mkdirSync(trusted);
  // A multi-call binary answering to `uniq` (BusyBox, toybox) parses options its own way.
  writeFileSync(path.join(trusted, 'busybox'), '#!/bin/sh\nexit 0\n');
  chmodSync(path.join(trusted, 'busybox'), 0o755);
  symlinkSync('busybox', path.join(trusted, 'uniq'));
  // Some other program under a safe bin's name.
  symlinkSync(binaryOf('head')!, path.join(trusted, 'tail'));
  copyFileSync(binaryOf('wc')!, path.join(trusted, 'wc'));
  chmodSync(path.join(trusted, 'wc'), 0o755);
  const policy = execPolicyFromConfig(execConfig.parse({ safeBinTrustedDirs: [trusted] }), []);
  const judgeIn = (command: string) => evaluateExec(command, policy, { cwd: proofDir, pathDirs: [trusted, ...DEFAULT_PATH_DIRS], home: proofDir });
  it.each<[string, 'allow' | 'ask']>([
    ['uniq -c', 'ask'],
    ['tail -n 1', 'ask'],
    ['wc -l', 'allow'],
  ])('`%s` from a trusted dir → %s', (command, decision) => {
    expect(judgeIn(command).decision).toBe(decision);
  });
});
