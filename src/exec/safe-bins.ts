import { statSync } from 'node:fs';
import path from 'node:path';
import { commandName, executableRealPath } from './resolve.js';

/**
 * Safe bins (reference A10, 2026.9.6 behaviour): stream filters that may run without an
 * allowlist entry when they read stdin only and their flags are known. A bin counts only when
 * it is listed, resolves (realpath) into a trusted directory, has a profile, and its argv
 * passes the validator.
 */
export interface SafeBinProfile {
  minPositional?: number | undefined;
  maxPositional?: number | undefined;
  allowedValueFlags?: readonly string[] | undefined;
  deniedFlags?: readonly string[] | undefined;
  allowedBooleanFlags?: readonly string[] | undefined;
}

export const DEFAULT_SAFE_BINS: readonly string[] = ['cut', 'uniq', 'head', 'tail', 'tr', 'wc'];
export const DEFAULT_TRUSTED_DIRS: readonly string[] = ['/bin', '/usr/bin'];

const HEAD_TAIL_BOOLEANS = ['--quiet', '--silent', '--verbose', '--zero-terminated', '-q', '-v', '-z'];

export const BUILTIN_PROFILES: Readonly<Record<string, SafeBinProfile>> = {
  jq: {
    maxPositional: 1,
    allowedValueFlags: ['--arg', '--argjson', '--argstr'],
    deniedFlags: ['--argfile', '--rawfile', '--slurpfile', '--from-file', '--library-path', '-L', '-f'],
  },
  grep: {
    maxPositional: 0,
    allowedValueFlags: ['--regexp', '--max-count', '--after-context', '--before-context', '--context', '--devices', '--binary-files', '--exclude', '--include', '--label', '-e', '-m', '-A', '-B', '-C', '-D'],
    deniedFlags: ['--file', '--exclude-from', '--dereference-recursive', '--directories', '--recursive', '-f', '-d', '-r', '-R'],
  },
  cut: {
    maxPositional: 0,
    allowedValueFlags: ['--bytes', '--characters', '--fields', '--delimiter', '--output-delimiter', '-b', '-c', '-f', '-d'],
    allowedBooleanFlags: ['--complement', '--only-delimited', '--zero-terminated', '-n', '-s', '-z'],
  },
  sort: {
    maxPositional: 0,
    allowedValueFlags: ['--key', '--field-separator', '--buffer-size', '--parallel', '--batch-size', '-k', '-t', '-S'],
    deniedFlags: ['--compress-program', '--files0-from', '--output', '--random-source', '--temporary-directory', '-T', '-o'],
  },
  uniq: {
    maxPositional: 0,
    allowedValueFlags: ['--skip-fields', '--skip-chars', '--check-chars', '--group', '-f', '-s', '-w'],
    allowedBooleanFlags: ['--count', '--repeated', '--unique', '--ignore-case', '--zero-terminated', '-c', '-d', '-u', '-i', '-z'],
  },
  head: {
    maxPositional: 0,
    allowedValueFlags: ['--lines', '--bytes', '-n', '-c'],
    allowedBooleanFlags: HEAD_TAIL_BOOLEANS,
  },
  tail: {
    maxPositional: 0,
    allowedValueFlags: ['--lines', '--bytes', '--sleep-interval', '--max-unchanged-stats', '--pid', '-n', '-c'],
    deniedFlags: ['--follow', '--retry', '-F', '-f'],
    allowedBooleanFlags: HEAD_TAIL_BOOLEANS,
  },
  tr: {
    minPositional: 1,
    maxPositional: 2,
    allowedBooleanFlags: ['--complement', '--delete', '--squeeze-repeats', '--truncate-set1', '-C', '-c', '-d', '-s', '-t'],
  },
  wc: {
    maxPositional: 0,
    deniedFlags: ['--files0-from'],
    allowedBooleanFlags: ['--bytes', '--chars', '--lines', '--max-line-length', '--words', '-L', '-c', '-l', '-m', '-w'],
  },
};

/** Never safe, whatever the configuration says: they run programs of their own (A10 semantics). */
const NEVER_SAFE = new Set(['jq', 'awk', 'gawk', 'mawk', 'nawk', 'sed', 'gsed']);

