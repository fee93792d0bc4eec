import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execConfig } from '../../src/config/schema/exec.js';
import { execPolicyFromConfig } from '../../src/exec/check.js';
import { evaluateExec, type ExecVerdict } from '../../src/exec/decide.js';
import { buildChildEnv } from '../../src/exec/env.js';
import { FIND_ASKS, FIND_PRIMARIES, GETOPT_PROFILES, GIT_SUBCOMMANDS, type ArgKind } from '../../src/exec/read-only.js';
import { DEFAULT_PATH_DIRS } from '../../src/exec/resolve.js';
import { SANDBOX_HOME, type ExecHost } from '../../src/exec/sandbox.js';

/**
 * The sandbox host's default read-only allowlist, as an attacker who steers the model uses it:
 * every option that writes a file or runs a program asks, whatever its spelling (clusters,
 * attached values, `--opt=value`, abbreviations GNU getopt would expand), every command that
 * changes the repository asks, and the table is checked against the real binaries — their
 * option lists and argument kinds, that the allowed forms write nothing, that the writing forms
 * really write — and, for git, that no program the repository names runs even when its config
 * was written after Warden looked (no discovery at all).
 */
const root = mkdtempSync(path.join(tmpdir(), 'warden-default-allowlist-'));
const workspace = path.join(root, 'workspace');
mkdirSync(path.join(workspace, 'src'), { recursive: true });
writeFileSync(path.join(workspace, 'notes.md'), 'TODO: ship\n');
afterAll(() => rmSync(root, { recursive: true, force: true }));

function gate(command: string, config: Record<string, unknown> = {}, host: ExecHost = 'sandbox'): ExecVerdict {
  return evaluateExec(command, execPolicyFromConfig(execConfig.parse(config), [], host), { cwd: workspace, pathDirs: DEFAULT_PATH_DIRS, home: SANDBOX_HOME, patternHome: '/root', now: 1_000_000 });
}

describe('the default read-only list: what runs without asking on the sandbox host', () => {
  it.each([
    'ls', 'ls -la', 'ls -la src', 'ls --color=never -R', 'ls -lh --time-style=long-iso', 'ls -1 -- -weird-name',
    'cat notes.md', 'cat -n notes.md src/a.ts', 'head -n 5 notes.md', 'head -5 notes.md', 'head -c20 notes.md', 'tail -n +2 notes.md', 'tail -f app.log',
    'wc -l notes.md', 'wc --files0-from=list', 'grep -rn TODO src', 'grep -e x -f patterns notes.md', 'grep --color=always -C2 TODO notes.md', 'grep -3 TODO notes.md',
    "find . -name '*.ts' -type f", 'find src -maxdepth 2 -newer notes.md -print', 'find . -path ./node_modules -prune -o -name x -print', "find -L . -iname x -printf '%p\\n'",
    'find . -newermt 2024-01-01', 'stat -c %s notes.md', 'stat --printf=%n notes.md', 'file notes.md', 'file -b --mime-type notes.md', 'du -sh .', 'du -h --max-depth=1',
    'sort notes.md', 'sort -k2 -t, notes.md', 'sort -u notes.md', 'uniq notes.md', 'uniq -c notes.md', 'ls | wc -l', 'cat notes.md | grep x | sort | uniq -c',
    'git branch', 'git branch -a', 'git branch --list feat*', 'git tag', 'git tag --list v*', 'git ls-files', 'git ls-files -z --others --exclude-standard',
    'git rev-parse --show-toplevel', 'git rev-parse --abbrev-ref HEAD', 'git describe --tags --always', 'git grep -n TODO', 'git shortlog -s -n', 'git remote -v',
    'git cat-file -p HEAD', 'git --no-pager branch -v',
  ])('`%s` runs', (command) => {
    const verdict = gate(command);
    expect(verdict.reason).toMatch(/^allowlist satisfied/);
    expect(verdict.decision).toBe('allow');
    expect(verdict.segments.every((s) => s.matchedBy !== null)).toBe(true);
  });

  it.each([
    ['git log --oneline -5', "'/usr/bin/git' 'log' '--oneline' '-5' '--no-textconv' '--no-ext-diff' '--submodule=short'"],
    ['git --no-pager log -p -- src', "'/usr/bin/git' '--no-pager' 'log' '-p' '--no-textconv' '--no-ext-diff' '--submodule=short' '--' 'src'"],
    ['git show --stat HEAD~1', "'/usr/bin/git' 'show' '--stat' 'HEAD~1' '--no-textconv' '--no-ext-diff' '--submodule=short'"],
    ['git diff --cached', "'/usr/bin/git' 'diff' '--cached' '--no-textconv' '--no-ext-diff' '--submodule=short'"],
    ['git diff --staged --stat', "'/usr/bin/git' 'diff' '--staged' '--stat' '--no-textconv' '--no-ext-diff' '--submodule=short'"],
    // After `--` every word is a path, `--output=x` too: git writes nothing.
    ['git log -- --output=x', "'/usr/bin/git' 'log' '--no-textconv' '--no-ext-diff' '--submodule=short' '--' '--output=x'"],
  ])('`%s` runs with textconv and external diffs switched off: %s', (command, rewritten) => {
    const verdict = gate(command);
    expect(verdict.decision).toBe('allow');
    expect(verdict.rewritten).toBe(rewritten);
  });
});

