import { realpathSync } from 'node:fs';
import path from 'node:path';
import { commandName } from './resolve.js';

/**
 * The default read-only allowlist of the sandbox host (`tools.exec.defaultAllowlist`, on by
 * default): listing, reading and searching commands that run without asking, so a fresh
 * install does not ask for `ls`. Only on the sandbox host — there a command sees the system
 * read-only, the workspace, and nothing of Warden's state (data dir, config, `.env` are masked),
 * so reading any file it can name is what the file tools may do anyway. On the gateway host a
 * "read-only" `cat` reads Warden's own secrets, so the list is off there.
 *
 * Every entry is an option grammar, not a glob: each option is known by its exact name and its
 * argument kind (none / required / optional, as GNU getopt and git's parse-options read them),
 * and an option that writes a file or runs a program asks (`sort -o`, `find -exec`, `file -C`,
 * `git log --output`). An option the table does not know — a newer one, or an abbreviation like
 * `sort --out=x`, which GNU getopt would take for `--output` — asks too. Operands may be any
 * path. `test/security/exec-default-allowlist.test.ts` checks every entry against the real
 * binary: its option list and argument kinds, that the allowed forms write nothing, and that
 * the writing and executing forms ask.
 *
 * git is in the repository-config class (repo-config.ts): its configuration names programs, and
 * the hardened environment (git-env.ts) neutralises the names listed (git-discovery.ts) just
 * before the command starts — but a config written after that listing (a parallel write tool
 * call, another session's command in the shared workspace) is not seen, and a command this list
 * runs unasked gets no listing at all. The default entries therefore carry the opt-in only for
 * git commands that are safe without discovery: `log`, `show`, `diff
 * --cached`, `branch`/`tag` listing, `ls-files`, `rev-parse`, `describe`, `grep`, `shortlog`,
 * `remote -v`, `cat-file`. None of them reads work-tree files through the repository's filters,
 * the pager, editor, fsmonitor, hooks and signing programs are overridden by environment and
 * command-scope config that outrank any repository config, and `--no-textconv --no-ext-diff
 * --submodule=short` are added to the diffing ones, so no textconv or external diff driver runs,
 * in the repository or a submodule, whatever the config says. `git status`, `git diff` of the work tree and `git blame` hash work-tree files through
 * the clean filters the repository names: they ask (or an operator opts in per entry).
 */

export type ArgKind = 'none' | 'required' | 'optional';

/** One option: its argument kind, and why it is not read-only when it is not. */
export interface OptionSpec {
  arg: ArgKind;
  asks?: string | undefined;
}

type Options = Readonly<Record<string, OptionSpec>>;

/** A GNU getopt command: options by exact name, any operands (paths). */
export interface GetoptProfile {
  kind: 'getopt';
  /** Long options without the leading `--`. */
  long: Options;
  /** Short options by letter. */
  short: Options;
  /** `-NUM` as a number of lines (`head -5`, `grep -3`). */
  numeric?: boolean | undefined;
  /** At most this many operands (`uniq IN OUT` writes OUT). */
  maxOperands?: number | undefined;
}

export interface FindProfile {
  kind: 'find';
}

export interface GitProfile {
  kind: 'git';
}

export type ReadOnlyProfile = GetoptProfile | FindProfile | GitProfile;

export type ReadOnlyVerdict =
  | {
      ok: true;
      /** The argv to run instead (git: flags that switch drivers off added); absent: as given. */
      argv?: string[] | undefined;
      /** The entry opts in for its repository configuration (git, safe by construction). */
      trustRepoConfig?: boolean | undefined;
    }
  | { ok: false; reason: string };

const none: OptionSpec = { arg: 'none' };
const required: OptionSpec = { arg: 'required' };
const optional: OptionSpec = { arg: 'optional' };
const asks = (arg: ArgKind, why: string): OptionSpec => ({ arg, asks: why });
const WRITES = 'writes a file';
const RUNS = 'runs a program';

