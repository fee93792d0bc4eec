import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApprovalService } from '../../src/approvals/service.js';
import { main } from '../../src/cli.js';
import { parseConfig, type WardenConfigInput } from '../../src/config/index.js';
import { loadConfig } from '../../src/config/load.js';
import { commandHashPattern } from '../../src/exec/allowlist.js';
import { ExecAllowlistStore } from '../../src/exec/allowlist-store.js';
import { checkExec } from '../../src/app/exec-check.js';
import { buildChildEnv } from '../../src/exec/env.js';
import { knownGitCommands, parseGitArgv } from '../../src/exec/git-argv.js';
import { discoverGitConfig } from '../../src/exec/git-discovery.js';
import { entryRepoConfigMembers, REPO_CONFIG_MEMBERS } from '../../src/exec/repo-config.js';
import { auditRepoConfig } from '../../src/exec/repo-config-audit.js';
import { startCommand } from '../../src/exec/run.js';
import { DEFAULT_PATH_DIRS } from '../../src/exec/resolve.js';
import { log } from '../../src/log/log.js';
import type { TurnContext } from '../../src/policy/context.js';
import { openWardenStore } from '../../src/app/migrations.js';
import { createExecTool } from '../../src/tools/core/exec/exec.js';
import type { ToolResult } from '../../src/tools/types.js';

/**
 * Binaries that execute repository configuration (`git`, `make`, `npm`, …), as an attacker who
 * can write the workspace uses them: an allowlisted `git status` must never run what the agent
 * wrote into `.git/config`, and every git command exec starts runs with that configuration
 * neutralised — shown on the real git, key by key, with the payload firing without the
 * hardening and not with it.
 */
const root = mkdtempSync(path.join(tmpdir(), 'warden-repo-config-'));
const workspace = path.join(root, 'workspace');
const markers = path.join(root, 'markers');
const fakeBin = path.join(root, 'fake-bin');
const emptyHome = path.join(root, 'home');
for (const dir of [workspace, markers, fakeBin, emptyHome]) mkdirSync(dir, { recursive: true });
afterAll(() => rmSync(root, { recursive: true, force: true }));

const turn: TurnContext = { agentId: 'main', provider: 'web', chat: 'channel', channelId: 'dev', senderIsOwner: false, spawnDepth: 0 };

function configOf(exec: Record<string, unknown>, extra: WardenConfigInput = {}) {
  const parsed = parseConfig({ owners: { web: ['op'] }, agents: { defaults: { workspace } }, tools: { exec }, ...extra });
  if (!parsed.ok) throw parsed.error;
  return parsed.value.config;
}

const check = (command: string, exec: Record<string, unknown>, options: Parameters<typeof checkExec>[3] = {}) =>
  checkExec(configOf(exec), command, turn, { cwd: workspace, home: emptyHome, ...options });

/** A stand-in executable for every class member, so the class is tested whether or not the tool is installed. */
for (const name of [...REPO_CONFIG_MEMBERS, 'python3', 'node', 'deno', 'bun', 'docker']) {
  const file = path.join(fakeBin, name);
  writeFileSync(file, '#!/bin/sh\nexit 0\n');
  chmodSync(file, 0o755);
}

