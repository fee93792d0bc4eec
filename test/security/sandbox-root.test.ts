import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wardenStatePaths } from '../../src/exec/warden-state.js';
import { checkSandboxUid, processesSharingUid } from '../../src/exec/sandbox-uid.js';
import { arena, canSandbox, isRoot, LAUNCHES, type Arena } from './sandbox-harness.js';
import { runUid } from '../sandbox-id-lease.js';

/**
 * The sandbox holds when Warden runs as root (as in containers and on CI), and when bubblewrap
 * is started by an unprivileged user: each attack below is tried inside the real sandbox, both
 * ways, with the attacker's files written first.
 */

const SECRET = `warden-secret-${process.pid}-${Date.now()}`;

describe.skipIf(!canSandbox || !isRoot)('a sandboxed command, whoever started it, holds nothing over the host', () => {
  describe.each(LAUNCHES)('started by %s', (_who, identity) => {
    let box: Arena;
    let server: Server;
    let port: number;
    beforeAll(async () => {
      // The unprivileged Warden's own directory is open to it; root's may be mode 700.
      box = await arena(identity, { reachable: !identity.staged });
      mkdirSync(path.join(box.root, 'outside'));
      writeFileSync(path.join(box.root, 'outside', 'secret.txt'), `${SECRET}\n`);
      // A root-only file under a directory the sandbox binds (/opt): owner bits alone protect it.
      const opt = mkdtempSync('/opt/warden-sec-');
      writeFileSync(path.join(opt, 'root-only'), `${SECRET}\n`, { mode: 0o600 });
      (box as Arena & { opt: string }).opt = opt;
      server = createServer((socket) => socket.end('hello\n'));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as { port: number }).port;
    });
    afterAll(() => {
      server?.close();
      rmSync((box as Arena & { opt?: string })?.opt ?? '/nonexistent', { recursive: true, force: true });
      box?.cleanup();
    });
    const opt = () => (box as Arena & { opt: string }).opt;

    it.skipIf(!identity.staged)('works with the workspace under a directory only root may enter (as /root is)', async () => {
      expect(statSync(box.root).mode & 0o777).toBe(0o700);
      const { exitCode, output } = await box.run('echo made > made.txt && cat made.txt && id -u');
      expect(exitCode).toBe(0);
      expect(output).toBe(`made\n${identity.uid}\n`);
    });

    it('has no capability at all: effective, permitted, bounding, inheritable and ambient sets are empty', async () => {
      const { output } = await box.run("grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb):' /proc/self/status");
      const sets = Object.fromEntries(output.trim().split('\n').map((l) => l.split(/:\s*/)));
      expect(sets).toEqual({ CapInh: '0000000000000000', CapPrm: '0000000000000000', CapEff: '0000000000000000', CapBnd: '0000000000000000', CapAmb: '0000000000000000' });
    });

    it('runs with NoNewPrivs: 1 and a seccomp filter (Seccomp: 2), as an unprivileged host uid', async () => {
      const { output } = await box.run("grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status; id -u; : > made-here");
      expect(output).toContain('NoNewPrivs:\t1');
      expect(output).toContain('Seccomp:\t2');
      expect(output.trim().split('\n').at(-1)).toBe(String(identity.uid));
      // The host's view: what the sandbox makes belongs to the sandbox uid, not to root.
      expect(statSync(path.join(box.workspace, 'made-here')).uid).toBe(identity.uid);
    });

    it.each([
      ['remount a bound system dir read-write and write to it', () => `mount -o remount,rw,bind /opt && touch ${opt()}/pwned`],
      ['remount the root read-write', () => 'mount -o remount,rw / && touch /pwned'],
      ['bind a writable dir over a system dir', () => `mount --bind /tmp ${opt()} && touch ${opt()}/pwned`],
      ['mount a fresh tmpfs', () => 'mount -t tmpfs none /mnt && echo mounted'],
      ['unmount the workspace to reach what is under it', () => `umount -l ${box.workspace} && ls ${box.workspace}`],
      ['write to a bound system dir directly', () => `touch ${opt()}/pwned /usr/pwned`],
    ])('cannot %s', async (_what, script) => {
      const { exitCode, output } = await box.run(script());
      expect(exitCode).not.toBe(0);
      expect(output).not.toContain('mounted');
      expect(existsSync(path.join(opt(), 'pwned'))).toBe(false);
      expect(existsSync('/usr/pwned')).toBe(false);
      expect(existsSync('/pwned')).toBe(false);
    });

    it.each([
      ['unshare -U', 'unshare -U true'],
      ['unshare -Ur (map root)', 'unshare -Ur id'],
      ['unshare -m as a mount escape', 'unshare -m sh -c "mount -t tmpfs none /mnt"'],
      ['a new network namespace', 'unshare -n true'],
    ])('cannot make a nested namespace: %s', async (_what, script) => {
      const { exitCode } = await box.run(script);
      expect(exitCode).not.toBe(0);
    });

    it("cannot read the host's processes: /proc/1/environ is the sandbox's own, and Warden's environment is nowhere", async () => {
      process.env.WARDEN_TEST_SECRET = SECRET;
      try {
        // The count is marked: stderr (a process that exited meanwhile) may be read after stdout.
        const { output } = await box.run(`cat /proc/1/environ; cat /proc/${process.pid}/environ; for f in /proc/[0-9]*/environ; do cat "$f"; done; echo; echo "processes=$(ls /proc | grep -c '^[0-9]')"`);
        expect(output).not.toContain(SECRET);
        const processes = /^processes=(\d+)$/m.exec(output);
        expect(processes, output).not.toBeNull();
        expect(Number(processes![1])).toBeLessThan(10);
      } finally {
        delete process.env.WARDEN_TEST_SECRET;
      }
    });

    it.each([
      ['a sibling of the workspace', () => `cat ${path.join(box.root, 'outside', 'secret.txt')}`],
      ['a root-only file under the bound /opt (the sandbox is not root on the host)', () => `cat ${path.join(opt(), 'root-only')}`],
      ['/etc/shadow', () => 'cat /etc/shadow'],
      ["root's home", () => 'ls -la /root; cat /root/.bash_history'],
      ['a file found by its inode through /proc/self/root', () => `cat /proc/self/root${path.join(box.root, 'outside', 'secret.txt')}`],
    ])('cannot read %s', async (_what, script) => {
      const { output } = await box.run(script());
      expect(output).not.toContain(SECRET);
    });

    it('gets exactly the environment Warden built, on either launch', async () => {
      const { output } = await box.run('env', { env: { PATH: '/usr/bin:/bin', HOME: '/home/sandbox', LANG: 'C.UTF-8', FOO: 'bar baz\nqux' } });
      const keys = [...output.matchAll(/^([A-Za-z_][A-Za-z0-9_]*)=/gm)].map((m) => m[1]).filter((k) => k !== 'PWD' && k !== 'SHLVL' && k !== '_');
      expect(keys.sort()).toEqual(['FOO', 'HOME', 'LANG', 'PATH']);
      expect(output).toContain('FOO=bar baz\nqux\n');
    });

    it.skipIf(!identity.staged)('no variable the model chose reaches the part of the start that runs as root', async () => {
      // checkEnvOverrides lets these through; libmount (root, in the stage) would obey them.
      const env = { PATH: '/usr/bin:/bin', HOME: '/home/sandbox', LIBMOUNT_DEBUG: 'all', LIBMOUNT_FSTAB: `${box.workspace}/fstab` };
      const { exitCode, output } = await box.run('echo "inside: $LIBMOUNT_DEBUG"', { env });
      expect(exitCode).toBe(0);
      expect(output).toBe('inside: all\n');
    });

    it('has no network: only loopback, and the host listener is out of reach', async () => {
      const probe = `cat /proc/net/dev; node -e "require('net').connect(${port}, '127.0.0.1').on('data', (d) => { console.log('GOT', String(d)); process.exit(0); }).on('error', (e) => { console.log(e.code); process.exit(7); })"`;
      const { exitCode, output } = await box.run(probe);
      expect(exitCode).toBe(7);
      expect(output).not.toContain('GOT');
      expect(output).not.toMatch(/eth\d|ens|enp|wlan|veth/);
    });

    it('cannot gain privileges through a setuid binary', async () => {
      const { output } = await box.run("su root -c 'id -u' </dev/null; echo done");
      expect(output.trim().split('\n')).not.toContain('0');
    });
  });
});

