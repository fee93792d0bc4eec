/**
 * File I/O on paths the guard (`workspace.ts`) resolved, re-verifying what was actually opened.
 *
 * Between the guard's check and the open, a command running in the same workspace could swap a
 * parent directory for a symlink leading out. `O_NOFOLLOW` only protects the final segment, so
 * after every open the descriptor's real location is read back (`/proc/self/fd/N` on Linux)
 * and must be the checked canonical path; elsewhere the opened inode must match the path's.
 * Writes go to a sibling temp file (created `O_EXCL|O_NOFOLLOW`, verified the same way) and are
 * renamed over the target: a rename replaces a symlink instead of writing through it.
 *
 * Ownership: an overwritten file keeps its owner, a new file or directory gets the owner of the
 * workspace directory. That only changes anything when Warden runs as root and the workspace
 * belongs to the sandbox user (see exec/sandbox-workspace.ts): what the file tools write stays
 * writable by sandboxed commands. Changed through the verified descriptor, never by path.
 */
import { constants, type Stats } from 'node:fs';
import { lstat, mkdir, open, readlink, realpath, rename, unlink, type FileHandle } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { checkRegularFile, guardError, isInside, type GuardError, type ResolvedPath } from './workspace.js';

/** fs-safe's default read cap (reference C3): larger files are refused, not streamed. */
export const MAX_READ_BYTES = 16 * 1024 * 1024;

export type IoResult<T> = ({ ok: true } & T) | GuardError;

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_DIRECTORY } = constants;
// Not every platform defines these; 0 leaves the flag out.
const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;

const hasProcFd = process.platform === 'linux';

/** Where an open descriptor really is, or undefined when the platform cannot say. */
async function descriptorPath(fh: FileHandle): Promise<string | undefined> {
  if (!hasProcFd) return undefined;
  try {
    return await readlink(`/proc/self/fd/${fh.fd}`);
  } catch {
    return undefined;
  }
}

/** Checks that `fh` is the file at `expected` inside `root`; closes nothing. */
async function verifyDescriptor(fh: FileHandle, expected: string, root: string, rel: string, opened: Stats): Promise<GuardError | undefined> {
  const actual = await descriptorPath(fh);
  if (actual !== undefined) {
    if (actual !== expected || !isInside(root, actual)) {
      return guardError('path-mismatch', `${rel} changed while it was being opened (it now resolves outside the checked path); refused.`);
    }
    return undefined;
  }
  // Fallback: the inode at the path (resolved again) must be the one we hold.
  const [now, real] = await Promise.all([lstat(expected).catch(() => undefined), realpath(expected).catch(() => undefined)]);
  if (!now || now.ino !== opened.ino || now.dev !== opened.dev || real === undefined || !isInside(root, real)) {
    return guardError('path-mismatch', `${rel} changed while it was being opened; refused.`);
  }
  return undefined;
}

function openError(err: unknown, rel: string): GuardError {
  const code = (err as NodeJS.ErrnoException).code;
  switch (code) {
    case 'ENOENT':
      return guardError('not-found', `File not found: ${rel}`);
    case 'ELOOP':
      return guardError('symlink-escape', `${rel} became a symlink after it was checked; refused.`);
    case 'ENXIO':
      return guardError('not-file', `${rel} is a socket or device; only regular files can be used`);
    case 'EISDIR':
      return guardError('is-directory', `${rel} is a directory, not a file`);
    case 'EACCES':
    case 'EPERM':
      return guardError('invalid-path', `Permission denied: ${rel}`);
    default:
      return guardError('invalid-path', `cannot open ${rel}: ${code ?? String(err)}`);
  }
}

/**
 * Opens an existing regular file for reading and verifies it. The caller closes the handle.
 * FIFOs are opened non-blocking so a pipe without a writer cannot hang the tool.
 */