const INTERPRETER_LIKE_SAFE_BINS = new Set([
  'ash', 'awk', 'bash', 'busybox', 'bun', 'cmd', 'cscript', 'dash', 'deno', 'fish', 'gawk', 'gsed', 'ksh', 'lua', 'mawk',
  'nawk', 'node', 'nodejs', 'perl', 'php', 'powershell', 'pypy', 'pwsh', 'python', 'python2', 'python3', 'ruby', 'sed', 'sh',
  'toybox', 'wscript', 'zsh',
]);

/** A safe-bin name that is an interpreter: listing it without a profile is an audit warning. */
export function isInterpreterLikeSafeBin(name: string): boolean {
  const n = commandName(name);
  return INTERPRETER_LIKE_SAFE_BINS.has(n) || /^(python|ruby|perl|php|node)\d+(\.\d+)?$/.test(n);
}

export interface SafeBinPolicy {
  bins: ReadonlySet<string>;
  trustedDirs: ReadonlySet<string>;
  profiles: Readonly<Record<string, SafeBinProfile>>;
}

/**
 * Builds the effective policy from `tools.exec.safeBins`, `safeBinTrustedDirs` and
 * `safeBinProfiles`. An explicitly set list replaces the default. Trusted dirs are `/bin`,
 * `/usr/bin`, the configured ones, and the real directories of listed bins found there —
 * never PATH.
 */
export function buildSafeBinPolicy(options: {
  safeBins?: readonly string[] | undefined;
  trustedDirs?: readonly string[] | undefined;
  profiles?: Readonly<Record<string, SafeBinProfile>> | undefined;
}): SafeBinPolicy {
  const bins = new Set((options.safeBins ?? DEFAULT_SAFE_BINS).map((b) => commandName(b.trim())).filter((b) => b !== ''));
  const base = [...DEFAULT_TRUSTED_DIRS, ...(options.trustedDirs ?? [])].map((d) => path.resolve(d));
  const trustedDirs = new Set(base);
  for (const bin of bins) {
    for (const dir of base) {
      const real = executableRealPath(path.join(dir, bin));
      if (real) trustedDirs.add(path.dirname(real));
    }
  }
  const profiles: Record<string, SafeBinProfile> = { ...BUILTIN_PROFILES };
  for (const [name, profile] of Object.entries(options.profiles ?? {})) profiles[commandName(name)] = normaliseProfile(profile);
  return { bins, trustedDirs, profiles };
}

function normaliseProfile(profile: SafeBinProfile): SafeBinProfile {
  const min = profile.minPositional === undefined ? undefined : Math.max(0, Math.trunc(profile.minPositional));
  let max = profile.maxPositional === undefined ? undefined : Math.max(0, Math.trunc(profile.maxPositional));
  if (min !== undefined && max !== undefined && max < min) max = min;
  const clean = (list: readonly string[] | undefined) => (list ? [...new Set(list.map((f) => f.trim()).filter((f) => f !== ''))] : undefined);
  return { minPositional: min, maxPositional: max, allowedValueFlags: clean(profile.allowedValueFlags), deniedFlags: clean(profile.deniedFlags) };
}

export type SafeBinVerdict = { ok: true } | { ok: false; reason: string };

/** Whether one segment (effective argv, resolved realpath) is satisfied as a safe bin. */
export function checkSafeBin(argv: readonly string[], realPath: string | null, policy: SafeBinPolicy): SafeBinVerdict {
  const name = commandName(argv[0] ?? '');
  if (!policy.bins.has(name)) return { ok: false, reason: `\`${name}\` is not a safe bin` };
  if (NEVER_SAFE.has(name)) return { ok: false, reason: `\`${name}\` is never a safe bin (it runs its own programs)` };
  if (!realPath) return { ok: false, reason: `safe bin \`${name}\` does not resolve to an executable` };
  if (!policy.trustedDirs.has(path.dirname(realPath))) return { ok: false, reason: `safe bin \`${name}\` resolves outside the trusted dirs (${realPath})` };
  const profile = policy.profiles[name];
  if (!profile) return { ok: false, reason: `safe bin \`${name}\` has no profile` };
  return validateSafeBinArgs(argv.slice(1), profile);
}