describe.skipIf(!canSandbox || !isRoot)("Warden's own state is masked even under a bound system directory", () => {
  describe.each([['/opt'], ['/usr/local']])('installed under %s', (base) => {
    let install: string;
    let box: Arena;
    beforeAll(async () => {
      // Warden installed in a system dir the sandbox binds: its data, config and .env are world-readable there.
      install = mkdtempSync(path.join(base, 'warden-install-'));
      chmodSync(install, 0o755);
      mkdirSync(path.join(install, 'data'));
      writeFileSync(path.join(install, 'data', 'warden.sqlite'), `SQLite format 3 ${SECRET}`, { mode: 0o644 });
      writeFileSync(path.join(install, 'warden.config.yaml'), `channels: { discord: { token: ${SECRET} } }\n`, { mode: 0o644 });
      writeFileSync(path.join(install, '.env'), `DISCORD_TOKEN=${SECRET}\n`, { mode: 0o644 });
      const protect = wardenStatePaths({ dataDir: path.join(install, 'data'), configFile: path.join(install, 'warden.config.yaml'), baseDir: install }).map((p) => p.at);
      box = await arena(LAUNCHES[0]![1], { protect });
    });
    afterAll(() => {
      rmSync(install, { recursive: true, force: true });
      box?.cleanup();
    });

    it.each([
      ['the SQLite database', () => `cat ${install}/data/warden.sqlite`],
      ['the data dir listing', () => `ls -la ${install}/data`],
      ['the config file with its token', () => `cat ${install}/warden.config.yaml`],
      ['the .env beside it', () => `cat ${install}/.env`],
      ['all of them by a glob', () => `cat ${install}/* ${install}/.* ${install}/*/* 2>&1`],
      ['them by name_to_handle_at and open_by_handle_at', () => `perl -e 'my $h = pack("LL", 128, 0) . ("\\0" x 128); my $m = pack("L", 0); my $p = "${install}/.env"; print syscall(303, -100, $p, $h, $m, 0), " ", $!+0, "\\n"'`],
    ])('cannot read %s', async (_what, script) => {
      const { output } = await box.run(script());
      expect(output).not.toContain(SECRET);
    });

    it('still sees the rest of the install (only the state is masked)', async () => {
      writeFileSync(path.join(install, 'README'), 'public\n');
      const { output } = await box.run(`cat ${install}/README`);
      expect(output).toBe('public\n');
    });
  });

  it('masks a data dir that contains the workspace, while the workspace stays usable', async () => {
    const install = mkdtempSync(path.join('/opt', 'warden-install-'));
    try {
      chmodSync(install, 0o755);
      writeFileSync(path.join(install, 'warden.sqlite'), SECRET);
      const box = await arena(LAUNCHES[0]![1], { base: install, protect: [install] });
      try {
        const { output } = await box.run(`cat ${install}/warden.sqlite; echo ok > inside && cat inside`);
        expect(output).not.toContain(SECRET);
        expect(output).toContain('ok');
      } finally {
        box.cleanup();
      }
    } finally {
      rmSync(install, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!canSandbox || !isRoot)('a sandbox does not outlive Warden', () => {
  const here = path.dirname(fileURLToPath(import.meta.url));
  // A uid of this test's own: for a moment after the kill, the sandbox's monitor is an orphan of
  // the sandbox uid, which stops other tests' sandboxed starts of that uid (sandbox-uid.ts).
  const OWN_UID = runUid(11);
  const launches = LAUNCHES.map(([who, identity]) => [who, { ...identity, uid: OWN_UID, gid: OWN_UID, ...(identity.spawnAs ? { spawnAs: { uid: OWN_UID, gid: OWN_UID } } : {}) }] as const);
  it.each(launches)('when Warden is killed (%s), every process of the sandbox dies', async (_who, identity) => {
    const marker = `${Math.floor(Math.random() * 1e6) + 1}.${process.pid}`;
    const root = mkdtempSync('/tmp/warden-sec-');
    chmodSync(root, 0o755);
    const workspace = path.join(root, 'workspace');
    mkdirSync(workspace);
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'sandbox-orphan.fixture.ts'), workspace, JSON.stringify(identity), marker], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const started = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (d: Buffer) => (String(d).includes('started') ? resolve(String(d)) : undefined));
        child.on('exit', (code) => reject(new Error(`fixture exited ${code}`)));
      });
      expect(started).toContain('started');
      await waitFor(() => sleepers(marker).length > 0);
      child.kill('SIGKILL');
      await waitFor(() => sleepers(marker).length === 0);
      expect(sleepers(marker)).toEqual([]);
    } finally {
      child.kill('SIGKILL');
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!canSandbox || !isRoot)('a Warden killed while a sandbox starts leaves nothing running', () => {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const OWN_UID = runUid(11); // as above: this file's own
  const launches = LAUNCHES.map(([who, identity]) => [who, { ...identity, uid: OWN_UID, gid: OWN_UID, ...(identity.spawnAs ? { spawnAs: { uid: OWN_UID, gid: OWN_UID } } : {}) }] as const);
  // ms after the spawn: in the launch programs before setpriv, in bubblewrap's setup (before its
  // init arms the parent-death signal: what the start gate is for), later.
  const rows = launches.flatMap(([who, identity]) => [0, 3, 10, 30, 100].map((ms) => [who, ms, identity] as const));
  // bubblewrap's own window: its monitor arms the parent-death signal before it releases the
  // sandbox's init from the set-up wait (an eventfd, which no death ends); a Warden dying in
  // between leaves that init blocked before the start gate, re-parented to init, running nothing.
  // As root the next sandboxed start kills it (checkSandboxUid); an unprivileged Warden does not.
  it.each(rows)('%s, killed %d ms after the spawn: the command never runs, nothing but an orphaned bubblewrap is left 3 s later, and the next start as root clears that and is not refused', async (_who, ms, identity) => {
    const marker = `${Math.floor(Math.random() * 1e6) + 1}.${process.pid}`;
    const root = mkdtempSync('/tmp/warden-sec-');
    chmodSync(root, 0o755);
    const workspace = path.join(root, 'workspace');
    mkdirSync(workspace);
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'sandbox-orphan.fixture.ts'), workspace, JSON.stringify(identity), marker, String(ms)], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise((resolve) => child.on('exit', resolve));
      await waitFor(() => sleepers(marker).length === 0 && liveOfUid(OWN_UID).every(leftBehind), 3_000);
      expect(sleepers(marker)).toEqual([]);
      // Every process of the uid, in any pid namespace: an orphaned sandbox's init included.
      expect(liveOfUid(OWN_UID).filter((pid) => !leftBehind(pid)).map(described)).toEqual([]);
      if (identity.staged) {
        expect(checkSandboxUid(identity)).toEqual({ ok: true });
        await waitFor(() => liveOfUid(OWN_UID).length === 0, 3_000);
        expect(liveOfUid(OWN_UID).map(described)).toEqual([]);
        expect(processesSharingUid(OWN_UID, { gid: OWN_UID })).toEqual([]);
      }
    } finally {
      child.kill('SIGKILL');
      // What an unprivileged run leaves must not reach the next row.
      for (const pid of liveOfUid(OWN_UID)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Gone.
        }
      }
      rmSync(root, { recursive: true, force: true });
    }
  });
});

