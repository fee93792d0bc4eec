import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { runDoctorChecks } from '../../src/cli/doctor.js';
import { parseConfig, type WardenConfigInput } from '../../src/config/index.js';
import { ProcessRegistry } from '../../src/exec/process-registry.js';
import { auditSandbox, fixFor } from '../../src/exec/sandbox-audit.js';
import { judge, probeSandbox, type SandboxProbe } from '../../src/exec/sandbox-probe.js';
import { BWRAP_PATH, sandboxIdentity, type SandboxIdentity } from '../../src/exec/sandbox.js';
import { log } from '../../src/log/log.js';
import { createExecTool } from '../../src/tools/core/exec/exec.js';
import type { ToolResult } from '../../src/tools/types.js';
import { canSandbox, isRoot } from './sandbox-harness.js';

/**
 * `host: sandbox` runs a command only with every isolation property in place. Where one is
 * missing it refuses with the reason, runs nothing, and never falls back to the host; doctor
 * and audit say which property this host lacks.
 */

const configOf = (input: WardenConfigInput) => {
  const parsed = parseConfig({ owners: { web: ['op'] }, ...input });
  if (!parsed.ok) throw parsed.error;
  return parsed.value.config;
};
const SANDBOX_FULL = { tools: { exec: { host: 'sandbox' as const, security: 'full' as const, ask: 'off' as const } } };
const here = path.dirname(fileURLToPath(import.meta.url));

/** bubblewrap started by root with no unprivileged uid: the kernel's view is host uid 0. */
const ROOT_IN_DISGUISE: SandboxIdentity = { uid: 0, gid: 0, staged: false };

describe.skipIf(!canSandbox || !isRoot)('the sandbox host refuses where isolation cannot be had', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('finds that a sandbox whose processes are host root is no isolation', async () => {
    const probe = await probeSandbox(ROOT_IN_DISGUISE);
    expect(probe.ok).toBe(false);
    expect(probe.checks.find((c) => c.property === 'user namespace')).toMatchObject({ ok: false, detail: expect.stringContaining('host uid 0') });
    expect(probe.reason).toMatch(/lacks user namespace/);
  });

  it('the exec tool then refuses with the reason and runs the command nowhere', async () => {
    const workspace = mkdtempSync(path.join(tmpdir(), 'warden-refuse-'));
    dirs.push(workspace);
    const exec = createExecTool({ config: configOf(SANDBOX_FULL), registry: new ProcessRegistry(), identity: ROOT_IN_DISGUISE });
    const result = (await exec.execute(
      { command: `touch ${workspace}/ran /tmp/warden-refusal-ran-${process.pid}` },
      {
        toolCallId: 'c',
        signal: new AbortController().signal,
        turn: { agentId: 'main', provider: 'web', chat: 'dm', senderIsOwner: true, spawnDepth: 0 },
        sessionKey: 'agent:main:web:direct:local',
        workspaceDir: workspace,
        log,
        approvals: { request: () => Promise.reject(new Error('never asks')) },
      },
    )) as ToolResult;
    const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
    expect(result.isError).toBe(true);
    expect(text).toMatch(/^exec unavailable: tools\.exec\.host is sandbox but the sandbox lacks user namespace .*host uid 0.*Nothing was run/);
    expect(existsSync(path.join(workspace, 'ran'))).toBe(false);
    expect(existsSync(`/tmp/warden-refusal-ran-${process.pid}`)).toBe(false);
  });

  it('where the kernel refuses user namespaces, a Warden there refuses with the kernel\'s reason', () => {
    // A Warden (uid 1000) in a user namespace that may create no further one: bubblewrap's own
    // namespace is refused by the kernel, as on a host with unprivileged user namespaces off.
    // The checkout is bound again over the private /tmp: a clone may live under /tmp.
    const out = execFileSync(
      BWRAP_PATH,
      ['--unshare-user', '--uid', '1000', '--gid', '1000', '--disable-userns', '--unshare-pid', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--ro-bind', process.cwd(), process.cwd(), '--chdir', process.cwd(), '--',
        process.execPath, '--import', 'tsx', path.join(here, 'sandbox-refusal.fixture.ts')],
      { encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/tmp' }, timeout: 60_000 },
    );
    const report = JSON.parse(out.trim().split('\n').at(-1)!) as { uid: number; isError: boolean; text: string; ran: boolean };
    expect(report.uid).toBe(1000);
    expect(report.isError).toBe(true);
    expect(report.text).toMatch(/^exec unavailable: tools\.exec\.host is sandbox but bubblewrap could not start the sandbox: .*namespace/i);
    expect(report.ran).toBe(false);
  });
});

