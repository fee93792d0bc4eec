/**
 * The workspace path guard: turns a path the model gave into a canonical path inside the agent
 * workspace, or a refusal the model can read.
 *
 * Rules (reference part C2/C3, fail closed):
 * - Relative paths resolve against the workspace; `~` expands to the home directory (and so
 *   lands outside); a leading `@` and Unicode spaces are normalised as OpenClaw does.
 * - Lexically the path must stay inside the workspace: `..` escapes and absolute paths outside
 *   are refused before the disk is touched.
 * - Every existing segment is walked with `lstat`. A symlink is followed only when its full
 *   target stays inside the workspace's real path; a symlink leading out (file or directory)
 *   is refused, and so is a dangling one (its target cannot be checked).
 * - Missing tail segments are appended lexically (for writes that create them).
 *
 * The answer is a canonical path with no symlink left in it *at check time*. The openers in
 * `workspace-io.ts` re-verify what they actually opened, so a swap after this check (a parent
 * directory replaced by a symlink) is caught there.
 */
import { lstat, realpath, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export type GuardErrorCode =
  | 'invalid-path'
  | 'outside-workspace'
  | 'symlink-escape'
  | 'dangling-symlink'
  | 'hardlink'
  | 'not-file'
  | 'is-directory'
  | 'not-found'
  | 'too-large'
  | 'path-mismatch'
  | 'workspace-missing';

/** A refusal: a stable code for callers and tests, a message written for the model. */
export interface GuardError {
  ok: false;
  code: GuardErrorCode;
  message: string;
}

export interface ResolvedPath {
  ok: true;
  /** Real path of the workspace root. */
  root: string;
  /** Canonical absolute path (in-workspace symlinks resolved, missing tail appended). */
  abs: string;
  /** Workspace-relative POSIX path, what results show the model (`.` for the root). */
  rel: string;
  /** `lstat` of the canonical path when it exists (never a symlink unless `keepFinalLink`). */
  stat: Stats | undefined;
  /** Segments at the end that do not exist yet (a write creates them). */
  missing: string[];
}

export type Resolution = ResolvedPath | GuardError;

export interface ResolveOptions {
  /**
   * Do not follow a symlink in the final segment (for unlink: removing a link is harmless
   * wherever it points). Parent segments are always resolved and checked.
   */
  keepFinalLink?: boolean;
}

/** Unicode spaces OpenClaw folds to ASCII space before resolving (reference C2.1). */
const UNICODE_SPACES = /[\u00A0\u2000-\u200A\u202F\u205F\u3000]/g;
const MAX_SYMLINK_HOPS = 40;

export function guardError(code: GuardErrorCode, message: string): GuardError {
  return { ok: false, code, message };
}

/** Normalises the model's spelling of a path (no disk access). */
export function normalizePathInput(input: string): string {
  let p = input.replace(UNICODE_SPACES, ' ');
  if (p.startsWith('@')) p = p.slice(1);
  if (p === '~') return os.homedir();
  if (p.startsWith('~/')) return path.join(os.homedir(), p.slice(2));
  return p;
}

/** Whether `candidate` is `root` or below it (both absolute, normalised). */
export function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel === '' || (!rel.startsWith('..' + path.sep) && rel !== '..' && !path.isAbsolute(rel));
}

function toPosixRel(root: string, abs: string): string {
  const rel = path.relative(root, abs);
  return rel === '' ? '.' : rel.split(path.sep).join('/');
}

/**
 * Resolves `input` inside `workspaceDir`. Never throws for bad input; I/O errors other than
 * "missing" become refusals too, because a path the guard cannot inspect is not safe.
 */
