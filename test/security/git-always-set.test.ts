import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildChildEnv } from '../../src/exec/env.js';
import { ALWAYS } from '../../src/exec/git-env.js';
import { DEFAULT_PATH_DIRS } from '../../src/exec/resolve.js';

/**
 * The keys the hardened git environment sets for every command, whatever the repository says —
 * tried as an agent that writes the repository after Warden listed it (or races the listing),
 * so none of its keys were discovered: each attack runs its payload on the real git without
 * the hardening and not with it. And every key of the always-set list wins over a hostile value
 * in the repository's own config.
 */
const root = mkdtempSync(path.join(tmpdir(), 'warden-git-always-'));
const markers = path.join(root, 'markers');
const home = path.join(root, 'home');
for (const dir of [markers, home]) mkdirSync(dir, { recursive: true });
afterAll(() => rmSync(root, { recursive: true, force: true }));

const PLAIN = { PATH: DEFAULT_PATH_DIRS.join(':'), HOME: home, LANG: 'C', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_ALLOW_PROTOCOL: 'file' };
const IDENTITY = { GIT_AUTHOR_NAME: 'a', GIT_AUTHOR_EMAIL: 'a@example.com', GIT_COMMITTER_NAME: 'a', GIT_COMMITTER_EMAIL: 'a@example.com' };
/** What exec gives git when the listing found nothing: the repository changed after it. */
const hardened = (workspace: string) => ({ ...buildChildEnv({ LANG: 'C' }, { home, git: { workspace, discovered: [] } }) });

