import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, type WardenConfigInput } from '../../src/config/index.js';
import { checkExec } from '../../src/app/exec-check.js';
import { buildChildEnv, checkEnvOverrides } from '../../src/exec/env.js';
import { ProcessRegistry } from '../../src/exec/process-registry.js';
import { SANDBOX_HOME } from '../../src/exec/sandbox.js';
import { log } from '../../src/log/log.js';
import { createExecTool } from '../../src/tools/core/exec/exec.js';
import { writeTool } from '../../src/tools/core/fs/write.js';
import type { ToolCallContext, ToolResult } from '../../src/tools/types.js';
import { canSandbox } from './sandbox-harness.js';

/**
 * Shell startup files: an agent that can write its workspace must not get code run by a shell
 * an allowed or approved command starts (`sh -l`, `bash -i`, …). In the sandbox HOME is a
 * private, empty directory made for each command, not the workspace, and `ENV`/`BASH_ENV`
 * reach no command on either host.
 */

const configOf = (input: WardenConfigInput) => {
  const parsed = parseConfig({ owners: { web: ['op'] }, ...input });
  if (!parsed.ok) throw parsed.error;
  return parsed.value.config;
};

/** Files a shell reads at start, each planting a marker it would print. */
const STARTUP_FILES = ['.profile', '.bashrc', '.bash_profile', '.bash_login', '.shrc', '.kshrc', '.zshenv', '.zprofile', '.inputrc', '.bash_logout'];

describe.skipIf(!canSandbox)('the sandbox HOME is private and empty', () => {
  let root: string;
  let workspace: string;
  const registry = new ProcessRegistry();
  const exec = (parentEnv: NodeJS.ProcessEnv = {}) =>
    createExecTool({ config: configOf({ tools: { exec: { host: 'sandbox', security: 'full', ask: 'off', strictInlineEval: false } } }), registry, parentEnv, killGraceMs: 200 });
  const ctx = (): ToolCallContext => ({
    toolCallId: 'call-1',
    signal: new AbortController().signal,
    turn: { agentId: 'main', provider: 'web', chat: 'dm', senderIsOwner: true, spawnDepth: 0 },
    sessionKey: 'agent:main:web:direct:local',
    workspaceDir: workspace,
    log,
    approvals: { request: () => Promise.reject(new Error('security full never asks')) },
  });
  const run = async (command: string, parentEnv?: NodeJS.ProcessEnv, env?: Record<string, string>) =>
    (await exec(parentEnv).execute({ command, ...(env ? { env } : {}) }, ctx())) as ToolResult;
  const text = (r: ToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');

  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), 'warden-home-'));
    workspace = path.join(root, 'workspace');
    // Planted the way the agent plants them: with its write tool.
    for (const file of STARTUP_FILES) {
      const body = file === '.inputrc' ? '"\\C-m": "echo PWNED-inputrc\\n"\n' : `echo PWNED${file}; touch ${workspace}/ran${file}\n`;
      const written = (await writeTool.execute({ path: file, content: body }, ctx())) as ToolResult;
      expect(written.isError).toBeFalsy();
    }
  });
  afterAll(() => {
    for (const job of registry.running()) job.killNow();
    rmSync(root, { recursive: true, force: true });
  });

  it('HOME is the private directory, empty, not the workspace', async () => {
    const result = await run('echo "HOME=$HOME"; ls -A "$HOME" | wc -l; cd ~ && pwd');
    expect(text(result)).toMatch(new RegExp(`^HOME=${SANDBOX_HOME}\\n0\\n${SANDBOX_HOME}\\n`));
  });

  it.each([
    ['sh -l', "sh -l -c 'echo clean'"],
    ['sh -i', "sh -i -c 'echo clean'"],
    ['dash -l', "dash -l -c 'echo clean'"],
    ['dash -i', "dash -i -c 'echo clean'"],
    ['bash -l', "bash -l -c 'echo clean'"],
    ['bash -i', "bash -i -c 'echo clean'"],
    ['bash --login -i', "bash --login -i -c 'echo clean'"],
    ['bash with a script', "printf 'echo clean\\n' > s.sh && bash s.sh"],
    ['a login shell reading a script from stdin', "echo 'echo clean' | sh -l"],
    ['an interactive bash reading stdin', "echo 'echo clean' | bash -i"],
  ])('%s runs no startup file the agent wrote', async (_shell, command) => {
    const result = await run(command);
    expect(text(result)).toContain('clean');
    expect(text(result)).not.toContain('PWNED');
    expect(readdirSync(workspace).filter((f) => f.startsWith('ran'))).toEqual([]);
  });

  it('a startup file written into HOME by one command is gone for the next', async () => {
    await run('echo "echo PWNED-persist" > ~/.profile && cp ~/.profile ~/.bashrc && ls -A ~');
    const next = await run("sh -l -c 'echo clean'; bash -i -c 'echo clean'; ls -A ~ | wc -l");
    expect(text(next)).not.toContain('PWNED');
    expect(text(next).match(/^clean$/gm)).toHaveLength(2);
    expect(text(next)).toMatch(/^0$/m);
  });

  it('ENV and BASH_ENV in Warden\'s own environment never reach the command', async () => {
    const parentEnv = { ENV: `${workspace}/.shrc`, BASH_ENV: `${workspace}/.bashrc`, LANG: 'C.UTF-8' };
    const result = await run("env | grep -E '^(BASH_)?ENV=' ; sh -i -c 'echo clean'; bash -c 'echo clean'", parentEnv);
    expect(text(result)).not.toContain('PWNED');
    expect(text(result)).not.toMatch(/^(BASH_)?ENV=/m);
  });

  it.each(['ENV', 'BASH_ENV', 'env', 'bash_env'])('an override of %s is refused before anything runs', async (key) => {
    const result = await run('touch ran-override', {}, { [key]: `${workspace}/.bashrc` });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/environment override refused/);
    expect(existsSync(path.join(workspace, 'ran-override'))).toBe(false);
  });
});

