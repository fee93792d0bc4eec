import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * Where a command token leads (reference A5 "resolution"). Reads the file system but changes
 * nothing. A token with a path separator or `~` resolves against cwd/home; a bare token is
 * looked up in the given PATH directories, never in the process's own PATH.
 */
export interface ResolvedExecutable {
  /** The token as written. */
  token: string;
  /** Whether the token named a path (contains `/` or `\`, or starts with `~`). */
  pathQualified: boolean;
  /** Absolute path the token resolves to; for a bare token, only when found in PATH. */
  resolvedPath: string | null;
  /** realpath of resolvedPath when it is an executable regular file. */
  realPath: string | null;
}

export interface ResolveEnv {
  cwd: string;
  pathDirs: readonly string[];
  home: string;
}

/** The PATH commands see and resolve against: system directories only. */
export const DEFAULT_PATH_DIRS: readonly string[] = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];

export function isPathQualified(token: string): boolean {
  return token.includes('/') || token.includes('\\') || token.startsWith('~');
}

export function resolveExecutable(token: string, env: ResolveEnv): ResolvedExecutable {
  // `'' ls`: the shell finds no command named by an empty word (never a PATH directory itself).
  if (token === '') return { token, pathQualified: false, resolvedPath: null, realPath: null };
  if (isPathQualified(token)) {
    const expanded = token === '~' || token.startsWith('~/') ? path.join(env.home, token.slice(1)) : token;
    // `~user/…` is not expanded by the analysis; treat it as unresolvable.
    if (expanded.startsWith('~')) return { token, pathQualified: true, resolvedPath: null, realPath: null };
    const resolvedPath = path.resolve(env.cwd, expanded);
    return { token, pathQualified: true, resolvedPath, realPath: executableRealPath(resolvedPath) };
  }
  for (const dir of env.pathDirs) {
    if (!path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, token);
    const real = executableRealPath(candidate);
    if (real) return { token, pathQualified: false, resolvedPath: candidate, realPath: real };
  }
  return { token, pathQualified: false, resolvedPath: null, realPath: null };
}

/** realpath of an executable regular file, else null. */
export function executableRealPath(file: string): string | null {
  try {
    // A missing file is the common answer (each PATH directory a program is not in): asked without
    // an exception, which costs more than the lookup. stat follows links, as realpath does.
    const stat = statSync(file, { throwIfNoEntry: false });
    if (!stat?.isFile()) return null;
    const real = realpathSync.native(file);
    if (!statSync(real).isFile()) return null;
    accessSync(real, constants.X_OK);
    return real;
  } catch {
    return null;
  }
}

/** Lower-cased basename with Windows executable suffixes removed: how wrappers and bins are named. */
export function commandName(token: string): string {
  const base = token.slice(Math.max(token.lastIndexOf('/'), token.lastIndexOf('\\')) + 1);
  return base.toLowerCase().replace(/\.(exe|cmd|bat|com)$/, '');
}