const opts = (spec: Record<string, OptionSpec>): Options => Object.freeze(spec);
const flags = (...names: string[]): Record<string, OptionSpec> => Object.fromEntries(names.map((n) => [n, none]));
const values = (...names: string[]): Record<string, OptionSpec> => Object.fromEntries(names.map((n) => [n, required]));
const optionals = (...names: string[]): Record<string, OptionSpec> => Object.fromEntries(names.map((n) => [n, optional]));
const letters = (chars: string, spec: OptionSpec = none): Record<string, OptionSpec> => Object.fromEntries([...chars].map((c) => [c, spec]));

/** GNU coreutils, grep and file, as their `--help` lists them (checked against the binaries by the security test). */
export const GETOPT_PROFILES: Readonly<Record<string, GetoptProfile>> = Object.freeze({
  ls: {
    kind: 'getopt',
    long: opts({
      ...flags('all', 'almost-all', 'author', 'escape', 'ignore-backups', 'directory', 'dired', 'file-type', 'full-time', 'group-directories-first', 'no-group'),
      ...flags('human-readable', 'si', 'dereference-command-line', 'dereference-command-line-symlink-to-dir', 'inode', 'kibibytes', 'dereference'),
      ...flags('numeric-uid-gid', 'literal', 'hide-control-chars', 'show-control-chars', 'quote-name', 'reverse', 'recursive', 'size', 'context', 'zero', 'help', 'version'),
      ...values('block-size', 'format', 'hide', 'indicator-style', 'ignore', 'quoting-style', 'sort', 'time', 'time-style', 'tabsize', 'width'),
      ...optionals('color', 'classify', 'hyperlink'),
    }),
    short: opts({ ...letters('aAbBcCdDfFgGhHiklLmnNopqQrRsStuUvxXZ1'), ...letters('ITw', required) }),
  },
  cat: {
    kind: 'getopt',
    long: opts(flags('show-all', 'number-nonblank', 'show-ends', 'number', 'squeeze-blank', 'show-tabs', 'show-nonprinting', 'help', 'version')),
    short: opts(letters('AbeEnstTuv')),
  },
  head: {
    kind: 'getopt',
    long: opts({ ...values('bytes', 'lines'), ...flags('quiet', 'silent', 'verbose', 'zero-terminated', 'help', 'version') }),
    short: opts({ ...letters('cn', required), ...letters('qvz') }),
    numeric: true,
  },
  tail: {
    kind: 'getopt',
    long: opts({
      ...values('bytes', 'lines', 'max-unchanged-stats', 'pid', 'sleep-interval'),
      ...optionals('follow'),
      ...flags('quiet', 'silent', 'retry', 'verbose', 'zero-terminated', 'help', 'version'),
    }),
    short: opts({ ...letters('cns', required), ...letters('fFqvz') }),
    numeric: true,
  },
  wc: {
    kind: 'getopt',
    long: opts({ ...flags('bytes', 'chars', 'lines', 'max-line-length', 'words', 'help', 'version'), ...values('files0-from') }),
    short: opts(letters('cmlLw')),
  },
  grep: {
    kind: 'getopt',
    long: opts({
      ...flags('extended-regexp', 'fixed-strings', 'basic-regexp', 'perl-regexp', 'ignore-case', 'no-ignore-case', 'word-regexp', 'line-regexp', 'null-data'),
      ...flags('no-messages', 'invert-match', 'version', 'help', 'byte-offset', 'line-number', 'line-buffered', 'with-filename', 'no-filename', 'only-matching'),
      ...flags('quiet', 'silent', 'text', 'recursive', 'dereference-recursive', 'files-without-match', 'files-with-matches', 'count', 'initial-tab', 'null'),
      ...flags('no-group-separator', 'binary'),
      ...values('regexp', 'file', 'max-count', 'label', 'binary-files', 'directories', 'devices', 'include', 'exclude', 'exclude-from', 'exclude-dir'),
      ...values('before-context', 'after-context', 'context', 'group-separator'),
      ...optionals('color', 'colour'),
    }),
    short: opts({ ...letters('EFGPiwxzsvVbnHhoqaIrRLlcTZU'), ...letters('efmdDABC', required) }),
    numeric: true,
  },
  stat: {
    kind: 'getopt',
    long: opts({ ...flags('dereference', 'file-system', 'terse', 'help', 'version'), ...values('cached', 'format', 'printf') }),
    short: opts({ ...letters('Lft'), ...letters('c', required) }),
  },
  file: {
    kind: 'getopt',
    long: opts({
      ...flags('help', 'version', 'brief', 'checking-printout', 'mime', 'mime-type', 'mime-encoding', 'apple', 'extension', 'keep-going', 'list'),
      ...flags('dereference', 'no-dereference', 'no-buffer', 'no-pad', 'print0', 'raw', 'special-files', 'debug'),
      ...values('magic-file', 'exclude', 'exclude-quiet', 'files-from', 'separator', 'parameter'),
      // Decompressors are separate programs; the seccomp filter and the date are libmagic's own guards.
      uncompress: asks('none', RUNS),
      'uncompress-noreport': asks('none', RUNS),
      'no-sandbox': asks('none', 'turns off file\'s own seccomp sandbox'),
      'preserve-date': asks('none', 'writes the access time of the files it reads'),
      compile: asks('none', WRITES),
    }),
    short: opts({
      ...letters('vbciklLhnN0rsd'),
      ...letters('mefFP', required),
      z: asks('none', RUNS),
      Z: asks('none', RUNS),
      S: asks('none', 'turns off file\'s own seccomp sandbox'),
      p: asks('none', 'writes the access time of the files it reads'),
      C: asks('none', WRITES),
    }),
  },
  du: {
    kind: 'getopt',
    long: opts({
      ...flags('null', 'all', 'apparent-size', 'bytes', 'total', 'dereference-args', 'summarize', 'human-readable', 'inodes', 'dereference', 'count-links'),
      ...flags('no-dereference', 'separate-dirs', 'si', 'one-file-system', 'help', 'version'),
      ...values('block-size', 'max-depth', 'files0-from', 'threshold', 'time-style', 'exclude-from', 'exclude'),
      ...optionals('time'),
    }),
    short: opts({ ...letters('0abcDHhkLlmPSsx'), ...letters('BdtX', required) }),
  },
  sort: {
    kind: 'getopt',
    long: opts({
      ...flags('ignore-leading-blanks', 'dictionary-order', 'ignore-case', 'general-numeric-sort', 'ignore-nonprinting', 'month-sort', 'human-numeric-sort'),
      ...flags('numeric-sort', 'random-sort', 'reverse', 'version-sort', 'debug', 'merge', 'stable', 'unique', 'zero-terminated', 'help', 'version'),
      ...values('random-source', 'sort', 'batch-size', 'files0-from', 'key', 'buffer-size', 'field-separator', 'parallel'),
      ...optionals('check'),
      output: asks('required', WRITES),
      'compress-program': asks('required', RUNS),
      'temporary-directory': asks('required', 'writes temporary files into a directory of its choosing'),
    }),
    short: opts({
      ...letters('bdfgiMhnRrVcCmsuz'),
      ...letters('kSt', required),
      o: asks('required', WRITES),
      T: asks('required', 'writes temporary files into a directory of its choosing'),
    }),
  },
  uniq: {
    kind: 'getopt',
    long: opts({
      ...flags('count', 'repeated', 'ignore-case', 'unique', 'zero-terminated', 'help', 'version'),
      ...values('skip-fields', 'skip-chars', 'check-chars'),
      ...optionals('all-repeated', 'group'),
    }),
    short: opts({ ...letters('cdDiuz'), ...letters('fsw', required) }),
    // `uniq IN OUT` writes OUT.
    maxOperands: 1,
  },
});

