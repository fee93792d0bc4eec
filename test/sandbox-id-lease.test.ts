import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BLOCK, leaseSandboxId, runUid } from './sandbox-id-lease.js';

/** A pid no process has: beyond the kernel's largest (4194304). */
const GONE = 4_194_305;

describe('a test run\'s own sandbox id', () => {
  it('two runs at once get two ids, each locked under its pid, and a release frees it', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-id-lease-'));
    const a = leaseSandboxId(dir, process.pid);
    const b = leaseSandboxId(dir, process.pid);
    expect(a.id).not.toBe(b.id);
    for (const { id } of [a, b]) {
      expect(id).toBeGreaterThanOrEqual(65000);
      expect(id + BLOCK - 1).toBeLessThan(65500);
      expect((id - 65000) % BLOCK).toBe(0);
      expect(readFileSync(path.join(dir, `warden-test-sandbox-${id}.lock`), 'utf8')).toBe(String(process.pid));
    }
    a.release();
    expect(existsSync(path.join(dir, `warden-test-sandbox-${a.id}.lock`))).toBe(false);
    b.release();
  });

  it('a lock left by a run that is gone is taken over; one held by a live run is not', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-id-lease-'));
    const first = 65000 + (process.pid % 31) * BLOCK;
    writeFileSync(path.join(dir, `warden-test-sandbox-${first}.lock`), String(GONE));
    const taken = leaseSandboxId(dir, process.pid);
    expect(taken.id).toBe(first);
    const next = leaseSandboxId(dir, process.pid);
    expect(next.id).not.toBe(first);
    taken.release();
    next.release();
  });
});

describe('a test\'s own uid within the run\'s block', () => {
  it('slot n is the run\'s sandbox id + n; slot 0 and slots past the block are refused', () => {
    const base = Number(process.env.WARDEN_SANDBOX_ID);
    expect(runUid(1)).toBe(base + 1);
    expect(runUid(15)).toBe(base + 15);
    expect(() => runUid(0)).toThrow(/outside 1–15/);
    expect(() => runUid(16)).toThrow(/outside 1–15/);
  });
});
