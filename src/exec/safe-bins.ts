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
  /** Options whose argument is required: `-n 5`, `-n5`, `--lines 5`, `--lines=5`. */
  allowedValueFlags?: readonly string[] | undefined;
  deniedFlags?: readonly string[] | undefined;
  allowedBooleanFlags?: readonly string[] | undefined;
  /**
   * Options whose argument is optional (`--group[=METHOD]`). getopt never takes such a value
   * from the next word — that word is an operand, a file — so they are accepted only with the
   * value attached: `--group=both` (`-xVALUE` for a short one).
   */
  allowedOptionalValueFlags?: readonly string[] | undefined;
  /** The binary stops reading options at its first operand (a `+` optstring, as tr has). */
  optionsEndAtFirstOperand?: boolean | undefined;
  /**
   * Options that, followed by one word as the whole argv, an obsolete parser reads as `OPTION
   * FILE`: `tail -c 5` is the last 10 bytes of file `5` when _POSIX2_VERSION is below 200112.
   */
  obsoleteWithOperand?: readonly string[] | undefined;
}

export const DEFAULT_SAFE_BINS: readonly string[] = ['cut', 'uniq', 'head', 'tail', 'tr', 'wc'];
export const DEFAULT_TRUSTED_DIRS: readonly string[] = ['/bin', '/usr/bin'];

const HEAD_TAIL_BOOLEANS = ['--quiet', '--silent', '--verbose', '--zero-terminated', '-q', '-v', '-z'];
/** GNU `-NUM` shorthands (`head -5`, `uniq -2`, `grep -3`): obsolete forms whose parsing varies by position. */
const DIGITS = ['-0', '-1', '-2', '-3', '-4', '-5', '-6', '-7', '-8', '-9'];
const HELP = ['--help', '--version'];

/**
 * The built-in profiles: OpenClaw 2026.9.6's allowed flags, each profile naming EVERY option
 * the GNU binary has (coreutils 9.1, grep 3.8 — hidden ones included) so that the validator
 * resolves an abbreviation (`--li`) exactly as getopt does, and with each allowed option's
 * argument kind as the binary parses it. test/security/exec-safe-bins.test.ts derives the
 * option table from the real binaries and fails when a profile disagrees.
 * Differs from OpenClaw: `uniq --group` takes an optional argument, so it is accepted only as
 * `--group=METHOD` (OpenClaw reads `--group X` as a value and lets uniq open X); jq, never a
 * safe bin in 2026.9.6, has no profile.
 */