/**
 * `find` primaries by how many arguments follow them. Anything else — `-exec`, `-execdir`,
 * `-ok`, `-okdir` (run programs), `-delete`, `-fprint`, `-fprint0`, `-fprintf`, `-fls` (write
 * or delete files), and any primary this table does not know — asks.
 */
export const FIND_PRIMARIES: Readonly<Record<string, number>> = Object.freeze({
  // Tests.
  '-amin': 1, '-anewer': 1, '-atime': 1, '-cmin': 1, '-cnewer': 1, '-ctime': 1, '-empty': 0, '-executable': 0, '-false': 0, '-fstype': 1,
  '-gid': 1, '-group': 1, '-ilname': 1, '-iname': 1, '-inum': 1, '-ipath': 1, '-iregex': 1, '-iwholename': 1, '-links': 1, '-lname': 1,
  '-mmin': 1, '-mtime': 1, '-name': 1, '-newer': 1, '-nogroup': 0, '-nouser': 0, '-path': 1, '-perm': 1, '-readable': 0, '-regex': 1,
  '-samefile': 1, '-size': 1, '-true': 0, '-type': 1, '-uid': 1, '-used': 1, '-user': 1, '-wholename': 1, '-writable': 0, '-xtype': 1,
  // Options that act like tests.
  '-daystart': 0, '-depth': 0, '-follow': 0, '-ignore_readdir_race': 0, '-maxdepth': 1, '-mindepth': 1, '-mount': 0,
  '-noignore_readdir_race': 0, '-noleaf': 0, '-regextype': 1, '-xdev': 0, '-warn': 0, '-nowarn': 0, '-files0-from': 1,
  // Actions that only print to standard output or stop.
  '-print': 0, '-print0': 0, '-printf': 1, '-ls': 0, '-prune': 0, '-quit': 0,
  // Operators.
  '!': 0, '-not': 0, '-a': 0, '-and': 0, '-o': 0, '-or': 0, '(': 0, ')': 0, ',': 0,
});

