import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { checkExec } from '../../src/app/exec-check.js';
import type { TurnContext } from '../../src/policy/context.js';

/**
 * Attack class: an operator opts an entry in with trustRepoConfig because the workspace's
 * repository is theirs; the agent writes a repository elsewhere (a sub-folder, /tmp) with
 * `diff.external`, a filter driver or a Makefile recipe, and runs the trusted binary there after
 * a `cd`. git's hardening lists (and neutralises) the working directory's repository only, and
 * the opt-in named that one. After a `cd` in the same command, a repository-config binary asks
 * whatever entry covers it; without a `cd` the opt-in holds as before.
 */
const root = mkdtempSync(path.join(tmpdir(), 'warden-repo-cd-'));
const workspace = path.join(root, 'workspace');
const home = path.join(root, 'home');
for (const dir of [workspace, home, path.join(workspace, 'sub')]) mkdirSync(dir, { recursive: true });
afterAll(() => rmSync(root, { recursive: true, force: true }));

const turn: TurnContext = { agentId: 'main', provider: 'web', chat: 'channel', channelId: 'dev', senderIsOwner: false, spawnDepth: 0 };
const config = (() => {
  const parsed = parseConfig({
    owners: { web: ['op'] },
    agents: { defaults: { workspace } },
    tools: { exec: { allowlist: [{ pattern: '/usr/bin/git', trustRepoConfig: true }, { pattern: '/usr/bin/make', trustRepoConfig: true }] } },
  });
  if (!parsed.ok) throw parsed.error;
  return parsed.value.config;
})();
const check = (command: string) => checkExec(config, command, turn, { cwd: workspace, home, pathDirs: ['/usr/bin', '/bin'] });

describe('trustRepoConfig covers the working directory\'s repository only', () => {
  it.each([
    'cd sub && git diff', 'cd sub; git status', 'cd /tmp && git log', 'cd .. && git diff', 'cd ~ && git status', 'cd sub || git diff',
    'cd sub && make', 'cd /tmp && make all', 'cd sub && git status && cd .. && git status',
  ])('`%s` asks', (command) => {
    const v = check(command);
    expect(v.decision).toBe('ask');
    expect(v.reason).toMatch(/after a `cd`, `(git|make)` reads another directory's repository configuration/);
    expect(v.allowAlways.offered).toBe(false);
  });
  it.each(['git diff', 'git status', 'make', 'git status && git diff'])('`%s` in the working directory runs under the opt-in', (command) => {
    expect(check(command).decision).toBe('allow');
  });
});
