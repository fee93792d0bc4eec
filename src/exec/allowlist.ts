import { createHash } from 'node:crypto';
import path from 'node:path';
import type { BoundFile } from './content-binding.js';
import type { ResolvedExecutable } from './resolve.js';
import { exactArgvText } from '../config/arg-pattern.js';
import { compileLinearRegex } from '../util/linear-regex.js';
import { isWordSeparator } from './analysis.js';

// Pattern syntax is checked where the config is read; kept importable from here for exec's callers.
export { argPatternProblem, exactArgvText } from '../config/arg-pattern.js';

/**
 * Allowlist entries and how a segment matches one (reference A5). Pure.
 *
 * `pattern` is an executable path glob (`/usr/bin/git`, `~/bin/*`, `/opt/**`), a basename glob
 * for PATH-invoked commands (`git`), bare `*`, or `=command:<sha16>` (one exact command text,
 * written by allow-always when nothing narrower could be stored).
 *
 * `argPattern` is matched against the arguments joined by single spaces. Warden reads it as an
 * anchored glob (`status*` matches `status -s`); one starting with `^` is an OpenClaw-style
 * JavaScript regex, and one containing NUL joins the arguments with NUL (exact-argv bindings).
 * Regexes run on the linear-time engine (util/linear-regex.ts), never on V8's backtracking one:
 * the arguments are the model's. Arguments longer than a pattern's work budget never match it.
 * Only an exact-argv binding covers an argv with an empty argument (`rm -rf build/ ''`).
 */
export interface AllowlistEntry {
  id?: string | undefined;
  pattern: string;
  argPattern?: string | undefined;
  source?: 'config' | 'allow-always' | 'import' | undefined;
  /** Epoch ms after which the entry no longer counts. */
  expiresAt?: number | undefined;
  lastUsedAt?: number | undefined;
  /**
   * Config entries only: the operator trusts the repository configuration this binary runs
   * (`git`, `make`, `npm`, … see repo-config.ts). Without it such an entry asks every time.
   */
  trustRepoConfig?: boolean | undefined;
  /**
   * allow-always grants: the script files the approved command ran, by content. Undefined on
   * grants stored before content binding; they cover only commands that run no script file.
   */
  boundFiles?: readonly BoundFile[] | undefined;
}

export const COMMAND_PATTERN_PREFIX = '=command:';

export function commandHashPattern(command: string): string {
  return COMMAND_PATTERN_PREFIX + createHash('sha256').update(trimShellBlanks(command)).digest('hex').slice(0, 16);
}

/**
 * The command without leading and trailing space, tab and newline. Only the shell's blanks: a
 * trailing U+00A0 is part of the last word to sh. A loop, not `/[ \t\n]+$/`, which is quadratic
 * in a run of blanks inside the model's command.
 */
function trimShellBlanks(command: string): string {
  let start = 0;
  let end = command.length;
  while (start < end && isWordSeparator(command[start])) start++;
  while (end > start && isWordSeparator(command[end - 1])) end--;
  return command.slice(start, end);
}

export function isLive(entry: AllowlistEntry, now: number): boolean {
  return entry.expiresAt === undefined || entry.expiresAt > now;
}

/**
 * Compiled path globs, by glob. Bounded (the oldest goes first): the globs come from allowlist
 * entries, which are added and expire over a process's life, so their number is not fixed.
 */
export const globCache = new Map<string, (text: string) => boolean>();
export const GLOB_CACHE_MAX = 1024;

/**
 * Path glob: `*` = any run of non-`/` characters, `**` = anything, `?` = one non-`/` character;
 * anchored. Compiled for the linear-time engine: a glob with three `**` as a backtracking regex
 * is cubic in the length of a path the model can create.
 */
export function pathGlobMatches(glob: string, text: string): boolean {
  if (!glob.includes('*') && !glob.includes('?')) return glob === text;
  let matcher = globCache.get(glob);
  if (!matcher) {
    let source = '^';
    for (let i = 0; i < glob.length; i++) {
      const c = glob[i]!;
      if (c === '*') {
        if (glob[i + 1] === '*') {
          source += '.*';
          i++;
        } else source += '[^/]*';
      } else if (c === '?') source += '[^/]';
      else source += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
    }
    const compiled = compileLinearRegex(`${source}$`);
    matcher = compiled.ok ? (t) => compiled.regex.test(t) === true : () => false;
    if (globCache.size >= GLOB_CACHE_MAX) globCache.delete(globCache.keys().next().value!);
    globCache.set(glob, matcher);
  }
  return matcher(text);
}

/**
 * Argument glob: `*` = anything (spaces included), `?` = one character; anchored. Matched by
 * the single-backtrack wildcard walk, O(text × pattern): a regex with several `[\s\S]*` can take
 * quadratic time and more on a long argument list, and the arguments are the model's.
 */