/** Primaries that write or delete files, or run programs, and why (for the card). */
export const FIND_ASKS: Readonly<Record<string, string>> = Object.freeze({
  '-exec': RUNS, '-execdir': RUNS, '-ok': RUNS, '-okdir': RUNS,
  '-delete': 'deletes files', '-fprint': WRITES, '-fprint0': WRITES, '-fprintf': WRITES, '-fls': WRITES,
});

/** A git subcommand as the default list allows it. */
export interface GitSubcommand {
  options: Options;
  /** Added after the subcommand: the flags that keep repository-named drivers from running. */
  forced?: readonly string[] | undefined;
  /** `-NUM` (`git log -3`). */
  numeric?: boolean | undefined;
  /** Operands allowed: any, none, or only after one of these options (listing modes). */
  operands: 'any' | 'none' | { with: readonly string[] };
  /** One of these options must be given (`git diff --cached`: never the work tree). */
  needs?: readonly string[] | undefined;
}

/** `--submodule=short`: with `diff.submodule = diff` git diffs a submodule in a child that ignores the other two. */
const DRIVERS_OFF = ['--no-textconv', '--no-ext-diff', '--submodule=short'] as const;
const GIT_DENIED: Options = opts({
  output: asks('required', WRITES),
  'ext-diff': asks('none', 'runs the external diff program the repository names'),
  textconv: asks('none', 'runs the textconv program the repository names'),
  'show-signature': asks('none', 'runs the signature program'),
});

/** What `log`, `show` and `diff --cached` may be given: output shapes, filters, rename detection. */
const DIFF_OPTIONS: Record<string, OptionSpec> = {
  ...flags('stat', 'shortstat', 'numstat', 'name-only', 'name-status', 'patch', 'no-patch', 'raw', 'summary', 'no-renames', 'ignore-space-change'),
  ...flags('ignore-all-space', 'ignore-blank-lines', 'minimal', 'patience', 'histogram', 'no-color', 'full-index', 'no-textconv', 'no-ext-diff'),
  ...values('unified', 'diff-filter'),
  ...optionals('color', 'word-diff', 'color-words', 'find-renames', 'find-copies', 'relative'),
  p: none, u: none, s: none, M: none, C: none, b: none, w: none, z: none, R: none,
  U: required, S: required, G: required,
};

