import { randomBytes } from 'node:crypto';
import { lstatSync, realpathSync } from 'node:fs';
import path from 'node:path';
import type { ExecAsk, ExecSecurity, ExecVerdict } from './decide.js';
import { buildChildEnv } from './env.js';
import { neutralisationsFor, type GitNeutralisation } from './git-env.js';
import { startCommand } from './run.js';
import type { ExecHost, SandboxIdentity } from './sandbox.js';
import { isWithinOrEqual, realOrSelf } from '../util/path-within.js';

/**
 * Which repository-named git drivers (`filter.<x>.clean`, `diff.<x>.textconv`, `diff.external`,
 * … see git-env.ts) a command's git would run, listed the way that git will read them: by the
 * same program, as the same user, in the same view of the file system. On the sandbox host the
 * listing runs in the sandbox itself (same uid/gid, same binds, same private HOME and /tmp);
 * on the gateway host as Warden, like the command. A listing run by Warden as root over a
 * workspace that belongs to the sandbox uid is refused by git ("dubious ownership") and lists
 * nothing, while the sandboxed git reads the repository and runs what it names: that
 * difference is the class this module closes.
 *
 * Where the listing cannot be what git reads when the command runs, the result is `blind` and
 * the command asks (withGitDiscovery) instead of running on a listing that missed drivers:
 * - a repository is there (a `.git` from the working directory up to the workspace) but git,
 *   in the command's view, opened none, or the listing failed, timed out or was cut;
 * - the git directory (or a linked worktree's common directory) lies outside the workspace, or a
 *   configuration file is a link out of it (a path the command can fill first: its private
 *   HOME, /tmp and /run are empty when listed and its own while it runs);
 * - the configuration includes a file outside the workspace or one that is missing, or
 *   includes on a condition the command can turn true (`onbranch:`, `hasconfig:`);
 * - a key git lists is not valid UTF-8 (it could not be named back to git to neutralise it);
 * - populated submodules nest deeper, or repositories are more, than the listing follows.
 *
 * What stays outside any listing: configuration written after it — by an earlier segment of
 * the same command or concurrently by another — which is why git stays in the repository-config
 * class and asks unless an entry opts in (read-only.ts, repo-config.ts).
 */
export interface GitDiscovery {
  /** Command-scope config that neutralises the drivers found. */
  neutralisations: GitNeutralisation[];
  /** Why the listing may miss what the command's git reads; null when it does not. */
  blind: string | null;
}

/** Where and as whom the command runs (as the exec tool starts it). */
export interface GitDiscoveryView {
  host: ExecHost;
  /** The workspace (realpath): git never looks above it (GIT_CEILING_DIRECTORIES). */
  workspace: string;
  /** The HOME the command gets. */
  home: string;
  /** The checked variables the command gets besides Warden's (the model's, plugins'). */
  overrides?: Readonly<Record<string, string>> | undefined;
  identity?: SandboxIdentity | undefined;
  protect?: readonly string[] | undefined;
  /** Per listing round (default 10 s). */
  timeoutMs?: number | undefined;
}

const TIMEOUT_MS = 10_000;
const MAX_OUTPUT_CHARS = 4 * 1024 * 1024;
const MAX_SUBMODULE_DEPTH = 3;
const MAX_REPOSITORIES = 32;

/**
 * Runs in the command's view for each directory given: where git finds the repository, its
 * configuration as git reads it (includes followed, each entry with the file it came from),
 * and the index's gitlinks. Frames carry a random nonce, so no file content can forge one.
 * git's own errors go to the frame of the step that failed; nothing else reaches stderr.
 */
const SCRIPT = [
  'n=$1; shift',
  'for d do',
  '  printf \'%s D\\n\' "$n"',
  '  if cd -- "$d" 2>/dev/null; then',
  '    git rev-parse --path-format=absolute --git-dir --git-common-dir --show-toplevel 2>&1; printf \'\\n%s R %s\\n\' "$n" "$?"',
  '    git config --list --includes --show-origin -z 2>/dev/null; printf \'\\n%s C %s\\n\' "$n" "$?"',
  '    git ls-files --stage -z 2>/dev/null; printf \'\\n%s L %s\\n\' "$n" "$?"',
  '  else printf \'%s X\\n\' "$n"; fi',
  'done',
  'printf \'%s E\\n\' "$n"',
].join('\n');