describe('what the default list never lets run unasked', () => {
  it.each([
    // find: programs, deletions and file writes, however the expression is built.
    ['find . -exec id \\;', 'runs a program'],
    ['find . -execdir id +', 'runs a program'],
    ['find . -ok rm {} \\;', 'runs a program'],
    ['find . -okdir rm {} \\;', 'runs a program'],
    ['find . -delete', 'deletes files'],
    ['find . -name x -o -delete', 'deletes files'],
    ['find . \\( -name x -exec sh -c id \\; \\)', 'runs a program'],
    ['find . -fprint out', 'writes a file'],
    ['find . -fprint0 out', 'writes a file'],
    ['find . -fprintf out %p', 'writes a file'],
    ['find . -fls out', 'writes a file'],
    ['find . -frobnicate', 'not a primary'],
    ['find . -name', 'needs 1 argument'],
    // sort: the output file, the compressor, the temporary directory — in every spelling.
    ['sort -o out notes.md', 'writes a file'],
    ['sort -oout notes.md', 'writes a file'],
    ['sort -uo out notes.md', 'writes a file'],
    ['sort --output=out notes.md', 'writes a file'],
    ['sort --output out notes.md', 'writes a file'],
    ['sort --out=out notes.md', 'spelled out in full'],
    ['sort --outp=out notes.md', 'spelled out in full'],
    ['sort --compress-program=sh notes.md', 'runs a program'],
    ['sort -T /tmp notes.md', 'temporary files'],
    ['sort --temporary-directory=/tmp notes.md', 'temporary files'],
    // uniq writes its second operand.
    ['uniq notes.md out', 'file it writes'],
    ['uniq -c notes.md out', 'file it writes'],
    ['uniq -- notes.md out', 'file it writes'],
    ['uniq --group=append notes.md out', 'file it writes'],
    // file: compile writes, -z runs decompressors, -S drops its own sandbox, -p touches times.
    ['file -C -m magic', 'writes a file'],
    ['file --compile', 'writes a file'],
    ['file -z notes.md', 'runs a program'],
    ['file -bz notes.md', 'runs a program'],
    ['file -Z notes.md', 'runs a program'],
    ['file --uncompress notes.md', 'runs a program'],
    ['file -S notes.md', 'seccomp sandbox'],
    ['file --no-sandbox notes.md', 'seccomp sandbox'],
    ['file -p notes.md', 'access time'],
    ['file --preserve-date notes.md', 'access time'],
    // Abbreviations and unknown options ask: GNU getopt would expand them to whatever matches.
    ['ls --col=never', 'spelled out in full'],
    ['grep --col x notes.md', 'spelled out in full'],
    ['tail --foll notes.md', 'spelled out in full'],
    ['cat --frobnicate notes.md', 'spelled out in full'],
    ['ls -j', 'not an option'],
    // Values: a flag with one, a value without one.
    ['cat --number=3 notes.md', 'takes no value'],
    ['head -n', 'needs a value'],
    ['grep --regexp', 'needs a value'],
    // git: what writes, what runs a program the repository names, what reads the work tree through filters.
    ['git log --output=x', 'writes a file'],
    ['git log --output x', 'writes a file'],
    ['git diff --cached --output=x', 'writes a file'],
    ['git log --ext-diff -p', 'external diff'],
    ['git show --textconv HEAD', 'textconv'],
    ['git log --show-signature', 'signature program'],
    ['git log --outp=x', 'spelled out in full'],
    ['git diff', 'reads the work tree'],
    ['git diff HEAD', 'reads the work tree'],
    ['git diff --stat', 'reads the work tree'],
    ['git status', 'not in the default read-only list'],
    ['git status --porcelain', 'not in the default read-only list'],
    ['git blame notes.md', 'not in the default read-only list'],
    ['git -c core.pager=sh log', 'before the subcommand'],
    ['git -C .. log', 'before the subcommand'],
    ['git --git-dir=../other/.git log', 'before the subcommand'],
    ['git --work-tree=.. log', 'before the subcommand'],
    ['git --exec-path=. log', 'before the subcommand'],
    ['git -p log', 'before the subcommand'],
    ['git st', 'not in the default read-only list'],
    ['git shortlog -sn', 'stand alone'],
    ['git branch pwned', 'creates a branch'],
    ['git branch -d main', 'not an option'],
    ['git branch -D main', 'not an option'],
    ['git branch -m a b', 'not an option'],
    ['git branch -c a b', 'not an option'],
    ['git branch --set-upstream-to=origin/x', 'not an option'],
    ['git branch --edit-description', 'not an option'],
    ['git branch -av', 'stand alone'],
    ['git tag v1', 'creates a tag'],
    ['git tag -d v1', 'not an option'],
    ['git tag -a v1 -m x', 'not an option'],
    ['git describe --dirty', 'not an option'],
    ['git describe --broken', 'not an option'],
    ['git grep -O x', 'runs a program'],
    ['git grep -Oless x', 'runs a program'],
    ['git grep -iOless x', 'stand alone'],
    ['git grep --open-files-in-pager=sh x', 'runs a program'],
    ['git grep --textconv x', 'textconv'],
    ['git ls-files -m', 'not an option'],
    ['git ls-files --modified', 'not an option'],
    ['git ls-files -d', 'not an option'],
    ['git ls-files --eol', 'not an option'],
    ['git remote add x https://example.invalid/x', 'changes the repository'],
    ['git remote show origin', 'changes the repository'],
    ['git cat-file --textconv HEAD:notes.md', 'not an option'],
    ['git cat-file --filters HEAD:notes.md', 'not an option'],
    ['git stash list', 'not in the default read-only list'],
    ['git config --get user.name', 'not in the default read-only list'],
    ['git reflog expire --all', 'not in the default read-only list'],
    // The shell around them.
    ['ls; rm -rf src', 'segment 2'],
    ['ls && touch x', 'segment 2'],
    ['cat notes.md > copy.md', 'unanalyzable'],
    ['cat $(rm -rf src)', 'unanalyzable'],
    ['find . -name x | sh', 'segment 2'],
    ['ls | xargs rm', 'segment 2'],
    ['env PATH=. ls', 'blocked wrapper'],
  ])('`%s` asks (%s)', (command, why) => {
    const verdict = gate(command);
    expect(verdict.decision).toBe('ask');
    expect(verdict.reason).toContain(why);
  });

  it('a binary in the workspace named like a default command is not that command', () => {
    writeFileSync(path.join(workspace, 'ls'), '#!/bin/sh\ntouch pwned\n');
    chmodSync(path.join(workspace, 'ls'), 0o755);
    symlinkSync('/usr/bin/rm', path.join(workspace, 'cat'));
    try {
      expect(gate('./ls').decision).toBe('ask');
      expect(gate(`${workspace}/ls -la`).decision).toBe('ask');
      expect(gate('./cat -rf src').decision).toBe('ask');
      expect(gate('./cat -rf src').segments[0]!.miss).toContain('/usr/bin/rm');
    } finally {
      rmSync(path.join(workspace, 'ls'));
      rmSync(path.join(workspace, 'cat'));
    }
  });

  it('is off on the gateway host, off with defaultAllowlist: false, and never above security: deny', () => {
    expect(gate('ls', {}, 'gateway').decision).toBe('ask');
    expect(gate('cat notes.md', {}, 'gateway').reason).toContain('allowlist miss');
    expect(gate('ls', { defaultAllowlist: false }).decision).toBe('ask');
    expect(gate('ls', { security: 'deny' }).decision).toBe('deny');
    // ask: always still asks for everything.
    expect(gate('ls', { ask: 'always' }).decision).toBe('ask');
    // Its own entries still count beside it.
    expect(gate('echo hi', { allowlist: [{ pattern: '/usr/bin/echo' }] }).decision).toBe('allow');
  });
});

