import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BWRAP_PATH, type SandboxIdentity } from './sandbox.js';
import { checkSandboxUid, orphanedSandbox, parseProcStatus, parseTaskStat, passwdNames, processesSharingUid, runsNothing, sandboxUidReport, sharedIds, sharedUidVerdict } from './sandbox-uid.js';

const status = (name: string, ppid: number, uids: string, nspid = '1', state = 'S (sleeping)', gids = '0\t0\t0\t0', groups = '') =>
  `Name:\t${name}\nUmask:\t0022\nState:\t${state}\nPPid:\t${ppid}\nUid:\t${uids}\nGid:\t${gids}\nFDSize:\t64\nGroups:\t${groups}\nNSpid:\t${nspid}\n`;

/** Flags as the kernel shows them (fields 9 of stat): a live thread, and one inside exit() (PF_EXITING, 0x4). */
const LIVE = 0x400000;
const EXITING = 0x40800c;
/** /proc/<pid>/task/<tid>/stat as the kernel writes it, up to the flags and a few fields after. */
const taskStat = (tid: number, name: string, state: string, flags: number) => `${tid} (${name}) ${state} 1 ${tid} ${tid} 0 -1 ${flags} 120 0 0 0 0 0\n`;
/** Writes a process's threads: [tid, state letter, flags]; by default one thread, in the state its status shows. */
function writeTasks(dir: string, pid: number, name: string, threads: ReadonlyArray<readonly [number, string, number]>): void {
  for (const [tid, state, flags] of threads) {
    mkdirSync(path.join(dir, 'task', String(tid)), { recursive: true });
    writeFileSync(path.join(dir, 'task', String(tid), 'stat'), taskStat(tid, name, state, flags));
  }
}
const oneThread = (pid: number, text: string): Array<[number, string, number]> => {
  const state = /State:\t(\S)/.exec(text)?.[1] ?? 'S';
  return [[pid, state, state === 'Z' || state === 'X' ? EXITING : LIVE]];
};

describe('reading /proc/<pid>/status', () => {
  it.each<[string, string, ReturnType<typeof parseProcStatus>]>([
    ['real, effective, saved, fs', status('sh', 7, '65533\t0\t0\t0'), { name: 'sh', state: 'S', ppid: 7, uids: [65533, 0, 0, 0], gids: [0, 0, 0, 0], groups: [], nsDepth: 1 }],
    ['in a nested pid namespace', status('sh', 7, '1\t1\t1\t1', '4021\t2\t1'), { name: 'sh', state: 'S', ppid: 7, uids: [1, 1, 1, 1], gids: [0, 0, 0, 0], groups: [], nsDepth: 3 }],
    ['gids and supplementary groups', status('sh', 7, '0\t0\t0\t0', '1', 'S (sleeping)', '5\t6\t7\t8', '27 65533 100'), { name: 'sh', state: 'S', ppid: 7, uids: [0, 0, 0, 0], gids: [5, 6, 7, 8], groups: [27, 65533, 100], nsDepth: 1 }],
    ['no Uid line', 'Name:\tsh\nPPid:\t1\n', null],
    ['a Uid line that is not numbers', status('sh', 1, 'a b c d'), null],
    ['no Gid line', 'Name:\tsh\nPPid:\t1\nUid:\t0\t0\t0\t0\n', null],
    ['a Groups line that is not numbers', status('sh', 1, '0\t0\t0\t0', '1', 'S (sleeping)', '0\t0\t0\t0', '27 x'), null],
  ])('%s', (_what, text, expected) => {
    expect(parseProcStatus(text)).toEqual(expected);
  });
});