export async function discoverGitConfig(cwd: string, view: GitDiscoveryView): Promise<GitDiscovery> {
  // No repository where git would look: nothing to list, and nothing is started.
  if (repositoryAt(cwd, view.workspace) === null) return { neutralisations: [], blind: null };
  const found = new Map<string, GitNeutralisation>();
  const seen = new Set<string>();
  let level = [cwd];
  for (let depth = 0; level.length > 0; depth++) {
    const round = await listInView(level, view, [...found.values()]);
    if (!round.ok) return { neutralisations: [...found.values()], blind: round.why };
    const next: string[] = [];
    for (const repo of round.repos) {
      const judged = judgeRepository(repo, view.workspace);
      if (judged.blind) return { neutralisations: [...found.values()], blind: judged.blind };
      for (const n of neutralisationsFor(judged.listing)) found.set(n.key, n);
      const top = judged.top;
      if (seen.has(top)) continue;
      seen.add(top);
      if (seen.size > MAX_REPOSITORIES) return { neutralisations: [...found.values()], blind: `more than ${MAX_REPOSITORIES} repositories and submodules` };
      for (const sub of judged.gitlinks) {
        if (depth + 1 > MAX_SUBMODULE_DEPTH) {
          if (exists(path.join(sub, '.git'))) return { neutralisations: [...found.values()], blind: `submodules nest deeper than ${MAX_SUBMODULE_DEPTH} levels (${sub})` };
          continue;
        }
        next.push(sub);
      }
    }
    level = next;
  }
  return { neutralisations: [...found.values()], blind: null };
}

/**
 * The nearest directory from `cwd` up to the workspace where git would find a repository: a
 * `.git` entry of any kind (directory, `gitdir:` file, link — dangling included), or `cwd`
 * inside a git directory. Null when there is none.
 */
export function repositoryAt(cwd: string, workspace: string): string | null {
  const root = path.resolve(workspace);
  let dir = path.resolve(cwd);
  if (path.relative(root, dir).split(path.sep).includes('.git')) return dir;
  for (;;) {
    if (exists(path.join(dir, '.git')) || (exists(path.join(dir, 'HEAD')) && exists(path.join(dir, 'objects')) && exists(path.join(dir, 'refs')))) return dir;
    if (dir === root || !isWithinOrEqual(dir, root)) return null;
    const up = path.dirname(dir);
    if (up === dir) return null;
    dir = up;
  }
}

interface ListedRepository {
  dir: string;
  /** `rev-parse`: exit status and output (git dir, common dir, top level — or git's error). */
  revParse: { status: number; text: string };
  config: { status: number; text: string };
  files: { status: number; text: string };
}

type Round = { ok: true; repos: ListedRepository[] } | { ok: false; why: string };

async function listInView(dirs: readonly string[], view: GitDiscoveryView, discovered: readonly GitNeutralisation[]): Promise<Round> {
  const nonce = randomBytes(16).toString('hex');
  // The command's own environment (and so its HOME and hardening): listing and `ls-files`
  // start no fsmonitor, pager or hook, and the keys found so far stay neutralised.
  const env = buildChildEnv({ LANG: 'C.UTF-8' }, { home: view.home, overrides: view.overrides, git: { workspace: view.workspace, discovered } });
  let job;
  try {
    job = startCommand({
      // Arguments as single-quoted words: no path is ever parsed by the shell.
      script: `set -- ${[nonce, ...dirs].map(shellWord).join(' ')}\n${SCRIPT}\n`,
      label: 'git configuration listing',
      host: view.host,
      workspace: view.workspace,
      cwd: view.workspace,
      env,
      timeoutMs: view.timeoutMs ?? TIMEOUT_MS,
      maxOutputChars: MAX_OUTPUT_CHARS,
      identity: view.identity,
      protect: view.protect,
    });
  } catch (err) {
    return { ok: false, why: `the listing could not start: ${(err as Error).message}` };
  }
  await job.done;
  if (job.status === 'timed-out') return { ok: false, why: 'listing the repository configuration timed out' };
  if (job.droppedChars > 0) return { ok: false, why: 'the repository configuration listing was too large' };
  return parseListing(job.outputText(), nonce, dirs);
}