const LOG_OPTIONS: Options = opts({
  ...GIT_DENIED,
  ...DIFF_OPTIONS,
  ...flags('oneline', 'graph', 'decorate', 'no-decorate', 'abbrev-commit', 'no-abbrev-commit', 'all', 'branches', 'tags', 'remotes', 'first-parent'),
  ...flags('merges', 'no-merges', 'reverse', 'follow', 'full-diff', 'date-order', 'topo-order', 'author-date-order', 'relative-date', 'regexp-ignore-case'),
  ...flags('all-match', 'invert-grep', 'full-history', 'simplify-merges', 'left-right', 'cherry-pick', 'cherry-mark', 'boundary', 'source', 'use-mailmap'),
  ...flags('walk-reflogs', 'no-walk', 'no-notes', 'no-expand-tabs', 'quiet'),
  ...values('format', 'date', 'since', 'after', 'until', 'before', 'author', 'committer', 'grep', 'max-count', 'skip'),
  ...optionals('pretty', 'notes'),
  i: none, g: none, n: required,
});

const SHORTLOG_OPTIONS: Options = opts({ ...flags('numbered', 'summary', 'email', 'all', 'committer'), ...values('group', 'format'), n: none, s: none, e: none, c: none });

export const GIT_SUBCOMMANDS: Readonly<Record<string, GitSubcommand>> = Object.freeze({
  log: { options: LOG_OPTIONS, forced: DRIVERS_OFF, numeric: true, operands: 'any' },
  show: { options: LOG_OPTIONS, forced: DRIVERS_OFF, operands: 'any' },
  diff: {
    options: opts({ ...GIT_DENIED, ...DIFF_OPTIONS, ...flags('cached', 'staged', 'merge-base', 'exit-code', 'quiet', 'check') }),
    forced: DRIVERS_OFF,
    operands: 'any',
    // The work tree is hashed through the repository's clean filters; the index and commits are not.
    needs: ['cached', 'staged'],
  },
  branch: {
    options: opts({
      ...flags('all', 'remotes', 'verbose', 'list', 'show-current', 'no-color', 'no-abbrev', 'ignore-case', 'quiet', 'no-column'),
      ...values('contains', 'no-contains', 'merged', 'no-merged', 'points-at', 'sort', 'format', 'abbrev'),
      ...optionals('color', 'column'),
      a: none, r: none, v: none, i: none, q: none,
    }),
    // A name without --list creates a branch.
    operands: { with: ['list'] },
  },
  tag: {
    options: opts({
      ...flags('list', 'no-column', 'ignore-case'),
      ...values('sort', 'contains', 'no-contains', 'merged', 'no-merged', 'points-at', 'format'),
      ...optionals('column', 'color'),
      l: none, i: none, n: optional,
    }),
    // A name without --list creates a tag.
    operands: { with: ['list', 'l'] },
  },
  'ls-files': {
    options: opts({
      ...flags('cached', 'stage', 'others', 'ignored', 'directory', 'no-empty-directory', 'exclude-standard', 'error-unmatch', 'full-name', 'deduplicate', 'unmerged'),
      ...values('exclude', 'exclude-from', 'exclude-per-directory', 'format'),
      ...optionals('abbrev'),
      c: none, s: none, z: none, t: none, o: none, i: none, u: none, x: required, X: required,
    }),
    operands: 'any',
  },
  'rev-parse': {
    options: opts({
      ...flags('show-toplevel', 'show-prefix', 'show-cdup', 'git-dir', 'git-common-dir', 'absolute-git-dir', 'is-inside-work-tree', 'is-inside-git-dir'),
      ...flags('is-bare-repository', 'is-shallow-repository', 'verify', 'quiet', 'symbolic', 'symbolic-full-name', 'all'),
      ...optionals('abbrev-ref', 'short', 'branches', 'tags', 'remotes'),
      q: none,
    }),
    operands: 'any',
  },
  describe: {
    options: opts({ ...flags('tags', 'all', 'long', 'always', 'exact-match', 'first-parent', 'contains', 'debug'), ...values('match', 'exclude', 'candidates'), ...optionals('abbrev') }),
    operands: 'any',
  },
  grep: {
    options: opts({
      ...flags('line-number', 'ignore-case', 'word-regexp', 'invert-match', 'files-with-matches', 'name-only', 'files-without-match', 'count', 'extended-regexp'),
      ...flags('fixed-strings', 'basic-regexp', 'perl-regexp', 'cached', 'untracked', 'no-index', 'full-name', 'null', 'only-matching', 'quiet', 'function-context'),
      ...flags('show-function', 'and', 'or', 'not', 'all-match', 'column', 'break', 'heading', 'no-color', 'text', 'exclude-standard', 'no-exclude-standard'),
      ...values('max-depth', 'after-context', 'before-context', 'context', 'threads', 'max-count'),
      ...optionals('color'),
      textconv: asks('none', 'runs the textconv program the repository names'),
      'open-files-in-pager': asks('optional', RUNS),
      ...letters('niwvlLcEFGPhHzoqWpaI'),
      ...letters('efABCm', required),
      O: asks('optional', RUNS),
    }),
    numeric: true,
    operands: 'any',
  },
  shortlog: { options: SHORTLOG_OPTIONS, operands: 'any' },
  remote: { options: opts({ verbose: none, v: none }), operands: 'none' },
  'cat-file': { options: opts({ t: none, s: none, e: none, p: none }), operands: 'any' },
});

