import { constants, type Stats } from 'node:fs';
import { chown, open, readdir, realpath, stat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { ownIds, type ProcessIds } from './sandbox.js';

/**
 * The workspace belongs to the sandbox user. When Warden runs as root the sandbox runs as
 * another uid (SandboxIdentity), which can write only what it owns; so before the first
 * sandboxed command Warden hands the workspace over: the workspace directory and every
 * directory and regular file in it that Warden's own uid owns get the sandbox uid/gid.
 *
 * The walk runs as root inside a directory the sandbox (and any other process of that uid) can
 * change while it runs, so it never resolves a path twice: every entry is opened relative to
 * its parent's descriptor (`/proc/self/fd/N/name`, O_PATH|O_NOFOLLOW), inspected with fstat
 * and changed through its own descriptor. Symlinks, devices, FIFOs and sockets are left alone,
 * and so are files with more than one link (a hard link may be a file outside the workspace),
 * file systems mounted inside, files of other users, and Warden's own state.
 */

const O_PATH = 0o10000000;
const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = constants;

export interface HandOver {
  /** Entries whose owner changed. */
  changed: number;
  /** Entries left alone on purpose (links, special files, hard-linked files, other mounts, protected). */
  skipped: number;
}

export type HandOverResult = ({ ok: true } & HandOver) | { ok: false; error: string };

export interface HandOverOptions {
  /** Paths never changed or entered (Warden's data dir, config, `.env` when they sit inside). */
  skip?: readonly string[];
  /** Warden's ids (whose files are handed over); default the process's. */
  own?: ProcessIds;
}

const fdPath = (fh: FileHandle, name?: string) => (name === undefined ? `/proc/self/fd/${fh.fd}` : `/proc/self/fd/${fh.fd}/${name}`);

export async function handOverWorkspace(workspace: string, to: ProcessIds, options: HandOverOptions = {}): Promise<HandOverResult> {
  const own = options.own ?? ownIds();
  const skip = new Set<string>();
  for (const p of options.skip ?? []) {
    const st = await stat(p).catch(() => undefined);
    if (st) skip.add(`${st.dev}:${st.ino}`);
  }
  const counts: HandOver = { changed: 0, skipped: 0 };
  let root: FileHandle;
  try {
    root = await open(await realpath(workspace), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch (err) {
    return { ok: false, error: `cannot open the workspace ${workspace}: ${(err as NodeJS.ErrnoException).code ?? String(err)}` };
  }
  try {
    const st = await root.stat();
    await give(root, st, to, own, counts);
    await walk(root, st.dev, to, own, skip, counts);
    return { ok: true, ...counts };
  } catch (err) {
    return { ok: false, error: `cannot hand the workspace ${workspace} to uid ${to.uid}: ${(err as Error).message}` };
  } finally {
    await root.close();
  }
}

async function give(fh: FileHandle, st: Stats, to: ProcessIds, own: ProcessIds, counts: HandOver): Promise<void> {
  if (st.uid !== own.uid || (st.uid === to.uid && st.gid === to.gid)) return;
  // chown through the descriptor's magic link: the inode held, whatever the path now names.
  await chown(fdPath(fh), to.uid, to.gid);
  counts.changed++;
}

async function walk(dir: FileHandle, dev: number, to: ProcessIds, own: ProcessIds, skip: ReadonlySet<string>, counts: HandOver): Promise<void> {
  for (const name of await readdir(fdPath(dir))) {
    let entry: FileHandle;
    try {
      entry = await open(fdPath(dir, name), O_PATH | O_NOFOLLOW);
    } catch {
      // Gone meanwhile.
      continue;
    }
    try {
      const st = await entry.stat();
      const usable = st.isDirectory() || (st.isFile() && st.nlink === 1);
      // A directory on another device is a mount point. (Files are not checked: overlayfs may
      // report the device of the layer a file comes from.)
      if (!usable || (st.isDirectory() && st.dev !== dev) || skip.has(`${st.dev}:${st.ino}`)) {
        counts.skipped++;
        continue;
      }
      await give(entry, st, to, own, counts);
      if (!st.isDirectory()) continue;
      // Reopened through the held descriptor, so it is the same directory.
      const sub = await open(fdPath(entry), O_RDONLY | O_DIRECTORY);
      try {
        await walk(sub, dev, to, own, skip, counts);
      } finally {
        await sub.close();
      }
    } finally {
      await entry.close();
    }
  }
}

const handedOver = new Map<string, { result: Promise<HandOverResult>; settled: boolean }>();

/**
 * Hands a workspace to the sandbox uid once per process (a failure is retried next time, and
 * so is a workspace whose directory no longer belongs to the sandbox uid: removed and made
 * again). Nothing to do when the sandbox runs as Warden's own uid.
 */
export async function ensureSandboxWorkspace(workspace: string, to: ProcessIds, options: HandOverOptions = {}): Promise<HandOverResult> {
  const own = options.own ?? ownIds();
  if (to.uid === own.uid) return { ok: true, changed: 0, skipped: 0 };
  const key = `${path.resolve(workspace)}\0${to.uid}:${to.gid}`;
  let entry = handedOver.get(key);
  if (entry?.settled) {
    const now = await stat(workspace).catch(() => undefined);
    if (now && (now.uid !== to.uid || now.gid !== to.gid)) entry = undefined;
  }
  if (!entry) {
    const created: { result: Promise<HandOverResult>; settled: boolean } = {
      settled: false,
      result: handOverWorkspace(workspace, to, options).then((result) => {
        created.settled = true;
        if (!result.ok) handedOver.delete(key);
        return result;
      }),
    };
    entry = created;
    handedOver.set(key, created);
  }
  return entry.result;
}