describe('the class: an allowlist entry for a binary that runs repository configuration asks', () => {
  const member = (name: string, args = '') => ({ command: `${name}${args ? ` ${args}` : ''}`, pattern: path.join(fakeBin, name) });
  const cases = [
    ...REPO_CONFIG_MEMBERS.filter((n) => n !== 'git').map((n) => member(n, n === 'docker-compose' ? 'up' : '')),
    member('npm', 'test'), member('npx', 'eslint .'), member('yarn', 'build'), member('pnpm', 'install'), member('cargo', 'build'),
    member('go', 'test ./...'), member('pip', 'install .'), member('make', 'test'), member('mvn', 'package'), member('gradle', 'build'),
    member('python3', '-m pytest'), member('python3', '-m pip install .'), member('python3', '-m tox'), member('python3', '-m unittest'),
    member('node', '--run build'), member('deno', 'task build'), member('bun', 'run build'), member('bun', 'test'),
    member('docker', 'compose up'), member('docker', 'build .'),
  ];
  it.each(cases)('`$command` asks under an entry for it, and runs once the entry opts in with trustRepoConfig', ({ command, pattern }) => {
    const opts = { pathDirs: [fakeBin] };
    const asked = check(command, { allowlist: [{ pattern }] }, opts);
    expect(asked.decision).toBe('ask');
    expect(asked.reason).toMatch(/runs repository configuration the agent can write/);
    expect(asked.allowAlways.offered).toBe(false);
    expect(check(command, { allowlist: [{ pattern, trustRepoConfig: true }] }, opts).decision).toBe('allow');
  });

  it.each<[string, Array<Record<string, unknown>>]>([
    ['git status', [{ pattern: '/usr/bin/git', argPattern: 'status*' }]],
    ['git status', [{ pattern: 'git' }]],
    ['git status', [{ pattern: '/usr/bin/g*' }]],
    ['git status', [{ pattern: '/usr/**' }]],
    ['git status', [{ pattern: '*' }]],
    ['/usr/bin/git status', [{ pattern: '/usr/bin/git' }]],
    ['nice -n 5 git status', [{ pattern: '/usr/bin/git' }]],
    ['timeout 5 git status', [{ pattern: '/usr/bin/git' }]],
    ['ls && git status', [{ pattern: '/usr/bin/ls' }, { pattern: '/usr/bin/git' }]],
    ['git status | wc -l', [{ pattern: '/usr/bin/git' }]],
    ["sh -c 'git status'", [{ pattern: '/usr/bin/dash', argPattern: '-c *' }, { pattern: '/usr/bin/git' }]],
    ["bash -c 'cd sub && git status'", [{ pattern: '/usr/bin/bash', argPattern: '-c *' }]],
    ['./g status', [{ pattern: '/usr/bin/git' }]],
  ])('`%s` with %j asks', (command, allowlist) => {
    symlinkOnce(path.join(workspace, 'g'), '/usr/bin/git');
    const v = check(command, { allowlist });
    expect(v.decision).toBe('ask');
    expect(v.reason).toMatch(/`git` runs repository configuration/);
  });

  it('ask: off turns the ask into a deny: a class member never runs silently', () => {
    const v = check('git status', { ask: 'off', allowlist: [{ pattern: '/usr/bin/git', argPattern: 'status*' }] });
    expect(v.decision).toBe('deny');
  });

  it('an approval that expires never falls back to running it (askFallback: allowlist)', () => {
    const v = check('git status', { askFallback: 'allowlist', allowlist: [{ pattern: '/usr/bin/git', argPattern: 'status*' }] });
    expect(v.satisfied).toBe(false);
    expect(v.fallbackScript).toBeNull();
  });

  it('a stored allow-always or imported entry, or an exact-command grant, cannot cover it either', () => {
    const exec = { allowlist: [] };
    for (const source of ['allow-always', 'import'] as const) {
      const v = check('git status', exec, { storedAllowlist: [{ pattern: '/usr/bin/git', argPattern: '^status\x00$', source, boundFiles: [] }] });
      expect(v.decision).toBe('ask');
    }
    const plan = check("bash -c 'git status'", exec).allowAlways;
    expect(plan.offered).toBe(false);
    expect(plan.why).toMatch(/repository configuration/);
    const commandGrant = { pattern: commandHashPattern('git status'), source: 'allow-always' as const, boundFiles: [] };
    expect(check('git status', exec, { storedAllowlist: [commandGrant] }).decision).toBe('ask');
  });

  it('a safe-bin profile cannot make one safe', () => {
    const v = check('make', { safeBins: ['make'], safeBinProfiles: { make: { maxPositional: 0 } }, allowlist: [] }, { pathDirs: [fakeBin] });
    expect(v.decision).toBe('ask');
  });
});

