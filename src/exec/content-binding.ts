import { createHash } from 'node:crypto';
import { closeSync, lstatSync, openSync, readSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import type { ResolvedExecutable } from './resolve.js';
import { executableLanguage, operandLanguage, scriptLoads } from './script-loads.js';
import { scriptOperandSites } from './script-operands.js';

/**
 * The files an allow-always grant (and an approval card) binds by content: the script an
 * interpreter runs, any executable outside the system directories (`./deploy.sh`, `bin/tool`),
 * what those load from outside the system directories (script-loads.ts: a Python script's
 * modules beside it, a Node script's relative requires and package.json), and every file an
 * argument names, also inside a longer word (`--config=./x.sh`, `-f./Makefile`, `@./args.txt`;
 * see argumentPathCandidates). A program that may load what the scan cannot follow is not
 * bindable. A grant holds each
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

/** A script operand's place in the argv and the absolute path it names. */
export interface ProgramSite {
  index: number;
  prefix: string;
  path: string;
}

export type SegmentFiles =
  | {
      ok: true;
      /** Every path bound, in a stable order (programs, their loads, argument files), without repeats. */
      paths: string[];
      /** The script operands: run from the verified copy, put at exactly these places. */
      sites: ProgramSite[];
      /** The executable, when it is a file outside the system directories (run from the verified copy too). */
      exe: string | null;
    }
  | { ok: false; why: string };

/** The files one segment binds, or why they cannot be told. */
export function segmentScriptPaths(input: SegmentFilesInput): SegmentFiles {
  const { exe } = input;
  const programExe = exe?.realPath && exe.resolvedPath && !isSystemPath(exe.realPath) ? exe.resolvedPath : null;
  const found = scriptOperandSites(input.argv);
  if (found.kind === 'unknown') return { ok: false, why: `cannot tell which file \`${input.argv[0]}\` runs: ${found.why}` };
  const sites: ProgramSite[] = [];
  for (const site of found.kind === 'files' ? found.sites : []) {
    // An empty word names no file, yet the interpreter still runs something: `python3 ''` runs
    // the working directory's __main__.py, `node ''` and `perl ''` read their program from stdin.
    if (site.value === '') return { ok: false, why: `\`${input.argv[0]}\` is given an empty script operand \`''\`, which names no file` };
    const resolved = resolveOperand(site.value, input.cwd, input.home);
    if (typeof resolved !== 'string') return resolved;
    sites.push({ index: site.index, prefix: site.prefix, path: resolved });
  }
  const paths = new Set<string>();
  const loads = (file: string, language: ReturnType<typeof operandLanguage>, argv: readonly string[] | null): string | null => {
    paths.add(file);
    const loaded = scriptLoads(file, language, argv);
    if (!loaded.ok) return loaded.why;
    for (const f of loaded.files) paths.add(f);
    return null;
  };
  if (programExe) {
    const head = readHead(programExe);
    const why = head === null ? (paths.add(programExe), null) : loads(programExe, executableLanguage(head), null);
    if (why) return { ok: false, why };
  }
  for (const site of sites) {
    const why = loads(site.path, operandLanguage(input.argv[0]!), input.argv);
    if (why) return { ok: false, why };
  }
  // Argument files: a path inside a longer word (`--config=./x.sh`, `-f./Makefile`, `@args.txt`)
  // for every program; the plain words too for a program bound by content, whose arguments
  // are its own inputs (`./deploy.sh prod.env`). A system program's plain operands are its data.
  const plainToo = programExe !== null || sites.length > 0;
  for (let k = 1; k < input.argv.length; k++) {
    for (const candidate of argumentPathCandidates(input.argv[k]!)) {
      if (candidate.prefix === '' && !plainToo) continue;
      const file = argumentFilePath(candidate.value, input.cwd, input.home);
      if (file === 'unknown-cwd') return { ok: false, why: `\`${input.argv[k]}\` names a path relative to a directory an earlier \`cd\` changed` };
      if (file !== undefined && !isSystemPath(file)) paths.add(file);
    }
  }
  return { ok: true, paths: [...paths], sites, exe: programExe };
}

function resolveOperand(operand: string, cwd: string | null, home: string): string | { ok: false; why: string } {
  const expanded = operand === '~' || operand.startsWith('~/') ? path.join(home, operand.slice(1)) : operand;
  if (expanded.startsWith('~')) return { ok: false, why: `cannot resolve \`${operand}\`` };
  if (path.isAbsolute(expanded)) return path.normalize(expanded);
  if (cwd === null) return { ok: false, why: `\`${operand}\` is relative to a directory an earlier \`cd\` changed` };
  return path.resolve(cwd, expanded);
}

/** Files the system owns: read-only in the sandbox, the operator's on the gateway host. */
function isSystemPath(file: string): boolean {
  return SYSTEM_PREFIXES.some((p) => file.startsWith(p)) || /^\/(etc|dev|proc|sys)(\/|$)/.test(file);
}

function readHead(file: string): Buffer | null {
  try {
    if (!statSync(file).isFile()) return null;
    const fd = openSync(file, 'r');
    try {
      const buffer = Buffer.alloc(256);
      return buffer.subarray(0, readSync(fd, buffer, 0, 256, 0));
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
}

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
