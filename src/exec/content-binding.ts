import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import type { ResolvedExecutable } from './resolve.js';
import { scriptOperands } from './script-operands.js';

/**
 * The files an allow-always grant binds by content: the script an interpreter runs and any
 * executable outside the system directories (`./deploy.sh`, `bin/tool`). A grant holds each
 * file's path as resolved at approval (relative operands against the working directory then),
 * the target it resolved to through links, and the sha256 of its content, or null when it did
 * not exist. The grant covers a later command only when every file still resolves to the same
 * target with the same content. Reads the file system; writes nothing.
 */
export interface BoundFile {
  /** Absolute path as named (links not followed). */
  path: string;
  /** Where it led at approval; null when it did not exist. */
  realPath: string | null;
  /** sha256 (hex) of the content; null when it did not exist. */
  sha256: string | null;
}

export type Binding = { ok: true; files: BoundFile[] } | { ok: false; why: string };

/** Executables here are the system's own, read-only in the sandbox: bound by path alone. */
const SYSTEM_PREFIXES = ['/usr/', '/bin/', '/sbin/', '/lib/', '/lib32/', '/lib64/', '/libx32/'];
/** Larger files are not hashed on every command: a grant for them is not offered. */
export const MAX_BOUND_FILE_BYTES = 64 * 1024 * 1024;

export interface SegmentFilesInput {
  /** Effective argv (wrappers removed). */
  argv: readonly string[];
  exe: ResolvedExecutable | null;
  /** The directory relative operands resolve against; null when an earlier `cd` made it unknown. */
  cwd: string | null;
  home: string;
}

/** The paths one segment runs as programs, or why they cannot be told. */
export function segmentScriptPaths(input: SegmentFilesInput): { ok: true; paths: string[] } | { ok: false; why: string } {
  const paths: string[] = [];
  const { exe } = input;
  if (exe?.realPath && exe.resolvedPath && !SYSTEM_PREFIXES.some((p) => exe.realPath!.startsWith(p))) paths.push(exe.resolvedPath);
  const operands = scriptOperands(input.argv);
  if (operands.kind === 'unknown') return { ok: false, why: `cannot tell which file \`${input.argv[0]}\` runs: ${operands.why}` };
  if (operands.kind === 'files') {
    for (const operand of operands.files) {
      // An empty word names no file, yet the interpreter still runs something: `python3 ''` runs
      // the working directory's __main__.py, `node ''` and `perl ''` read their program from stdin.
      if (operand === '') return { ok: false, why: `\`${input.argv[0]}\` is given an empty script operand \`''\`, which names no file` };
      const expanded = operand === '~' || operand.startsWith('~/') ? path.join(input.home, operand.slice(1)) : operand;
      if (expanded.startsWith('~')) return { ok: false, why: `cannot resolve \`${operand}\`` };
      if (path.isAbsolute(expanded)) paths.push(path.normalize(expanded));
      else if (input.cwd === null) return { ok: false, why: `\`${operand}\` is relative to a directory an earlier \`cd\` changed` };
      else paths.push(path.resolve(input.cwd, expanded));
    }
  }
  return { ok: true, paths };
}

/** Snapshots the files: where each leads and its content hash. */
export function bindFiles(paths: readonly string[]): Binding {
  const files: BoundFile[] = [];
  for (const file of paths) {
    const snap = snapshot(file);
    if ('why' in snap) return { ok: false, why: snap.why };
    files.push(snap);
  }
  return { ok: true, files };
}

function snapshot(file: string): BoundFile | { why: string } {
  let real: string;
  try {
    real = realpathSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { path: file, realPath: null, sha256: null };
    return { why: `cannot resolve ${file}: ${(err as Error).message}` };
  }
  try {
    const stat = statSync(real);
    // Never open a FIFO or device: reading one blocks or has effects.
    if (!stat.isFile()) return { why: `${file} is not a regular file` };
    if (stat.size > MAX_BOUND_FILE_BYTES) return { why: `${file} is larger than ${MAX_BOUND_FILE_BYTES / 1024 / 1024} MiB` };
    return { path: file, realPath: real, sha256: hashFile(real) };
  } catch (err) {
    return { why: `cannot read ${file}: ${(err as Error).message}` };
  }
}

function hashFile(file: string): string {
  const hash = createHash('sha256');
  const fd = openSync(file, 'r');
  try {
    const buffer = Buffer.alloc(1024 * 1024);
    let total = 0;
    for (;;) {
      const n = readSync(fd, buffer, 0, buffer.length, null);
      if (n === 0) break;
      total += n;
      if (total > MAX_BOUND_FILE_BYTES) throw new Error('grew past the size limit while being read');
      hash.update(buffer.subarray(0, n));
    }
  } finally {
    closeSync(fd);
  }
  return hash.digest('hex');
}

/**
 * Why the files now differ from the ones approved; null when they are the same. The first
 * difference is named the way the approval card shows it.
 */
export function bindingChange(approved: readonly BoundFile[], now: readonly BoundFile[]): string | null {
  const paths = (list: readonly BoundFile[]) => list.map((f) => f.path).join('\0');
  if (paths(approved) !== paths(now)) {
    const was = approved.map((f) => f.path).join(', ') || 'no script file';
    return `the grant was approved for ${was}, this command runs ${now.map((f) => f.path).join(', ') || 'no script file'}`;
  }
  for (let i = 0; i < approved.length; i++) {
    const a = approved[i]!;
    const b = now[i]!;
    if (a.realPath !== null && b.realPath === null) return `${CHANGED}: ${a.path} no longer exists`;
    if (a.realPath === null && b.realPath !== null) return `${CHANGED}: ${a.path} did not exist then`;
    if (a.realPath !== b.realPath) return `${CHANGED}: ${a.path} now leads to ${b.realPath}, not ${a.realPath}`;
    if (a.sha256 !== b.sha256) return `${CHANGED}: ${a.path} (sha256 ${short(a.sha256)} → ${short(b.sha256)})`;
  }
  return null;
}

/** How the card and the reason say it (first, so a truncated card still says it). */
export const CHANGED = 'changed since it was approved';

const short = (hash: string | null): string => (hash === null ? 'none' : `${hash.slice(0, 12)}…`);
