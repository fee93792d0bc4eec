import { spawn, spawnSync } from 'node:child_process';
import type { Duplex } from 'node:stream';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bwrapArgs, defaultSandboxId, ENV_ARGS_FD, execHomes, GATE_FD, PARENT_CHECK, SANDBOX_HOME, START_GATE, SECCOMP_FD, sandboxIdentity, sandboxLaunch, stagePoint } from './sandbox.js';

const root = mkdtempSync(path.join(tmpdir(), 'warden-sandbox-args-'));
const workspace = path.join(root, 'ws');
mkdirSync(workspace);
afterAll(() => rmSync(root, { recursive: true, force: true }));

const argv = ['/bin/sh', '-c', 'true'];
/** The value after each occurrence of a flag. */
const after = (args: string[], flag: string) => args.flatMap((a, i) => (a === flag ? [args[i + 1]!] : []));

describe('who the sandbox is on the host', () => {
  it.each([
    // 65533, or WARDEN_SANDBOX_ID (each test run sets its own: config/sandbox-id.ts).
    ['root, defaults', {}, { uid: 0, gid: 0 }, { uid: defaultSandboxId(), gid: defaultSandboxId(), staged: true }],
    ['root, configured', { uid: 4000, gid: 4001 }, { uid: 0, gid: 0 }, { uid: 4000, gid: 4001, staged: true }],
    ['another user: its own uid, the keys unused', { uid: 4000, gid: 4001 }, { uid: 1000, gid: 1000 }, { uid: 1000, gid: 1000, staged: false }],
    ['root, a shared uid accepted', { uid: 65534, gid: 65534, allowSharedUid: true }, { uid: 0, gid: 0 }, { uid: 65534, gid: 65534, staged: true, allowSharedUid: true }],
    ['another user: allowSharedUid unused (no other user shares its namespace)', { allowSharedUid: true }, { uid: 1000, gid: 1000 }, { uid: 1000, gid: 1000, staged: false }],
  ])('%s', (_who, configured, own, expected) => {
    expect(sandboxIdentity(configured, own)).toEqual(expected);
  });
});

describe('what ~ means', () => {
  it('in a sandboxed command the private HOME, in patterns the operator\'s home', () => {
    expect(execHomes('sandbox', '/home/op')).toEqual({ home: SANDBOX_HOME, patternHome: '/home/op' });
    expect(execHomes('gateway', '/home/op')).toEqual({ home: '/home/op', patternHome: '/home/op' });
  });
});

describe('bwrapArgs', () => {
  const args = bwrapArgs({ workspace, cwd: workspace, argv });
  it('asks for a user namespace, no capabilities, no nested namespaces and the seccomp program', () => {
    expect(args).toEqual(expect.arrayContaining(['--unshare-user', '--disable-userns', '--unshare-net', '--unshare-pid', '--die-with-parent', '--new-session']));
    expect(after(args, '--cap-drop')).toEqual(['ALL']);
    expect(after(args, '--seccomp')).toEqual([String(SECCOMP_FD)]);
  });
  it('gives HOME a tmpfs of its own, and binds the workspace after the private /tmp', () => {
    expect(after(args, '--tmpfs')).toEqual(expect.arrayContaining(['/tmp', SANDBOX_HOME]));
    expect(args.lastIndexOf('--bind')).toBeGreaterThan(args.indexOf(SANDBOX_HOME));
    expect(args.indexOf('--bind')).toBeGreaterThan(args.indexOf('/tmp'));
  });
  it('masks protected paths inside the workspace after binding it', () => {
    const state = path.join(workspace, 'data');
    mkdirSync(state, { recursive: true });
    writeFileSync(path.join(workspace, 'warden.config.yaml'), 'x');
    const masked = bwrapArgs({ workspace, cwd: workspace, argv, protect: [state, path.join(workspace, 'warden.config.yaml'), path.join(root, 'missing'), root] });
    const bind = masked.indexOf('--bind');
    expect(masked.indexOf(state)).toBeGreaterThan(bind);
    expect(masked.slice(bind)).toEqual(expect.arrayContaining(['--ro-bind', '/dev/null', path.join(workspace, 'warden.config.yaml')]));
    // Nothing to mask: the parent under the private /tmp is not bound (under /opt it is; see test/security).
    expect(masked).not.toContain(root);
    expect(masked).not.toContain(path.join(root, 'missing'));
  });
  it('masks nothing a bound directory does not show', () => {
    const unbound = bwrapArgs({ workspace, cwd: workspace, argv, protect: ['/etc/shadow', '/root'] });
    expect(unbound).not.toContain('/etc/shadow');
    expect(unbound).not.toContain('/root');
  });
});

