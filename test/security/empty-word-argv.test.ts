import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { execConfig } from '../../src/config/schema/exec.js';
import type { AllowlistEntry } from '../../src/exec/allowlist.js';
import { execPolicyFromConfig } from '../../src/exec/check.js';
import { evaluateExec, type ExecDecision, type ExecVerdict } from '../../src/exec/decide.js';
import { DEFAULT_PATH_DIRS } from '../../src/exec/resolve.js';
import type { ExecHost } from '../../src/exec/sandbox.js';

/**
 * Attack class: the argv the gate judges is not the argv the program gets. A word made only of
 * quotes (`''`, `""`, `''""`) is an empty argument to sh; a splitter that drops it (OpenClaw's
 * does) judges `rm -rf build/ ''` as the `rm -rf build/` an owner approved, and an empty word
 * shifts which token is an option's value or an operand (`head -n '' 5` reads the file 5,
 * `find . -name '' -delete` deletes). The same holds for a character the splitter takes for a
 * blank and sh does not (U+00A0, a vertical tab): after one, a `#` starts no comment. The
 * attacker is the model writing commands after the owner approved some once with "allow
 * always"; every verdict comes from `evaluateExec`, the function the exec tool asks.
 */
const root = mkdtempSync(path.join(tmpdir(), 'warden-empty-word-'));
const cwd = path.join(root, 'work');
mkdirSync(path.join(cwd, 'build'), { recursive: true });
writeFileSync(path.join(cwd, 'job.py'), 'print("approved")\n');
writeFileSync(path.join(cwd, 'job.py\u00a0'), 'print("not approved")\n');
writeFileSync(path.join(cwd, '__main__.py'), 'print("never approved")\n');
afterAll(() => rmSync(root, { recursive: true, force: true }));

const options = { cwd, home: root, pathDirs: DEFAULT_PATH_DIRS, now: 1_000 };

function gate(command: string, config: Record<string, unknown> = {}, stored: AllowlistEntry[] = [], host: ExecHost = 'gateway'): ExecVerdict {
  return evaluateExec(command, execPolicyFromConfig(execConfig.parse({ host, ...config }), stored, host), options);
}

/** What "allow always" on the card for `command` stores. */
function approveAlways(command: string, config: Record<string, unknown> = {}): AllowlistEntry[] {
  const asked = gate(command, config);
  expect(asked.decision).toBe('ask');
  expect(asked.allowAlways.offered).toBe(true);
  return asked.allowAlways.entries.map((e) => ({ ...e, source: 'allow-always' as const }));
}

describe('an allow-always grant covers only the argv it was bound to', () => {
  const grants: Record<string, { approved: string; config?: Record<string, unknown> }> = {
    rm: { approved: 'rm -rf build/' },
    ls: { approved: 'ls' },
    lsEmpty: { approved: "ls ''" },
    python: { approved: 'python3 job.py', config: { strictInlineEval: true } },
  };
  const stored = Object.fromEntries(Object.entries(grants).map(([name, g]) => [name, approveAlways(g.approved, g.config)]));

  it.each<[keyof typeof grants, string, string, ExecDecision]>([
    ['rm', 'the approved command', 'rm -rf build/', 'allow'],
    ['rm', 'quotes inside a word change no word', "rm -rf build/''", 'allow'],
    ['rm', 'an empty word before a word joins it', "rm -rf ''build/", 'allow'],
    ['rm', 'an empty argument more', "rm -rf build/ ''", 'ask'],
    ['rm', 'an empty argument more, double-quoted', 'rm -rf build/ ""', 'ask'],
    ['rm', 'an empty argument of two kinds of quotes', `rm -rf build/ ''""`, 'ask'],
    ['rm', 'two empty arguments', `rm -rf build/ '' ""`, 'ask'],
    ['rm', 'an empty argument between the words', "rm -rf '' build/", 'ask'],
    ['rm', 'an empty argument first', "rm '' -rf build/", 'ask'],
    ['rm', 'an empty argument, then a comment', "rm -rf build/ '' # cleanup", 'ask'],
    ['rm', "bash's `$''` (sh reads `$`)", "rm -rf build/ $''", 'ask'],
    ['rm', 'an empty command word before the approved command', "'' rm -rf build/", 'ask'],
    ['rm', 'a wrapper, then an empty word', "nice '' rm -rf build/", 'ask'],
    ['rm', 'a Unicode space that sh keeps in the word', 'rm -rf build/\u00a0', 'ask'],
    ['ls', 'the approved command', 'ls', 'allow'],
    ['ls', 'one empty argument', "ls ''", 'ask'],
    ['ls', 'two empty arguments (they join to the no-argument mark)', "ls '' ''", 'ask'],
    ['lsEmpty', 'the approved command', "ls ''", 'allow'],
    ['lsEmpty', 'spelled with double quotes', 'ls ""', 'allow'],
    ['lsEmpty', 'no argument', 'ls', 'ask'],
    ['lsEmpty', 'two empty arguments', "ls '' ''", 'ask'],
    ['python', 'the approved command', 'python3 job.py', 'allow'],
    ['python', 'an empty script operand first: python runs ./__main__.py', "python3 '' job.py", 'ask'],
    ['python', 'an empty script operand alone', "python3 ''", 'ask'],
  ])('%s grant, %s: %j → %s', (grant, _what, command, expected) => {
    const config = grants[grant]!.config ?? {};
    expect(gate(command, config, stored[grant]!).decision).toBe(expected);
  });

  it('stores the empty argument in the binding, so the approved `ls ""` is exactly one empty argument', () => {
    expect(stored.lsEmpty!.map((e) => e.argPattern)).toEqual(['^\x00$']);
    expect(approveAlways("ls '' ''").map((e) => e.argPattern)).toEqual(['^\x00{2}$']);
  });
});

