import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { analyzeShellCommand, splitShellArgs } from './analysis.js';

/** Flattens an analysis into `op argv|argv` strings so table rows stay readable. */
function shape(command: string): string[] | string {
  const r = analyzeShellCommand(command);
  if (!r.ok) return `fail: ${r.reason}`;
  return r.parts.map((p) => `${p.op ?? ''}${p.op ? ' ' : ''}${p.pipeline.map((s) => JSON.stringify(s.argv)).join(' | ')}`);
}

describe('analyzeShellCommand: reference A7.6 verdict table', () => {
  const analyzable: Array<[string, string[]]> = [
    ['ls | wc -l', ['["ls"] | ["wc","-l"]']],
    ['git status && ls', ['["git","status"]', '&& ["ls"]']],
    ['false || echo no', ['["false"]', '|| ["echo","no"]']],
    ['echo a ; echo b', ['["echo","a"]', '; ["echo","b"]']],
    ['echo "a && b"', ['["echo","a && b"]']],
    ["echo 'a | b; c'", ['["echo","a | b; c"]']],
    ['echo a\\;b', ['["echo","a;b"]']],
    ['echo $HOME ${USER} ~/x *.txt {a,b} !x', ['["echo","$HOME","${USER}","~/x","*.txt","{a,b}","!x"]']],
    ['FOO=1 git status', ['["FOO=1","git","status"]']],
    ['git status # && rm -rf /', ['["git","status"]']],
    ['echo "\\$(id)"', ['["echo","$(id)"]']],
    ["cat <<'EOF'\nhello $(whoami) `id`\nEOF", ['["cat","<<EOF"]']],
    ['cat <<EOF\nplain text\nEOF', ['["cat","<<EOF"]']],
    ['cat <<EOF # note\nplain text\nEOF', ['["cat","<<EOF"]']],
    ['cat <<-EOF | wc -l\n\tline\n\tEOF', ['["cat","<<-EOF"] | ["wc","-l"]']],
    ["echo 'multi\nline'", ['["echo","multi\\nline"]']],
    // The delimiter is the whole word after quote removal, as sh reads it.
    ["cat <<'A'B\nbody\nAB", ['["cat","<<AB"]']],
    ['cat <<"A"\'B\'C\nbody\nABC', ['["cat","<<ABC"]']],
  ];
  it.each(analyzable)('%j is analyzable', (command, expected) => {
    expect(shape(command)).toEqual(expected);
  });

  const unanalyzable: Array<[string, RegExp]> = [
    ['echo $(id)', /substitution/],
    ['echo `id`', /backtick/],
    ['echo "$(id)"', /substitution/],
    ['echo "`id`"', /backtick/],
    ['ls > out.txt', /redirection/],
    ['ls >> out.txt', /redirection/],
    ['cat < /etc/passwd', /redirection/],
    ['ls 2>/dev/null', /redirection/],
    ['ls 2>&1', /background|redirection/],
    ['diff <(ls a) <(ls b)', /redirection|subshell/],
    ['tee >(cat)', /redirection|subshell/],
    ['sleep 10 &', /background/],
    ['ls |& cat', /\|&/],
    ['(cd /; ls)', /subshell|`;`/],
    ['ls\nrm -rf /', /newline/],
    ['ls\rrm -rf /', /newline/],
    ['ls # comment\nrm -rf /', /newline/],
    ['ls && echo # c\nrm -rf /', /newline/],
    ['echo a \\\nb', /line continuation/],
    ["echo 'a\\\nb'", /line continuation/],
    ['cat <<EOF\n\\\nEOF', /line continuation/],
    ['cat <<EOF\n$HOME\nEOF', /unquoted heredoc/],
    ['cat <<EOF\n${x}\nEOF', /unquoted heredoc/],
    ['cat <<EOF\n`id`\nEOF', /unquoted heredoc/],
    ['cat <<EOF\n$1\nEOF', /unquoted heredoc/],
    ['cat <<EOF\nno end', /unterminated heredoc/],
    ['cat <<<word', /here-string/],
    ["echo 'open", /unterminated/],
    ['echo "open', /unterminated/],
    ['echo \\', /unterminated/],
    ['ls |', /empty pipeline segment/],
    ['| ls', /empty pipeline segment/],
    ['ls || ', /`\|\|`|empty|`;`/],
    ['&& ls', /background|`&`/],
    ['ls ;; ls', /`;`/],
    ['# only a comment', /empty command/],
    ["cat <<'A'B\nAB\nrm -rf x\nA", /command after heredoc body/],
    ['cat <<A\\B\nx\nAB', /unsupported heredoc delimiter/],
    ['ls \0x', /NUL/],
    ['', /empty command/],
  ];
  it.each(unanalyzable)('%j is unanalyzable', (command, reason) => {
    const r = analyzeShellCommand(command);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toMatch(reason);
  });

  it('splits a brace group at `;`, leaving `{` and `}` as argv (a miss, not a group)', () => {
    expect(shape('{ ls; }')).toEqual(['["{","ls"]', '; ["}"]']);
  });

  it('marks heredocs so the gate can force approval', () => {
    const r = analyzeShellCommand("cat <<'EOF'\nx\nEOF");
    expect(r.ok && r.hasHeredoc).toBe(true);
    const plain = analyzeShellCommand('cat file');
    expect(plain.ok && plain.hasHeredoc).toBe(false);
  });

  it('records each heredoc with the argv tokens its operator became and its body', () => {
    const r = analyzeShellCommand("cat << 'A' x <<-B | wc -l\none\nA\n\ttwo\n\tB");
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.parts[0]!.pipeline[0]!.argv).toEqual(['cat', '<<', 'A', 'x', '<<-B']);
    expect(r.parts[0]!.pipeline[0]!.heredocs).toEqual([
      { operator: "<< 'A'", argvStart: 1, argvCount: 2, body: 'one\nA\n' },
      { operator: '<<-B', argvStart: 4, argvCount: 1, body: '\ttwo\n\tB\n' },
    ]);
    expect(r.parts[0]!.pipeline[1]!.heredocs).toEqual([]);
  });

  it('refuses a command after a heredoc body', () => {
    expect(analyzeShellCommand("cat <<'EOF'\nx\nEOF\nrm -rf /").ok).toBe(false);
  });
});