/** The listing's frames, per directory; anything out of order or missing: not a listing. Pure. */
export function parseListing(output: string, nonce: string, dirs: readonly string[]): Round {
  const parts = output.split(new RegExp(`\\n?${nonce} ([DRCLXE])(?: (\\d+))?\\n`));
  // parts: [before, kind, status, chunk, kind, status, chunk, …]
  const repos: ListedRepository[] = [];
  let index = -1;
  let current: Partial<ListedRepository> | null = null;
  let ended = false;
  for (let i = 1; i < parts.length; i += 3) {
    const kind = parts[i]!;
    const status = Number(parts[i + 1] ?? '-1');
    // The chunk before a marker is the output of the step it closes.
    const chunk = parts[i - 1] ?? '';
    if (kind === 'D') {
      index++;
      current = { dir: dirs[index] };
      continue;
    }
    if (kind === 'E') {
      ended = true;
      break;
    }
    if (!current || current.dir === undefined) return { ok: false, why: 'the repository configuration listing was garbled' };
    if (kind === 'X') return { ok: false, why: `the listing could not enter ${current.dir}` };
    const step = { status, text: chunk };
    if (kind === 'R') current.revParse = step;
    else if (kind === 'C') current.config = step;
    else {
      current.files = step;
      repos.push(current as ListedRepository);
      current = null;
    }
  }
  if (!ended || repos.length !== dirs.length) {
    const said = output.replace(new RegExp(`${nonce}[^\\n]*\\n?`, 'g'), '').trim().split('\n').slice(-2).join(' ').slice(0, 300);
    return { ok: false, why: `the repository configuration could not be listed as the command will read it${said ? ` (${said})` : ''}` };
  }
  return { ok: true, repos };
}

interface Judged {
  blind: string | null;
  /** The configuration entries git listed (`key\nvalue` records, NUL-separated). */
  listing: string;
  top: string;
  gitlinks: string[];
}

const INCLUDE = /^include\.path$|^includeif\.(.*)\.path$/i;

/** Whether one repository's listing is what its git reads, and what it lists. Reads links and paths on the host only. */
export function judgeRepository(repo: ListedRepository, workspace: string): Judged {
  const blindAs = (why: string): Judged => ({ blind: why, listing: '', top: '', gitlinks: [] });
  const [gitDir = '', commonDir = '', top = ''] = repo.revParse.text.split('\n');
  if (repo.revParse.status !== 0 || !path.isAbsolute(gitDir) || !path.isAbsolute(commonDir) || !path.isAbsolute(top)) {
    const said = repo.revParse.text.trim().split('\n').slice(-1)[0]?.slice(0, 200) ?? '';
    return blindAs(`git does not open the repository at ${repo.dir} as the command would see it${said ? ` (${said})` : ''}`);
  }
  for (const [what, dir] of [['git directory', gitDir], ['common git directory', commonDir]] as const) {
    if (!insideWorkspace(dir, workspace)) return blindAs(`the ${what} of ${top} is ${dir}, outside the workspace`);
  }
  // Config files git reads whether or not they exist now: a link out of the workspace is a
  // file the command can write before git reads it.
  for (const file of [path.join(commonDir, 'config'), path.join(gitDir, 'config.worktree')]) {
    if (isLink(file) && !insideWorkspace(file, workspace)) return blindAs(`${file} links outside the workspace`);
  }
  if (repo.config.status !== 0) return blindAs(`git could not list the configuration of ${top}`);
  const records = repo.config.text.split('\0');
  const listing: string[] = [];
  // `--show-origin -z`: origin, then `key\nvalue`, each NUL-terminated.
  for (let i = 0; i + 1 < records.length; i += 2) {
    const origin = records[i]!;
    const record = records[i + 1]!;
    const nl = record.indexOf('\n');
    const key = nl === -1 ? record : record.slice(0, nl);
    const value = nl === -1 ? '' : record.slice(nl + 1);
    if (key.includes('\ufffd')) return blindAs(`a configuration key of ${top} is not valid UTF-8`);
    listing.push(record);
    if (!origin.startsWith('file:')) continue;
    const file = path.resolve(top, origin.slice('file:'.length));
    if (!insideWorkspace(file, workspace)) return blindAs(`${top} reads configuration from ${file}, outside the workspace`);
    const include = INCLUDE.exec(key);
    if (!include) continue;
    const condition = include[1];
    if (condition !== undefined && !/^gitdir(\/i)?:/i.test(condition)) return blindAs(`${top} includes ${value} on a condition the command can change (${condition})`);
    if (value.startsWith('~') || value.startsWith('%(')) return blindAs(`${top} includes ${value}, outside the workspace`);
    const target = path.resolve(path.dirname(file), value);
    if (!exists(target)) return blindAs(`${top} includes ${target}, which does not exist yet`);
    if (!insideWorkspace(target, workspace)) return blindAs(`${top} includes ${target}, outside the workspace`);
  }
  if (repo.files.status !== 0) return blindAs(`git could not list the index of ${top}`);
  const gitlinks: string[] = [];
  for (const record of repo.files.text.split('\0')) {
    if (!record.startsWith('160000 ')) continue;
    const sub = path.join(top, record.slice(record.indexOf('\t') + 1));
    if (isWithinOrEqual(sub, top) && sub !== top) gitlinks.push(sub);
  }
  return { blind: null, listing: listing.map((r) => `${r}\0`).join(''), top, gitlinks };
}

