import { createHash } from 'node:crypto';
import { chmodSync, closeSync, constants, fstatSync, lstatSync, mkdirSync, mkdtempSync, openSync, readlinkSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CHANGED, MAX_BOUND_FILE_BYTES, type BoundFile } from './content-binding.js';

/**
 * The bytes a decision was made on, held where the agent cannot write. A bound file is read
 * once, through one descriptor: the bytes read are hashed, compared with the hash the grant or
 * the card holds, and those same bytes are written to a private directory (outside the workspace,
 * directories 0755, files 0444 or 0555, removed when the command ends) at the file's real path
 * under it. The command then runs these copies (decide.ts `verifiedCommand`): a rewrite of the
 * workspace file after this point changes nothing the command runs. On the sandbox host the
 * directory is bound into the sandbox read-only, at the same path.
 *
 * The copies sit together as in the workspace, so what a program finds beside itself (a Python
 * module, a relative require, package.json) is the verified copy; what was not bound is not there.
 */
export interface VerifiedCopies {
  root: string;
  /** Where the command finds the verified bytes of `file` (a bound path or its real path). */
  copyOf: (file: string) => string | undefined;
  cleanup: () => void;
}

export type CopiesResult = { ok: true; copies: VerifiedCopies } | { ok: false; why: string };

export function makeVerifiedCopies(expected: readonly BoundFile[], base: string = tmpdir()): CopiesResult {
  const root = mkdtempSync(path.join(base, 'warden-verified-'));
  chmodSync(root, 0o755);
  const map = new Map<string, string>();
  const cleanup = () => rmSync(root, { recursive: true, force: true });
  for (const file of expected) {
    // Bindings come from Warden's own store; still, a copy is never written outside the directory.
    const named = [file.path, ...(file.realPath === null ? [] : [file.realPath])];
    if (named.some((p) => typeof p !== 'string' || !path.isAbsolute(p) || path.normalize(p) !== p)) {
      cleanup();
      return { ok: false, why: `the binding names a path that is not absolute and normal (${JSON.stringify(file.path)})` };
    }
    // Absent then: it must still be absent, and the command finds nothing at its place in the copy.
    const at = path.join(root, file.realPath ?? file.path);
    map.set(file.path, at);
    if (file.realPath !== null) map.set(file.realPath, at);
    const read = readVerified(file);
    if ('why' in read) {
      cleanup();
      return { ok: false, why: read.why };
    }
    if (read.bytes === null) continue;
    mkdirPrivate(root, path.dirname(at));
    writeFileSync(at, read.bytes, { mode: read.executable ? 0o555 : 0o444, flag: 'wx' });
    chmodSync(at, read.executable ? 0o555 : 0o444);
  }
  return { ok: true, copies: { root, copyOf: (f) => map.get(f), cleanup } };
}

function readVerified(file: BoundFile): { bytes: Buffer | null; executable: boolean } | { why: string } {
  let fd: number;
  try {
    // O_NONBLOCK: a FIFO put in its place never blocks the open.
    fd = openSync(file.path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && file.realPath === null && !isLink(file.path)) return { bytes: null, executable: false };
    return { why: file.realPath === null ? `${CHANGED}: ${file.path} did not exist then` : `${CHANGED}: ${file.path} cannot be read (${(err as Error).message})` };
  }
  try {
    if (file.realPath === null || file.sha256 === null) return { why: `${CHANGED}: ${file.path} did not exist then` };
    const stat = fstatSync(fd);
    if (!stat.isFile()) return { why: `${CHANGED}: ${file.path} is no longer a regular file` };
    const real = readlinkSync(`/proc/self/fd/${fd}`);
    if (real !== file.realPath) return { why: `${CHANGED}: ${file.path} now leads to ${real}, not ${file.realPath}` };
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buffer = Buffer.alloc(1024 * 1024);
      const n = readSync(fd, buffer, 0, buffer.length, null);
      if (n === 0) break;
      total += n;
      if (total > MAX_BOUND_FILE_BYTES) return { why: `${file.path} grew past the size limit` };
      chunks.push(buffer.subarray(0, n));
    }
    const bytes = Buffer.concat(chunks);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    if (sha256 !== file.sha256) return { why: `${CHANGED}: ${file.path} (sha256 ${file.sha256.slice(0, 12)}… → ${sha256.slice(0, 12)}…)` };
    return { bytes, executable: (stat.mode & 0o111) !== 0 };
  } finally {
    closeSync(fd);
  }
}

function isLink(file: string): boolean {
  try {
    return lstatSync(file).isSymbolicLink();
  } catch {
    return false;
  }
}

function mkdirPrivate(root: string, dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  // mkdir's mode is cut by the umask; the sandbox user must be able to enter every level.
  for (let d = dir; d.length > root.length; d = path.dirname(d)) chmodSync(d, 0o755);
}