export const BUILTIN_PROFILES: Readonly<Record<string, SafeBinProfile>> = {
  grep: {
    maxPositional: 0,
    allowedValueFlags: ['--regexp', '--max-count', '--after-context', '--before-context', '--context', '--devices', '--binary-files', '--exclude', '--include', '--label', '-e', '-m', '-A', '-B', '-C', '-D'],
    deniedFlags: [
      '--file', '--exclude-from', '--dereference-recursive', '--directories', '--recursive', '-f', '-d', '-r', '-R',
      '--exclude-dir', '--group-separator', '-X', '--color', '--colour',
      '--extended-regexp', '--fixed-strings', '--fixed-regexp', '--basic-regexp', '--perl-regexp', '--ignore-case', '--no-ignore-case',
      '--word-regexp', '--line-regexp', '--null-data', '--no-messages', '--invert-match', '--byte-offset', '--unix-byte-offsets',
      '--line-number', '--line-buffered', '--with-filename', '--no-filename', '--only-matching', '--quiet', '--silent', '--text',
      '--files-without-match', '--files-with-matches', '--count', '--initial-tab', '--null', '--no-group-separator', '--binary',
      '-E', '-F', '-G', '-H', '-I', '-L', '-P', '-T', '-U', '-V', '-Z', '-a', '-b', '-c', '-h', '-i', '-l', '-n', '-o', '-q', '-s', '-u',
      '-v', '-w', '-x', '-y', '-z', ...DIGITS, ...HELP,
    ],
  },
  cut: {
    maxPositional: 0,
    allowedValueFlags: ['--bytes', '--characters', '--fields', '--delimiter', '--output-delimiter', '-b', '-c', '-f', '-d'],
    allowedBooleanFlags: ['--complement', '--only-delimited', '--zero-terminated', '-n', '-s', '-z'],
    deniedFlags: HELP,
  },
  sort: {
    maxPositional: 0,
    allowedValueFlags: ['--key', '--field-separator', '--buffer-size', '--parallel', '--batch-size', '-k', '-t', '-S'],
    deniedFlags: [
      '--compress-program', '--files0-from', '--output', '--random-source', '--temporary-directory', '-T', '-o',
      '--ignore-leading-blanks', '--dictionary-order', '--ignore-case', '--general-numeric-sort', '--ignore-nonprinting', '--month-sort',
      '--human-numeric-sort', '--numeric-sort', '--random-sort', '--reverse', '--sort', '--version-sort', '--check', '--debug', '--merge',
      '--stable', '--unique', '--zero-terminated',
      '-C', '-M', '-R', '-V', '-b', '-c', '-d', '-f', '-g', '-h', '-i', '-m', '-n', '-r', '-s', '-u', '-y', '-z', ...HELP,
    ],
  },
  uniq: {
    maxPositional: 0,
    allowedValueFlags: ['--skip-fields', '--skip-chars', '--check-chars', '-f', '-s', '-w'],
    allowedOptionalValueFlags: ['--group'],
    allowedBooleanFlags: ['--count', '--repeated', '--unique', '--ignore-case', '--zero-terminated', '-c', '-d', '-u', '-i', '-z'],
    deniedFlags: ['--all-repeated', '-D', ...DIGITS, ...HELP],
  },
  head: {
    maxPositional: 0,
    allowedValueFlags: ['--lines', '--bytes', '-n', '-c'],
    allowedBooleanFlags: HEAD_TAIL_BOOLEANS,
    deniedFlags: [...DIGITS, ...HELP],
  },
  tail: {
    maxPositional: 0,
    allowedValueFlags: ['--lines', '--bytes', '--sleep-interval', '--max-unchanged-stats', '--pid', '-n', '-c'],
    deniedFlags: ['--follow', '--retry', '-F', '-f', '-s', ...DIGITS, ...HELP],
    allowedBooleanFlags: HEAD_TAIL_BOOLEANS,
    obsoleteWithOperand: ['-c'],
  },
  tr: {
    minPositional: 1,
    maxPositional: 2,
    allowedBooleanFlags: ['--complement', '--delete', '--squeeze-repeats', '--truncate-set1', '-C', '-c', '-d', '-s', '-t'],
    deniedFlags: ['-A', ...HELP],
    optionsEndAtFirstOperand: true,
  },
  wc: {
    maxPositional: 0,
    deniedFlags: ['--files0-from', '--debug', ...HELP],
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
  // A built-in profile describes the GNU binary of that name; BusyBox, toybox or a renamed
  // program parse their options differently.
  if (profile === BUILTIN_PROFILES[name] && commandName(realPath) !== name) {
    return { ok: false, reason: `safe bin \`${name}\` is ${realPath}, not the program its built-in profile describes` };
  }
  return validateSafeBinArgs(argv.slice(1), profile);
}

const GLOB = /[*?[\]]/;
const EXPANSION = /\$([\w@*?!$#{([-])/;
const PATH_LIKE = /^(\.\/|\.\.\/|~|\/|[A-Za-z]:[\\/])/;

/**
 * A literal the shell and the bin both read as plain text: no globs, expansions or paths, and
 * not empty — an empty word reaches the bin as an argument of its own (`head -n 1 ''` opens the
 * file ''), and what a bin makes of an empty value is its own affair.
 */
export function isSafeLiteral(token: string): boolean {
  return token !== '' && !GLOB.test(token) && !EXPANSION.test(token) && !PATH_LIKE.test(token) && token !== '.' && token !== '..';
}

/**
 * The A10 validator, token by token, reading argv the way GNU getopt does: `--` ends the
 * options; an abbreviated long option is resolved against the profile's option names; a
 * required value comes attached or from the next word, an optional one only attached. An
 * option after an operand is refused (getopt permutes it to the front, or — POSIXLY_CORRECT,
 * a `+` optstring — reads it as an operand); a profile whose binary stops at its first operand
 * (tr) counts everything from there as operands. An empty word is refused wherever it stands,
 * as an operand or a value (differs from OpenClaw, which skips it: its splitter drops `''`, and
 * Warden's keeps it, as the shell does).
 */
export function validateSafeBinArgs(args: readonly string[], profile: SafeBinProfile): SafeBinVerdict {
  const values = new Set(profile.allowedValueFlags ?? []);
  const optional = new Set(profile.allowedOptionalValueFlags ?? []);
  const denied = new Set(profile.deniedFlags ?? []);
  const booleans = new Set(profile.allowedBooleanFlags ?? []);
  const longFlags = profileLongFlags(profile);
  let positionals = 0;
  const bad = (reason: string): SafeBinVerdict => ({ ok: false, reason });
  const [first, second] = args;
  if (args.length === 2 && profile.obsoleteWithOperand?.includes(first!) && !second!.startsWith('-')) {
    return bad(`\`${first} ${second}\` alone is \`${first}\` and a file under an older POSIX version: write \`${first}${second}\``);
  }
  let operandSeen = false;
  const operand = (token: string): SafeBinVerdict | null => {
    if (token === '') return bad("an empty operand `''`");
    if (!isSafeLiteral(token)) return bad(`operand \`${token}\` is not a plain literal`);
    positionals++;
    operandSeen = true;
    return null;
  };

  for (let i = 0; i < args.length; i++) {
    const token = args[i]!;
    // With POSIXLY_CORRECT in its environment getopt stops at the first operand, and what
    // follows (`head - -n 5`, `head - --`) are file names: an option there means two things.
    if (operandSeen && !profile.optionsEndAtFirstOperand && token.startsWith('-') && token !== '-') return bad(`option \`${token}\` after an operand (a file name under POSIXLY_CORRECT)`);
    const rest = token === '--' ? args.slice(i + 1) : profile.optionsEndAtFirstOperand && positionals > 0 ? args.slice(i) : null;
    if (rest !== null) {
      for (const word of rest) {
        if (word === '-' && !profile.optionsEndAtFirstOperand) continue;
        const problem = operand(word);
        if (problem) return problem;
      }
      break;
    }
    if (token === '-') {
      // stdin for a filter; for a binary whose operands are strings (tr), an operand.
      if (profile.optionsEndAtFirstOperand) positionals++;
      else operandSeen = true;
      continue;
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
      if (optional.has(flag)) {
        // `--group X` leaves X to the binary as a file operand: only `--group=X` means the value.
        const value = eq === -1 ? '' : token.slice(eq + 1);
        if (!isSafeLiteral(value)) return bad(`option \`${flag}\` takes its value only as \`${flag}=VALUE\``);
        continue;
      }
      if (!booleans.has(flag)) return bad(`option \`${flag}\` is not allowed`);
      if (eq !== -1) return bad(`option \`${flag}\` takes no value`);
      continue;
    }
    if (token.startsWith('-')) {
      const letters = token.slice(1);
      for (let j = 0; j < letters.length; j++) {
        const flag = `-${letters[j]}`;
        if (denied.has(flag)) return bad(`option \`${flag}\` is denied`);
        const attached = letters.slice(j + 1);
        if (values.has(flag)) {
          const value = attached !== '' ? attached : args[++i];
          if (value === undefined || !isSafeLiteral(value)) return bad(`option \`${flag}\` needs a plain literal value`);
          break;
        }
        if (optional.has(flag)) {
          if (!isSafeLiteral(attached)) return bad(`option \`${flag}\` takes its value only attached (\`${flag}VALUE\`)`);
          break;
        }
        if (!booleans.has(flag)) return bad(`option \`${flag}\` is not allowed`);
      }
      continue;
    }
    const problem = operand(token);
    if (problem) return problem;
  }
  const min = profile.minPositional ?? 0;
  const max = profile.maxPositional ?? Number.POSITIVE_INFINITY;
  if (positionals < min || positionals > max) {
    return bad(`${positionals} operand(s), expected ${min}${max === Number.POSITIVE_INFINITY ? '+' : `..${max}`} (safe bins read stdin only)`);
  }
  return { ok: true };
}

function profileLongFlags(profile: SafeBinProfile): string[] {
  const all = [profile.allowedValueFlags, profile.allowedOptionalValueFlags, profile.deniedFlags, profile.allowedBooleanFlags].flatMap((l) => l ?? []);
  return all.filter((f) => f.startsWith('--'));
}

/** The long option a profile reads `--name` as (an abbreviation resolved), or null. */
export function resolveProfileLongFlag(profile: SafeBinProfile, written: string): string | null {
  return resolveLongFlag(written, profileLongFlags(profile));
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