describe('splitShellArgs (A7.5)', () => {
  it.each([
    // Differs from OpenClaw (`[echo, x]`): the shell passes `''` to echo as an empty argument.
    ["echo '' x", ['echo', '', 'x']],
    ['a\\ b c', ['a b', 'c']],
    ['"a\\"b" \'c\\d\'', ['a"b', 'c\\d']],
    ['"\\n"', ['\\n']],
    ['x #comment', ['x']],
    ['x a#b', ['x', 'a#b']],
  ])('%j → %j', (text, argv) => {
    expect(splitShellArgs(text)).toEqual(argv);
  });
  it('returns null for an open quote', () => {
    expect(splitShellArgs("'x")).toBeNull();
  });
});

/**
 * The argv the real shells build from a command text, command by command: the words of every
 * command `p` runs, in order. `/bin/sh` runs exec commands; bash runs `bash -c` payloads.
 * Globbing is off (the rewrite quotes every word, so nothing the gate allows is globbed either).
 */
const PRINTER = "set -f\np() { for a do printf '\\037%s' \"$a\"; done; printf '\\036'; }\n";
const SHELLS = ['/bin/sh', '/bin/bash'] as const;

function shellArgvs(shell: string, command: string): string[][] {
  // SHLVL set: bash started on a pipe with it unset takes itself for an sshd command and reads ~/.bashrc.
  const run = spawnSync(shell, ['-c', PRINTER + command], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8', SHLVL: '1', HOME: '/nonexistent' } });
  expect(run.stderr).toBe('');
  if (run.status !== 0) throw new Error(`${shell} failed on ${JSON.stringify(command)}: ${run.stderr}`);
  return run.stdout.split('\x1e').slice(0, -1).map((record) => record.split('\x1f').slice(1));
}

/** What the analysis says each command `p` gets, or null when it refuses the text. */
function gateArgvs(command: string): string[][] | null {
  const r = analyzeShellCommand(command);
  if (!r.ok) return null;
  return r.parts.flatMap((part) => part.pipeline.map((segment) => segment.argv.slice(1)));
}

describe('the analysis builds the argv sh and bash build (differential against the real shells)', () => {
  const same: string[] = [
    // Words made only of quotes are empty arguments; adjacent quotes make one word.
    "p ''", 'p ""', `p ''""`, `p "" ''`, "p '' x", "p x ''", "p x '' y", "p '' '' ''", "p ''''", `p ""''""`,
    "p x''", "p ''x", "p 'a'''", "p ''a''", 'p a"" b', "p -rf build/ ''", "p -o '' file", "p -n '' 5", "p -C '' status",
    "p '' -delete", "p  ''   ''  ", "p\t''\t", "p '' #comment", "p ''#word", 'p ""#word', "p x #''", "p '#' ''",
    // Escapes, in and out of double quotes.
    'p a\\ b', "p \\'\\'", 'p \\"\\"', 'p "\\\\"', 'p "\\$"', 'p "\\a"', 'p "a\\"b"', 'p \\#x', 'p a#b', "p '\\'",
    'p "$"', 'p x$', 'p $', `p '$'""`, `p "$'x'"`, 'p "$\\"x\\""', "p \\$\\'x\\'",
    // Only space, tab and newline separate words: other whitespace is part of a word.
    'p a\u00a0b', 'p a\u2003b', 'p a\u3000b', 'p a\u000bb', 'p a\u000cb', 'p \u00a0', "p '' \u00a0 ''", 'p build/\u00a0', 'p \u00a0#x',
    'p é ü "😀" \\😀', "p 'multi\nline'", 'p a\tb  c',
    // Chains: a `#` after a character that is no blank starts no comment; the next command is read.
    'p a\u000b# ; p X', 'p a\u00a0# ; p X', 'p a\u000c#; p X', 'p a\\ #; p X', 'p a\\\t#; p Y', 'p a\\ # x', 'p \\ #x', 'p a\\\\ #x', `p '' ; p ""`, "p x&&p ''", "p ''#; p y", 'p a #; p X', 'p a\t#x',
  ];
  it.each(same)('%j', (command) => {
    const gate = gateArgvs(command);
    expect(gate).not.toBeNull();
    for (const shell of SHELLS) expect(gate, shell).toEqual(shellArgvs(shell, command));
  });

  // bash decodes `$'…'` and translates `$"…"`; sh (dash) keeps the `$`. One text, two argvs:
  // the analysis refuses it.
  const shellDependent = ["p $''", 'p $""', "p -rf build/ $''", "p a$'b'", "p $'\\x41'", 'p $"x"y'];
  it.each(shellDependent)('%j differs between sh and bash and is refused', (command) => {
    expect(gateArgvs(command)).toBeNull();
    expect(shellArgvs('/bin/sh', command)).not.toEqual(shellArgvs('/bin/bash', command));
  });
  it('refuses `$` before a quote even where it follows another `$` (`$$` is an expansion either way)', () => {
    expect(gateArgvs("p $$''")).toBeNull();
  });
});