const GLOB = /[*?[\]]/;
const EXPANSION = /\$([\w@*?!$#{([-])/;
const PATH_LIKE = /^(\.\/|\.\.\/|~|\/|[A-Za-z]:[\\/])/;

/** A literal the shell and the bin both read as plain text: no globs, expansions or paths. */
export function isSafeLiteral(token: string): boolean {
  return !GLOB.test(token) && !EXPANSION.test(token) && !PATH_LIKE.test(token) && token !== '.' && token !== '..';
}

/** The A10 validator, token by token. */
export function validateSafeBinArgs(args: readonly string[], profile: SafeBinProfile): SafeBinVerdict {
  const values = new Set(profile.allowedValueFlags ?? []);
  const denied = new Set(profile.deniedFlags ?? []);
  const booleans = new Set(profile.allowedBooleanFlags ?? []);
  const longFlags = [...values, ...denied, ...booleans].filter((f) => f.startsWith('--'));
  let positionals = 0;
  const bad = (reason: string): SafeBinVerdict => ({ ok: false, reason });

  for (let i = 0; i < args.length; i++) {
    const token = args[i]!;
    if (token === '' || token === '-') continue;
    if (token === '--') {
      for (const rest of args.slice(i + 1)) {
        if (rest === '' || rest === '-') continue;
        if (!isSafeLiteral(rest)) return bad(`operand \`${rest}\` is not a plain literal`);
        positionals++;
      }
      break;
    }
    if (token.startsWith('--')) {
      const eq = token.indexOf('=');
      const written = eq === -1 ? token : token.slice(0, eq);
      const flag = resolveLongFlag(written, longFlags);
      if (!flag) return bad(`unknown or ambiguous option \`${written}\``);
      if (denied.has(flag)) return bad(`option \`${flag}\` is denied`);
      if (values.has(flag)) {
        const value = eq === -1 ? args[++i] : token.slice(eq + 1);
        if (value === undefined || !isSafeLiteral(value)) return bad(`option \`${flag}\` needs a plain literal value`);
        continue;
      }
      if (eq !== -1) return bad(`option \`${flag}\` takes no value`);
      continue;
    }
    if (token.startsWith('-')) {
      const letters = token.slice(1);
      for (let j = 0; j < letters.length; j++) {
        const flag = `-${letters[j]}`;
        if (denied.has(flag)) return bad(`option \`${flag}\` is denied`);
        if (values.has(flag)) {
          const attached = letters.slice(j + 1);
          const value = attached !== '' ? attached : args[++i];
          if (value === undefined || !isSafeLiteral(value)) return bad(`option \`${flag}\` needs a plain literal value`);
          break;
        }
        if (!booleans.has(flag)) return bad(`option \`${flag}\` is not allowed`);
      }
      continue;
    }
    if (!isSafeLiteral(token)) return bad(`operand \`${token}\` is not a plain literal`);
    positionals++;
  }
  const min = profile.minPositional ?? 0;
  const max = profile.maxPositional ?? Number.POSITIVE_INFINITY;
  if (positionals < min || positionals > max) {
    return bad(`${positionals} operand(s), expected ${min}${max === Number.POSITIVE_INFINITY ? '+' : `..${max}`} (safe bins read stdin only)`);
  }
  return { ok: true };
}

/** Exact long flag, or a unique prefix of at least three characters (`--li` → `--lines`). */
function resolveLongFlag(written: string, known: readonly string[]): string | null {
  if (known.includes(written)) return written;
  if (written.length < 3) return null;
  const matches = known.filter((f) => f.startsWith(written));
  return matches.length === 1 ? matches[0]! : null;
}

/** Trusted dirs that group or others may write to: anyone there could plant a "safe" bin. */
export function writableTrustedDirs(dirs: Iterable<string>): Array<{ dir: string; mode: string }> {
  const out: Array<{ dir: string; mode: string }> = [];
  for (const dir of dirs) {
    try {
      const mode = statSync(dir).mode;
      if ((mode & 0o022) !== 0) out.push({ dir, mode: (mode & 0o777).toString(8).padStart(3, '0') });
    } catch {
      // A missing trusted dir trusts nothing.
    }
  }
  return out;
}