function git(cwd: string, ...args: string[]): string {
  const r = spawnSync('git', args, { cwd, env: { ...PLAIN, ...IDENTITY }, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

function repo(dir: string, files: Record<string, string> = { 'a.txt': 'one\n' }): string {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.email', 'a@example.com');
  git(dir, 'config', 'user.name', 'a');
  for (const [file, content] of Object.entries(files)) writeFileSync(path.join(dir, file), content);
  git(dir, 'add', '.');
  git(dir, 'commit', '-qm', 'init');
  return dir;
}

function payload(name: string): string {
  const file = path.join(root, 'payloads', name);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `#!/bin/sh\ntouch '${path.join(markers, name)}'\ncat\n`);
  chmodSync(file, 0o755);
  return file;
}
const fired = () => readdirSync(markers);
const clear = () => {
  for (const f of readdirSync(markers)) rmSync(path.join(markers, f));
};

interface Attack {
  name: string;
  /** Builds the workspace as the agent left it; returns the workspace and where the command runs. */
  setup: (p: string, workspace: string) => string;
  command: string;
}

/** A superproject with one populated submodule; the submodule's own config is the agent's. */
function withSubmodule(workspace: string, subFiles: Record<string, string> = { 'f.txt': 'one\n' }): { superproject: string; sub: string } {
  const origin = repo(path.join(workspace, 'sub-origin'), subFiles);
  const superproject = repo(path.join(workspace, 'super'));
  git(superproject, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', origin, 'sub');
  git(superproject, 'commit', '-qm', 'add sub');
  return { superproject, sub: path.join(superproject, 'sub') };
}

const ATTACKS: Attack[] = [
  {
    name: "diff.submodule = diff: a submodule's diff.external runs in a child git",
    setup: (p, workspace) => {
      const { superproject, sub } = withSubmodule(workspace);
      writeFileSync(path.join(sub, 'f.txt'), 'two\n');
      git(sub, 'commit', '-qam', 'two');
      git(superproject, 'add', 'sub');
      git(sub, 'config', 'diff.external', p);
      git(superproject, 'config', 'diff.submodule', 'diff');
      return superproject;
    },
    command: 'git diff --cached',
  },
  {
    name: "submodule.recurse: checkout descends into the submodule and runs its smudge filter",
    setup: (p, workspace) => {
      const { superproject, sub } = withSubmodule(workspace, { 'f.txt': 'one\n', '.gitattributes': 'f.txt filter=evil\n' });
      git(superproject, 'checkout', '-q', '-b', 'other');
      writeFileSync(path.join(sub, 'f.txt'), 'two\n');
      git(sub, 'commit', '-qam', 'two');
      git(superproject, 'commit', '-qam', 'sub moved');
      git(superproject, 'checkout', '-q', '--recurse-submodules', 'main');
      git(sub, 'config', 'filter.evil.smudge', p);
      git(superproject, 'config', 'submodule.recurse', 'true');
      return superproject;
    },
    command: 'git checkout -q other',
  },
  {
    name: 'interactive.diffFilter on `git add -p`',
    setup: (p, workspace) => {
      const r = repo(path.join(workspace, 'add-p'));
      writeFileSync(path.join(r, 'a.txt'), 'one\ntwo\n');
      git(r, 'config', 'interactive.diffFilter', p);
      return r;
    },
    command: "TERM=xterm script -qc 'git add -p </dev/null' /dev/null",
  },
  {
    name: 'an embedded bare repository found by walking up brings its own textconv driver',
    setup: (p, workspace) => {
      const source = repo(path.join(workspace, 'bare-source'), { 'a.txt': 'one\n' });
      writeFileSync(path.join(source, 'a.txt'), 'two\n');
      git(source, 'commit', '-qam', 'two');
      const bare = path.join(workspace, 'evil.git');
      rmSync(bare, { recursive: true, force: true });
      git(workspace, 'clone', '-q', '--bare', source, bare);
      writeFileSync(path.join(bare, 'info', 'attributes'), '* diff=evil\n');
      git(bare, 'config', 'diff.evil.textconv', p);
      return bare;
    },
    command: 'git log -p -1',
  },
];

describe('keys set for every command hold when the listing found nothing (real git)', () => {
  beforeAll(() => {
    expect(spawnSync('git', ['--version']).status).toBe(0);
  });

  it.each(ATTACKS)('$name', ({ name, setup, command }) => {
    const id = name.replace(/[^A-Za-z0-9]+/g, '-').slice(0, 60);
    const p = payload(id);
    const workspace = path.join(root, id);
    const run = (env: NodeJS.ProcessEnv) => {
      clear();
      rmSync(workspace, { recursive: true, force: true });
      mkdirSync(workspace, { recursive: true });
      const cwd = setup(p, workspace);
      clear();
      spawnSync('/bin/sh', ['-c', command], { cwd, env, timeout: 15_000, stdio: 'ignore' });
      return fired();
    };
    expect(run(PLAIN), 'the attack works on this git without the hardening').toContain(id);
    expect(run(hardened(workspace)), 'the payload ran under the hardened environment').toEqual([]);
  });

  it('no housekeeping a command starts outlives it: auto gc stays off', () => {
    const r = repo(path.join(root, 'gc'));
    const packs = () => readdirSync(path.join(r, '.git', 'objects', 'pack')).filter((f) => f.endsWith('.pack')).length;
    for (const m of ['one', 'two']) {
      git(r, 'commit', '-q', '--allow-empty', '-m', m);
      git(r, 'repack', '-q');
    }
    git(r, 'config', 'gc.autoPackLimit', '1');
    git(r, 'config', 'gc.autoDetach', 'false');
    expect(packs()).toBe(2);
    spawnSync('git', ['commit', '-q', '--allow-empty', '-m', 'x'], { cwd: r, env: hardened(root) });
    expect(packs()).toBe(2);
    spawnSync('git', ['commit', '-q', '--allow-empty', '-m', 'y'], { cwd: r, env: { ...PLAIN, ...IDENTITY } });
    expect(packs(), 'auto gc runs without the hardening').toBe(1);
  });
});

/** A value for each key that would undo the hardening, as the repository's config could set it. */
const HOSTILE: Record<string, string> = {
  'core.fsmonitor': '/tmp/x',
  'core.hooksPath': 'hooks',
  'core.pager': 'sh',
  'core.editor': 'sh',
  'sequence.editor': 'sh',
  'core.askPass': '/tmp/x',
  'core.sshCommand': 'sh',
  'core.attributesFile': 'attrs',
  'credential.helper': '!sh',
  'gpg.program': '/tmp/x',
  'gpg.openpgp.program': '/tmp/x',
  'gpg.x509.program': '/tmp/x',
  'gpg.ssh.program': '/tmp/x',
  'gpg.ssh.defaultKeyCommand': '/tmp/x',
  'commit.gpgSign': 'true',
  'tag.gpgSign': 'true',
  'push.gpgSign': 'true',
  'log.showSignature': 'true',
  'tag.forceSignAnnotated': 'true',
  'protocol.ext.allow': 'always',
  'interactive.diffFilter': '/tmp/x',
  'diff.submodule': 'diff',
  'status.submoduleSummary': 'true',
  'submodule.recurse': 'true',
  'fetch.recurseSubmodules': 'true',
  'push.recurseSubmodules': 'on-demand',
  'safe.bareRepository': 'all',
  'gc.auto': '1',
  'maintenance.auto': 'true',
};

describe('every always-set key wins over the repository', () => {
  const r = repo(path.join(root, 'hostile'));
  it('the table names every key of the list', () => {
    expect(Object.keys(HOSTILE).sort()).toEqual(ALWAYS.map((n) => n.key).sort());
  });
  it.each(ALWAYS.map((n) => [n.key, n.value]))('%s = %j', (key, value) => {
    git(r, 'config', key, HOSTILE[key]!);
    const read = spawnSync('git', ['config', '--get', key], { cwd: r, env: hardened(root), encoding: 'utf8' });
    expect(read.stdout.replace(/\n$/, '')).toBe(value);
  });
});