/** An option's argument kind as GNU getopt reads it, from the binary's own answers. */
function probeKind(bin: string, option: string, cwd: string): ArgKind | 'unknown' {
  const run = (args: string[]) => spawnSync(bin, args, { cwd, encoding: 'utf8', env: { LANG: 'C', LC_ALL: 'C', PATH: '/usr/bin:/bin' }, input: '', timeout: 2000 });
  if (option.startsWith('--')) {
    const withValue = run([`${option}=probe`]).stderr;
    if (/unrecognized option/.test(withValue)) return 'unknown';
    if (/doesn't allow an argument/.test(withValue)) return 'none';
    return /requires an argument/.test(run([option]).stderr) ? 'required' : 'optional';
  }
  const alone = run([option]).stderr;
  if (/invalid option/.test(alone)) return 'unknown';
  return /requires an argument/.test(alone) ? 'required' : 'none';
}

/** The option names a binary's `--help` lists, from the option column of each line. */
function helpNames(bin: string): { long: string[]; short: string[] } {
  const out = spawnSync(bin, ['--help'], { encoding: 'utf8', env: { LANG: 'C', LC_ALL: 'C', PATH: '/usr/bin:/bin' } }).stdout;
  const long = new Set<string>();
  const short = new Set<string>();
  for (const line of out.split('\n')) {
    if (!/^\s{1,10}-/.test(line)) continue;
    for (const word of line.trim().split(/[\s,]+/)) {
      if (!word.startsWith('-')) break;
      const l = /^--([A-Za-z0-9][-A-Za-z0-9]*)/.exec(word);
      const s = /^-([A-Za-z0-9])$/.exec(word);
      if (l) long.add(l[1]!);
      else if (s) short.add(s[1]!);
    }
  }
  return { long: [...long].sort(), short: [...short].sort() };
}

/** Every file under a directory with its size and modification time. */
function snapshot(dir: string): string {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = path.join(d, name);
      const st = statSync(p);
      out.push(`${path.relative(dir, p)} ${st.size} ${st.mtimeMs}`);
      if (st.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return out.join('\n');
}

describe.each(Object.entries(GETOPT_PROFILES))('the `%s` entry agrees with the real binary', (bin, profile) => {
  const installed = existsSync(`/usr/bin/${bin}`);
  let scratch: string;
  beforeAll(() => {
    scratch = mkdtempSync(path.join(root, `${bin}-`));
    writeFileSync(path.join(scratch, 'data.txt'), 'b\na\na\n');
    writeFileSync(path.join(scratch, 'list'), 'data.txt\0');
  });

  it.skipIf(!installed)('names every option its --help lists, and only those', () => {
    const help = helpNames(bin);
    expect(Object.keys(profile.long).sort()).toEqual(help.long);
    expect(Object.keys(profile.short).sort()).toEqual(help.short);
  });

  it.skipIf(!installed)('gives each option the argument kind getopt gives it', () => {
    const wrong: string[] = [];
    for (const [name, spec] of Object.entries(profile.long)) {
      const kind = probeKind(`/usr/bin/${bin}`, `--${name}`, scratch);
      if (kind !== spec.arg) wrong.push(`--${name}: table ${spec.arg}, binary ${kind}`);
    }
    for (const [letter, spec] of Object.entries(profile.short)) {
      // Short options with an optional argument do not exist in these binaries.
      const kind = probeKind(`/usr/bin/${bin}`, `-${letter}`, scratch);
      if (kind !== spec.arg) wrong.push(`-${letter}: table ${spec.arg}, binary ${kind}`);
    }
    expect(wrong).toEqual([]);
  });

  it.skipIf(!installed)('writes nothing with any option it allows', () => {
    const before = snapshot(scratch);
    const forms = [
      ...Object.entries(profile.long).filter(([, s]) => !s.asks).map(([name, s]) => (s.arg === 'required' ? [`--${name}`, name.includes('files0') ? 'list' : '1'] : [`--${name}`])),
      ...Object.entries(profile.short).filter(([, s]) => !s.asks).map(([letter, s]) => (s.arg === 'required' ? [`-${letter}`, '1'] : [`-${letter}`])),
    ];
    for (const form of forms) {
      spawnSync(`/usr/bin/${bin}`, [...form, 'data.txt'], { cwd: scratch, env: { LANG: 'C', PATH: '/usr/bin:/bin' }, input: '', timeout: 2000 });
      expect([form.join(' '), snapshot(scratch)]).toEqual([form.join(' '), before]);
    }
  });
});

describe('the options the default list refuses really write or run', () => {
  it('`sort -o`, `uniq IN OUT` and `file -C` write files; `sort --compress-program` runs the program', () => {
    const scratch = mkdtempSync(path.join(root, 'positive-'));
    writeFileSync(path.join(scratch, 'data.txt'), 'b\na\n');
    spawnSync('/usr/bin/sort', ['-o', 'out1', 'data.txt'], { cwd: scratch });
    spawnSync('/usr/bin/uniq', ['data.txt', 'out2'], { cwd: scratch });
    writeFileSync(path.join(scratch, 'magic'), '0 string WARDEN warden test\n');
    spawnSync('/usr/bin/file', ['-C', '-m', 'magic'], { cwd: scratch });
    writeFileSync(path.join(scratch, 'compress.sh'), `#!/bin/sh\ntouch ${scratch}/compressor-ran\ncat\n`);
    chmodSync(path.join(scratch, 'compress.sh'), 0o755);
    writeFileSync(path.join(scratch, 'big.txt'), Array.from({ length: 20_000 }, (_, i) => `line ${20_000 - i}`).join('\n'));
    spawnSync('/usr/bin/sort', ['--compress-program=./compress.sh', '-S', '16k', '-T', scratch, 'big.txt'], { cwd: scratch, encoding: 'utf8' });
    expect(['out1', 'out2', 'magic.mgc', 'compressor-ran'].filter((f) => existsSync(path.join(scratch, f)))).toEqual(['out1', 'out2', 'magic.mgc', 'compressor-ran']);
  });
});

describe('the `find` entry agrees with the real find', () => {
  const scratch = mkdtempSync(path.join(root, 'find-'));
  writeFileSync(path.join(scratch, 'data.txt'), 'x\n');
  writeFileSync(path.join(scratch, 'list0'), 'data.txt\0');
  const find = (args: string[]) => spawnSync('/usr/bin/find', args, { cwd: scratch, encoding: 'utf8', env: { LANG: 'C', PATH: '/usr/bin:/bin' }, timeout: 2000 });
  const VALUES: Record<string, string> = { '-type': 'f', '-xtype': 'f', '-perm': '644', '-size': '1', '-regextype': 'posix-basic', '-newer': 'data.txt', '-anewer': 'data.txt', '-cnewer': 'data.txt', '-samefile': 'data.txt', '-fstype': 'ext4', '-user': 'root', '-group': 'root', '-printf': '%p\\n', '-files0-from': 'list0' };
  const OPERATORS = new Set(['!', '-not', '-a', '-and', '-o', '-or', '(', ')', ',']);

  it('knows every primary it allows, with the arity find gives it, and none of them writes', () => {
    const before = snapshot(scratch);
    const wrong: string[] = [];
    for (const [primary, arity] of Object.entries(FIND_PRIMARIES)) {
      if (OPERATORS.has(primary)) continue;
      const args = primary === '-files0-from' ? [primary, 'list0', '-maxdepth', '0'] : ['.', '-maxdepth', '0', primary, ...(arity === 1 ? [VALUES[primary] ?? '1'] : [])];
      const ran = find(args);
      if (/unknown predicate|invalid predicate|paths must precede/.test(ran.stderr)) wrong.push(`${primary}: ${ran.stderr.trim()}`);
      if (arity === 1 && primary !== '-files0-from' && !/missing argument|requires an argument|invalid argument `-/.test(find(['.', '-maxdepth', '0', primary]).stderr)) wrong.push(`${primary} takes no argument`);
    }
    expect(wrong).toEqual([]);
    expect(snapshot(scratch)).toBe(before);
  });

  it('the primaries it refuses are find\'s own, and -delete and -fprint do write', () => {
    for (const primary of Object.keys(FIND_ASKS)) expect(find(['.', '-maxdepth', '0', '-false', primary, ...(primary.startsWith('-exec') || primary.startsWith('-ok') ? ['true', ';'] : primary === '-delete' ? [] : primary === '-fprintf' ? ['x', '%p'] : ['x'])]).stderr).not.toMatch(/unknown predicate/);
    find(['.', '-name', 'data.txt', '-fprint', 'printed']);
    expect(existsSync(path.join(scratch, 'printed'))).toBe(true);
    find(['.', '-name', 'printed', '-delete']);
    expect(existsSync(path.join(scratch, 'printed'))).toBe(false);
  });
});

/**
 * git: a repository whose configuration names a program for every hook point a reading command
 * could reach — written after Warden looked, so the hardening knows none of its names (no
 * discovery) — and a marker that each program leaves when it runs.
 */
describe('the default git entries run nothing the repository names, even unseen by the hardening', () => {
  const repo = path.join(root, 'repo');
  const markers = path.join(root, 'git-markers');
  const gitEnv = () => ({ ...buildChildEnv({ PATH: DEFAULT_PATH_DIRS.join(':') }, { home: path.join(root, 'git-home'), git: { workspace: repo, discovered: [] } }), LANG: 'C' });
  const git = (args: string[], env: NodeJS.ProcessEnv = gitEnv()) => spawnSync('/usr/bin/git', args, { cwd: repo, env, encoding: 'utf8', timeout: 10_000 });
  const fired = () => (existsSync(markers) ? readdirSync(markers).sort() : []);
  const clear = () => {
    rmSync(markers, { recursive: true, force: true });
    mkdirSync(markers);
  };

  beforeAll(() => {
    mkdirSync(repo);
    mkdirSync(path.join(root, 'git-home'));
    const plain = { ...process.env, HOME: path.join(root, 'git-home'), GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };
    for (const args of [['init', '-q', '-b', 'main'], ['config', 'user.email', 'a@b'], ['config', 'user.name', 'a']]) spawnSync('git', args, { cwd: repo, env: plain });
    writeFileSync(path.join(repo, 'a.txt'), 'one\n');
    writeFileSync(path.join(repo, 'b.txt'), 'first\n');
    spawnSync('git', ['add', '.'], { cwd: repo, env: plain });
    spawnSync('git', ['commit', '-qm', 'one'], { cwd: repo, env: plain });
    writeFileSync(path.join(repo, 'b.txt'), 'second\n');
    spawnSync('git', ['commit', '-qam', 'two'], { cwd: repo, env: plain });
    spawnSync('git', ['tag', 'v1'], { cwd: repo, env: plain });
    // Now the agent's writes: a program behind every key, and attributes that select the drivers.
    const program = (name: string) => {
      const file = path.join(root, `prog-${name}`);
      writeFileSync(file, `#!/bin/sh\nmkdir -p ${markers}; touch ${markers}/${name}\ncat\n`);
      chmodSync(file, 0o755);
      return file;
    };
    const evil: Array<[string, string]> = [
      ['core.fsmonitor', program('fsmonitor')],
      ['core.pager', program('pager')],
      ['pager.log', program('pager-log')],
      ['core.hooksPath', path.join(root, 'hooks')],
      ['diff.external', program('external')],
      ['diff.evil.textconv', program('textconv')],
      ['diff.evil.command', program('diff-command')],
      ['filter.evil.clean', program('clean')],
      ['filter.evil.smudge', program('smudge')],
      ['gpg.program', program('gpg')],
      ['log.showSignature', 'true'],
    ];
    mkdirSync(path.join(root, 'hooks'));
    for (const hook of ['post-index-change', 'reference-transaction', 'post-checkout']) {
      writeFileSync(path.join(root, 'hooks', hook), `#!/bin/sh\nmkdir -p ${markers}; touch ${markers}/hook-${hook}\n`);
      chmodSync(path.join(root, 'hooks', hook), 0o755);
    }
    for (const [key, value] of evil) spawnSync('git', ['config', key, value], { cwd: repo, env: plain });
    writeFileSync(path.join(repo, '.gitattributes'), '* diff=evil filter=evil\n');
    // A submodule with a program of its own, diffed in a child git when the superproject says `diff.submodule = diff`.
    const sub = path.join(root, 'sub-origin');
    mkdirSync(sub);
    for (const args of [['init', '-q', '-b', 'main'], ['config', 'user.email', 'a@b'], ['config', 'user.name', 'a']]) spawnSync('git', args, { cwd: sub, env: plain });
    writeFileSync(path.join(sub, 'f'), 'one\n');
    spawnSync('git', ['add', 'f'], { cwd: sub, env: plain });
    spawnSync('git', ['commit', '-qm', 'one'], { cwd: sub, env: plain });
    spawnSync('git', ['-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', sub, 'sub'], { cwd: repo, env: plain });
    spawnSync('git', ['commit', '-qm', 'submodule'], { cwd: repo, env: plain });
    writeFileSync(path.join(repo, 'sub', 'f'), 'two\n');
    spawnSync('git', ['-c', 'user.email=a@b', '-c', 'user.name=a', 'commit', '-qam', 'two'], { cwd: path.join(repo, 'sub'), env: plain });
    spawnSync('git', ['add', 'sub'], { cwd: repo, env: plain });
    spawnSync('git', ['config', 'diff.external', program('submodule-external')], { cwd: path.join(repo, 'sub'), env: plain });
    spawnSync('git', ['config', 'diff.submodule', 'diff'], { cwd: repo, env: plain });
    // A work-tree change git must look at: new content, and a file whose times changed but not its size.
    writeFileSync(path.join(repo, 'b.txt'), 'third\n');
    utimesSync(path.join(repo, 'a.txt'), new Date(), new Date(Date.now() + 5000));
  });

  /** The commands of the table as the gate lets them run: its rewrite, argv and added flags. */
  const ALLOWED = [
    'git log', 'git log -p', 'git log --stat --oneline -3', 'git --no-pager log -p -- b.txt', 'git show', 'git show HEAD~1', 'git show --stat HEAD', 'git show HEAD:b.txt',
    'git diff --cached', 'git diff --staged --stat', 'git branch', 'git branch -a -v', 'git tag --list v*', 'git ls-files', 'git ls-files --others',
    'git rev-parse --show-toplevel', 'git describe --tags --always', 'git grep -n third', 'git grep --cached -n second', 'git shortlog -s -n HEAD', 'git remote -v', 'git cat-file -p HEAD:b.txt',
  ];

  it.each(ALLOWED)('`%s` runs none of them', (command) => {
    const verdict = evaluateExec(command, execPolicyFromConfig(execConfig.parse({}), [], 'sandbox'), { cwd: repo, pathDirs: DEFAULT_PATH_DIRS, home: SANDBOX_HOME, patternHome: '/root' });
    expect(verdict.decision).toBe('allow');
    clear();
    const ran = spawnSync('/bin/sh', ['-c', verdict.rewritten!], { cwd: repo, env: gitEnv(), encoding: 'utf8', timeout: 10_000 });
    expect(ran.stderr).not.toMatch(/unknown option|unrecognized argument|unknown switch/);
    expect(fired()).toEqual([]);
  });

  it('the same repository does run them for what the default list leaves out, so the test bites', () => {
    clear();
    git(['status']);
    expect(fired()).toContain('clean');
    clear();
    git(['diff']);
    expect(fired()).toEqual(expect.arrayContaining(['clean', 'diff-command']));
    clear();
    git(['log', '-p', '-1']);
    expect(fired()).toContain('textconv');
    clear();
    git(['log', '-p', '-1', '--ext-diff']);
    expect(fired()).toContain('diff-command');
    clear();
    git(['diff', '--cached', 'HEAD~1']);
    expect(fired()).toContain('diff-command');
    // A submodule's own external diff runs in a child git, unless the submodule diff is kept
    // short: the hardening always keeps it short; without it, the child git runs.
    clear();
    git(['diff', '--cached', '--no-textconv', '--no-ext-diff'], { ...process.env, HOME: path.join(root, 'git-home'), GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' });
    expect(fired()).toContain('submodule-external');
    clear();
    git(['diff', '--cached', '--no-textconv', '--no-ext-diff']);
    expect(fired()).toEqual([]);
    clear();
    git(['diff', '--cached', '--no-textconv', '--no-ext-diff', '--submodule=short']);
    expect(fired()).toEqual([]);
    // Without the driver's own command, the repository-wide external diff runs.
    clear();
    spawnSync('git', ['config', '--unset', 'diff.evil.command'], { cwd: repo });
    git(['diff', '--cached', 'HEAD~1']);
    expect(fired()).toContain('external');
    spawnSync('git', ['config', 'diff.evil.command', path.join(root, 'prog-diff-command')], { cwd: repo });
  });

  it('every option of the table is one this git takes, spelled out (git takes no abbreviation for log, show and diff)', () => {
    const VALUES: Record<string, string> = {
      format: '%h', date: 'short', since: '1.year', after: '1.year', until: 'now', before: 'now', author: 'a', committer: 'a', grep: 'x', 'max-count': '1', skip: '0', n: '1',
      unified: '1', U: '1', 'diff-filter': 'M', S: 'x', G: 'x', contains: 'HEAD', 'no-contains': 'v1', merged: 'HEAD', 'no-merged': 'HEAD', 'points-at': 'HEAD', sort: 'refname',
      abbrev: '7', exclude: '*.o', x: '*.o', 'exclude-from': '.gitattributes', X: '.gitattributes', 'exclude-per-directory': '.gitignore', match: 'v*', candidates: '1',
      'max-depth': '1', 'after-context': '1', 'before-context': '1', context: '1', A: '1', B: '1', C: '1', threads: '1', m: '1', e: 'third', f: '.gitattributes', group: 'author',
    };
    const BASE: Record<string, string[]> = { diff: ['diff', '--cached'], grep: ['grep'], describe: ['describe', '--always'], 'cat-file': ['cat-file'], remote: ['remote'], 'rev-parse': ['rev-parse'] };
    const TAIL: Record<string, string[]> = { grep: ['-e', 'third'], 'cat-file': ['HEAD:b.txt'], 'rev-parse': ['HEAD'], shortlog: ['HEAD'] };
    const wrong: string[] = [];
    for (const [name, sub] of Object.entries(GIT_SUBCOMMANDS)) {
      // What parse-options lists for the subcommand: its usage and its completion words.
      const helper = ['-h', '--git-completion-helper'].map((flag) => { const r = spawnSync('/usr/bin/git', [name, flag], { cwd: repo, env: gitEnv(), encoding: 'utf8' }); return `${r.stdout}\n${r.stderr}`; }).join('\n');
      for (const [key, spec] of Object.entries(sub.options)) {
        if (spec.asks) continue;
        const long = key.length > 1;
        const option = long ? `--${key}` : `-${key}`;
        const value = spec.arg === 'required' ? [VALUES[key] ?? '1'] : [];
        // As the gate runs it: with the flags it adds.
        const args = [...(BASE[name] ?? [name]), ...(long && spec.arg === 'required' ? [`${option}=${value[0]}`] : [option, ...value]), ...(TAIL[name] ?? []), ...(sub.forced ?? [])];
        clear();
        const ran = spawnSync('/usr/bin/git', args, { cwd: repo, env: gitEnv(), encoding: 'utf8', timeout: 10_000 });
        if (fired().length > 0) wrong.push(`git ${args.join(' ')} ran ${fired().join(', ')}`);
        if (ran.status === 129 || /unknown option|unrecognized argument|unknown switch/.test(ran.stderr)) wrong.push(`git ${args.join(' ')}: ${ran.stderr.trim().split('\n')[0]}`);
        // rev-parse echoes an option it does not know: it must not come back verbatim.
        if (name === 'rev-parse' && ran.stdout.split('\n').includes(option)) wrong.push(`git rev-parse does not know ${option}`);
        // Commands on parse-options list their exact option names.
        // Commands on parse-options list their exact option names; shortlog hands the rest to the revision parser, which takes no abbreviation.
        const revisionOption = name === 'shortlog' && ['all', 'format'].includes(key);
        if (long && !revisionOption && !['log', 'show', 'diff', 'rev-parse'].includes(name) && !new RegExp(`(^|[\\s,])${option}([=\\s,[]|$)`, 'm').test(helper)) wrong.push(`git ${name} does not list ${option}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(git(['log', '--outp=x']).stderr).toMatch(/unrecognized argument/);
    expect(git(['shortlog', '--al', 'HEAD']).stderr).toMatch(/unknown option/);
    expect(git(['shortlog', '--form=x', 'HEAD']).stderr).toMatch(/unknown option/);
    expect(fired()).toEqual([]);
  }, 60_000);
});

describe('through the exec tool on the real sandbox', () => {
  const canSandbox = existsSync('/usr/bin/bwrap') && process.platform === 'linux';

  /** The exec tool as a fresh install runs it (no config: the sandbox host, the default list on), asking a recorder. */
  async function run(command: string, env?: Record<string, string>, config: Record<string, unknown> = {}) {
    const { parseConfig } = await import('../../src/config/index.js');
    const { createExecTool } = await import('../../src/tools/core/exec/exec.js');
    const { log } = await import('../../src/log/log.js');
    const parsed = parseConfig(config);
    if (!parsed.ok) throw parsed.error;
    const asked: string[] = [];
    const exec = createExecTool({ config: parsed.value.config, hasBwrap: true });
    const result = await exec.execute(
      { command, ...(env ? { env } : {}) },
      {
        toolCallId: 'c1',
        signal: new AbortController().signal,
        turn: { agentId: 'main', provider: 'web', chat: 'dm', channelId: 'web', senderId: 'local', senderIsOwner: true, spawnDepth: 0 },
        sessionKey: 'agent:main:web:direct:local',
        workspaceDir: workspace,
        log,
        approvals: { request: async (input) => (asked.push(input.fullText), { id: 'x', outcome: 'deny' as const }) },
      },
    );
    const { content } = result as { content: Array<{ type: string; text?: string }> };
    return { asked, text: content.map((c) => c.text ?? '').join('') };
  }

  it.skipIf(!canSandbox)('a fresh install runs `ls` and `grep -rn` without asking', async () => {
    const listed = await run('ls');
    expect(listed.asked).toEqual([]);
    expect(listed.text).toContain('notes.md');
    const found = await run('grep -rn TODO .');
    expect(found.asked).toEqual([]);
    expect(found.text).toContain('notes.md:1:TODO: ship');
  });

  it.skipIf(!canSandbox)('an environment of the model\'s choosing makes a default command ask; so does a writing option', async () => {
    expect((await run('ls', { LS_COLORS: 'x' })).asked).toEqual(['ls']);
    expect((await run('sort -o out notes.md')).asked).toEqual(['sort -o out notes.md']);
    expect(existsSync(path.join(workspace, 'out'))).toBe(false);
  });

  it.skipIf(!canSandbox)('defaultAllowlist: false asks for `ls` again', async () => {
    expect((await run('ls', undefined, { tools: { exec: { defaultAllowlist: false } } })).asked).toEqual(['ls']);
  });
});