describe('sandboxLaunch', () => {
  const env = { PATH: '/usr/bin:/bin', HOME: '/home/sandbox', LOCPATH: '/ws/evil-locales' };
  it('an unprivileged Warden starts bubblewrap itself, through setpriv\'s parent-death signal and a parent check, the environment on a descriptor', () => {
    const r = sandboxLaunch({ workspace, cwd: workspace, argv }, { uid: 1000, gid: 1000, staged: false }, env, 4242);
    if (!r.ok) throw new Error(r.error);
    expect(r.launch.file).toMatch(/\/setpriv$/);
    expect(r.launch.args.slice(0, 8)).toEqual(['--pdeathsig', 'SIGKILL', '--', '/bin/sh', '-c', PARENT_CHECK, 'warden-launch', '4242']);
    expect(r.launch.args.slice(8, 11)).toEqual(['/usr/bin/bwrap', '--args', String(ENV_ARGS_FD)]);
    expect(r.launch.args).toContain('--die-with-parent');
    expect(r.launch.uid).toBeUndefined();
    expect(r.launch.env).toEqual({ PATH: '/usr/sbin:/usr/bin:/sbin:/bin' });
    expect(Buffer.from(r.launch.envArgs!).toString('utf8')).toContain('LOCPATH\0/ws/evil-locales');
  });
  it('root arms the parent-death signal after dropping to the sandbox uid (a change of ids clears it), then checks the parent', () => {
    const r = sandboxLaunch({ workspace, cwd: workspace, argv }, { uid: 65534, gid: 65534, staged: true }, env, 4242);
    if (!r.ok) throw new Error(r.error);
    const setpriv = r.launch.args.findIndex((a) => a.endsWith('/setpriv'));
    expect(r.launch.args.slice(setpriv + 8, setpriv + 17)).toEqual(['--pdeathsig', 'SIGKILL', '--', '/bin/sh', '-c', PARENT_CHECK, 'warden-launch', '4242', '/usr/bin/bwrap']);
  });
  it('root stages: a private mount namespace shows the workspace at a stage point, then drops to the sandbox uid', () => {
    const r = sandboxLaunch({ workspace, cwd: workspace, argv }, { uid: 65534, gid: 65534, staged: true }, env);
    if (!r.ok) throw new Error(r.error);
    const { file, args } = r.launch;
    expect(file).toMatch(/\/unshare$/);
    expect(args.slice(0, 4)).toEqual(['--mount', '--propagation', 'private', '--']);
    const setpriv = args.findIndex((a) => a.endsWith('/setpriv'));
    expect(args.slice(setpriv + 1, setpriv + 8)).toEqual(['--reuid', '65534', '--regid', '65534', '--clear-groups', '--inh-caps=-all', '--bounding-set=-all']);
    const point = stagePoint(workspace)!;
    expect(args).toEqual(expect.arrayContaining(['--bind', point, workspace]));
  });
  it('root stages without the command\'s environment: it reaches bubblewrap on a descriptor, past every root process', () => {
    const r = sandboxLaunch({ workspace, cwd: workspace, argv }, { uid: 65534, gid: 65534, staged: true }, env);
    if (!r.ok) throw new Error(r.error);
    expect(r.launch.env).toEqual({ PATH: '/usr/sbin:/usr/bin:/sbin:/bin' });
    const bwrap = r.launch.args.indexOf('/usr/bin/bwrap');
    expect(r.launch.args.slice(bwrap + 1, bwrap + 3)).toEqual(['--args', String(ENV_ARGS_FD)]);
    expect(r.launch.args.join(' ')).not.toContain('evil-locales');
    expect(Buffer.from(r.launch.envArgs!).toString('utf8').split('\0')).toEqual([
      '--clearenv', '--setenv', 'PATH', '/usr/bin:/bin', '--setenv', 'HOME', '/home/sandbox', '--setenv', 'LOCPATH', '/ws/evil-locales', '',
    ]);
  });
  it('never stages over the workspace or a bound system directory', () => {
    expect(stagePoint('/mnt/ws')).not.toBe('/mnt');
    expect(stagePoint('/srv')).not.toBe('/srv');
    expect(['/usr', '/opt', '/etc', '/tmp']).not.toContain(stagePoint(workspace));
  });
});

describe('the launch\'s parent check (a real /bin/sh)', () => {
  it.each<[string, (self: number) => string, number, string]>([
    ['its parent is the pid it was given: it runs the rest', (self) => String(self), 0, 'ran\n'],
    ['another pid (Warden gone, re-parented to init): it stops before bubblewrap', () => '1', 125, ''],
    ['a pid that is a prefix of the parent\'s', (self) => String(self).slice(0, -1), 125, ''],
    ['nothing', () => '', 125, ''],
  ])('%s', (_what, pid, code, out) => {
    const r = spawnSync('/bin/sh', ['-c', PARENT_CHECK, 'warden-launch', pid(process.pid), '/bin/echo', 'ran'], { encoding: 'utf8' });
    expect(r.status).toBe(code);
    expect(r.stdout).toBe(out);
  });
});

describe('the start gate (a real /bin/sh on a socketpair at GATE_FD)', () => {
  /** Runs the gate before `echo ran`; `answer` is what Warden does when asked. */
  const gate = (answer: (socket: Duplex) => void) =>
    new Promise<{ code: number | null; out: string }>((resolve) => {
      const stdio: Array<'ignore' | 'pipe'> = ['ignore', 'pipe', 'ignore', 'ignore', 'ignore', 'ignore', 'pipe'];
      const child = spawn('/bin/sh', ['-c', START_GATE, 'warden-gate', '/bin/sh', '-c', 'echo ran; ls /proc/self/fd'], { stdio });
      const socket = (child.stdio as unknown as Duplex[])[GATE_FD]!;
      socket.on('error', () => {});
      socket.once('data', () => answer(socket));
      let out = '';
      child.stdout!.on('data', (d: Buffer) => (out += String(d)));
      child.on('close', (code) => resolve({ code, out }));
    });
  it.each<[string, (socket: Duplex) => void, number, boolean]>([
    ['Warden answers go: the command runs, without the gate descriptor', (s) => s.end('go\n'), 0, true],
    ['Warden is gone (its end closed, no answer): nothing runs', (s) => s.destroy(), 125, false],
    ['any other answer: nothing runs', (s) => s.end('no\n'), 125, false],
    ['go without a newline, then the end: nothing runs', (s) => s.end('g'), 125, false],
  ])('%s', async (_what, answer, code, ran) => {
    const r = await gate(answer);
    expect(r.code).toBe(code);
    expect(r.out.startsWith('ran\n')).toBe(ran);
    if (ran) expect(r.out.split('\n').slice(1).filter(Boolean).map(Number)).not.toContain(GATE_FD);
  });
});
