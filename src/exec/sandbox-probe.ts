import { chownSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildChildEnv } from './env.js';
import { startCommand } from './run.js';
import { BWRAP_PATH, bwrapAvailable, ownIds, launchToolsFor, SANDBOX_HOME, sandboxIdentity, stageTools, type ProcessIds, type SandboxIdentity } from './sandbox.js';
import { ensureSandboxWorkspace } from './sandbox-workspace.js';
import { seccompUnsupported } from './seccomp.js';

/**
 * What this host gives the sandbox, found by running the real sandbox once: a command inside
 * reports its own status, and each property is read from what the kernel says, not from what
 * bubblewrap was asked for. `warden doctor` and `warden audit` print it; the exec tool refuses
 * the sandbox host when any property is missing.
 */
export type SandboxProperty = 'user namespace' | 'capabilities dropped' | 'no_new_privs' | 'seccomp filter';

export interface SandboxCheck {
  property: SandboxProperty;
  ok: boolean;
  detail: string;
}

export interface SandboxProbe {
  ok: boolean;
  identity: SandboxIdentity;
  checks: SandboxCheck[];
  /** Why the sandbox cannot be used, for a refusal; absent when ok. */
  reason?: string;
}

const PROPERTIES: readonly SandboxProperty[] = ['user namespace', 'capabilities dropped', 'no_new_privs', 'seccomp filter'];

// What the probe prints: its status (capabilities, no_new_privs, seccomp) and its uid map; the
// file it makes tells, from the host's side, which host uid the sandbox really is.
const PROBE_FILE = 'probe-owner';
const PROBE_SCRIPT = `cat /proc/self/status; echo @uid_map; cat /proc/self/uid_map; : > ${PROBE_FILE}`;

export async function probeSandbox(identity: SandboxIdentity = sandboxIdentity()): Promise<SandboxProbe> {
  const fail = (reason: string): SandboxProbe => ({
    ok: false,
    identity,
    reason,
    checks: PROPERTIES.map((property) => ({ property, ok: false, detail: `not checked: ${reason}` })),
  });
  if (!bwrapAvailable()) return fail(`bubblewrap (${BWRAP_PATH}) is not installed`);
  const arch = seccompUnsupported();
  if (arch) return fail(arch);
  const tools = stageTools(launchToolsFor(identity));
  if (!tools.ok) return fail(`running the sandbox${identity.staged ? ` as uid ${identity.uid}` : ''} needs ${tools.missing.join(', ')} (util-linux)`);
  const scratch = mkdtempSync(path.join(tmpdir(), 'warden-sandbox-probe-'));
  try {
    if (identity.uid !== ownIds().uid) chownSync(scratch, identity.uid, identity.gid);
    const job = startCommand({
      script: PROBE_SCRIPT,
      label: 'sandbox probe',
      host: 'sandbox',
      workspace: scratch,
      cwd: scratch,
      env: buildChildEnv({}, { home: SANDBOX_HOME }),
      identity,
      timeoutMs: 15_000,
      maxOutputChars: 20_000,
    });
    await job.done;
    const output = job.outputText();
    if (job.status !== 'exited' || job.exitCode !== 0) {
      const said = output.trim().split('\n').slice(-2).join(' ').trim() || job.error || `status ${job.status}`;
      return fail(`bubblewrap could not start the sandbox: ${said}`);
    }
    const made = statSync(path.join(scratch, PROBE_FILE), { throwIfNoEntry: false });
    return judge(identity, output, made ? { uid: made.uid, gid: made.gid } : undefined);
  } catch (err) {
    return fail((err as Error).message);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * Reads the probe's output: each property from the kernel's own report, the host uid from the
 * owner of the file the sandbox made. Pure.
 */
export function judge(identity: SandboxIdentity, output: string, made: ProcessIds | undefined): SandboxProbe {
  const [status = '', uidMap = ''] = output.split('@uid_map');
  const field = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, 'm').exec(status)?.[1]?.trim();
  // The initial user namespace maps the whole range; any other map is a namespace of its own.
  const ownNamespace = uidMap.trim() !== '' && !/^0\s+0\s+4294967295$/.test(uidMap.trim());
  const caps = ['CapEff', 'CapPrm', 'CapBnd', 'CapInh', 'CapAmb'].map((c) => [c, field(c)] as const);
  const capsZero = caps.every(([, v]) => v !== undefined && /^0+$/.test(v));
  const checks: SandboxCheck[] = [
    {
      property: 'user namespace',
      ok: ownNamespace && made !== undefined && made.uid === identity.uid && made.uid !== 0 && made.gid === identity.gid,
      detail: !ownNamespace
        ? `no user namespace of its own (uid_map: ${uidMap.trim() || 'unreadable'})`
        : made === undefined
          ? 'the sandbox could not write its workspace'
          : `own user namespace; its files are host uid ${made.uid}, gid ${made.gid}${made.uid === 0 ? ' (root: no isolation)' : ''}`,
    },
    {
      property: 'capabilities dropped',
      ok: capsZero,
      detail: capsZero ? 'effective, permitted, bounding, inheritable and ambient sets empty' : caps.map(([c, v]) => `${c} ${v ?? '?'}`).join(', '),
    },
    { property: 'no_new_privs', ok: field('NoNewPrivs') === '1', detail: `NoNewPrivs: ${field('NoNewPrivs') ?? '?'}` },
    { property: 'seccomp filter', ok: field('Seccomp') === '2', detail: `Seccomp: ${field('Seccomp') ?? '?'} (2 = filter loaded)` },
  ];
  const missing = checks.filter((c) => !c.ok);
  return {
    ok: missing.length === 0,
    identity,
    checks,
    ...(missing.length > 0 ? { reason: `the sandbox lacks ${missing.map((c) => `${c.property} (${c.detail})`).join('; ')}` } : {}),
  };
}

const cached = new Map<string, Promise<SandboxProbe>>();

/**
 * The probe once per identity per process once it passed (the host does not take isolation
 * away under a running Warden); a failed probe runs again on the next command, so a slow start
 * under load is not a refusal for good.
 */
export function sandboxProbe(identity: SandboxIdentity = sandboxIdentity()): Promise<SandboxProbe> {
  const key = JSON.stringify(identity);
  let probe = cached.get(key);
  if (!probe) {
    probe = probeSandbox(identity).then((result) => {
      if (!result.ok) cached.delete(key);
      return result;
    });
    cached.set(key, probe);
  }
  return probe;
}

export type Readiness = { ok: true } | { ok: false; error: string };

/**
 * Whether a command may run in the sandbox for this workspace: the host gives every property,
 * and the workspace belongs to the sandbox user. The exec tool asks this before each command.
 */
export async function sandboxReadiness(workspace: string, identity: SandboxIdentity, protect: readonly string[]): Promise<Readiness> {
  const probe = await sandboxProbe(identity);
  if (!probe.ok) return { ok: false, error: probe.reason ?? 'the sandbox cannot be set up here' };
  const handed = await ensureSandboxWorkspace(workspace, identity, { skip: protect });
  return handed.ok ? { ok: true } : { ok: false, error: handed.error };
}