export async function resolveWorkspacePath(workspaceDir: string, input: string, options: ResolveOptions = {}): Promise<Resolution> {
  if (typeof input !== 'string' || input.trim() === '') return guardError('invalid-path', 'path is empty');
  if (input.includes('\0')) return guardError('invalid-path', 'path contains a NUL byte');

  const lexicalRoot = path.resolve(workspaceDir);
  let root: string;
  try {
    root = await realpath(lexicalRoot);
  } catch {
    return guardError('workspace-missing', 'the agent workspace does not exist yet; nothing can be read from it');
  }

  const requested = normalizePathInput(input);
  const abs = path.resolve(lexicalRoot, requested);
  // An absolute path may spell the root either way (as configured or as its real path).
  const base = isInside(lexicalRoot, abs) ? lexicalRoot : isInside(root, abs) ? root : undefined;
  if (base === undefined) {
    return guardError(
      'outside-workspace',
      `Path escapes the workspace: ${input}. Only paths inside the agent workspace can be used; give a path relative to it (use tmp/ inside the workspace for scratch files).`,
    );
  }

  const segments = path.relative(base, abs).split(path.sep).filter((s) => s !== '');
  return walk(root, segments, input, options);
}

async function walk(root: string, segments: string[], input: string, options: ResolveOptions): Promise<Resolution> {
  let cursor = root;
  let hops = 0;
  for (let i = 0; i < segments.length; i++) {
    const next = path.join(cursor, segments[i]!);
    const isLast = i === segments.length - 1;
    let st: Stats;
    try {
      st = await lstat(next);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') {
        const missing = segments.slice(i);
        return { ok: true, root, abs: path.join(cursor, ...missing), rel: toPosixRel(root, path.join(cursor, ...missing)), stat: undefined, missing };
      }
      if (code === 'ENOTDIR') return guardError('invalid-path', `${toPosixRel(root, cursor)} is not a directory (in ${input})`);
      return guardError('invalid-path', `cannot inspect ${toPosixRel(root, next)}: ${code ?? String(err)}`);
    }

    if (st.isSymbolicLink()) {
      if (isLast && options.keepFinalLink) return { ok: true, root, abs: next, rel: toPosixRel(root, next), stat: st, missing: [] };
      if (++hops > MAX_SYMLINK_HOPS) return guardError('invalid-path', `too many symlinks in ${input}`);
      let target: string;
      try {
        target = await realpath(next);
      } catch {
        return guardError(
          'dangling-symlink',
          `${toPosixRel(root, next)} is a symlink whose target does not exist; refusing because its destination cannot be checked (in ${input}).`,
        );
      }
      if (!isInside(root, target)) {
        return guardError('symlink-escape', `Symlink escapes the workspace: ${toPosixRel(root, next)} points outside the agent workspace (in ${input}).`);
      }
      cursor = target;
      if (isLast) {
        // realpath resolved the whole chain; describe what it points at.
        const targetStat = await stat(target).catch(() => undefined);
        return { ok: true, root, abs: target, rel: toPosixRel(root, target), stat: targetStat, missing: [] };
      }
      continue;
    }

    if (!isLast && !st.isDirectory()) return guardError('invalid-path', `${toPosixRel(root, next)} is not a directory (in ${input})`);
    cursor = next;
    if (isLast) return { ok: true, root, abs: cursor, rel: toPosixRel(root, cursor), stat: st, missing: [] };
  }
  // No segments: the workspace root itself.
  const st = await lstat(root);
  return { ok: true, root, abs: root, rel: '.', stat: st, missing: [] };
}

/** Describes a non-regular file for an error message. */
export function describeKind(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSymbolicLink()) return 'a symlink';
  return 'not a regular file';
}

/**
 * The checks every operation on an existing file shares: it is a regular file, and it has one
 * link only. A second hard link may live anywhere on the same filesystem (outside the
 * workspace, e.g. made by a command), and nothing tells us where; reading or rewriting it
 * would reach that outside file, so any link count above one is refused (reference C2.4).
 */
export function checkRegularFile(st: Stats, rel: string): GuardError | undefined {
  if (st.isDirectory()) return guardError('is-directory', `${rel} is a directory, not a file`);
  if (!st.isFile()) return guardError('not-file', `${rel} is ${describeKind(st)}; only regular files can be used`);
  if (st.nlink > 1) {
    return guardError(
      'hardlink',
      `${rel} is a hard link (${st.nlink} links); hard-linked files are refused because their other links may be outside the workspace. Copy the file to a new name if you need its content.`,
    );
  }
  return undefined;
}