/** Only these may come before git's subcommand. */
const GIT_GLOBAL = new Set(['--no-pager', '-P']);

/** Real directories the default entries must resolve into. */
const SYSTEM_DIRS = ['/usr/bin', '/bin'];

export interface ReadOnlyPolicy {
  /** Real directories of the system binaries (`/usr/bin`; `/bin` as it resolves). */
  dirs: ReadonlySet<string>;
}

let cached: ReadOnlyPolicy | undefined;

/** The policy for the sandbox host; the caller decides whether it applies (host, `defaultAllowlist`). */
export function readOnlyPolicy(): ReadOnlyPolicy {
  cached ??= { dirs: new Set(SYSTEM_DIRS.flatMap((d) => [d, realDir(d) ?? d])) };
  return cached;
}

function realDir(dir: string): string | null {
  try {
    return realpathSync(dir);
  } catch {
    return null;
  }
}

export const READ_ONLY_COMMANDS: readonly string[] = [...Object.keys(GETOPT_PROFILES), 'find', 'git'];

/**
 * Whether an effective argv (wrappers removed) is one of the default read-only commands: the
 * binary named in the table, resolved into the system directories (a `./ls` in the workspace
 * is not `ls`), with only options the table allows.
 */
export function readOnlyMatch(argv: readonly string[], realPath: string | null, policy: ReadOnlyPolicy): ReadOnlyVerdict {
  const name = commandName(argv[0] ?? '');
  const profile: ReadOnlyProfile | undefined = Object.hasOwn(GETOPT_PROFILES, name) ? GETOPT_PROFILES[name] : name === 'find' ? { kind: 'find' } : name === 'git' ? { kind: 'git' } : undefined;
  if (!profile) return { ok: false, reason: `\`${name}\` is not in the default read-only list` };
  if (!realPath) return { ok: false, reason: `\`${name}\` does not resolve to an executable` };
  // The real binary, not a link named `ls` to something else (busybox picks its applet by name).
  if (!policy.dirs.has(path.dirname(realPath)) || path.basename(realPath) !== name) {
    return { ok: false, reason: `\`${name}\` resolves to ${realPath}, not the system's ${name}` };
  }
  const args = argv.slice(1);
  // The tables were checked against the binaries with real words; what one makes of an empty
  // argument (a file name, a pattern matching every line, a pathspec) is not in them.
  if (args.includes('')) return { ok: false, reason: `an empty argument \`''\` is not in the default read-only list` };
  switch (profile.kind) {
    case 'getopt':
      return checkGetopt(args, profile);
    case 'find':
      return checkFind(args);
    case 'git': {
      const verdict = checkGit(args);
      return verdict.ok && verdict.argv ? { ...verdict, argv: [argv[0]!, ...verdict.argv] } : verdict;
    }
  }
}

