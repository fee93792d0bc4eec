import { spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runDoctorChecks } from '../../src/cli/doctor.js';
import { parseConfig } from '../../src/config/index.js';
import { startCommand } from '../../src/exec/run.js';
import { bwrapAvailable, DEFAULT_SANDBOX_ID, defaultSandboxId, sandboxIdentity, stageTools, type SandboxIdentity } from '../../src/exec/sandbox.js';
import { processesSharingUid } from '../../src/exec/sandbox-uid.js';
import { runUid } from '../sandbox-id-lease.js';

/**
 * A host process running as the sandbox uid outside the sandbox could ptrace sandboxed commands
 * or take their descriptors (the egress channel among them): Warden as root refuses to start a
 * sandboxed command while one exists, unless tools.exec.sandbox.allowSharedUid says otherwise.
 * The attacker here is a real process started as that uid with setpriv, as a daemon running as
 * `nobody` is. Each case uses a uid of its own, so no other test's processes play a part.
 */
const isRoot = process.getuid?.() === 0;
const canStage = bwrapAvailable() && stageTools().ok && existsSync('/usr/bin/setpriv');
const skipWhy = !isRoot ? 'needs root: the check guards the staged start, which only root makes' : !canStage ? 'needs bubblewrap and util-linux (setpriv, unshare)' : '';
if (skipWhy) describe.skip(`sandbox uid shared with another process (${skipWhy})`, () => {});

const workspaces: string[] = [];
const attackers: ChildProcess[] = [];
afterAll(() => {
  for (const child of attackers) child.kill('SIGKILL');
  for (const ws of workspaces) rmSync(ws, { recursive: true, force: true });
});

function workspaceFor(uid: number): string {
  const ws = mkdtempSync(path.join(tmpdir(), 'warden-sandbox-uid-'));
  chownSync(ws, uid, uid);
  workspaces.push(ws);
  return ws;
}

/** A process of `uid` outside the sandbox, running until the tests end; resolves once it has the uid. */
async function attackerAs(uid: number): Promise<ChildProcess> {
  const child = spawn('/usr/bin/setpriv', ['--reuid', String(uid), '--regid', String(uid), '--clear-groups', '/bin/sleep', '120'], { stdio: 'ignore' });
  attackers.push(child);
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (processesSharingUid(uid).some((p) => p.pid === child.pid)) return child;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`the process as uid ${uid} did not start`);
}

/** Starts `script` in the sandbox as startCommand does for every caller: the refusal as a value. */
function start(identity: SandboxIdentity, ws: string, script: string) {
  try {
    return { ok: true as const, job: startCommand({ script, label: 'uid case', host: 'sandbox', workspace: ws, cwd: ws, env: { PATH: '/usr/bin:/bin' }, maxOutputChars: 10_000, identity, timeoutMs: 30_000 }) };
  } catch (err) {
    return { ok: false as const, error: (err as Error).message };
  }
}

