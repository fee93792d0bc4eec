import { spawn } from 'node:child_process';
import { chmodSync, chownSync, closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { sandboxNode, type SandboxIdentity } from '../../src/exec/sandbox.js';
import { canSandbox, isRoot } from './sandbox-harness.js';
import { runUid } from '../sandbox-id-lease.js';

/**
 * A sandboxed command sees descriptors 0, 1 and 2, and nothing else of Warden's or of the
 * programs that launch it. The "Warden" is a real child process holding what a real one may
 * hold: descriptors it inherited without close-on-exec (a file with a secret, a directory, pipes
 * and a socketpair to its starter, at numbers low and high) and ones it opened itself (SQLite
 * with its WAL, a log file, listening unix and TCP sockets). Inside the sandbox, as the attacker,
 * perl lists /proc/self/fd and then tries to read and write every descriptor number 3..1023.
 */
const here = path.dirname(fileURLToPath(import.meta.url));
const SECRET = 'inherited-secret-7f3a';

// Only double quotes inside: the script runs under /bin/sh -c.
const PROBE = `perl -e '
  my @open; for my $fd (0..1023) { my $l = readlink("/proc/self/fd/$fd"); push @open, $fd if defined $l }
  print "OPEN ", join(",", @open), "\\n";
  my @hit;
  for my $fd (3..1023) {
    my $h; open($h, "+<&=", $fd) or open($h, ">&=", $fd) or open($h, "<&=", $fd) or next;
    my $w = syswrite($h, "x");
    my $rin = ""; vec($rin, $fd, 1) = 1;
    my $r = select(my $rout = $rin, undef, undef, 0) > 0 ? sysread($h, my $buf, 64) : undef;
    push @hit, "$fd:" . (defined $w ? "w" : "-") . (defined $r ? "r=$buf" : "-");
  }
  print "REACHED ", join(",", @hit), "\\n";
'`;

/**
 * Descriptor number in the fake Warden → what it inherited there. Above the low numbers: Node
 * itself sets close-on-exec on the descriptors it finds just above stdio when it starts (checked
 * by the first test, which would fail if these were not held open for every child).
 */
const INHERITED = { 64: 'directory', 100: 'secret file (read-write)', 200: 'secret file (read-only)', 251: 'pipe to its starter', 1000: 'socketpair to its starter' } as const;

const OWN_UID = runUid(12); // a uid of this file's own: other files' sandboxes never count against it
const staged: SandboxIdentity = { uid: OWN_UID, gid: OWN_UID, staged: true };
const direct: SandboxIdentity = { uid: OWN_UID, gid: OWN_UID, staged: false, spawnAs: { uid: OWN_UID, gid: OWN_UID } };
const node = sandboxNode();

describe.skipIf(!canSandbox || !isRoot)('a sandboxed command sees only its own descriptors', () => {
  const root = mkdtempSync('/tmp/warden-sec-fds-');
  chmodSync(root, 0o755);
  const workspace = path.join(root, 'workspace');
  mkdirSync(workspace);
  chownSync(workspace, OWN_UID, OWN_UID);
  const secretFile = path.join(root, 'secret');
  writeFileSync(secretFile, SECRET, { mode: 0o600 });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  // Egress needs no live proxy here: the forwarder starts, the command never connects.
  const egress = node ? { socket: path.join(root, 'no-proxy.sock'), node } : undefined;
  const configs = [
    { name: 'Warden as root (staged), no network', identity: staged },
    { name: 'an unprivileged Warden (bubblewrap started as the uid), no network', identity: direct },
    ...(egress
      ? [
          { name: 'Warden as root (staged), egress through the proxy', identity: staged, egress },
          { name: 'an unprivileged Warden, egress through the proxy', identity: direct, egress },
        ]
      : []),
  ];

  type Result = { exitCode?: number; output?: string; error?: string; held?: number[] };
  const results = new Promise<Map<string, Result>>((resolve, reject) => {
    const rw = openSync(secretFile, 'r+');
    const ro = openSync(secretFile, 'r');
    const dir = openSync(root, 'r');
    const stdio: Array<'ignore' | 'pipe' | 'inherit' | number> = Array.from({ length: 1001 }, () => 'ignore');
    stdio[1] = 'pipe';
    stdio[2] = 'inherit';
    stdio[64] = dir;
    stdio[100] = rw;
    stdio[200] = ro;
    stdio[251] = 'pipe';
    stdio[1000] = 'pipe';
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'sandbox-descriptors.fixture.ts'), workspace, JSON.stringify(configs), PROBE], { stdio });
    for (const fd of [rw, ro, dir]) closeSync(fd);
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += String(d)));
    child.on('error', reject);
    child.on('exit', (code) => {
      const map = new Map<string, Result>();
      for (const line of out.split('\n')) {
        if (!line.startsWith('{')) continue;
        const r = JSON.parse(line) as Result & { name: string };
        map.set(r.name, r);
      }
      if (map.size === 0) reject(new Error(`fixture exited ${code} with nothing: ${out}`));
      else resolve(map);
    });
  });

  it('the fake Warden really holds the inherited descriptors without close-on-exec (else the rest proves nothing)', async () => {
    const held = (await results).get('held')?.held ?? [];
    expect(held).toEqual(expect.arrayContaining(Object.keys(INHERITED).map(Number)));
  }, 120_000);

  it.each(configs.map((c) => [c.name] as const))('%s: /proc/self/fd lists 0, 1, 2 only; no descriptor 3..1023 can be read or written', async (name) => {
    const r = (await results).get(name);
    expect(r?.error).toBeUndefined();
    expect(r?.exitCode).toBe(0);
    const output = r?.output ?? '';
    expect(output).toMatch(/^OPEN 0,1,2$/m);
    expect(output).toMatch(/^REACHED $/m);
    expect(output).not.toContain(SECRET);
  }, 120_000);
});