describe('an exact-command grant covers only the text sh reads as the approved argv', () => {
  // Without strictInlineEval, allow-always for an interpreter stores the command text.
  const lenient = { strictInlineEval: false };
  const stored = approveAlways('python3 job.py', lenient);
  it('stores an exact-command entry', () => {
    expect(stored.map((e) => e.pattern)).toEqual([expect.stringMatching(/^=command:/)]);
  });
  it.each<[string, string, ExecDecision]>([
    ['the approved command', 'python3 job.py', 'allow'],
    ['spaces around it', '  python3 job.py  ', 'allow'],
    // sh reads `job.py<U+00A0>`, another file; the text was trimmed of it and the analysis split at it.
    ['a trailing Unicode space that names another file', 'python3 job.py\u00a0', 'ask'],
    ['an empty argument more', "python3 job.py ''", 'ask'],
  ])('%s: %j → %s', (_what, command, expected) => {
    expect(gate(command, lenient, stored).decision).toBe(expected);
  });
  it('the file sh runs for the Unicode-space spelling is not the approved one', () => {
    const run = spawnSync('/bin/sh', ['-c', 'python3 job.py\u00a0'], { cwd, encoding: 'utf8' });
    expect(run.stdout).toBe('not approved\n');
  });
});

describe('config entries: an argPattern written as text never covers an empty argument', () => {
  const config = { allowlist: [{ pattern: '/usr/bin/ls', argPattern: '-la*' }, { pattern: '/usr/bin/echo', argPattern: '^hello( .*)?$' }] };
  it.each<[string, ExecDecision]>([
    ['ls -la', 'allow'],
    ['ls -la build', 'allow'],
    ["ls -la ''", 'ask'],
    ["ls -la '' build", 'ask'],
    ['echo hello world', 'allow'],
    ["echo hello ''", 'ask'],
    ["'' echo hello", 'ask'],
  ])('%j → %s', (command, expected) => {
    expect(gate(command, config).decision).toBe(expected);
  });
  it('a bare `*` entry does not resolve an empty command word to anything', () => {
    const v = gate("'' ls", { allowlist: [{ pattern: '*' }] });
    expect(v.decision).toBe('ask');
    expect(v.segments[0]).toMatchObject({ resolved: null, matchedBy: null, miss: expect.stringMatching(/command word is empty/) });
    expect(v.reason).toContain("segment 1 `'' ls`");
  });
});

