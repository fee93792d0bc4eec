import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { execConfig } from '../../src/config/schema/exec.js';
import { execPolicyFromConfig } from '../../src/exec/check.js';
import { evaluateExec } from '../../src/exec/decide.js';
import { DEFAULT_PATH_DIRS } from '../../src/exec/resolve.js';

/**
 * Attack class: inline code hidden in a word the shell expands when it runs a `-c` payload. A
 * top-level command runs as the quoted rewrite, where nothing expands; a payload runs as written,
 * so `$1` (the outer command's own argument), `"$@"`, a glob that matches a file the agent made
 * (`-[c]` once `./-c` exists), bash's braces (`{-c,code}`) or `~` turn into words the analysis
 * never read. The operator allows `sh -c …` and `bash -c …` with an argPattern, and
 * strictInlineEval promises that inline code inside the payload still asks. Verdicts come from
 * `evaluateExec`, the function the exec tool asks; each hidden `-c` is shown on the real shells.
 */
const root = mkdtempSync(path.join(tmpdir(), 'warden-payload-expansion-'));
const cwd = path.join(root, 'work');
mkdirSync(cwd);
writeFileSync(path.join(cwd, '-c'), '');
afterAll(() => rmSync(root, { recursive: true, force: true }));

const config = {
  host: 'gateway',
  strictInlineEval: true,
  allowlist: [
    { pattern: '/usr/bin/dash', argPattern: '-c *' },
    { pattern: '/usr/bin/bash', argPattern: '-c *' },
    { pattern: '/usr/bin/python3*' },
    { pattern: '/usr/bin/echo' },
  ],
};
const policy = execPolicyFromConfig(execConfig.parse(config), [], 'gateway');
const gate = (command: string) => evaluateExec(command, policy, { cwd, home: root, pathDirs: DEFAULT_PATH_DIRS });

// A python3 that prints the words it was given, first in PATH when the real shells run the command.
const printer = path.join(root, 'bin');
mkdirSync(printer);
writeFileSync(path.join(printer, 'python3'), '#!/bin/sh\nfor a do printf \'<%s>\' "$a"; done\n', { mode: 0o755 });

/** The words the real shell passes to the payload's python3. */
function runWords(command: string): string[] {
  const run = spawnSync('/bin/sh', ['-c', command], { cwd, encoding: 'utf8', env: { PATH: `${printer}:/usr/bin:/bin`, HOME: root } });
  return [...run.stdout.matchAll(/<([^>]*)>/g)].map((m) => m[1]!);
}

describe('a word the payload shell expands counts as inline code', () => {
  it.each<[string, string]>([
    ['the outer argument as `$1`', `sh -c 'python3 $1 "print(1)"' sh -c`],
    ['the outer arguments as "$@"', `sh -c 'python3 "$@"' sh -c 'print(1)'`],
    ['a glob matching the file ./-c', `sh -c 'python3 -[c] "print(1)"'`],
    ["bash's brace expansion", `bash -c 'python3 {-c,"print(1)"}'`],
    ['a parameter default', `sh -c 'python3 \${x:--c} "print(1)"'`],
  ])('%s: %j asks and is never stored', (_what, command) => {
    expect(runWords(command)).toContain('-c');
    const v = gate(command);
    expect(v.decision).toBe('ask');
    expect(v.reason).toMatch(/inline code evaluation .* needs approval \(strictInlineEval\)/);
    expect(v.allowAlways.offered).toBe(false);
  });

  it('a payload without such words still runs unasked', () => {
    expect(gate(`sh -c 'python3 job.py && echo done'`).decision).toBe('allow');
    expect(gate(`bash -c 'echo "a b"'`).decision).toBe('allow');
  });
});