describe('trustRepoConfig covers ordinary git commands only', () => {
  const trusted = { allowlist: [{ pattern: '/usr/bin/git', trustRepoConfig: true }] };
  it.each(['git status', 'git status -s', 'git log --oneline', 'git diff', 'git show HEAD', 'git --no-pager log', 'git -P branch'])('`%s` runs', (command) => {
    expect(check(command, trusted).decision).toBe('allow');
  });
  it.each<[string, RegExp]>([
    ['git st', /not a git command: a repository alias/],
    ['git statusx', /not a git command/],
    ['git -c core.pager=sh status', /overrides the hardened git configuration/],
    ['git --config-env=core.pager=X status', /overrides the hardened git configuration/],
    ['git --exec-path=/tmp status', /overrides the hardened git configuration/],
    ['git -C /etc status', /another repository/],
    ['git --git-dir=/tmp/x status', /another repository/],
    ['git --work-tree=/ status', /another repository/],
    ['git grep -Osh x', /names a program/],
    ['git grep --open-files-in-pager=sh x', /names a program/],
    ['git fetch --upload-pack=sh origin', /names a program/],
    ['git push --receive-pack=sh origin', /names a program/],
    ['git clone -u sh /x y', /names a program/],
    ['git clone -c core.fsmonitor=sh /x y', /names a program/],
    ['git rebase -x sh HEAD~1', /names a program/],
    ['git rebase --exec=sh HEAD~1', /names a program/],
    ['git archive --remote=x --exec=sh HEAD', /names a program/],
    ['git bisect run sh', /runs programs/],
    ['git submodule foreach sh', /runs programs/],
    ['git difftool -x sh', /runs programs/],
    ['git config core.fsmonitor sh', /runs programs/],
    ['git help -w log', /runs programs/],
    ['git filter-branch --tree-filter sh', /runs programs/],
    ['git --bogus status', /unknown git option/],
  ])('`%s` still asks: %s', (command, why) => {
    const v = check(command, trusted);
    expect(v.decision).toBe('ask');
    expect(v.reason).toMatch(why);
  });

  it('knows every command of this git, so none of them is mistaken for an alias', () => {
    const known = knownGitCommands('/usr/bin/git');
    const main = spawnSync('/usr/bin/git', ['--list-cmds=main'], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
    expect(main.length).toBeGreaterThan(100);
    for (const name of main) expect(known?.has(name), name).toBe(true);
    expect(parseGitArgv(['st'], known).untrusted).toMatch(/alias/);
  });

  it('git runs its own command, not an alias of the same name (so only unknown names are aliases)', () => {
    const repo = gitRepo('alias-shadow');
    git(repo, 'config', 'alias.status', `!${payload('alias-status')}`);
    git(repo, 'config', 'alias.st', `!${payload('alias-st')}`);
    runBaseline(repo, 'git status');
    expect(fired('alias-status')).toBe(false);
    runBaseline(repo, 'git st');
    expect(fired('alias-st')).toBe(true);
  });
});

// ─── the hardened environment, on the real git ───────────────────────────────────────────────

function symlinkOnce(link: string, target: string): void {
  if (!existsSync(link)) symlinkSync(target, link);
}

/** A script that leaves a marker when git runs it. */
function payload(name: string): string {
  const file = path.join(root, 'payloads', name);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `#!/bin/sh\ntouch '${path.join(markers, name)}'\ncat >/dev/null 2>&1 </dev/null\nexit 1\n`);
  chmodSync(file, 0o755);
  return file;
}
const fired = (name: string): boolean => existsSync(path.join(markers, name));
const clear = () => {
  for (const f of readdirSync(markers)) rmSync(path.join(markers, f));
};

const BASE_ENV = { PATH: DEFAULT_PATH_DIRS.join(':'), HOME: emptyHome, SHELL: '/bin/sh', LANG: 'C.UTF-8' };

function git(cwd: string, ...args: string[]): string {
  const r = spawnSync('git', args, { cwd, env: { ...BASE_ENV, GIT_CONFIG_NOSYSTEM: '1', GIT_ALLOW_PROTOCOL: 'file' }, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

function gitRepo(name: string, files: Record<string, string> = { 'a.txt': 'one\n' }): string {
  const repo = path.join(workspace, name);
  rmSync(repo, { recursive: true, force: true });
  mkdirSync(repo, { recursive: true });
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'config', 'user.email', 'a@example.com');
  git(repo, 'config', 'user.name', 'a');
  for (const [file, content] of Object.entries(files)) writeFileSync(path.join(repo, file), content);
  git(repo, 'add', '.');
  git(repo, 'commit', '-qm', 'init');
  return repo;
}

/** What an unhardened environment does: git with the repository's configuration as it is. */
function runBaseline(cwd: string, command: string, home = emptyHome): void {
  spawnSync('/bin/sh', ['-c', command], { cwd, env: { ...BASE_ENV, HOME: home }, timeout: 15_000, stdio: 'ignore' });
}

/** What exec runs: the child environment it builds, the repository config listed just before. */
async function runHardened(cwd: string, command: string, home = emptyHome): Promise<string> {
  const found = await discoverGitConfig(cwd, { host: 'gateway', workspace, home });
  const env = buildChildEnv({ LANG: 'C.UTF-8' }, { home, git: { workspace, discovered: found.neutralisations } });
  const job = startCommand({ script: command, label: command, host: 'gateway', workspace, cwd, env, maxOutputChars: 50_000, timeoutMs: 15_000 });
  await job.done;
  return job.outputText();
}

interface Attack {
  name: string;
  /** Sets up the repository (or HOME) so that `triggers` run the payload; returns the directory to run in. */
  setup: (p: string) => string | { cwd: string; home: string };
  triggers: string[];
}

const attr = (driver: string) => ({ 'a.txt': 'one\n', '.gitattributes': `a.txt filter=${driver} diff=${driver} merge=${driver}\n` });
const modify = (repo: string) => writeFileSync(path.join(repo, 'a.txt'), 'one\ntwo\n');
const hook = (dir: string, name: string, p: string) => {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, name), `#!/bin/sh\nexec '${p}'\n`);
  chmodSync(path.join(dir, name), 0o755);
};