describe.skipIf(skipWhy !== '')('a sandboxed start as root while another process runs as the sandbox uid', () => {
  it.each<[string, number, 'attacker' | 'none', boolean, RegExp | null]>([
    ['a daemon of the sandbox uid runs outside: refused, the key named', runUid(1), 'attacker', false, new RegExp(`another process runs as the sandbox uid ${runUid(1)} or with the sandbox gid ${runUid(1)} outside the sandbox: sleep \\(pid \\d+, parent \\d+, uid ${runUid(1)}, gid ${runUid(1)}\\).*tools\\.exec\\.sandbox\\.uid and tools\\.exec\\.sandbox\\.gid`)],
    ['the same with allowSharedUid set by the operator: runs', runUid(2), 'attacker', true, null],
    ['a uid nobody else has: runs', runUid(3), 'none', false, null],
  ])('%s', async (_what, uid, other, allowSharedUid, refused) => {
    if (other === 'attacker') await attackerAs(uid);
    else expect(processesSharingUid(uid)).toEqual([]);
    const identity: SandboxIdentity = { ...sandboxIdentity({ uid, gid: uid, allowSharedUid }), staged: true };
    const ws = workspaceFor(uid);
    const started = start(identity, ws, 'id -u');
    if (refused) {
      expect(started.ok).toBe(false);
      if (!started.ok) expect(started.error).toMatch(refused);
      return;
    }
    expect(started.ok ? '' : started.error).toBe('');
    if (!started.ok) return;
    await started.job.done;
    expect(started.job.exitCode).toBe(0);
    expect(started.job.outputText().trim()).toBe(String(uid));
  }, 60_000);

  // Attackers of another uid that hold the sandbox gid: each could read and write what the
  // sandbox leaves to its group. Real processes, the ids set by setpriv.
  it.each<[string, number, string[], RegExp]>([
    ['another uid, the sandbox gid as real and effective gid', runUid(4), ['--reuid', '1000', '--regid', 'G', '--clear-groups'], new RegExp(`sleep \\(pid \\d+, parent \\d+, gid ${runUid(4)}\\).*Set tools\\.exec\\.sandbox\\.gid to an id`)],
    ['another uid and gid, the sandbox gid as a supplementary group', runUid(5), ['--reuid', '1000', '--regid', '1000', '--groups', 'G'], new RegExp(`sleep \\(pid \\d+, parent \\d+, gid ${runUid(5)} as a supplementary group\\).*Set tools\\.exec\\.sandbox\\.gid to an id`)],
    ['another uid, the sandbox gid only as the effective gid', runUid(6), ['--ruid', '1000', '--euid', '1000', '--rgid', '1000', '--egid', 'G', '--clear-groups'], new RegExp(`sleep \\(pid \\d+, parent \\d+, gid ${runUid(6)}\\)`)],
  ])('%s: refused, the gid key named', async (_what, id, ids, refused) => {
    const child = spawn('/usr/bin/setpriv', [...ids.map((a) => (a === 'G' ? String(id) : a)), '/bin/sleep', '120'], { stdio: 'ignore' });
    attackers.push(child);
    const deadline = Date.now() + 10_000;
    while (!processesSharingUid(id, { gid: id }).some((p) => p.pid === child.pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    // Not by uid: only the gid scan finds it.
    expect(processesSharingUid(id).some((p) => p.pid === child.pid)).toBe(false);
    const started = start({ uid: id, gid: id, staged: true }, workspaceFor(id), 'id -u');
    expect(started.ok).toBe(false);
    if (!started.ok) {
      expect(started.error).toMatch(refused);
      expect(started.error).not.toContain('tools.exec.sandbox.uid');
    }
    child.kill('SIGKILL');
  }, 60_000);

  it('the default uid is Warden\'s own: no other process has it, and a command runs as it', async () => {
    // The built-in default is not `nobody`; this run's (WARDEN_SANDBOX_ID) is another id no one holds.
    expect(DEFAULT_SANDBOX_ID).not.toBe(65534);
    expect(processesSharingUid(defaultSandboxId())).toEqual([]);
    const ws = workspaceFor(defaultSandboxId());
    const started = start(sandboxIdentity({}), ws, 'id -u');
    expect(started.ok ? '' : started.error).toBe('');
    if (!started.ok) return;
    await started.job.done;
    expect(started.job.outputText().trim()).toBe(String(defaultSandboxId()));
  }, 60_000);

  it("Warden's own sandboxed command, still running, does not block the next one", async () => {
    const uid = runUid(7);
    const identity: SandboxIdentity = { uid, gid: uid, staged: true };
    const ws = workspaceFor(uid);
    const first = start(identity, ws, ': > running; sleep 5');
    expect(first.ok ? '' : first.error).toBe('');
    if (!first.ok) return;
    const deadline = Date.now() + 15_000;
    while (!existsSync(path.join(ws, 'running')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(path.join(ws, 'running'))).toBe(true);
    // The first run's monitor does run as the uid in Warden's pid namespace: only its being Warden's own launch lets the second start.
    expect(processesSharingUid(uid, { own: new Set() }).map((p) => p.pid)).toContain(first.job.pid);
    expect(processesSharingUid(uid)).toEqual([]);
    const second = start(identity, ws, 'id -u');
    expect(second.ok ? '' : second.error).toBe('');
    if (!second.ok) return;
    await second.job.done;
    expect(second.job.outputText().trim()).toBe(String(uid));
    await first.job.done;
    expect(first.job.exitCode).toBe(0);
  }, 60_000);

  it("another Warden's sandboxed command (bubblewrap started by another root node process) does not block this one", async () => {
    const uid = runUid(8);
    const ws = workspaceFor(uid);
    // Another Warden: a root node process that drops to the uid and runs bubblewrap, whose command runs in its own pid namespace.
    const bwrap = ['/usr/bin/setpriv', '--reuid', String(uid), '--regid', String(uid), '--clear-groups', '--', '/usr/bin/bwrap', '--unshare-all', '--die-with-parent', '--ro-bind', '/', '/', '--proc', '/proc', '/bin/sleep', '8'];
    const other = spawn(process.execPath, ['-e', `const c = require('node:child_process').spawn(${JSON.stringify(bwrap[0])}, ${JSON.stringify(bwrap.slice(1))}, { stdio: 'ignore' }); c.on('exit', () => process.exit(0));`], { stdio: 'ignore' });
    attackers.push(other);
    // Both of its processes have the uid: the monitor in this pid namespace, sleep in its own.
    const deadline = Date.now() + 10_000;
    let monitor: number | undefined;
    while (monitor === undefined && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      const kids = pidsOfUid(uid);
      if (kids.length >= 2) monitor = kids[0];
    }
    expect(monitor).toBeDefined();
    expect(processesSharingUid(uid)).toEqual([]);
    const started = start({ uid, gid: uid, staged: true }, ws, 'id -u');
    expect(started.ok ? '' : started.error).toBe('');
    if (!started.ok) return;
    await started.job.done;
    expect(started.job.outputText().trim()).toBe(String(uid));
    other.kill('SIGKILL');
  }, 60_000);
});

describe.skipIf(skipWhy !== '')('warden doctor on the sandbox uid', () => {
  const doctorFor = async (uid: number) => {
    const parsed = parseConfig({ owners: { web: ['op'] }, tools: { exec: { host: 'sandbox', sandbox: { uid, gid: uid } } } });
    if (!parsed.ok) throw parsed.error;
    const checks = await runDoctorChecks(parsed.value.config, tmpdir(), {}, { platforms: 'offline', container: null });
    return checks.find((c) => c.name === 'sandbox uid')!;
  };
  it('names the uid and the process that shares it, and fails', async () => {
    const attacker = await attackerAs(runUid(9));
    const line = await doctorFor(runUid(9));
    expect(line.ok).toBe(false);
    expect(line.detail).toContain(`uid ${runUid(9)}, gid ${runUid(9)}`);
    expect(line.detail).toContain(`sleep (pid ${attacker.pid}, parent `);
    expect(line.fix).toContain('tools.exec.sandbox.uid');
  }, 120_000);
  it('says no other process runs as a uid nobody has', async () => {
    const line = await doctorFor(runUid(10));
    expect(line).toMatchObject({ ok: true, detail: `uid ${runUid(10)}, gid ${runUid(10)} (no account in /etc/passwd): no other process runs as it` });
  }, 120_000);
});

/** Every pid whose real uid is `uid`, by /proc, with no exemption (what the scan starts from). */
function pidsOfUid(uid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const line = readFileSync(`/proc/${entry}/status`, 'utf8').split('\n').find((l) => l.startsWith('Uid:'));
      if (line && line.split(/\s+/)[1] === String(uid)) out.push(Number(entry));
    } catch {
      // gone
    }
  }
  return out.sort((a, b) => a - b);
}