describe('ENV and BASH_ENV on every host', () => {
  it.each([['sandbox', SANDBOX_HOME], ['gateway', homedir()]])('the %s child environment never contains them', (_host, home) => {
    const env = buildChildEnv({ ENV: '/x', BASH_ENV: '/x', PATH: '/evil', HOME: '/evil', LANG: 'C.UTF-8' }, { home });
    expect(env).not.toHaveProperty('ENV');
    expect(env).not.toHaveProperty('BASH_ENV');
    expect(env.HOME).toBe(home);
  });
  it.each(['ENV', 'BASH_ENV'])('an unchecked override of %s cannot slip through buildChildEnv', (key) => {
    expect(checkEnvOverrides({ [key]: '/x' }).ok).toBe(false);
    expect(() => buildChildEnv({}, { home: SANDBOX_HOME, overrides: { [key]: '/x' } })).toThrow(/refused/);
  });
});

describe('what ~ means when a command is judged', () => {
  const turn = { agentId: 'main', provider: 'web', chat: 'dm' as const, senderIsOwner: false, spawnDepth: 0 };
  const on = (host: 'sandbox' | 'gateway') => configOf({ tools: { exec: { host, allowlist: [{ pattern: '~/bin/*' }] } } });

  it('in the sandbox `~` in a command is the private HOME: `~/x` resolves there and nothing covers it', () => {
    const verdict = checkExec(on('sandbox'), '~/bin/tool', turn, { cwd: '/tmp' });
    expect(verdict.segments[0]?.resolved).toBe(`${SANDBOX_HOME}/bin/tool`);
    expect(verdict.decision).toBe('ask');
  });
  it("an allowlist `~/bin/*` stays the operator's home and never covers the sandbox HOME", () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-home-pattern-'));
    try {
      const verdict = checkExec(on('sandbox'), 'sh ~/bin/tool.sh', turn, { cwd: dir, patternHome: dir });
      expect(verdict.decision).toBe('ask');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  it("on the gateway host `~` is Warden's own home", () => {
    const verdict = checkExec(on('gateway'), '~/bin/tool', turn, { cwd: '/tmp' });
    expect(verdict.segments[0]?.resolved).toBe(path.join(homedir(), 'bin/tool'));
  });
});