const credentialFill = "printf 'protocol=https\\nhost=example.com\\n\\n' | git credential fill";

const ATTACKS: Attack[] = [
  { name: 'core.fsmonitor', setup: (p) => withConfig(gitRepo('fsmonitor'), ['core.fsmonitor', p]), triggers: ['git status'] },
  {
    name: 'core.fsmonitor through include.path',
    setup: (p) => {
      const repo = gitRepo('include');
      writeFileSync(path.join(repo, '.git', 'evil.cfg'), `[core]\n\tfsmonitor = ${p}\n`);
      return withConfig(repo, ['include.path', 'evil.cfg']);
    },
    triggers: ['git status'],
  },
  {
    name: 'core.fsmonitor through includeIf',
    setup: (p) => {
      const repo = gitRepo('include-if');
      writeFileSync(path.join(repo, '.git', 'evil.cfg'), `[core]\n\tfsmonitor = ${p}\n`);
      return withConfig(repo, [`includeIf.gitdir:${root}/.path`, 'evil.cfg']);
    },
    triggers: ['git status'],
  },
  {
    name: 'core.fsmonitor in ~/.gitconfig (HOME is agent-writable in the sandbox)',
    setup: (p) => {
      const repo = gitRepo('global');
      const home = path.join(root, 'agent-home');
      mkdirSync(home, { recursive: true });
      writeFileSync(path.join(home, '.gitconfig'), `[core]\n\tfsmonitor = ${p}\n`);
      return { cwd: repo, home };
    },
    triggers: ['git status'],
  },
  { name: 'hooks in .git/hooks: pre-commit', setup: (p) => (hook(path.join(gitRepo('hook-commit'), '.git', 'hooks'), 'pre-commit', p), path.join(workspace, 'hook-commit')), triggers: ['git commit -q --allow-empty -m x'] },
  { name: 'hooks in .git/hooks: post-checkout', setup: (p) => (hook(path.join(gitRepo('hook-checkout'), '.git', 'hooks'), 'post-checkout', p), path.join(workspace, 'hook-checkout')), triggers: ['git checkout -q -b other'] },
  {
    name: 'core.hooksPath: post-merge',
    setup: (p) => {
      const repo = gitRepo('hooks-path');
      git(repo, 'checkout', '-q', '-b', 'side');
      git(repo, 'commit', '-q', '--allow-empty', '-m', 'side');
      git(repo, 'checkout', '-q', 'main');
      hook(path.join(repo, 'hk'), 'post-merge', p);
      return withConfig(repo, ['core.hooksPath', 'hk']);
    },
    triggers: ['git merge -q side'],
  },
  { name: 'core.pager', setup: (p) => withConfig(gitRepo('pager'), ['core.pager', p]), triggers: ["script -qc 'git log' /dev/null"] },
  { name: 'pager.<command>', setup: (p) => withConfig(gitRepo('pager-cmd'), ['pager.log', p]), triggers: ["script -qc 'git log' /dev/null"] },
  { name: 'core.editor', setup: (p) => withConfig(gitRepo('editor'), ['core.editor', p]), triggers: ['git commit -q --allow-empty', 'git tag -a v1'] },
  {
    name: 'sequence.editor',
    setup: (p) => {
      const repo = gitRepo('seq-editor');
      git(repo, 'commit', '-q', '--allow-empty', '-m', 'two');
      return withConfig(repo, ['sequence.editor', p]);
    },
    triggers: ['git rebase -i HEAD~1'],
  },
  { name: 'filter.<driver>.clean', setup: (p) => withConfig(touched(gitRepo('clean', attr('evil'))), ['filter.evil.clean', p]), triggers: ['git status', 'git add a.txt', 'git diff'] },
  {
    name: 'filter.<driver>.smudge',
    setup: (p) => {
      const repo = withConfig(gitRepo('smudge', attr('evil')), ['filter.evil.smudge', p]);
      rmSync(path.join(repo, 'a.txt'));
      return repo;
    },
    triggers: ['git checkout -- a.txt'],
  },
  { name: 'filter.<driver>.process', setup: (p) => withConfig(touched(gitRepo('process', attr('evil'))), ['filter.evil.process', p]), triggers: ['git add a.txt'] },
  { name: 'diff.<driver>.textconv', setup: (p) => withConfig(committedChange(gitRepo('textconv', attr('evil'))), ['diff.evil.textconv', p]), triggers: ['git diff HEAD~1', 'git log -p', 'git show'] },
  // External diff programs run for `git diff`, and for log/show with --ext-diff.
  { name: 'diff.<driver>.command', setup: (p) => withConfig(committedChange(gitRepo('diff-command', attr('evil'))), ['diff.evil.command', p]), triggers: ['git diff HEAD~1', 'git log -p --ext-diff', 'git show --ext-diff'] },
  { name: 'diff.external', setup: (p) => withConfig(committedChange(gitRepo('diff-external')), ['diff.external', p]), triggers: ['git diff HEAD~1', 'git log -p --ext-diff', 'git show --ext-diff'] },
  {
    name: 'merge.<driver>.driver',
    setup: (p) => {
      const repo = gitRepo('merge-driver', attr('evil'));
      git(repo, 'checkout', '-q', '-b', 'side');
      writeFileSync(path.join(repo, 'a.txt'), 'side\n');
      git(repo, 'commit', '-qam', 'side');
      git(repo, 'checkout', '-q', 'main');
      writeFileSync(path.join(repo, 'a.txt'), 'main\n');
      git(repo, 'commit', '-qam', 'main');
      return withConfig(repo, ['merge.evil.driver', p]);
    },
    triggers: ['git merge -q side -m m'],
  },
  { name: 'core.sshCommand', setup: (p) => withConfig(gitRepo('ssh'), ['core.sshCommand', p]), triggers: ['git ls-remote ssh://127.0.0.1:1/x'] },
  { name: 'core.gitProxy', setup: (p) => withConfig(gitRepo('proxy'), ['core.gitProxy', p]), triggers: ['git ls-remote git://127.0.0.1:1/x'] },
  { name: 'core.askPass', setup: (p) => withConfig(gitRepo('askpass'), ['core.askPass', p]), triggers: [credentialFill] },
  { name: 'credential.helper', setup: (p) => withConfig(gitRepo('cred'), ['credential.helper', p]), triggers: [credentialFill] },
  { name: 'credential.<url>.helper', setup: (p) => withConfig(gitRepo('cred-url'), ['credential.https://example.com.helper', p]), triggers: [credentialFill] },
  { name: 'gpg.program with commit.gpgSign', setup: (p) => withConfig(gitRepo('gpg'), ['commit.gpgSign', 'true'], ['gpg.program', p]), triggers: ['git commit -q --allow-empty -m s', 'git commit -S -q --allow-empty -m s'] },
  {
    name: 'gpg.ssh.program',
    setup: (p) => withConfig(gitRepo('gpg-ssh'), ['commit.gpgSign', 'true'], ['gpg.format', 'ssh'], ['user.signingKey', '/nonexistent'], ['gpg.ssh.program', p]),
    triggers: ['git commit -q --allow-empty -m s'],
  },
  { name: 'gpg.x509.program', setup: (p) => withConfig(gitRepo('gpg-x509'), ['gpg.format', 'x509'], ['gpg.x509.program', p]), triggers: ['git commit -S -q --allow-empty -m s'] },
  { name: 'gpg.ssh.defaultKeyCommand', setup: (p) => withConfig(gitRepo('gpg-keycmd'), ['gpg.format', 'ssh'], ['gpg.ssh.defaultKeyCommand', p]), triggers: ['git commit -S -q --allow-empty -m s'] },
  { name: 'remote.<name>.uploadpack', setup: (p) => withConfig(withRemote(gitRepo('uploadpack')), ['remote.origin.uploadpack', p]), triggers: ['git fetch -q origin', 'git ls-remote origin', 'git pull -q origin main'] },
  { name: 'remote.<name>.receivepack', setup: (p) => withConfig(withRemote(gitRepo('receivepack')), ['remote.origin.receivepack', p]), triggers: ['git push -q origin main:other'] },
  { name: 'protocol.ext.allow with an ext:: remote', setup: (p) => withConfig(gitRepo('ext'), ['protocol.ext.allow', 'always'], ['remote.x.url', `ext::${p}`]), triggers: ['git fetch -q x', 'git ls-remote x'] },
  {
    name: 'core.alternateRefsCommand',
    setup: (p) => {
      const other = gitRepo('alternate-source');
      const repo = gitRepo('alternate');
      writeFileSync(path.join(repo, '.git', 'objects', 'info', 'alternates'), `${path.join(other, '.git', 'objects')}\n`);
      return withConfig(repo, ['core.alternateRefsCommand', p]);
    },
    triggers: ['git rev-list --alternate-refs'],
  },
  { name: 'trailer.<token>.cmd', setup: (p) => withConfig(gitRepo('trailer'), ['trailer.sign.cmd', p]), triggers: ["printf 'msg\\n' | git interpret-trailers --trailer 'sign: x'", "git commit -q --allow-empty -m x --trailer 'sign: x'"] },
  { name: 'browser.<tool>.cmd', setup: (p) => withConfig(gitRepo('browser'), ['web.browser', 'evil'], ['browser.evil.cmd', p]), triggers: ['git web--browse http://127.0.0.1/'] },
  {
    name: 'filter.<driver>.clean in a submodule, on `git status` in the superproject',
    setup: (p) => {
      const sub = gitRepo('filtered-sub-source', attr('evil'));
      const repo = gitRepo('filtered-super');
      git(repo, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', sub, 'sub');
      git(repo, 'commit', '-qm', 'add sub');
      git(path.join(repo, 'sub'), 'config', 'filter.evil.clean', p);
      touched(path.join(repo, 'sub'));
      return repo;
    },
    triggers: ['git status'],
  },
  {
    name: 'submodule.<name>.update = !command',
    setup: (p) => {
      const sub = gitRepo('submodule-source');
      const repo = gitRepo('superproject');
      git(repo, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', sub, 'sub');
      git(repo, 'commit', '-qm', 'add sub');
      git(path.join(repo, 'sub'), '-c', 'user.email=a@example.com', '-c', 'user.name=a', 'commit', '-q', '--allow-empty', '-m', 'moved');
      return withConfig(repo, ['submodule.sub.update', `!${p}`]);
    },
    triggers: ['git submodule update'],
  },
];

function withConfig(repo: string, ...pairs: Array<[string, string]>): string {
  for (const [key, value] of pairs) git(repo, 'config', key, value);
  return repo;
}
function touched(repo: string): string {
  // Same content, new mtime: git must re-read the file, through the clean filter.
  const file = path.join(repo, 'a.txt');
  const later = new Date(Date.now() + 5_000);
  writeFileSync(file, 'one\n');
  spawnSync('touch', ['-d', later.toISOString(), file]);
  return repo;
}
function modified(repo: string): string {
  modify(repo);
  return repo;
}
function committedChange(repo: string): string {
  modify(repo);
  git(repo, 'commit', '-qam', 'two');
  return repo;
}
function withRemote(repo: string): string {
  const origin = gitRepo(`${path.basename(repo)}-origin`);
  git(repo, 'remote', 'add', 'origin', origin);
  return repo;
}

describe('git run by exec gets a hardened environment (real git, key by key)', () => {
  beforeAll(() => {
    expect(spawnSync('git', ['--version']).status).toBe(0);
    expect(spawnSync('which', ['script']).status).toBe(0);
  });
  const cases = ATTACKS.flatMap((a) => a.triggers.map((trigger) => ({ ...a, trigger })));
  it.each(cases)('$name: `$trigger` runs the payload without the hardening, not with it', async ({ name, setup, trigger }) => {
    const id = `${name}-${trigger}`.replace(/[^A-Za-z0-9]+/g, '-');
    const p = payload(id);
    clear();
    const placed = setup(p);
    const { cwd, home } = typeof placed === 'string' ? { cwd: placed, home: emptyHome } : placed;
    runBaseline(cwd, trigger, home);
    expect(fired(id), 'the attack works on this git without the hardening').toBe(true);
    clear();
    // The repository may have changed (a commit made): set it up afresh for the hardened run.
    const again = setup(p);
    const at = typeof again === 'string' ? { cwd: again, home: emptyHome } : again;
    const output = await runHardened(at.cwd, trigger, at.home);
    expect(fired(id), `payload ran under the hardened environment: ${output}`).toBe(false);
  });

  it('keeps ordinary git working: status, diff, log -p, commit, checkout, merge', async () => {
    const repo = gitRepo('ordinary', { 'a.txt': 'one\n', '.gitattributes': '*.txt diff\n' });
    modify(repo);
    const out = await runHardened(repo, 'git status --short && git diff && git commit -qam two && git log -p -1 --format=%s && git checkout -q -b b && git checkout -q main && git merge -q b && echo ok');
    expect(out).toContain(' M a.txt');
    expect(out).toContain('+two');
    expect(out).toMatch(/two\n[\s\S]*ok\n$/);
  });

  it('listing the repository before the command runs nothing the repository names', async () => {
    const repo = withConfig(touched(gitRepo('listing', attr('evil'))), ['core.fsmonitor', payload('listing-fsmonitor')], ['filter.evil.clean', payload('listing-clean')]);
    clear();
    const found = await discoverGitConfig(repo, { host: 'gateway', workspace, home: emptyHome });
    expect(found.blind).toBeNull();
    expect(found.neutralisations).toContainEqual({ key: 'filter.evil.clean', value: '' });
    expect(fired('listing-fsmonitor') || fired('listing-clean')).toBe(false);
  });

  it('a model-supplied environment cannot undo it', async () => {
    const { checkEnvOverrides } = await import('../../src/exec/env.js');
    for (const key of ['GIT_CONFIG_COUNT', 'GIT_CONFIG_GLOBAL', 'GIT_CONFIG_NOSYSTEM', 'GIT_ALLOW_PROTOCOL', 'GIT_TERMINAL_PROMPT', 'GIT_ATTR_NOSYSTEM', 'GIT_CEILING_DIRECTORIES', 'GIT_PAGER', 'GIT_PROXY_COMMAND']) {
      expect(checkEnvOverrides({ [key]: 'x' }).ok, key).toBe(false);
    }
  });
});

describe('through the exec tool, as the agent calls it', () => {
  it('an approved `git status` and `git diff` in a repository the agent poisoned run no payload', async () => {
    withConfig(modified(gitRepo('tool', attr('evil'))), ['core.fsmonitor', payload('tool-fsmonitor')], ['diff.evil.textconv', payload('tool-textconv')], ['filter.evil.clean', payload('tool-clean')]);
    clear();
    const opened = await openWardenStore({ dataDir: path.join(root, 'data') });
    if (!opened.ok) throw new Error(opened.error.message);
    const store = opened.store;
    try {
      const config = configOf({ host: 'gateway', allowlist: [{ pattern: '/usr/bin/git' }] });
      const approvals = new ApprovalService({ store, config, pollMs: 20 });
      const shown: string[] = [];
      approvals.registerRenderer({
        provider: 'web',
        show: async (request) => {
          shown.push(request.facts.map((f) => `${f.label}: ${f.value}`).join('\n'));
          setTimeout(() => void approvals.resolveAsOperator(request.id, 'allow-once', 'tester'), 5);
        },
        update: async () => {},
      });
      const exec = createExecTool({ config, allowlist: new ExecAllowlistStore(store.db), hasBwrap: false });
      const ctx = {
        toolCallId: 'c1',
        signal: new AbortController().signal,
        turn,
        sessionKey: 'agent:main:web:channel:dev',
        workspaceDir: workspace,
        log,
        approvals: approvals.requester({ agentId: 'main', sessionKey: 'agent:main:web:channel:dev', provider: 'web', channelId: 'dev' }),
      };
      const result = (await exec.execute({ command: 'git status --short && git diff', workdir: 'tool' }, ctx)) as ToolResult;
      const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
      expect(text).toContain('M a.txt');
      expect(text).toContain('+two');
      // It asked (the entry does not opt in) and said why on the card.
      expect(shown).toHaveLength(1);
      expect(shown[0]).toMatch(/Repository config: git runs repository config/);
      for (const m of ['tool-fsmonitor', 'tool-textconv', 'tool-clean']) expect(fired(m), m).toBe(false);
      approvals.shutdown();
    } finally {
      await store.close();
    }
  });
});

describe('warden audit and the shipped examples', () => {
  const examplesDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../config');
  it.each(readdirSync(examplesDir).filter((f) => f.endsWith('.example.yaml')))('%s allowlists nothing of the class', (file) => {
    const loaded = loadConfig({ cwd: examplesDir, file, env: {} });
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.error.problems));
    const findings = auditRepoConfig(loaded.value.config, { baseDir: examplesDir });
    expect(findings.filter((f) => f.severity === 'critical')).toEqual([]);
  });

  it.each<[string, Record<string, unknown>, string[]]>([
    ['git status*', { pattern: '/usr/bin/git', argPattern: 'status*' }, ['critical exec.allowlist-repo-config']],
    ['a basename', { pattern: 'make' }, ['critical exec.allowlist-repo-config']],
    ['a glob over members', { pattern: '/usr/bin/g*' }, ['critical exec.allowlist-repo-config']],
    ['bare *', { pattern: '*' }, ['critical exec.allowlist-repo-config']],
    ['python3 without argPattern', { pattern: '/usr/bin/python3' }, ['critical exec.allowlist-repo-config', 'critical exec.allowlist-agent-writable-script']],
    ['python3 -m pytest', { pattern: '/usr/bin/python3', argPattern: '-m pytest' }, ['critical exec.allowlist-repo-config', 'critical exec.allowlist-agent-writable-script']],
    ['an opted-in entry', { pattern: '/usr/bin/git', trustRepoConfig: true }, ['warn exec.allowlist-repo-config-trusted']],
    ['ls', { pattern: '/usr/bin/ls' }, []],
  ])('%s: %j', (_what, entry, expected) => {
    const findings = auditRepoConfig(configOf({ allowlist: [entry] }), { baseDir: root });
    expect(findings.map((f) => `${f.severity} ${f.id}`)).toEqual(expected);
  });

  it('a read-only default allowlist built from listing, reading and searching tools covers no member', () => {
    for (const pattern of ['/usr/bin/ls', '/usr/bin/cat', '/usr/bin/head', '/usr/bin/tail', '/usr/bin/wc', '/usr/bin/grep', '/usr/bin/find', '/usr/bin/stat', '/usr/bin/file', 'rg']) {
      expect(entryRepoConfigMembers({ pattern }), pattern).toEqual([]);
    }
  });

  it('`warden audit` exits 1 on a config or a stored entry for git, naming the fix', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-audit-rc-'));
    const run = async () => {
      let stdout = '';
      const code = await main(['audit', '--json'], { cwd: dir, env: {}, stdout: (t) => (stdout += t), stderr: () => {} });
      return { code, findings: (JSON.parse(stdout) as { findings: Array<{ id: string; severity: string; fix: string }> }).findings };
    };
    writeFileSync(path.join(dir, 'warden.config.yaml'), 'owners: { web: ["op"] }\ntools: { exec: { allowlist: [{ pattern: /usr/bin/git, argPattern: "status*" }] } }\n');
    let r = await run();
    expect(r.code).toBe(1);
    expect(r.findings).toContainEqual(expect.objectContaining({ id: 'exec.allowlist-repo-config', severity: 'critical' }));

    writeFileSync(path.join(dir, 'warden.config.yaml'), 'owners: { web: ["op"] }\n');
    const opened = await openWardenStore({ dataDir: path.join(dir, 'data') });
    if (!opened.ok) throw new Error(opened.error.message);
    const grant = await new ExecAllowlistStore(opened.store.db).add('main', { pattern: '/usr/bin/make', argPattern: '^\x00\x00$', source: 'allow-always' });
    await opened.store.close();
    r = await run();
    expect(r.findings).toContainEqual(expect.objectContaining({ id: 'exec.stored-repo-config', severity: 'critical', fix: `warden approvals revoke ${grant.id}` }));
  });
});

describe('shell payloads', () => {
  it('a shell entry does not carry a class member in its payload; an opted-in entry for the member does', () => {
    const shellEntry = { pattern: '/usr/bin/dash', argPattern: '-c *' };
    expect(check("sh -c 'make test'", { allowlist: [shellEntry] }, { pathDirs: [fakeBin, '/usr/bin'] }).decision).toBe('ask');
    expect(check("sh -c 'git status'", { allowlist: [shellEntry, { pattern: '/usr/bin/git', trustRepoConfig: true }] }).decision).toBe('allow');
    expect(check("sh -c 'git st'", { allowlist: [shellEntry, { pattern: '/usr/bin/git', trustRepoConfig: true }] }).decision).toBe('ask');
  });
});
