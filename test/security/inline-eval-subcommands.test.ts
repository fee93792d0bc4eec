import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { execConfig } from '../../src/config/schema/exec.js';
import { execPolicyFromConfig } from '../../src/exec/check.js';
import { evaluateExec } from '../../src/exec/decide.js';
import { detectInlineEval, detectStdinProgram } from '../../src/exec/inline-eval.js';

/**
 * Attack class: code the argv does not name as a file, run by an interpreter the inline-code
 * table did not know, or through a subcommand or operand instead of an `-e` flag: `deno eval`,
 * `bun exec`, `node --run`, a package script, a fetched module, PowerShell's prefix-matched
 * `-Command`. Under a bare `*` entry each must still ask (strictInlineEval) and never be stored.
 */
const words = (command: string): string[] => command.split(' ');
const inline = (command: string) => detectInlineEval(words(command)) ?? detectStdinProgram(words(command));

describe('interpreters and subcommands that run code written in the argv', () => {
  it.each([
    // Subcommands that evaluate an argument, a task or a package.
    'deno eval Deno.exit(0)', 'deno repl', 'deno x npm:cowsay', 'deno install jsr:@x/y', 'deno -L info eval 1', 'deno --quiet eval 1',
    'deno run -', 'deno run https://x.io/m.ts', 'deno run npm:cowsay', 'deno run jsr:@x/y', 'deno run data:,1',
    'deno run --preload=https://x.io/p.ts main.ts', 'deno run --import data:,1 main.ts',
    'bun exec id', 'bun x cowsay', 'bun create x', 'bun -e 1', 'bun --print 1', 'bun run https://x.io/m.ts', 'bun --preload data:,1 a.ts',
    'node -pe 1', 'node --import https://x.io/m.mjs a.js',
    'crystal eval 1', 'crystal i',
    // PowerShell: any case, any unambiguous prefix, any dash, values in between.
    'pwsh -c id', 'pwsh -Command id', 'pwsh -COM id', 'pwsh /command id', 'pwsh --command id', 'pwsh \u2013Command id',
    'pwsh \u2014c id', 'pwsh -NoProfile -ExecutionPolicy Bypass -Command id', 'pwsh -wd /tmp -c id', 'pwsh -cwa id',
    'pwsh -CommandWithArgs id', 'pwsh -e ZQBjAGgAbwA=', 'pwsh -ec ZQBjAGgAbwA=', 'pwsh -enc ZQBjAGgAbwA=', 'pwsh -EncodedCommand x',
    'pwsh -File -', 'pwsh -f:-', 'pwsh7 -c id', 'pwsh.exe -c id', 'powershell Get-Process', 'powershell -NoProfile id',
    // Other interpreters' eval options.
    'php -R 1', 'php -B 1', 'php -E 1', 'php -r 1', 'luajit -e 1', 'lua5.4 -e 1', 'julia -e 1', 'julia --eval=1', 'julia -E 1',
    'R -e 1', 'Rscript -e 1', 'Rscript --expr=1', 'elixir -e 1', 'elixir --eval 1', 'iex --eval 1', 'erl -noshell -eval 1',
    'erl -s os cmd', 'racket -e 1', 'guile -c 1', 'groovy -e 1', 'raku -e 1', 'perl6 -e 1', 'gjs -c 1', 'qjs -e 1',
    'kotlin -e 1', 'kotlinc -expression 1', 'scala -e 1', 'expect -c 1', 'ghc -e 1', 'ghci -e 1', 'dc -e 1', 'dc --expression=1',
    // Without a script operand these read their program from stdin.
    'tclsh', 'tclsh8.6', 'wish', 'irb', 'jshell', 'ghci', 'julia', 'R --vanilla', 'erl', 'pwsh', 'pwsh -NoProfile', 'qjs', 'dc',
  ])('`%s` is inline code', (command) => {
    expect(inline(command)).not.toBeNull();
  });

  it.each([
    'deno run main.ts', 'deno run -A ./main.ts eval', 'deno test', 'deno fmt', 'deno run --allow-read=. src/main.ts',
    'bun run ./scripts/x.ts', 'bun run x.ts', 'bun test', 'bun build ./index.ts', 'bun ./a.ts', 'bun --bun server.ts',
    'node app.js', 'node --import ./setup.js app.js', 'node -r ./setup.cjs app.js', 'crystal build a.cr',
    'pwsh -File ./x.ps1', 'pwsh -NoProfile -f x.ps1', 'pwsh ./x.ps1',
    'php -f x.php', 'php x.php', 'julia x.jl', 'Rscript x.R', 'erl -sname x x.erl', 'kotlin x.kts', 'tclsh x.tcl',
    'python3 app.py', 'ruby -w app.rb',
  ])('`%s` names its program as a file', (command) => {
    expect(inline(command)).toBeNull();
  });
});

describe('package scripts and tasks are repository configuration, not inline code', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'warden-inline-scripts-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const check = (command: string, trustRepoConfig?: boolean) =>
    evaluateExec(command, execPolicyFromConfig(execConfig.parse({ allowlist: [{ pattern: '*', ...(trustRepoConfig ? { trustRepoConfig } : {}) }] }), [], 'gateway'), {
      cwd: root, home: root, pathDirs: ['/usr/bin', '/bin'], now: 1_000_000,
    });
  // They ask through the repository-config class (test/security/exec-repo-config.test.ts), which an entry may opt out of.
  it.each(['node --run build', 'bun run build', 'bun run test', 'bun deploy', 'bun install', 'deno task build'])('`%s`', (command) => {
    expect(inline(command)).toBeNull();
    const v = check(command);
    if (v.segments[0]?.resolved == null) return; // the binary is not installed here
    expect(v.decision).toBe('ask');
  });
});

describe('the gate', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'warden-inline-sub-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const check = (command: string) =>
    evaluateExec(command, execPolicyFromConfig(execConfig.parse({ allowlist: [{ pattern: '*' }] }), [], 'gateway'), {
      cwd: root, home: root, pathDirs: ['/usr/bin', '/bin'], now: 1_000_000,
    });
  it.each(['node -e 1', 'deno eval 1', 'bun exec id', 'pwsh -NoProfile -ExecutionPolicy Bypass -c id', "sh -c 'bun x cowsay'"])(
    '`%s` asks under a bare `*` entry and is never stored',
    (command) => {
      const v = check(command);
      expect(v.decision).toBe('ask');
      expect(v.inlineEval).not.toBeNull();
      expect(v.allowAlways.offered).toBe(false);
    },
  );
});
