// Each test run's own sandbox id. Two suites on one host (a developer's run beside CI's, or
// scripts/test-beside.sh) would otherwise both start sandboxes as 65533: each would then see the
// other's bubblewrap as a stranger holding its sandbox uid and refuse to start (as it must: see
// src/exec/sandbox-uid.ts), or sweep the other's deliberately orphaned sandboxes as its own.
//
// A run leases a block of 16 ids from the range Debian reserves and never allocates (65000–65495),
// none of which an account or a process holds, by a lock file in the shared temp folder that
// names the run's pid; a lock whose pid is gone is taken over. The block's first id is the run's
// sandbox id, handed to every process the run starts through WARDEN_SANDBOX_ID; the others are
// for the tests that need a uid of their own (a planted stranger, a sandbox left to die):
// `runUid(slot)`, so those do not meet another run's either.
import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { passwdNames, processesSharingUid } from '../src/exec/sandbox-uid.js';

const FIRST = 65000;
export const BLOCK = 16;
const BLOCKS = 31;

export interface SandboxIdLease {
  /** The run's sandbox id, the block's first. */
  id: number;
  release: () => void;
}

export function leaseSandboxId(lockDir: string, pid: number = process.pid): SandboxIdLease {
  const passwd = readOr('/etc/passwd');
  const group = readOr('/etc/group');
  for (let i = 0; i < BLOCKS; i++) {
    // Start where this pid points, so runs started together rarely race for the same file.
    const base = FIRST + ((pid + i) % BLOCKS) * BLOCK;
    const ids = Array.from({ length: BLOCK }, (_, k) => base + k);
    if (ids.some((id) => passwdNames(id, passwd).length > 0 || passwdNames(id, group).length > 0)) continue;
    const lock = path.join(lockDir, `warden-test-sandbox-${base}.lock`);
    if (!take(lock, pid)) continue;
    // Only after the lock: a run that took it first has its sandboxes running by now.
    if (ids.some((id) => processesSharingUid(id, { gid: id }).length > 0)) {
      rmSync(lock, { force: true });
      continue;
    }
    return { id: base, release: () => rmSync(lock, { force: true }) };
  }
  throw new Error(`no free block of test sandbox ids in ${FIRST}–${FIRST + BLOCKS * BLOCK - 1}: remove stale ${path.join(lockDir, 'warden-test-sandbox-*.lock')} files`);
}

/** The run's id number `slot` (1–15) for a test that needs a uid no other test or run uses. */
export function runUid(slot: number): number {
  const base = Number(process.env.WARDEN_SANDBOX_ID);
  if (!Number.isInteger(slot) || slot < 1 || slot >= BLOCK) throw new Error(`runUid: slot ${slot} is outside 1–${BLOCK - 1}`);
  if (!(base >= FIRST && base < FIRST + BLOCKS * BLOCK && (base - FIRST) % BLOCK === 0)) throw new Error('runUid: WARDEN_SANDBOX_ID is not a leased block (the test setup sets it)');
  return base + slot;
}

/** Creates `lock` naming `pid`; a lock left by a process that is gone is taken over. */
function take(lock: string, pid: number): boolean {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lock, 'wx', 0o644);
      writeSync(fd, String(pid));
      closeSync(fd);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(readOr(lock).trim());
      if (Number.isInteger(holder) && holder > 0 && alive(holder)) return false;
      rmSync(lock, { force: true });
    }
  }
  return false;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readOr(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}
