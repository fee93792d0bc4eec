import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { execConfig } from '../../src/config/schema/exec.js';
import { analyzeShellCommand, splitChain, splitPipeline } from '../../src/exec/analysis.js';
import { detectControlCommand } from '../../src/exec/control.js';
import { execPolicyFromConfig } from '../../src/exec/check.js';
import { evaluateExec } from '../../src/exec/decide.js';
import { detectInlineEval, detectStdinProgram } from '../../src/exec/inline-eval.js';
import { repoConfigInvocation } from '../../src/exec/repo-config.js';
import { commandName, DEFAULT_PATH_DIRS, resolveExecutable } from '../../src/exec/resolve.js';
import { buildEnforcedCommand, type RewriteSegment } from '../../src/exec/rewrite.js';
import { unwrapDispatch } from '../../src/exec/wrappers.js';

/**
 * Attack class: a verdict whose fast path decides differently from the careful one. The gate
 * takes shortcuts so that a 32 KiB command is judged within milliseconds — one join for a
 * rewrite without quotes or heredocs, file lookups that do not throw for a missing program, no
 * second look at inline code when the program runs under the name it was written as, heredocs
 * placed without copying objects. An attacker would aim at the edges of each shortcut: a word
 * holding a quote among thousands without, a heredoc among plain words, a link that runs an
 * interpreter under another name, a directory or a non-executable file where a program should
 * be; a segment's text cut from the command by offsets instead of copied piece by piece (a
 * comment, a heredoc, a quote at the very end, a blank segment of any white space); an argv
 * that is no wrapper's passed on without a copy, a wrapper's name spelled another way; the
 * arguments read in place for repository configuration (a subcommand after options); the
 * joined argvs of a control command looked at one by one. Each row states what the gate
 * answers; the answers are the ones it gave before the shortcuts existed.
 */