describe('reading a probe', () => {
  const identity = sandboxIdentity({});
  const STATUS = 'CapInh:\t0000000000000000\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nCapBnd:\t0000000000000000\nCapAmb:\t0000000000000000\nNoNewPrivs:\t1\nSeccomp:\t2\n';
  const made = { uid: identity.uid, gid: identity.gid };
  it.each<[string, string, { uid: number; gid: number } | undefined, string | null]>([
    ['everything in place', `${STATUS}@uid_map\n 65534 0 1\n`, made, null],
    ['no user namespace (the initial one)', `${STATUS}@uid_map\n 0 0 4294967295\n`, made, 'user namespace'],
    ['files that are host root', `${STATUS}@uid_map\n 0 0 1\n`, { uid: 0, gid: 0 }, 'user namespace'],
    ['a capability left', STATUS.replace('CapBnd:\t0000000000000000', 'CapBnd:\t000001fffeffffff'), made, 'capabilities dropped'],
    ['no no_new_privs', STATUS.replace('NoNewPrivs:\t1', 'NoNewPrivs:\t0'), made, 'no_new_privs'],
    ['no seccomp filter', STATUS.replace('Seccomp:\t2', 'Seccomp:\t0'), made, 'seccomp filter'],
    ['a status without the fields', 'Name:\tsh\n@uid_map\n 1 2 1\n', made, 'capabilities dropped'],
  ])('%s', (_what, output, owner, missing) => {
    const withMap = output.includes('@uid_map') ? output : `${output}@uid_map\n 65534 0 1\n`;
    const probe = judge(identity, withMap, owner);
    expect(probe.ok).toBe(missing === null);
    if (missing) expect(probe.checks.find((c) => c.property === missing)?.ok).toBe(false);
  });
});

describe('doctor and audit say what this host lacks', () => {
  const failing: SandboxProbe = {
    ok: false,
    identity: sandboxIdentity({}),
    reason: 'bubblewrap could not start the sandbox: bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces.',
    checks: (['user namespace', 'capabilities dropped', 'no_new_privs', 'seccomp filter'] as const).map((property) => ({ property, ok: false, detail: 'not checked: no namespace' })),
  };

  it('doctor prints a FAIL line per missing property where exec uses the sandbox', async () => {
    const checks = await runDoctorChecks(configOf({ tools: { exec: { host: 'sandbox' } } }), '/tmp', {}, { probe: failing });
    const sandbox = checks.filter((c) => c.name.startsWith('sandbox ') && c.name !== 'sandbox user' && c.name !== 'sandbox uid');
    expect(sandbox.map((c) => [c.name, c.ok])).toEqual([
      ['sandbox user namespace', false],
      ['sandbox capabilities dropped', false],
      ['sandbox no_new_privs', false],
      ['sandbox seccomp filter', false],
    ]);
    expect(sandbox[0]!.fix).toMatch(/never falls back to the host/);
  });

  it('doctor notes, without failing, what the gateway host does not use', async () => {
    const checks = await runDoctorChecks(configOf({ tools: { exec: { host: 'gateway' } } }), '/tmp', {}, { probe: failing });
    const userns = checks.find((c) => c.name === 'sandbox user namespace')!;
    expect(userns).toMatchObject({ ok: true, detail: expect.stringContaining('not used') });
  });

  it('audit warns that exec refuses every command, with the fix', () => {
    const findings = auditSandbox(configOf({ tools: { exec: { host: 'sandbox' } } }), { hasBwrap: true, probe: failing });
    expect(findings).toEqual([
      {
        id: 'exec.sandbox-isolation-unavailable',
        severity: 'warn',
        message: expect.stringMatching(/cannot isolate commands .*exec refuses every command and never runs one on the host instead/),
        fix: expect.stringContaining('unprivileged user namespaces'),
      },
    ]);
    expect(fixFor(failing)).toMatch(/user namespaces/);
  });

  it.skipIf(!canSandbox)('audit states the isolation it found by running the sandbox', async () => {
    const findings = auditSandbox(configOf({}), { hasBwrap: true, probe: await probeSandbox(sandboxIdentity({})) });
    expect(findings).toEqual([{ id: 'exec.sandbox-isolation', severity: 'info', message: expect.stringContaining('no capabilities, no_new_privs and the seccomp filter'), fix: 'nothing to do' }]);
    expect(auditSandbox(configOf({ tools: { exec: { host: 'gateway' } } }), { hasBwrap: true, probe: failing })).toEqual([]);
    expect(auditSandbox(configOf({ tools: { exec: { security: 'deny' } } }), { hasBwrap: true, probe: failing })).toEqual([]);
  });
});