const bad = (reason: string): ReadOnlyVerdict => ({ ok: false, reason });

/**
 * GNU getopt_long as the binaries parse it: options anywhere before `--`, short options
 * clustered (`-la`) with a required argument attached or in the next word, an optional one only
 * attached (`--color=never`; a separate word is an operand). Long options must be spelled out:
 * getopt would take a unique prefix, and a prefix of a harmless option today may name another
 * one tomorrow.
 */
export function checkGetopt(args: readonly string[], profile: GetoptProfile): ReadOnlyVerdict {
  let operands = 0;
  for (let i = 0; i < args.length; i++) {
    const token = args[i]!;
    if (token === '--') {
      operands += args.length - i - 1;
      break;
    }
    if (token.startsWith('--')) {
      const eq = token.indexOf('=');
      const name = token.slice(2, eq === -1 ? undefined : eq);
      const spec = Object.hasOwn(profile.long, name) ? profile.long[name] : undefined;
      if (!spec) return bad(`\`--${name}\` is not an option the default read-only list knows (options are spelled out in full)`);
      if (spec.asks) return bad(`\`--${name}\` ${spec.asks}`);
      if (spec.arg === 'none' && eq !== -1) return bad(`\`--${name}\` takes no value`);
      if (spec.arg === 'required' && eq === -1 && ++i >= args.length) return bad(`\`--${name}\` needs a value`);
      continue;
    }
    if (token.startsWith('-') && token !== '-') {
      if (profile.numeric && /^-\d+$/.test(token)) continue;
      for (let j = 1; j < token.length; j++) {
        const letter = token[j]!;
        const spec = Object.hasOwn(profile.short, letter) ? profile.short[letter] : undefined;
        if (!spec) return bad(`\`-${letter}\` is not an option the default read-only list knows`);
        if (spec.asks) return bad(`\`-${letter}\` ${spec.asks}`);
        if (spec.arg === 'none') continue;
        // The rest of the word is the value; a required one may be the next word.
        if (spec.arg === 'required' && j === token.length - 1 && ++i >= args.length) return bad(`\`-${letter}\` needs a value`);
        break;
      }
      continue;
    }
    operands++;
  }
  if (profile.maxOperands !== undefined && operands > profile.maxOperands) {
    return bad(`more than ${profile.maxOperands} operand${profile.maxOperands === 1 ? '' : 's'}: the next one is a file it writes`);
  }
  return { ok: true };
}

/** `find [-H|-L|-P] [-D opts] [-Olevel] [start…] [expression]`, with only the primaries of the table. */
export function checkFind(args: readonly string[]): ReadOnlyVerdict {
  let i = 0;
  // Leading options.
  while (i < args.length) {
    const a = args[i]!;
    if (a === '-H' || a === '-L' || a === '-P' || /^-O\d$/.test(a)) i++;
    else if (a === '-D') i += 2;
    else break;
  }
  // Start points: everything up to the first word that starts an expression.
  while (i < args.length && !startsExpression(args[i]!)) i++;
  for (; i < args.length; i++) {
    const a = args[i]!;
    const why = Object.hasOwn(FIND_ASKS, a) ? FIND_ASKS[a] : undefined;
    if (why) return bad(`\`find ${a}\` ${why}`);
    const arity = Object.hasOwn(FIND_PRIMARIES, a) ? FIND_PRIMARIES[a] : /^-newer[aBcmt][aBcmt]$/.test(a) ? 1 : undefined;
    if (arity === undefined) return bad(`\`find ${a}\` is not a primary the default read-only list knows`);
    if (i + arity > args.length - 1) return bad(`\`find ${a}\` needs ${arity} argument${arity === 1 ? '' : 's'}`);
    i += arity;
  }
  return { ok: true };
}

