import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { checkExec } from '../../src/app/exec-check.js';
import { knownGitCommands, parseGitArgv } from '../../src/exec/git-argv.js';
import type { TurnContext } from '../../src/policy/context.js';

/**
 * An operator who trusts a repository's configuration (`trustRepoConfig: true` on a git entry)
 * still never lets the argv itself name a program for git to run. git reads its options with
 * parse-options: short options cluster (`-iOless` is `-i -Oless`), values attach (`-xsh`,
 * `--exec=sh`) and a long option may be abbreviated to any prefix git can tell apart
 * (`--op=sh` is `--open-files-in-pager=sh`). Every spelling asks, and the real git is shown to
 * take the spellings the table tries.
 */
const root = mkdtempSync(path.join(tmpdir(), 'warden-git-options-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const turn: TurnContext = { agentId: 'main', provider: 'web', chat: 'channel', channelId: 'dev', senderIsOwner: false, spawnDepth: 0 };
const parsed = parseConfig({ owners: { web: ['op'] }, agents: { defaults: { workspace: root } }, tools: { exec: { allowlist: [{ pattern: '/usr/bin/git', trustRepoConfig: true }] } } });
if (!parsed.ok) throw parsed.error;
const config = parsed.value.config;
const check = (command: string) => checkExec(config, command, turn, { cwd: root, home: root });

const PROGRAM_SPELLINGS: string[] = [
  // grep -O[<pager>] / --open-files-in-pager[=<pager>]
  'git grep -Osh x', 'git grep -O sh', 'git grep -O x', 'git grep -iOsh x', 'git grep -inOsh x', 'git grep -nIOsh x', 'git grep -hO x',
  'git grep --open-files-in-pager=sh x', 'git grep --open-files-in-pager x', 'git grep --open-files=sh x', 'git grep --open=sh x', 'git grep --op=sh x',
  'git grep --o=sh x', 'git grep -e y --op=sh',
  // clone -u/--upload-pack, -c/--config, --template
  'git clone -u sh /x y', 'git clone -ush /x y', 'git clone -qu sh /x y', 'git clone -qush /x y', 'git clone --upload-pack=sh /x y', 'git clone --upload=sh /x y',
  'git clone --up sh /x y', 'git clone -c core.fsmonitor=sh /x y', 'git clone -qc core.fsmonitor=sh /x y', 'git clone -ccore.fsmonitor=sh /x y',
  'git clone --config=core.fsmonitor=sh /x y', 'git clone --conf core.fsmonitor=sh /x y', 'git clone --template=/tmp/t /x y', 'git clone --templ /tmp/t /x y',
  'git clone /x y --upload-pack=sh',
  // fetch / pull / ls-remote / fetch-pack --upload-pack (and ls-remote's --exec)
  'git fetch --upload-pack=sh origin', 'git fetch --upload-p=sh origin', 'git fetch --upl sh origin', 'git pull --upload-pack=sh origin',
  'git ls-remote --upload-pack=sh origin', 'git ls-remote --exec=sh origin', 'git ls-remote --ex=sh origin', 'git ls-remote -u sh origin',
  'git fetch-pack --upload-pack=sh /x', 'git fetch-pack --exec=sh /x',
  // push / send-pack --receive-pack, --exec
  'git push --receive-pack=sh origin', 'git push --rece=sh origin', 'git push --receive sh origin', 'git push --exec=sh origin', 'git push --ex=sh origin',
  'git send-pack --receive-pack=sh /x', 'git send-pack --exec=sh /x',
  // rebase -x/--exec
  'git rebase -x sh HEAD~1', 'git rebase -xsh HEAD~1', 'git rebase -ix sh HEAD~1', 'git rebase -qxsh HEAD~1', 'git rebase --exec=sh HEAD~1',
  'git rebase --exec sh HEAD~1', 'git rebase --exe=sh HEAD~1', 'git rebase --ex sh HEAD~1', 'git rebase HEAD~1 --exec=sh',
  // archive --exec (with --remote)
  'git archive --remote=x --exec=sh HEAD', 'git archive --remote=x --ex=sh HEAD',
  // init --template
  'git init --template=/tmp/t', 'git init --templ=/tmp/t',
  // subcommands that run programs, or schedule git runs outside the command
  'git maintenance start', 'git maintenance register', 'git maintenance run --task=gc', 'git for-each-repo --config=x status',
  'git difftool -x sh', 'git difftool --extcmd=sh', 'git bisect run sh', 'git submodule foreach sh',
];

describe('every spelling of an option that names a program asks, even with trustRepoConfig', () => {
  it.each(PROGRAM_SPELLINGS)('`%s`', (command) => {
    const v = check(command);
    expect(v.decision, v.reason).toBe('ask');
    expect(v.reason).toMatch(/names a program|runs programs/);
  });
});

describe('ordinary commands of opted-in entries still run', () => {
  it.each([
    'git status', 'git status -uno', 'git status --short', 'git grep -n x', 'git grep -in x', 'git grep -e O', 'git grep --or -e a -e b', 'git log -1 --oneline',
    'git log -O order.txt', 'git diff -O order.txt', 'git commit --template=msg.txt -q', 'git cherry-pick -x HEAD', 'git clone --depth 1 /x y', 'git fetch -q origin',
    'git push -q origin main', 'git rebase -q HEAD~1', 'git archive HEAD', 'git init -q',
  ])('`%s`', (command) => {
    const v = check(command);
    expect(v.decision, v.reason).toBe('allow');
  });
});

describe('the real git takes these spellings (so the table is what an attacker would type)', () => {
  const known = knownGitCommands('/usr/bin/git');
  const marker = path.join(root, 'fired');
  const program = path.join(root, 'prog');
  writeFileSync(program, `#!/bin/sh\ntouch '${marker}'\nexit 1\n`);
  chmodSync(program, 0o755);
  const env = { PATH: '/usr/bin:/bin', HOME: root, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_AUTHOR_NAME: 'a', GIT_AUTHOR_EMAIL: 'a@b', GIT_COMMITTER_NAME: 'a', GIT_COMMITTER_EMAIL: 'a@b' };
  const repo = path.join(root, 'repo');
  mkdirSync(repo);
  writeFileSync(path.join(repo, 'a.txt'), 'needle\n');
  for (const args of [['init', '-q', '-b', 'main'], ['add', 'a.txt'], ['commit', '-q', '-m', 'one'], ['commit', '-q', '--allow-empty', '-m', 'two']]) spawnSync('git', args, { cwd: repo, env });

  it.each<[string, string[]]>([
    ['grep -iO<prog>', ['grep', `-iO${program}`, 'needle']],
    ['grep --op=<prog>', ['grep', `--op=${program}`, 'needle']],
    ['grep --open=<prog>', ['grep', `--open=${program}`, 'needle']],
    ['clone -qu <prog>', ['clone', '-qu', program, repo, path.join(root, 'clone-u')]],
    ['clone --up=<prog>', ['clone', `--up=${program}`, repo, path.join(root, 'clone-up')]],
    ['rebase -qx<prog>', ['rebase', `-qx${program}`, 'HEAD~1']],
    ['rebase --exe=<prog>', ['rebase', `--exe=${program}`, 'HEAD~1']],
    ['ls-remote --upl=<prog>', ['ls-remote', `--upl=${program}`, repo]],
  ])('`git %s` runs the program, and Warden sees it', (_name, args) => {
    rmSync(marker, { force: true });
    spawnSync('git', ['rebase', '--abort'], { cwd: repo, env });
    spawnSync('git', args, { cwd: repo, env, timeout: 10_000, stdio: 'ignore' });
    expect(existsSync(marker), 'git ran the named program').toBe(true);
    expect(parseGitArgv(args, known).untrusted).toMatch(/names a program/);
  });
});