/** Live (not zombie) processes of `uid` in this pid namespace or below. */
function liveOfUid(uid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = readFileSync(`/proc/${entry}/status`, 'utf8');
      const uids = /\nUid:\t(\d+)/.exec(status)?.[1];
      const state = /\nState:\t(\S)/.exec(status)?.[1];
      if (uids === String(uid) && state !== 'Z') found.push(Number(entry));
    } catch {
      // Gone.
    }
  }
  return found;
}

/**
 * An orphaned sandbox or a process in it: bubblewrap re-parented to init (blocked in its set-up,
 * or a slow one reaching its start gate, which a dead Warden never answers), or a descendant of
 * one. Which of the two a moment shows depends on the machine's load; either runs no command.
 */
function leftBehind(pid: number, hops = 0): boolean {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    // Exiting or exited since the listing (the kernel's PF_EXITING flag, a zombie, dead): runs
    // nothing, as src/exec/sandbox-uid.ts counts it. Its command line is already empty, so it
    // would otherwise look like something other than bubblewrap.
    const state = /\nState:\t(\S)/.exec(status)?.[1];
    if (state === 'Z' || state === 'X' || exiting(pid)) return true;
    const exe = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0];
    const ppid = Number(/\nPPid:\t(\d+)/.exec(status)?.[1]);
    if (exe === '/usr/bin/bwrap' && ppid === 1) return true;
    return hops < 4 && ppid > 1 && leftBehind(ppid, hops + 1);
  } catch {
    return true; // gone
  }
}

/** Whether the kernel is taking the process down (PF_EXITING in /proc/PID/stat's flags). */
function exiting(pid: number): boolean {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const flags = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[6]);
  return (flags & 0x4) !== 0;
}

/** A process as a failure names it: pid, state, parent and command line. */
function described(pid: number): string {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
    return `${pid} ${/\nState:\t(\S)/.exec(status)?.[1]} ppid ${/\nPPid:\t(\d+)/.exec(status)?.[1]} ${cmd}`;
  } catch {
    return `${pid} (gone)`;
  }
}

/** Live processes running `sleep <marker>`. */
function sleepers(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      const state = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]?.[0];
      if (cmd[0]?.endsWith('sleep') && cmd[1] === marker && state !== 'Z') found.push(Number(entry));
    } catch {
      // Gone.
    }
  }
  return found;
}

async function waitFor(done: () => boolean, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!done() && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
}