describe('safe bins: an empty word is an argument, never skipped', () => {
  it.each<[string, ExecDecision]>([
    ['head -n 1', 'allow'],
    ['wc -l', 'allow'],
    ['tr a b', 'allow'],
    ['cut -d , -f 1', 'allow'],
    // `head` opens the file '' — and with the value shifted, the file 5.
    ["head -n 1 ''", 'ask'],
    ["head -n '' 5", 'ask'],
    ["head -n ''", 'ask'],
    ["head --lines '' 5", 'ask'],
    ["wc -l ''", 'ask'],
    ["tail -n 2 -- ''", 'ask'],
    ["tr a b ''", 'ask'],
    ["tr '' ''", 'ask'],
    ["cut -d '' -f 1", 'ask'],
    ["uniq -c ''", 'ask'],
    ["'' head -n 1", 'ask'],
  ])('%j → %s', (command, expected) => {
    expect(gate(command).decision).toBe(expected);
  });
  it('the shifted value is a file to the real head', () => {
    writeFileSync(path.join(cwd, '5'), 'secret\n');
    const run = spawnSync('/bin/sh', ['-c', "head -n '' 5"], { cwd, encoding: 'utf8' });
    expect(run.stderr).toMatch(/invalid number of lines/);
    const old = spawnSync('/bin/sh', ['-c', 'head -n 5 5'], { cwd, encoding: 'utf8' });
    expect(old.stdout).toBe('secret\n');
  });
});

describe('the default read-only list (sandbox host): an empty word asks', () => {
  it.each<[string, ExecDecision]>([
    ['ls', 'allow'],
    ['find . -name x', 'allow'],
    ["ls ''", 'ask'],
    // Dropped, the empty word would make `-delete` the value of `-name`.
    ["find . -name '' -delete", 'ask'],
    ["find '' -name x", 'ask'],
    ["grep -e '' job.py", 'ask'],
    ["uniq job.py ''", 'ask'],
    ["git log ''", 'ask'],
    ["git '' log", 'ask'],
    ["sort -k '' job.py", 'ask'],
  ])('%j → %s', (command, expected) => {
    expect(gate(command, {}, [], 'sandbox').decision).toBe(expected);
  });
});

describe('inline code behind an empty word, or after a `#` sh reads inside a word, is still inline code (strictInlineEval)', () => {
  const strict = { strictInlineEval: true, allowlist: [{ pattern: '/usr/bin/python3*' }, { pattern: '/usr/bin/node' }, { pattern: '/usr/bin/perl' }, { pattern: '/usr/bin/dash', argPattern: '-c *' }, { pattern: '/usr/bin/echo' }] };
  it.each<[string, string]>([
    // node and perl read their program from stdin; python runs the working directory's __main__.py.
    ["node ''", 'node'],
    ["perl ''", 'perl'],
    ["python3 ''", 'python3'],
    ["sh ''", 'sh'],
    // sh runs the second command: the `#` after a vertical tab or U+00A0 starts no comment.
    ['sh -c \'echo a\u000b# ; python3 -c "print(1)"\'', 'python3'],
    ['sh -c \'echo a\u00a0# ; python3 -c "print(1)"\'', 'python3'],
    // An escaped blank is part of the word too: `a\ #` is the word `a #`.
    ['sh -c \'echo a\\ #; python3 -c "print(1)"\'', 'python3'],
  ])('%j asks, never stored', (command, interpreter) => {
    const v = gate(command, strict);
    expect(v.decision).toBe('ask');
    expect(v.inlineEval).toMatchObject({ interpreter: expect.stringContaining(interpreter === 'python3' ? 'python' : interpreter) });
    expect(v.allowAlways.offered).toBe(false);
  });
  it('the plain commands still run', () => {
    expect(gate('python3 job.py', strict).decision).toBe('allow');
    expect(gate("sh -c 'echo a # ; python3 -c 1'", strict).decision).toBe('allow');
  });
  it('python3 with an empty operand runs a file no operand names', () => {
    expect(spawnSync('python3', [''], { cwd, encoding: 'utf8' }).stdout).toBe('never approved\n');
  });
});

describe('repository configuration behind an empty word', () => {
  const trusted = { allowlist: [{ pattern: '/usr/bin/git', trustRepoConfig: true }] };
  it.each<[string, ExecDecision]>([
    ['git status', 'allow'],
    ["git '' status", 'ask'],
    ["git -C '' status", 'ask'],
  ])('%j → %s', (command, expected) => {
    expect(gate(command, trusted).decision).toBe(expected);
  });
});
