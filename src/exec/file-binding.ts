import { createHash } from 'node:crypto';
import { closeSync, lstatSync, openSync, readSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';

// The binding of named files by content (see content-binding.ts), without the script analysis:
// what the approval step and the grant store need at every start.

export interface BoundFile {
  /** Absolute path as named (links not followed). */
  path: string;
  /** Where it led at approval; null when it did not exist. */
  realPath: string | null;
  /** sha256 (hex) of the content; null when it did not exist. */
  sha256: string | null;
}

export type Binding = { ok: true; files: BoundFile[] } | { ok: false; why: string };

/** Larger files are not hashed on every command: a grant for them is not offered. */
export const MAX_BOUND_FILE_BYTES = 64 * 1024 * 1024;

/**
 * The places in one argument word where a path may start: the word itself, after the first `=`
 * (`--config=./x.sh`, `FOO=./x`), after a short option's letter (`-f./Makefile`, `-c./x`),
 * after `@` (`@./args.txt`, a response file), and those combined (`--opt=@file`). Each is only a
 * candidate: argumentFilePath says whether it names a file.
 */
export function argumentPathCandidates(word: string): Array<{ prefix: string; value: string }> {
  const out: Array<{ prefix: string; value: string }> = [];
  const add = (prefix: string, value: string, depth: number) => {
    if (value === '' || out.some((c) => c.prefix === prefix)) return;
    out.push({ prefix, value });
    if (depth >= 2) return;
    const eq = value.indexOf('=');
    if (eq > 0) add(prefix + value.slice(0, eq + 1), value.slice(eq + 1), depth + 1);
    if (/^-[A-Za-z0-9]./.test(value)) add(prefix + value.slice(0, 2), value.slice(2), depth + 1);
    if (value.startsWith('@')) add(prefix + '@', value.slice(1), depth + 1);
  };
  add('', word, 0);
  return out;
}

const MAX_PATH = 4096;
const URL_LIKE = /^[a-z][a-z0-9+.-]*:/i;
/** A word that reads as a path even when nothing is there yet: creating it later must ask. */
const PATH_LIKE = /[/\\]|^\.|^~|\.[A-Za-z0-9]{1,10}$/;

/**
 * The absolute path an argument (or a part of one) names as a file: an existing regular file
 * (links followed), or a path-like word where nothing exists yet (bound as absent, so creating
 * it asks). Directories, URLs, option spellings and plain words are not files. `unknown-cwd`: a
 * relative path, but the directory it is relative to is not known.
 */
export function argumentFilePath(value: string, base: string | null, home: string | undefined): string | 'unknown-cwd' | undefined {
  const text = value.trim();
  if (text === '' || text.length > MAX_PATH || text.startsWith('-') || /[\0\r\n]/.test(text) || (URL_LIKE.test(text) && !/^[A-Za-z]:[\\/]/.test(text))) return undefined;
  let expanded = text;
  if (text === '~' || text.startsWith('~/')) {
    if (home === undefined) return undefined;
    expanded = path.join(home, text.slice(1));
  }
  if (!path.isAbsolute(expanded) && base === null) return PATH_LIKE.test(text) ? 'unknown-cwd' : undefined;
  const absolute = path.isAbsolute(expanded) ? path.normalize(expanded) : path.resolve(base!, expanded);
  let kind: 'file' | 'other' | 'absent';
  try {
    const stat = lstatSync(absolute);
    // A link is followed by the binding (its target is what is hashed); anything else but a file is not content.
    kind = stat.isFile() ? 'file' : stat.isSymbolicLink() ? linkKind(absolute) : 'other';
  } catch {
    kind = 'absent';
  }
  if (kind === 'other') return undefined;
  // Nothing there: only a word that reads as one path (a shell payload or a sentence is not one).
  if (kind === 'absent' && (!PATH_LIKE.test(text) || /\s/.test(text) || text.endsWith('/'))) return undefined;
  return absolute;
}

function linkKind(link: string): 'file' | 'other' | 'absent' {
  try {
    return statSync(link).isFile() ? 'file' : 'other';
  } catch {
    return 'absent';
  }
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