const startsExpression = (a: string) => a.startsWith('-') || a === '!' || a === '(' || a === ')' || a === ',';

/**
 * `git [--no-pager] <subcommand> …` for the subcommands of the table, options spelled out in
 * full and standing alone (no clusters), with the flags that switch drivers off added.
 */
export function checkGit(args: readonly string[]): ReadOnlyVerdict {
  let i = 0;
  while (i < args.length && GIT_GLOBAL.has(args[i]!)) i++;
  const name = args[i];
  if (name === undefined) return bad('`git` without a subcommand');
  if (name.startsWith('-')) return bad(`\`git ${name}\` is not an option the default read-only list allows before the subcommand`);
  const sub = Object.hasOwn(GIT_SUBCOMMANDS, name) ? GIT_SUBCOMMANDS[name] : undefined;
  if (!sub) return bad(`\`git ${name}\` is not in the default read-only list`);
  const rest = args.slice(i + 1);
  const seen = new Set<string>();
  let operands = 0;
  let dashdash = -1;
  for (let j = 0; j < rest.length; j++) {
    const token = rest[j]!;
    if (token === '--') {
      dashdash = j;
      operands += rest.length - j - 1;
      break;
    }
    if (!token.startsWith('-') || token === '-') {
      operands++;
      continue;
    }
    if (sub.numeric && /^-\d+$/.test(token)) continue;
    const long = token.startsWith('--');
    const eq = long ? token.indexOf('=') : -1;
    const key = long ? token.slice(2, eq === -1 ? undefined : eq) : token[1]!;
    const spec = Object.hasOwn(sub.options, key) ? sub.options[key] : undefined;
    const shown = long ? `--${key}` : `-${key}`;
    if (!spec) return bad(`\`git ${name} ${shown}\` is not an option the default read-only list knows (options are spelled out in full)`);
    if (spec.asks) return bad(`\`git ${name} ${shown}\` ${spec.asks}`);
    seen.add(key);
    if (long) {
      if (spec.arg === 'none' && eq !== -1) return bad(`\`git ${name} ${shown}\` takes no value`);
      if (spec.arg === 'required' && eq === -1 && ++j >= rest.length) return bad(`\`git ${name} ${shown}\` needs a value`);
      continue;
    }
    const attached = token.slice(2);
    if (spec.arg === 'none' && attached !== '') return bad(`\`git ${name} ${token}\`: short options stand alone in the default read-only list`);
    if (spec.arg === 'required' && attached === '' && ++j >= rest.length) return bad(`\`git ${name} ${shown}\` needs a value`);
  }
  if (sub.needs && !sub.needs.some((n) => seen.has(n))) return bad(`\`git ${name}\` without ${sub.needs.map((n) => `--${n}`).join(' or ')} reads the work tree through the repository's filters`);
  if (operands > 0 && sub.operands === 'none') return bad(`\`git ${name}\` with operands changes the repository`);
  if (operands > 0 && typeof sub.operands === 'object' && !sub.operands.with.some((n) => seen.has(n))) {
    return bad(`\`git ${name} NAME\` creates ${name === 'tag' ? 'a tag' : 'a branch'}; listing takes --list`);
  }
  if (!sub.forced) return { ok: true, trustRepoConfig: true };
  // Before `--` (after it every word is a path), so the flags apply whatever the operands are.
  const head = args.slice(0, i + 1);
  const argv = dashdash === -1 ? [...head, ...rest, ...sub.forced] : [...head, ...rest.slice(0, dashdash), ...sub.forced, ...rest.slice(dashdash)];
  return { ok: true, argv, trustRepoConfig: true };
}