export async function openVerifiedForRead(resolved: ResolvedPath): Promise<IoResult<{ handle: FileHandle; stat: Stats }>> {
  if (resolved.stat === undefined) return guardError('not-found', `File not found: ${resolved.rel}`);
  const pre = checkRegularFile(resolved.stat, resolved.rel);
  if (pre) return pre;
  let fh: FileHandle;
  try {
    fh = await open(resolved.abs, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (err) {
    return openError(err, resolved.rel);
  }
  try {
    const st = await fh.stat();
    const refused = checkRegularFile(st, resolved.rel) ?? (await verifyDescriptor(fh, resolved.abs, resolved.root, resolved.rel, st));
    if (refused) {
      await fh.close();
      return refused;
    }
    return { ok: true, handle: fh, stat: st };
  } catch (err) {
    await fh.close();
    throw err;
  }
}

/** Reads a whole verified file, refusing files over `maxBytes`. */
export async function readVerified(resolved: ResolvedPath, maxBytes = MAX_READ_BYTES): Promise<IoResult<{ data: Buffer; stat: Stats }>> {
  const opened = await openVerifiedForRead(resolved);
  if (!opened.ok) return opened;
  try {
    if (opened.stat.size > maxBytes) {
      return guardError(
        'too-large',
        `${resolved.rel} is ${opened.stat.size} bytes, over the ${maxBytes}-byte limit for this tool.`,
      );
    }
    // Read at most maxBytes+1 so a file that grew after fstat is still caught.
    const buf = Buffer.alloc(Math.min(maxBytes + 1, opened.stat.size + 1));
    let total = 0;
    for (;;) {
      const { bytesRead } = await opened.handle.read(buf, total, buf.length - total, total);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total >= buf.length) break;
    }
    if (total > maxBytes) return guardError('too-large', `${resolved.rel} grew past the ${maxBytes}-byte limit while being read.`);
    return { ok: true, data: buf.subarray(0, total), stat: opened.stat };
  } finally {
    await opened.handle.close();
  }
}

type Owner = { uid: number; gid: number };
const runsAsRoot = () => process.getuid?.() === 0;

/** The owner new entries get: the workspace directory's, when Warden (root) may give it. */
async function ownerForNew(resolved: ResolvedPath): Promise<Owner | undefined> {
  if (!runsAsRoot()) return undefined;
  const st = await lstat(resolved.root).catch(() => undefined);
  return st && (st.uid !== 0 || st.gid !== 0) ? { uid: st.uid, gid: st.gid } : undefined;
}

/**
 * Creates the missing parent directories of `resolved` one segment at a time, checking each
 * new directory is a real directory (not a symlink planted meanwhile) inside the root.
 */
async function ensureParents(resolved: ResolvedPath, owner: Owner | undefined): Promise<GuardError | undefined> {
  const parentsToCreate = resolved.missing.slice(0, -1);
  let dir = path.join(resolved.abs, ...resolved.missing.map(() => '..'));
  for (const segment of parentsToCreate) {
    dir = path.join(dir, segment);
    try {
      await mkdir(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return openError(err, path.relative(resolved.root, dir));
    }
    const st = await lstat(dir).catch(() => undefined);
    const real = await realpath(dir).catch(() => undefined);
    if (!st || !st.isDirectory() || real !== dir || !isInside(resolved.root, real)) {
      return guardError('path-mismatch', `${path.relative(resolved.root, dir)} changed while directories were being created; refused.`);
    }
    if (owner && (st.uid !== owner.uid || st.gid !== owner.gid)) {
      const refused = await chownDirectory(dir, resolved, owner);
      if (refused) return refused;
    }
  }
  return undefined;
}

/** Gives a directory just made to the workspace's owner, through a verified descriptor. */
async function chownDirectory(dir: string, resolved: ResolvedPath, owner: Owner): Promise<GuardError | undefined> {
  let fh: FileHandle;
  try {
    fh = await open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch (err) {
    return openError(err, path.relative(resolved.root, dir));
  }
  try {
    const st = await fh.stat();
    const refused = await verifyDescriptor(fh, dir, resolved.root, path.relative(resolved.root, dir), st);
    if (refused) return refused;
    await fh.chown(owner.uid, owner.gid);
    return undefined;
  } catch (err) {
    return openError(err, path.relative(resolved.root, dir));
  } finally {
    await fh.close();
  }
}

export interface WriteOptions {
  /** Permission bits for a new file; an existing file keeps its own. */
  mode?: number;
}

/**
 * Writes `data` to `resolved` atomically (temp file + rename). The target, when it exists, must
 * pass the same checks as a read (regular file, single link). Returns the bytes written.
 */
export async function writeAtomic(resolved: ResolvedPath, data: string | Buffer, options: WriteOptions = {}): Promise<IoResult<{ bytes: number; created: boolean }>> {
  if (resolved.stat !== undefined) {
    const refused = checkRegularFile(resolved.stat, resolved.rel);
    if (refused) return refused;
  }
  const workspaceOwner = await ownerForNew(resolved);
  const parentRefused = await ensureParents(resolved, workspaceOwner);
  if (parentRefused) return parentRefused;
  // An overwritten file keeps its owner, as it keeps its mode.
  const owner = resolved.stat && runsAsRoot() ? { uid: resolved.stat.uid, gid: resolved.stat.gid } : workspaceOwner;

  const dir = path.dirname(resolved.abs);
  // Kept short so a target name near the 255-byte limit still leaves room for the suffix.
  const tmp = path.join(dir, `.${path.basename(resolved.abs).slice(0, 64)}.${randomBytes(6).toString('hex')}.tmp`);
  const mode = resolved.stat ? resolved.stat.mode & 0o7777 : (options.mode ?? 0o666);
  let fh: FileHandle;
  try {
    fh = await open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
  } catch (err) {
    return openError(err, resolved.rel);
  }
  let tmpIno: number;
  try {
    const st = await fh.stat();
    tmpIno = st.ino;
    const refused = await verifyDescriptor(fh, tmp, resolved.root, resolved.rel, st);
    if (refused) {
      await fh.close();
      await unlink(tmp).catch(() => undefined);
      return refused;
    }
    if (owner && (st.uid !== owner.uid || st.gid !== owner.gid)) await fh.chown(owner.uid, owner.gid);
    if (resolved.stat) await fh.chmod(mode);
    const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    await fh.writeFile(buf);
    await fh.datasync();
    await fh.close();
  } catch (err) {
    await fh.close().catch(() => undefined);
    await unlink(tmp).catch(() => undefined);
    return openError(err, resolved.rel);
  }
  try {
    await rename(tmp, resolved.abs);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    return openError(err, resolved.rel);
  }
  const after = await lstat(resolved.abs).catch(() => undefined);
  if (!after || after.ino !== tmpIno) {
    return guardError('path-mismatch', `${resolved.rel} changed while it was being written; check its content.`);
  }
  return { ok: true, bytes: typeof data === 'string' ? Buffer.byteLength(data) : data.length, created: resolved.stat === undefined };
}

/**
 * Removes a file. The final segment may be a symlink or a hard link (removing a name never
 * touches what it points at); directories and missing files are refused.
 */
export async function unlinkInWorkspace(resolved: ResolvedPath): Promise<IoResult<object>> {
  if (resolved.stat === undefined) return guardError('not-found', `File not found: ${resolved.rel}`);
  if (resolved.stat.isDirectory()) return guardError('is-directory', `${resolved.rel} is a directory; only files can be deleted`);
  const real = await realpath(path.dirname(resolved.abs)).catch(() => undefined);
  if (real !== path.dirname(resolved.abs)) return guardError('path-mismatch', `${resolved.rel} changed after it was checked; refused.`);
  try {
    await unlink(resolved.abs);
  } catch (err) {
    return openError(err, resolved.rel);
  }
  return { ok: true };
}