/**
 * The verdict once the listing is known: where it is blind, a command that would run without
 * a human asks (is denied with `ask: off`) unless every segment is one that never runs a
 * repository's drivers (the default read-only list, safe bins, builtins); a command that asks
 * says so on its card, and allow-always is not offered for it. `security: full` is left as it
 * is. Pure.
 */
export function withGitDiscovery(verdict: ExecVerdict, discovery: GitDiscovery, policy: { security: ExecSecurity; ask: ExecAsk }): ExecVerdict {
  // `security: full` runs any program the agent names: a driver it cannot plant there is moot.
  if (discovery.blind === null || verdict.decision === 'deny' || policy.security === 'full') return verdict;
  const ask = policy.ask;
  if (!needsGitListing(verdict)) return verdict;
  const why = `the repository drivers git would run cannot be neutralised: ${discovery.blind}`;
  const off = verdict.decision === 'allow' && ask === 'off';
  return {
    ...verdict,
    decision: off ? 'deny' : 'ask',
    reason: off ? `${why}; tools.exec.ask is off` : verdict.decision === 'ask' ? `${verdict.reason}; ${why}` : why,
    askReasons: [...verdict.askReasons, why],
    fallbackScript: null,
    allowAlways: { offered: false, why: 'the repository configuration could not be listed as the command will read it', entries: [] },
  };
}

const shellWord = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * Whether what runs depends on the listing at all: not for a denied command, nor for one that
 * runs unasked on segments that never run a repository's drivers — the default read-only list
 * (its git entries are safe without any listing: read-only.ts), safe bins and builtins. Pure.
 */
export function needsGitListing(verdict: ExecVerdict): boolean {
  if (verdict.decision === 'deny') return false;
  const harmless = verdict.segments.length > 0 && verdict.segments.every((s) => s.matchedBy === 'read-only' || s.matchedBy === 'safe-bin' || s.matchedBy === 'safe-builtin');
  return !(verdict.decision === 'allow' && harmless);
}

/** For a command that needs no listing (needsGitListing): nothing listed, nothing to neutralise. */
export const NOT_LISTED: GitDiscovery = Object.freeze({ neutralisations: [], blind: null });

function exists(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

function isLink(p: string): boolean {
  try {
    return lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

/** The path, links resolved on the host, lies in the workspace (a dangling link does not). */
function insideWorkspace(p: string, workspace: string): boolean {
  let real: string;
  try {
    real = realpathSync(p);
  } catch {
    // Missing: judge the nearest existing parent, so a file yet to be made in the workspace is inside.
    if (isLink(p)) return false;
    const parent = path.dirname(p);
    return parent !== p && insideWorkspace(parent, workspace);
  }
  return isWithinOrEqual(real, realOrSelf(workspace));
}

