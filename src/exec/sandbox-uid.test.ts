import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BWRAP_PATH, type SandboxIdentity } from './sandbox.js';
import { parseProcStatus, passwdNames, processesSharingUid, sandboxUidReport, sharedUidVerdict } from './sandbox-uid.js';

const status = (name: string, ppid: number, uids: string, nspid = '1', state = 'S (sleeping)') => `Name:\t${name}\nUmask:\t0022\nState:\t${state}\nPPid:\t${ppid}\nUid:\t${uids}\nGid:\t0\t0\t0\t0\nNSpid:\t${nspid}\n`;

describe('reading /proc/<pid>/status', () => {
  it.each<[string, string, ReturnType<typeof parseProcStatus>]>([
    ['real, effective, saved, fs', status('sh', 7, '65533\t0\t0\t0'), { name: 'sh', state: 'S', ppid: 7, uids: [65533, 0, 0, 0], nsDepth: 1 }],
    ['in a nested pid namespace', status('sh', 7, '1\t1\t1\t1', '4021\t2\t1'), { name: 'sh', state: 'S', ppid: 7, uids: [1, 1, 1, 1], nsDepth: 3 }],
    ['no Uid line', 'Name:\tsh\nPPid:\t1\n', null],
    ['a Uid line that is not numbers', status('sh', 1, 'a b c d'), null],
  ])('%s', (_what, text, expected) => {
    expect(parseProcStatus(text)).toEqual(expected);
  });
});

describe('which processes share the sandbox uid', () => {
  // A /proc of files: what the scan reads (status, exe) and nothing else.
  const proc = mkdtempSync(path.join(tmpdir(), 'warden-proc-'));
  afterAll(() => rmSync(proc, { recursive: true, force: true }));
  const add = (pid: number, text: string, exe?: string) => {
    mkdirSync(path.join(proc, String(pid)));
    writeFileSync(path.join(proc, String(pid), 'status'), text);
    if (exe) symlinkSync(exe, path.join(proc, String(pid), 'exe'));
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
  mkdirSync(path.join(proc, 'self'));

  it('counts real, effective and saved uid outside the sandbox; not the sandboxes, zombies, Warden\'s launches or another Warden\'s', () => {
    const found = processesSharingUid(U, { procRoot: proc, self: 100, own: new Set([400]) }).map((p) => p.pid).sort((a, b) => a - b);
    expect(found).toEqual([300, 301, 302, 507, 600, 601, 602, 605, 606]);
  });
  it('names nothing for a uid no process has', () => {
    expect(processesSharingUid(4242, { procRoot: proc, self: 100, own: new Set() })).toEqual([]);
  });
  it('a launch Warden no longer tracks counts again', () => {
    expect(processesSharingUid(U, { procRoot: proc, self: 100, own: new Set() }).map((p) => p.pid)).toContain(400);
  });
});

describe('the verdict before a sandboxed start', () => {
  const root: SandboxIdentity = { uid: 65534, gid: 65534, staged: true };
  const daemon = [{ pid: 300, name: 'daemon' }];
  it.each<[string, SandboxIdentity, typeof daemon, RegExp | null]>([
    ['root, nobody else', root, [], null],
    ['root, a daemon of the uid', root, daemon, /sandbox uid 65534.*daemon \(pid 300\).*tools\.exec\.sandbox\.uid.*tools\.exec\.sandbox\.allowSharedUid/],
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