export function argGlobMatches(glob: string, text: string): boolean {
  let g = 0;
  let t = 0;
  let star = -1;
  let resume = 0;
  while (t < text.length) {
    if (g < glob.length && (glob[g] === '?' || (glob[g] !== '*' && glob[g] === text[t]))) {
      g++;
      t++;
    } else if (g < glob.length && glob[g] === '*') {
      star = g++;
      resume = t;
    } else if (star !== -1) {
      g = star + 1;
      t = ++resume;
    } else return false;
  }
  while (glob[g] === '*') g++;
  return g === glob.length;
}

/** The exact binding of no arguments at all (what `exactArgPattern([])` writes). */
const NO_ARGS_PATTERN = '^\x00\x00$';

export function argPatternMatches(argPattern: string, args: readonly string[]): boolean {
  if (argPattern.includes('\x00')) {
    // Two empty arguments join to the no-arguments mark (`ls '' ''` is not `ls`): the mark means
    // no arguments, and no arguments meet no other NUL pattern (each argument ends in a NUL).
    if (argPattern === NO_ARGS_PATTERN) return args.length === 0;
    const joined = args.length === 0 ? '' : `${args.join('\x00')}\x00`;
    const literal = exactArgvText(argPattern);
    return literal !== undefined ? joined === literal : linearMatches(argPattern, joined);
  }
  // Joined by spaces, an empty argument leaves no trace of where it stands (`-rf build/ ''` reads
  // `-rf build/ `, `a '' b` reads `a  b`): a text pattern never covers an argv holding one. The
  // shell passes it to the program (OpenClaw's splitter drops it, so its patterns never see one).
  if (args.includes('')) return false;
  const joined = args.join(' ');
  if (argPattern.startsWith('^')) return linearMatches(argPattern, joined);
  return argGlobMatches(argPattern, joined);
}

function linearMatches(source: string, text: string): boolean {
  const compiled = compileLinearRegex(source);
  return compiled.ok && compiled.regex.test(text) === true;
}

/** Exact-argv binding for allow-always: NUL-joined, so `a b` and `a` `b` differ. */
export function exactArgPattern(args: readonly string[]): string {
  if (args.length === 0) return NO_ARGS_PATTERN;
  // One pass over the joined text rather than one per argument: NUL is not special, so escaping
  // the whole equals escaping each part (16,000 arguments: 5 ms → well under 1).
  const pattern = `^${args.join('\x00').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\x00$`;
  // Two empty arguments would spell the no-arguments mark: counted instead.
  return pattern === NO_ARGS_PATTERN ? '^\x00{2}$' : pattern;
}

export function isPathPattern(pattern: string): boolean {
  return pattern.includes('/') || pattern.includes('\\') || pattern.startsWith('~');
}

export interface MatchTarget {
  exe: ResolvedExecutable;
  /** Arguments after the executable (effective argv). */
  args: readonly string[];
  home: string;
  /** Shell `-c` payloads: only entries with an argPattern, or bare `*`, cover them. */
  requireArgPattern?: boolean;
}

export function patternMatches(pattern: string, target: MatchTarget): boolean {
  const { exe } = target;
  if (pattern.startsWith(COMMAND_PATTERN_PREFIX)) return false;
  if (pattern === '*') return exe.resolvedPath !== null;
  if (isPathPattern(pattern)) {
    const expanded = pattern === '~' || pattern.startsWith('~/') ? path.join(target.home, pattern.slice(1)) : pattern;
    const candidates = [exe.realPath, exe.resolvedPath].filter((p): p is string => p !== null);
    return candidates.some((c) => pathGlobMatches(expanded, hasWildcard(expanded) ? path.normalize(c) : c));
  }
  // A basename pattern only covers PATH-invoked commands that resolved.
  if (exe.pathQualified || exe.realPath === null) return false;
  return pathGlobMatches(pattern, exe.token);
}

const hasWildcard = (p: string): boolean => /[*?]/.test(p);

/**
 * The entry that covers a segment: the first whose pattern and argPattern both match, else the
 * first path-only match. Expired entries never match.
 */
export function findAllowlistMatch(entries: readonly AllowlistEntry[], target: MatchTarget, now: number): AllowlistEntry | null {
  let pathOnly: AllowlistEntry | null = null;
  for (const entry of entries) {
    if (!isLive(entry, now)) continue;
    if (!patternMatches(entry.pattern, target)) continue;
    if (entry.argPattern !== undefined && entry.argPattern !== '') {
      if (argPatternMatches(entry.argPattern, target.args)) return entry;
      continue;
    }
    if (target.requireArgPattern && entry.pattern !== '*') continue;
    pathOnly ??= entry;
  }
  return pathOnly;
}

/** Whether an exact-command entry (`=command:<sha16>`) covers this command text. */
export function findCommandMatch(entries: readonly AllowlistEntry[], command: string, now: number): AllowlistEntry | null {
  const wanted = commandHashPattern(command);
  return entries.find((e) => e.pattern === wanted && isLive(e, now)) ?? null;
}