const work = mkdtempSync(path.join(tmpdir(), 'warden-fast-paths-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
symlinkSync('/usr/bin/python3', path.join(work, 'py'));
symlinkSync('/usr/bin/cat', path.join(work, 'kitty'));
symlinkSync('/usr/bin/dash', path.join(work, 'shell'));
mkdirSync(path.join(work, 'dir'));
writeFileSync(path.join(work, 'plain'), 'echo hi\n');
chmodSync(path.join(work, 'plain'), 0o644);
const env = { cwd: work, home: work, pathDirs: DEFAULT_PATH_DIRS };
const policy = execPolicyFromConfig(execConfig.parse({ allowlist: [{ pattern: '/usr/bin/cat' }, { pattern: '/usr/bin/python3' }, { pattern: '/usr/bin/dash' }] }));

describe('the enforced rewrite: one join, or word by word around quotes and heredocs', () => {
  const heredoc = (start: number, count: number, operator: string, body: string) => ({ start, count, operator, body });
  it.each<[string, RewriteSegment[], string]>([
    ['plain words', [{ argv: ['/usr/bin/cat', 'a', 'b c'] }], `'/usr/bin/cat' 'a' 'b c'`],
    ['a quote in the last of many words', [{ argv: ['/usr/bin/cat', ...Array(500).fill('a'), "it's"] }], `'/usr/bin/cat' ${"'a' ".repeat(500)}'it'"'"'s'`],
    ['a quote in the first word', [{ argv: ["/tmp/o'k", 'x'] }], `'/tmp/o'"'"'k' 'x'`],
    ['an empty word', [{ argv: ['/usr/bin/cat', '', 'x'] }], `'/usr/bin/cat' '' 'x'`],
    ['a lone command', [{ argv: ['/usr/bin/true'] }], `'/usr/bin/true'`],
    ['no words', [{ argv: [] }], ''],
    ['an empty heredoc list', [{ argv: ['/usr/bin/cat', 'a'], heredocs: [] }], `'/usr/bin/cat' 'a'`],
    ['a heredoc after a word', [{ argv: ['/usr/bin/cat', 'a', '<<A'], heredocs: [heredoc(2, 1, '<<A', 'x\nA\n')] }], `'/usr/bin/cat' 'a' <<A\nx\nA\n`],
    ['a heredoc of two words between words', [{ argv: ['/usr/bin/cat', '<<', 'A', 'b'], heredocs: [heredoc(1, 2, '<< A', 'y\nA\n')] }], `'/usr/bin/cat' << A 'b'\ny\nA\n`],
    [
      'two heredocs given out of order',
      [{ argv: ['/usr/bin/cat', '<<A', '<<B'], heredocs: [heredoc(2, 1, '<<B', 'b\nB\n'), heredoc(1, 1, '<<A', 'a\nA\n')] }],
      `'/usr/bin/cat' <<A <<B\na\nA\nb\nB\n`,
    ],
    ['heredocs across a pipeline', [{ argv: ['/usr/bin/cat', '<<A'], heredocs: [heredoc(1, 1, '<<A', 'a\nA\n')] }, { argv: ['/usr/bin/cat', "'"] }], `'/usr/bin/cat' <<A | '/usr/bin/cat' ''"'"''\na\nA\n`],
  ])('%s', (_, pipeline, expected) => {
    expect(buildEnforcedCommand([{ op: null, pipeline }])).toBe(expected);
  });
});

describe('file lookups: missing, a directory, not executable, a link', () => {
  it.each<[string, string | null, string | null]>([
    ['nosuch-program-xyz', null, null],
    ['./nosuch', path.join(work, 'nosuch'), null],
    ['./dir', path.join(work, 'dir'), null],
    ['./plain', path.join(work, 'plain'), null],
    ['./kitty', path.join(work, 'kitty'), '/usr/bin/cat'],
    ['./plain/below', path.join(work, 'plain/below'), null],
    ['cat', '/usr/local/bin/cat', '/usr/bin/cat'],
  ])('%s', (token, resolvedPath, realPath) => {
    const found = resolveExecutable(token, env);
    expect(found.realPath).toBe(realPath);
    if (realPath !== null && resolvedPath?.startsWith('/usr/')) expect(found.resolvedPath).toMatch(/\/cat$/);
    else expect(found.resolvedPath).toBe(resolvedPath);
  });
});

describe('inline code: by the name written and by the program a link runs', () => {
  const python = { name: 'python3', real: 'python3' };
  const dash = { name: 'dash', real: 'dash' };
  const cat = { name: 'cat', real: 'cat' };
  it.each<[string, string[], { name: string; real: string } | null, string | null, string | null]>([
    ['python3 -c', ['python3', '-c', '1'], python, 'python3 -c', null],
    ['a link to python3 with -c', ['./py', '-c', '1'], python, 'python3 -c', null],
    ['a link to python3 reading stdin', ['./py'], python, null, 'python3 stdin'],
    ['a link to python3 running a script', ['./py', 'x.py'], python, null, null],
    ['python3 written, cat run', ['python3', '-c', '1'], cat, 'python3 -c', null],
    ['cat with a -c', ['cat', '-c', 'x'], cat, null, null],
    ['a link to dash with no script', ['./shell'], dash, null, 'dash stdin'],
    ['a link to dash with -s', ['./shell', '-s'], dash, null, 'dash stdin'],
    ['a link to dash running a script', ['./shell', 'x.sh'], dash, null, null],
    ['python3.12 -c under its versioned name', ['python3.12', '-c', '1'], python, 'python3 -c', null],
  ])('%s', (_, argv, program, inline, stdin) => {
    const hit = detectInlineEval(argv, program);
    expect(hit ? `${hit.interpreter} ${hit.flag}` : null).toBe(inline);
    const fromStdin = detectStdinProgram(argv, program);
    expect(fromStdin ? `${fromStdin.interpreter} ${fromStdin.flag}` : null).toBe(stdin);
  });
});

describe('whole verdicts at the edges of the shortcuts', () => {
  const words = (n: number) => ' a'.repeat(n);
  it.each<[string, string, string, string | null]>([
    ['thousands of words, one quote', `cat${words(3000)} "it's"`, 'allow', `'/usr/bin/cat'${" 'a'".repeat(3000)} 'it'"'"'s'`],
    ['a link to cat', './kitty -n x', 'allow', `'/usr/bin/cat' '-n' 'x'`],
    ['a link to python3 with -c', './py -c 1', 'ask', null],
    ['a link to dash reading stdin, piped', 'cat x | ./shell', 'ask', null],
    ['a directory as the program', './dir x', 'ask', null],
    ['a file without execute permission', './plain', 'ask', null],
    ['a missing program among known ones', `cat x | nosuch-program-xyz | cat`, 'ask', null],
    ['a heredoc among plain words', 'cat a <<A b\nline\nA', 'ask', null],
  ])('%s', (_, command, decision, rewritten) => {
    const verdict = evaluateExec(command, policy, env);
    expect(verdict.decision).toBe(decision);
    if (rewritten !== null) expect(verdict.rewritten).toBe(rewritten);
  });

  it('says why, naming the program that is not there', () => {
    expect(evaluateExec('./dir x', policy, env).reason).toContain('`./dir` is not an executable file');
    expect(evaluateExec('./plain', policy, env).reason).toContain('`./plain` is not an executable file');
    expect(evaluateExec('cat x | nosuch-program-xyz', policy, env).reason).toContain('`nosuch-program-xyz` not found in PATH');
  });

  it('carries the heredoc body in the script it would run once approved', () => {
    const verdict = evaluateExec('cat a <<A b\nline\nA', policy, env);
    expect(verdict.fallbackScript).toBe(`'/usr/bin/cat' 'a' <<A 'b'\nline\nA\n`);
  });

  it('places each of many heredocs on its own words', () => {
    const n = 300;
    const analysis = analyzeShellCommand(`cat ${'<<A '.repeat(n)}\n${'A\n'.repeat(n)}`);
    expect(analysis.ok).toBe(true);
    if (!analysis.ok) return;
    const heredocs = analysis.parts[0]!.pipeline[0]!.heredocs;
    expect(heredocs).toHaveLength(n);
    expect(heredocs.map((h) => [h.argvStart, h.argvCount, h.operator, h.body])).toEqual(Array.from({ length: n }, (_, k) => [k + 1, 1, '<<A', 'A\n']));
  });
});

describe('segments cut from the text by offsets, not built up', () => {
  it.each<[string, string, string[] | string]>([
    ['quotes and escapes kept as written', `cat 'a|b' "c|\\"d" e\\|f | wc`, [`cat 'a|b' "c|\\"d" e\\|f `, ' wc']],
    ['a comment ends the last segment', 'cat a | wc # tail | x', ['cat a ', ' wc ']],
    ['a comment at the start of a segment', 'cat a |# x', 'empty pipeline segment'],
    ['a # inside a word is no comment', 'cat a#b | wc', ['cat a#b ', ' wc']],
    ['heredoc bodies are not part of the segment', 'cat <<A | wc\nx\nA', ['cat <<A ', ' wc']],
    ['a comment before heredoc bodies', 'cat <<A # note\nx\nA', ['cat <<A ']],
    ['a quote closed by the last character', `cat 'a'`, [`cat 'a'`]],
    ['an escape as the last two characters', 'cat a\\ ', ['cat a\\ ']],
    ['an escape with nothing after it', 'cat a\\', 'unterminated shell quote/escape'],
    ['a quote left open', `cat 'a`, 'unterminated shell quote/escape'],
    ['a blank segment between two', 'cat a |  | wc', 'empty pipeline segment'],
    ['a blank last segment', 'cat a | ', 'empty pipeline segment'],
    ['nothing at all', ' \t', 'empty command'],
    ['text after the heredoc body', 'cat <<A\nx\nA\ncat', 'command after heredoc body'],
    ['white space after the heredoc body', 'cat <<A\nx\nA\n \u3000', ['cat <<A']],
  ])('%s', (_, text, expected) => {
    const split = splitPipeline(text);
    if (typeof expected === 'string') expect(split).toEqual({ ok: false, reason: expected });
    else expect(split.ok && split.segments).toEqual(expected);
  });

  it('places heredoc operators at their offsets in the segment, past quotes and escapes', () => {
    const analysis = analyzeShellCommand(`cat "a b" 'c' \\d <<A x <<-'B' | cat <<C\n1\nA\n2\n\tB\n3\nC`);
    expect(analysis.ok).toBe(true);
    if (!analysis.ok) return;
    const [first, second] = analysis.parts[0]!.pipeline;
    expect(first!.heredocs.map((h) => [h.operator, h.argvStart, h.argvCount, h.body])).toEqual([
      ['<<A', 4, 1, '1\nA\n'],
      ['<<-\'B\'', 6, 1, '2\n\tB\n'],
    ]);
    expect(second!.heredocs.map((h) => [h.operator, h.argvStart, h.argvCount, h.body])).toEqual([['<<C', 1, 1, '3\nC\n']]);
  });

  // Blank is what String.prototype.trim removes, as it was when segments were trimmed copies.
  const candidates = [0x09, 0x0b, 0x0c, 0x20, 0x85, 0xa0, 0x1680, 0x180e, 0x2000, 0x2005, 0x200a, 0x200b, 0x2028, 0x2029, 0x202f, 0x205f, 0x2060, 0x3000, 0xfeff, 0xfffe];
  it.each(candidates.map((code) => [code.toString(16).padStart(4, '0'), String.fromCharCode(code)]))('U+%s alone between pipes and between `;`', (_, c) => {
    const blank = c.trim() === '';
    expect(splitPipeline(`cat a |${c}| wc`)).toEqual(blank ? { ok: false, reason: 'empty pipeline segment' } : { ok: true, segments: ['cat a ', c, ' wc'], hasHeredoc: false, heredocs: [] });
    expect(splitChain(`cat a ;${c}; wc`)).toEqual(blank ? null : [{ op: null, text: 'cat a ' }, { op: ';', text: c }, { op: ';', text: ' wc' }]);
  });
});

describe('wrappers: no copy for an argv that is no wrapper, every spelling of one still peeled', () => {
  it('hands back the argv itself when nothing is peeled', () => {
    const argv = ['cat', ...Array(2000).fill('a')];
    const unwrapped = unwrapDispatch(argv);
    expect(unwrapped.ok && unwrapped.argv).toBe(argv);
  });

  it.each<[string, string, string | null]>([
    ['nice by path', '/usr/bin/nice -n 5 cat a', `'/usr/bin/cat' 'a'`],
    ['NICE in capitals', 'NICE cat a', `'/usr/bin/cat' 'a'`],
    ['a Windows-style path to env.exe', 'C:\\\\bin\\\\env.EXE cat a', `'/usr/bin/cat' 'a'`],
    ['timeout then nohup', 'timeout 5 nohup cat a', `'/usr/bin/cat' 'a'`],
    ['sudo blocks', 'sudo cat a', null],
    ['env with an assignment blocks', 'env A=1 cat a', null],
    ['busybox running a shell', 'busybox sh -c "cat a"', null],
    ['five wrappers deep blocks', 'nice nice nice nice nice cat a', null],
  ])('%s', (_, command, rewritten) => {
    const verdict = evaluateExec(command, policy, env);
    expect(verdict.rewritten).toBe(rewritten);
    if (rewritten === null) expect(verdict.decision).not.toBe('allow');
  });

  it.each<[string, string]>([
    ['/usr/bin/cat', 'cat'],
    ['cat', 'cat'],
    ['C:\\bin\\CAT.EXE', 'cat'],
    ['a\\b/c\\Sh.Cmd', 'sh'],
    ['dir/', ''],
    ['dir\\', ''],
    ['', ''],
    ['x.exe.bat', 'x.exe'],
  ])('the command name of %j is %j', (token, name) => {
    expect(commandName(token)).toBe(name);
  });
});

describe('control commands: each argv joined and looked at in turn', () => {
  it.each<[string, string[][], string | null]>([
    ['only in the last of many argvs', [...Array(63).fill(['cat', 'a']), ['warden', 'approvals', 'resolve', 'x']], '`warden approvals resolve|revoke`'],
    ['in the first', [['warden', 'invoke', 'x', '--approve'], ['cat']], '`warden invoke --approve`'],
    ['split across two argvs is not one', [['warden', 'invoke'], ['--approve']], null],
    ['none', [['cat', 'a'], ['wc']], null],
  ])('%s', (_, argvs, found) => {
    expect(detectControlCommand('x', argvs)).toBe(found);
  });
});

describe('repository configuration: the arguments read in place, not copied', () => {
  it.each<[string, string[], string | null]>([
    ['deno task after an option', ['deno', '-q', 'task', 'x'], 'deno task'],
    ['docker compose', ['docker', 'compose', 'up'], 'docker compose'],
    ['podman build after an option', ['podman', '-v', 'build', '.'], 'podman build'],
    ['docker build after thousands of options', ['docker', ...Array(3000).fill('-v'), 'build'], 'docker build'],
    ['docker run', ['docker', 'run', 'x'], null],
    ['bun running a script name', ['bun', 'run', 'x'], 'bun run'],
    ['bun running a file', ['bun', './x.ts'], null],
    ['bun with options only', ['bun', '-v'], null],
    ['node --run=build', ['node', '--run=build'], 'node --run'],
    ['python3 -m pytest', ['python3', '-m', 'pytest'], 'python3 -m pytest'],
    ['git', ['git', 'status'], 'git'],
    ['make', ['make', 'all'], 'make'],
    ['cat with compose among thousands of words', ['cat', ...Array(3000).fill('a'), 'compose'], null],
  ])('%s', (_, argv, binary) => {
    expect(repoConfigInvocation(argv)?.binary ?? null).toBe(binary);
  });
});