describe('which processes share the sandbox uid', () => {
  // A /proc of files: what the scan reads (status, exe) and nothing else.
  const proc = mkdtempSync(path.join(tmpdir(), 'warden-proc-'));
  afterAll(() => rmSync(proc, { recursive: true, force: true }));
  const add = (pid: number, text: string, exe?: string, threads = oneThread(pid, text)) => {
    mkdirSync(path.join(proc, String(pid)));
    writeFileSync(path.join(proc, String(pid), 'status'), text);
    if (exe) symlinkSync(exe, path.join(proc, String(pid), 'exe'));
    writeTasks(path.join(proc, String(pid)), pid, text.slice(6, text.indexOf('\n')), threads);
  };
  const U = 65533;
  add(1, status('init', 0, '0\t0\t0\t0'), '/usr/lib/systemd/systemd');
  add(100, status('node', 1, '0\t0\t0\t0'), '/usr/bin/node'); // Warden
  add(200, status('node', 1, '0\t0\t0\t0'), '/usr/local/bin/node'); // another Warden
  add(300, status('daemon', 1, `${U}\t${U}\t${U}\t${U}`), '/usr/sbin/daemon');
  add(301, status('setuid', 1, `0\t${U}\t0\t0`), '/usr/bin/thing'); // effective only
  add(302, status('saved', 1, `0\t0\t${U}\t0`), '/usr/bin/thing'); // saved only
  add(303, status('fsonly', 1, `0\t0\t0\t${U}`), '/usr/bin/thing'); // fs uid only: no ptrace right
  add(400, status('bwrap', 100, `${U}\t${U}\t${U}\t${U}`), BWRAP_PATH); // Warden's own launch
  add(401, status('sh', 400, `${U}\t${U}\t${U}\t${U}`, '401\t1'), '/usr/bin/dash'); // inside a sandbox
  add(500, status('bwrap', 200, `${U}\t${U}\t${U}\t${U}`), BWRAP_PATH); // another Warden's launch
  add(501, status('setpriv', 200, `${U}\t${U}\t${U}\t${U}`), '/usr/bin/setpriv'); // another Warden's, mid-drop
  add(600, status('bwrap', 1, `${U}\t${U}\t${U}\t${U}`), BWRAP_PATH); // an orphaned bwrap: re-parented to pid 1
  add(601, status('bwrap', 300, `${U}\t${U}\t${U}\t${U}`), BWRAP_PATH); // bwrap started by the daemon
  add(602, status('python3', 100, `${U}\t${U}\t${U}\t${U}`), '/usr/bin/python3'); // Warden's child, not a launch it knows
  add(603, status('bwrap', 200, `${U}\t${U}\t${U}\t${U}`, '1', 'Z (zombie)')); // another Warden's, exited, not yet reaped (no exe)
  add(604, status('daemon', 1, `${U}\t${U}\t${U}\t${U}`, '1', 'Z (zombie)')); // any zombie
  add(405, status('bwrap', 400, `${U}\t${U}\t${U}\t${U}`), BWRAP_PATH); // a helper Warden's own bwrap forks while it sets up
  add(505, status('bwrap', 500, `${U}\t${U}\t${U}\t${U}`), BWRAP_PATH); // another Warden's bwrap's helper
  add(506, status('bwrap', 505, `${U}\t${U}\t${U}\t${U}`), BWRAP_PATH); // ... and its helper
  add(507, status('python3', 500, `${U}\t${U}\t${U}\t${U}`), '/usr/bin/python3'); // not a launch program, whoever its parent
  add(605, status('bwrap', 601, `${U}\t${U}\t${U}\t${U}`), BWRAP_PATH); // the daemon's bwrap's helper
  add(606, status('bwrap', 600, `${U}\t${U}\t${U}\t${U}`), BWRAP_PATH); // the orphan's helper
  add(700, status('other', 1, '1000\t1000\t1000\t1000'), '/usr/bin/other');
  // Another Warden's bwrap as its command ends: inside exit(), its exe link already gone, its
  // state still R. Read as it was before the flags counted, it was a stranger (a suite beside
  // another refused a sandbox for it).
  add(508, status('bwrap', 200, `${U}\t${U}\t${U}\t${U}`, '1', 'R (running)'), undefined, [[508, 'R', EXITING]]);
  // A daemon whose first thread called pthread_exit: status shows Z (ps: Zl), the exe link is
  // gone, and its second thread runs.
  add(607, status('daemon', 1, `${U}\t${U}\t${U}\t${U}`, '1', 'Z (zombie)'), undefined, [[607, 'Z', EXITING], [608, 'S', LIVE]]);
  // Exiting in one thread, running in another (exit of one thread, not exit_group).
  add(609, status('daemon', 1, `${U}\t${U}\t${U}\t${U}`), '/usr/sbin/daemon', [[609, 'S', LIVE], [610, 'R', EXITING]]);
  // Every thread exiting (exit_group): runs nothing.
  add(611, status('daemon', 1, `${U}\t${U}\t${U}\t${U}`, '1', 'D (disk sleep)'), undefined, [[611, 'D', EXITING], [612, 'Z', EXITING]]);
  // A stat that cannot be read as one: counted.
  add(613, status('odd', 1, `${U}\t${U}\t${U}\t${U}`, '1', 'Z (zombie)'), undefined, []);
  mkdirSync(path.join(proc, '613', 'task', '613'), { recursive: true });
  writeFileSync(path.join(proc, '613', 'task', '613', 'stat'), '613 bwrap Z');
  // A thread listed but gone when read, while the process is still there (one that took the
  // process over by exec from another thread changes its tid): counted.
  add(615, status('daemon', 1, `${U}\t${U}\t${U}\t${U}`, '1', 'Z (zombie)'), undefined, [[615, 'Z', EXITING]]);
  mkdirSync(path.join(proc, '615', 'task', '616'));
  // No task folder at all (not a /proc the scan knows): counted.
  mkdirSync(path.join(proc, '614'));
  writeFileSync(path.join(proc, '614', 'status'), status('bare', 1, `${U}\t${U}\t${U}\t${U}`, '1', 'Z (zombie)'));
  mkdirSync(path.join(proc, 'self'));

  it('counts real, effective and saved uid outside the sandbox; not the sandboxes, zombies, exiting processes, Warden\'s launches or another Warden\'s', () => {
    const found = processesSharingUid(U, { procRoot: proc, self: 100, own: new Set([400]) }).map((p) => p.pid).sort((a, b) => a - b);
    expect(found).toEqual([300, 301, 302, 507, 600, 601, 602, 605, 606, 607, 609, 613, 614, 615]);
  });
  it('names nothing for a uid no process has', () => {
    expect(processesSharingUid(4242, { procRoot: proc, self: 100, own: new Set() })).toEqual([]);
  });
  it('marks only the orphaned bubblewrap (parent init) as an orphaned sandbox', () => {
    const orphans = processesSharingUid(U, { procRoot: proc, self: 100, own: new Set([400]) }).filter((p) => p.orphan).map((p) => p.pid);
    expect(orphans).toEqual([600]);
  });
  it('the check kills an orphaned sandbox and judges the rest; a kill that fails leaves it counted', () => {
    const killed: number[] = [];
    const identity: SandboxIdentity = { uid: U, gid: U, staged: true };
    const verdict = checkSandboxUid(identity, { procRoot: proc, self: 100, own: new Set([400]), kill: (pid) => (killed.push(pid), true) });
    expect(killed).toEqual([600]);
    expect(!verdict.ok && verdict.error).toMatch(/daemon \(pid 300/);
    expect(!verdict.ok && verdict.error).not.toMatch(/pid 600,/);
    const kept = checkSandboxUid(identity, { procRoot: proc, self: 100, own: new Set([400]), kill: () => false });
    expect(!kept.ok && kept.error).toMatch(/and \d+ more/);
  });
  it('a launch Warden no longer tracks counts again', () => {
    expect(processesSharingUid(U, { procRoot: proc, self: 100, own: new Set() }).map((p) => p.pid)).toContain(400);
  });
});

describe('whether a process runs nothing again', () => {
  it.each<[string, string, ReturnType<typeof parseTaskStat>]>([
    ['a live thread', taskStat(7, 'sleep', 'S', LIVE), { state: 'S', flags: LIVE }],
    ['a thread inside exit()', taskStat(7, 'bwrap', 'R', EXITING), { state: 'R', flags: EXITING }],
    ['a name with spaces and parentheses', taskStat(7, 'a) Z 1 (b', 'S', LIVE), { state: 'S', flags: LIVE }],
    ['no name', '7 bwrap Z 1 7 7 0 -1 4\n', null],
    ['flags that are not a number', '7 (x) S 1 7 7 0 -1 z\n', null],
    ['cut short', '7 (x) S 1 7\n', null],
  ])('reads a task stat: %s', (_what, text, expected) => {
    expect(parseTaskStat(text)).toEqual(expected);
  });

  it('on the real /proc: a running process runs, an unreaped child that exited runs nothing', async () => {
    // `sleep 0` exits at once; the `sleep` that replaced its parent shell never reaps it.
    const parent = spawn('sh', ['-c', 'sleep 0 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      const [line] = (await once(parent.stdout!, 'data')) as [Buffer];
      const zombie = Number(line.toString().trim());
      const deadline = Date.now() + 10_000;
      while (!/^\S+ \(.*\) Z /.test(readFileSync(`/proc/${zombie}/stat`, 'utf8')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      expect(runsNothing('/proc', zombie)).toBe(true);
      expect(runsNothing('/proc', parent.pid!)).toBe(false);
      expect(runsNothing('/proc', process.pid)).toBe(false);
    } finally {
      parent.kill('SIGKILL');
    }
  });
});

describe('which processes share the sandbox gid', () => {
  // Attackers that are not the sandbox uid but hold its group: each can read and write what the
  // sandbox leaves group-accessible (workspace files, sockets, SysV IPC), or switch to the gid.
  const G = 65533;
  const U = 65533;
  const proc = mkdtempSync(path.join(tmpdir(), 'warden-proc-gid-'));
  afterAll(() => rmSync(proc, { recursive: true, force: true }));
  const add = (pid: number, text: string, exe: string) => {
    mkdirSync(path.join(proc, String(pid)));
    writeFileSync(path.join(proc, String(pid), 'status'), text);
    symlinkSync(exe, path.join(proc, String(pid), 'exe'));
    writeTasks(path.join(proc, String(pid)), pid, 'p', oneThread(pid, text));
  };
  const rows: ReadonlyArray<[string, number, string, boolean]> = [
    // what, pid, /proc/<pid>/status, counted
    ['real gid only', 810, status('rgid', 1, '1000\t1000\t1000\t1000', '1', 'S (sleeping)', `${G}\t1000\t1000\t1000`), true],
    ['effective gid only (a setgid program)', 811, status('egid', 1, '1000\t1000\t1000\t1000', '1', 'S (sleeping)', `1000\t${G}\t1000\t1000`), true],
    ['saved gid only (can switch back to it)', 812, status('sgid', 1, '1000\t1000\t1000\t1000', '1', 'S (sleeping)', `1000\t1000\t${G}\t1000`), true],
    ['a supplementary group', 813, status('member', 1, '1000\t1000\t1000\t1000', '1', 'S (sleeping)', '1000\t1000\t1000\t1000', `27 ${G}`), true],
    ['root with the group as a supplementary group', 814, status('rootish', 1, '0\t0\t0\t0', '1', 'S (sleeping)', '0\t0\t0\t0', `${G}`), true],
    ['filesystem gid only (no way to keep it)', 815, status('fsgid', 1, '1000\t1000\t1000\t1000', '1', 'S (sleeping)', `1000\t1000\t1000\t${G}`), false],
    ['a neighbouring gid', 816, status('near', 1, '1000\t1000\t1000\t1000', '1', 'S (sleeping)', `${G - 1}\t${G + 1}\t${G - 1}\t${G - 1}`, `${G - 1} ${G + 1}`), false],
    ['the gid inside a sandbox (nested pid namespace)', 817, status('sh', 1, '1000\t1000\t1000\t1000', '817\t2', 'S (sleeping)', `${G}\t${G}\t${G}\t${G}`), false],
    ['the gid, exited and not yet reaped', 818, status('gone', 1, '1000\t1000\t1000\t1000', '1', 'Z (zombie)', `${G}\t${G}\t${G}\t${G}`), false],
    ['the group, holding a numeric prefix of it in a longer id', 819, status('prefix', 1, '1000\t1000\t1000\t1000', '1', 'S (sleeping)', '1000\t1000\t1000\t1000', `${G}0 6553`), false],
  ];
  add(100, status('node', 1, '0\t0\t0\t0'), '/usr/bin/node'); // Warden
  for (const [, pid, text] of rows) add(pid, text, '/usr/bin/thing');
  const found = processesSharingUid(U, { procRoot: proc, self: 100, own: new Set(), gid: G });
  it.each(rows)('%s', (_what, pid, _text, counted) => {
    expect(found.some((p) => p.pid === pid)).toBe(counted);
  });
  it('names how each process holds the gid', () => {
    const holds = Object.fromEntries(found.map((p) => [p.pid, p.holds]));
    expect(holds).toEqual({ 810: ['gid'], 811: ['gid'], 812: ['gid'], 813: ['group'], 814: ['group'] });
  });
  it('without a gid to scan, only the uid counts', () => {
    expect(processesSharingUid(U, { procRoot: proc, self: 100, own: new Set() })).toEqual([]);
  });
  it.each<[string, Parameters<typeof sharedIds>[0], SharedIdsExpectation]>([
    ['uid and gid', { uids: [U, U, U, U], gids: [G, G, G, G], groups: [G] }, ['uid', 'gid', 'group']],
    ['none', { uids: [1, 1, 1, U], gids: [1, 1, 1, G], groups: [] }, []],
  ])('sharedIds: %s', (_what, ids, expected) => {
    expect(sharedIds(ids, U, G)).toEqual(expected);
  });
  it('the refusal names the gid, how it is held and the key to change', () => {
    const verdict = sharedUidVerdict({ uid: U, gid: G, staged: true }, [{ pid: 813, name: 'member', ppid: 1, holds: ['group'] }]);
    expect(verdict.ok).toBe(false);
    if (!verdict.ok) {
      expect(verdict.error).toMatch(/member \(pid 813, parent 1, gid 65533 as a supplementary group\)/);
      expect(verdict.error).toContain('Set tools.exec.sandbox.gid to an id');
      expect(verdict.error).not.toContain('tools.exec.sandbox.uid');
    }
  });
});
type SharedIdsExpectation = ReturnType<typeof sharedIds>;

describe('an orphaned sandbox', () => {
  const U = 65533;
  it.each<[string, { ppid: number; uids: number[] }, string | null, boolean]>([
    ['bubblewrap of the uid re-parented to init', { ppid: 1, uids: [U, U, U, U] }, BWRAP_PATH, true],
    ['bubblewrap of the uid with a live parent (a launch)', { ppid: 4000, uids: [U, U, U, U] }, BWRAP_PATH, false],
    ['another program of the uid re-parented to init (a daemon: refused, never killed)', { ppid: 1, uids: [U, U, U, U] }, '/usr/sbin/daemon', false],
    ['bubblewrap under init, only the effective uid the sandbox\'s', { ppid: 1, uids: [1000, U, 1000, 1000] }, BWRAP_PATH, false],
    ['bubblewrap of another uid under init', { ppid: 1, uids: [1000, 1000, 1000, 1000] }, BWRAP_PATH, false],
    ['an exe that could not be read', { ppid: 1, uids: [U, U, U, U] }, null, false],
  ])('%s', (_what, status, exe, orphan) => {
    expect(orphanedSandbox(status, exe, U)).toBe(orphan);
  });
});

describe('the verdict before a sandboxed start', () => {
  const root: SandboxIdentity = { uid: 65534, gid: 65534, staged: true };
  const daemon = [{ pid: 300, name: 'daemon' }];
  it.each<[string, SandboxIdentity, typeof daemon, RegExp | null]>([
    ['root, nobody else', root, [], null],
    ['root, a daemon of the uid', root, daemon, /sandbox uid 65534.*daemon \(pid 300, uid 65534\).*tools\.exec\.sandbox\.uid.*tools\.exec\.sandbox\.allowSharedUid/],
    ['root, accepted by the operator', { ...root, allowSharedUid: true }, daemon, null],
    ['not root: the sandbox is Warden\'s own uid', { uid: 1000, gid: 1000, staged: false }, daemon, null],
  ])('%s', (_what, identity, others, refused) => {
    const verdict = sharedUidVerdict(identity, others);
    expect(verdict.ok).toBe(refused === null);
    if (!verdict.ok && refused) expect(verdict.error).toMatch(refused);
  });
  it('names at most three processes and counts the rest', () => {
    const many = [1, 2, 3, 4, 5].map((pid) => ({ pid, name: 'd' }));
    const verdict = sharedUidVerdict(root, many);
    expect(verdict.ok ? '' : verdict.error).toContain('and 2 more');
  });
});

describe("warden doctor's line on the sandbox uid", () => {
  const root: SandboxIdentity = { uid: 65534, gid: 65534, staged: true };
  it.each<[string, SandboxIdentity, number, string[], boolean, { ok: boolean; warn: boolean; detail: RegExp }]>([
    ['free, no account', { ...root, uid: 65533, gid: 65533 }, 0, [], true, { ok: true, warn: false, detail: /uid 65533, gid 65533 \(no account in \/etc\/passwd\): no other process runs as it/ }],
    ['free now, but an account has it', root, 0, ['nobody'], true, { ok: true, warn: true, detail: /the account nobody.*may start one/ }],
    ['in use, exec uses the sandbox', root, 1, ['nobody'], true, { ok: false, warn: false, detail: /another process runs as the sandbox uid 65534/ }],
    ['in use, exec does not use the sandbox', root, 1, [], false, { ok: true, warn: true, detail: /not used/ }],
    ['in use, accepted', { ...root, allowSharedUid: true }, 1, [], true, { ok: true, warn: true, detail: /allowed by tools\.exec\.sandbox\.allowSharedUid/ }],
    ['not root', { uid: 1000, gid: 1000, staged: false }, 1, [], true, { ok: true, warn: false, detail: /Warden's own/ }],
  ])('%s', (_what, identity, count, accounts, used, expected) => {
    const report = sandboxUidReport(identity, Array.from({ length: count }, (_, i) => ({ pid: 10 + i, name: 'daemon' })), accounts, used);
    expect(report.ok).toBe(expected.ok);
    expect(report.warn === true).toBe(expected.warn);
    expect(report.detail).toMatch(expected.detail);
  });
  it('reads the accounts of a uid from /etc/passwd', () => {
    expect(passwdNames(65534, 'root:x:0:0::/root:/bin/sh\nnobody:x:65534:65534::/:/usr/sbin/nologin\nnfs:x:65534:1::/:/bin/false\n')).toEqual(['nobody', 'nfs']);
    expect(passwdNames(65533, 'nobody:x:65534:65534::/:/usr/sbin/nologin\n')).toEqual([]);
  });
});
