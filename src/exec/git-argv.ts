import { spawnSync } from 'node:child_process';
import { DEFAULT_PATH_DIRS } from './resolve.js';

/**
 * What a git command line asks git to do, as far as the exec gate needs to know: which
 * subcommand runs, and whether the argv itself names a program or moves git away from the
 * configuration Warden hardens. Pure apart from asking the git binary once which commands it
 * has (`knownGitCommands`).
 */
export interface GitInvocation {
  /** The subcommand as written (`status`), null for `git` alone or `git --version`. */
  subcommand: string | null;
  /**
   * Why Warden cannot vouch for this invocation even when the operator trusts the repository's
   * configuration; null when it is an ordinary command of this git.
   */
  untrusted: string | null;
}

/** Global options that take no value and change nothing Warden relies on. */
const PLAIN_GLOBAL = new Set([
  '-p', '--paginate', '-P', '--no-pager', '--no-replace-objects', '--bare', '--literal-pathspecs', '--glob-pathspecs',
  '--noglob-pathspecs', '--icase-pathspecs', '--no-optional-locks', '--no-advice', '--html-path', '--man-path', '--info-path',
  '--version', '-v', '--help', '-h',
]);
/** Global options that override the hardened configuration or the programs git runs. */
const CONFIG_GLOBAL = ['-c', '--config-env', '--exec-path'];
/**
 * Global options that point git at another repository or work tree: the keys Warden
 * neutralises by discovery are read from the working directory's repository only.
 */
const REPO_GLOBAL = ['-C', '--git-dir', '--work-tree', '--namespace', '--super-prefix', '--attr-source'];

/**
 * Subcommands that run a program by design — named on the command line (`bisect run`,
 * `rebase --exec`, `submodule foreach`) or by configuration no environment can neutralise
 * (tools, browsers, transports, daemons) — and `config`, which rewrites what later commands
 * read.
 */
const RUNS_PROGRAMS = new Set([
  'bisect', 'submodule', 'filter-branch', 'difftool', 'mergetool', 'instaweb', 'web--browse', 'help', 'send-email', 'daemon',
  'p4', 'svn', 'cvsimport', 'cvsexportcommit', 'cvsserver', 'archimport', 'quiltimport', 'imap-send', 'gui', 'citool',
  'upload-pack', 'receive-pack', 'upload-archive', 'shell', 'http-backend', 'remote-ext', 'remote-fd', 'fsmonitor--daemon',
  'hook', 'config', 'credential', 'credential-cache', 'credential-store', 'subtree', 'request-pull', 'mergetool--lib',
  // Schedules git runs outside the command (cron, systemd timers, launchd) over repositories
  // named in config; runs a git command in every repository a config key lists.
  'maintenance', 'for-each-repo',
]);

/**
 * Long options, for any subcommand, whose value is a program git runs (or a command line it
 * passes to one). Matched the way parse-options reads them: `--opt`, `--opt=value`, and any
 * abbreviation git accepts — a prefix of the name — whether or not it is unique (an ambiguous
 * one only makes git stop with an error).
 */
const PROGRAM_LONG = ['upload-pack', 'receive-pack', 'exec', 'open-files-in-pager', 'extcmd'];
/**
 * Per subcommand: long options (as above) and short option letters that name a program. A
 * letter counts wherever it stands in a cluster (`-iOless` is `-i -Oless`; the rest of the
 * cluster is its value): reading it as the value of an earlier letter instead would only make
 * this ask where git would have refused the value.
 */
const PROGRAM_BY_SUBCOMMAND: Record<string, { long: readonly string[]; short: string }> = {
  grep: { long: [], short: 'O' },
  clone: { long: ['config', 'template'], short: 'uc' },
  init: { long: ['template'], short: '' },
  rebase: { long: [], short: 'x' },
  'ls-remote': { long: [], short: 'u' },
};

/** The option of `arg` that names a program for `subcommand`, or null. */
export function programOption(subcommand: string, arg: string): string | null {
  const own = PROGRAM_BY_SUBCOMMAND[subcommand];
  if (arg.startsWith('--')) {
    const name = arg.slice(2).split('=', 1)[0]!;
    const long = [...PROGRAM_LONG, ...(own?.long ?? [])];
    return long.find((o) => o.startsWith(name)) !== undefined ? arg : null;
  }
  if (arg.length < 2 || !arg.startsWith('-') || !own) return null;
  return [...arg.slice(1)].some((c) => own.short.includes(c)) ? arg : null;
}

export function parseGitArgv(args: readonly string[], known: ReadonlySet<string> | null): GitInvocation {
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i]!;
    if (!a.startsWith('-')) break;
    if (a === '--') {
      i++;
      break;
    }
    const flag = a.includes('=') ? a.slice(0, a.indexOf('=')) : a;
    if (CONFIG_GLOBAL.some((o) => flag === o || (o === '-c' && a.startsWith('-c')))) {
      // `--exec-path` alone prints the path; with a value it picks the programs git runs.
      if (a === '--exec-path') continue;
      return { subcommand: null, untrusted: `\`git ${a}\` overrides the hardened git configuration` };
    }
    if (REPO_GLOBAL.some((o) => flag === o || (o === '-C' && a.startsWith('-C')))) {
      return { subcommand: null, untrusted: `\`git ${a}\` points git at another repository than the working directory's` };
    }
    if (a.startsWith('--list-cmds=')) continue;
    if (!PLAIN_GLOBAL.has(a)) return { subcommand: null, untrusted: `unknown git option \`${a}\`` };
  }
  const subcommand = args[i] ?? null;
  if (subcommand === null) return { subcommand, untrusted: null };
  if (known === null) return { subcommand, untrusted: 'the git binary could not list its commands' };
  // git prefers its own commands over aliases, so only a name it does not have can be an alias.
  if (!known.has(subcommand)) return { subcommand, untrusted: `\`git ${subcommand}\` is not a git command: a repository alias could run anything` };
  if (RUNS_PROGRAMS.has(subcommand)) return { subcommand, untrusted: `\`git ${subcommand}\` runs programs named by its arguments or configuration` };
  for (const a of args.slice(i + 1)) {
    if (a === '--') break;
    const option = programOption(subcommand, a);
    if (option !== null) return { subcommand, untrusted: `\`git ${subcommand} ${option}\` names a program for git to run` };
  }
  return { subcommand, untrusted: null };
}

/** The answer per git binary; bounded (the oldest goes first): the binary's path comes from config, which reloads may change. */
export const knownCache = new Map<string, ReadonlySet<string> | null>();
export const KNOWN_CACHE_MAX = 16;

/**
 * The commands this git binary has: its own and `git-*` programs in the system PATH. Anything
 * else after `git` is resolved as an alias from configuration. Asked once per binary; null
 * when the binary cannot answer (every subcommand then counts as unknown).
 */
export function knownGitCommands(gitPath: string): ReadonlySet<string> | null {
  if (knownCache.has(gitPath)) return knownCache.get(gitPath)!;
  const listed = spawnSync(gitPath, ['--list-cmds=main,others'], {
    encoding: 'utf8',
    timeout: 5_000,
    env: { PATH: DEFAULT_PATH_DIRS.join(':'), GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', HOME: '/nonexistent' },
    cwd: '/',
  });
  const commands = listed.status === 0 ? new Set(listed.stdout.split('\n').map((l) => l.trim()).filter(Boolean)) : null;
  if (knownCache.size >= KNOWN_CACHE_MAX) knownCache.delete(knownCache.keys().next().value!);
  knownCache.set(gitPath, commands);
  return commands;
}
