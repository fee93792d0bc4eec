import path from 'node:path';

/**
 * Git's hardened environment for every command exec starts. Git reads configuration from the
 * system, the user (`~/.gitconfig`: in the sandbox HOME is agent-writable) and the repository
 * (`.git/config`, and whatever it includes), and many keys name programs it runs: fsmonitor on
 * `git status`, hooks on commit/checkout/merge, the pager, the editor, filters and diff/merge
 * drivers, ssh, askpass and credential helpers, signing programs.
 *
 * - System and global config are switched off (`GIT_CONFIG_NOSYSTEM`, `GIT_CONFIG_GLOBAL`).
 * - Command-scope config (`GIT_CONFIG_COUNT`/`KEY_n`/`VALUE_n`) is read after the repository's
 *   config and what it includes, so for last-one-wins keys it overrides them: `ALWAYS` holds
 *   keys with a value that is harmless in any repository.
 * - Keys that have no harmless value (`diff.external`: an empty one breaks `git diff`) or whose
 *   names the repository chooses (`filter.<driver>.clean`) are neutralised only where the
 *   repository's config sets them: `discoverGitConfig` (git-discovery.ts) lists it just before
 *   the command starts, as the command's git will read it, and the command asks where it cannot.
 * - First-one-wins keys cannot be overridden by config and are closed by environment instead:
 *   `core.gitProxy` by an empty `GIT_PROXY_COMMAND`, `remote.<name>.uploadpack`/`receivepack`
 *   (run locally only for local-path remotes) and the `ext::` transport by `GIT_ALLOW_PROTOCOL`
 *   without `file` and `ext`.
 * - `pager.<cmd>` and `core.pager` lose to `GIT_PAGER`; `core.editor` to `GIT_EDITOR`.
 *
 * What this cannot cover: a config written after the listing (by an earlier segment of the same
 * command, or concurrently), repositories other than the working directory's and its submodules'
 * (`cd`, `-C`) for the discovered keys, and aliases (git runs them only for a name that is not
 * one of its commands; the exec gate asks for those). That is why git stays in the
 * repository-config class and asks unless an entry opts in: this environment is the second line.
 */
export interface GitNeutralisation {
  key: string;
  value: string;
}

/** Harmless in every repository; set for every command. */
export const ALWAYS: readonly GitNeutralisation[] = [
  { key: 'core.fsmonitor', value: 'false' },
  { key: 'core.hooksPath', value: '/dev/null' },
  { key: 'core.pager', value: 'cat' },
  { key: 'core.editor', value: 'false' },
  { key: 'sequence.editor', value: 'false' },
  { key: 'core.askPass', value: '' },
  { key: 'core.sshCommand', value: 'ssh -F /dev/null' },
  { key: 'core.attributesFile', value: '/dev/null' },
  // An empty helper resets the list, URL-specific helpers included.
  { key: 'credential.helper', value: '' },
  { key: 'gpg.program', value: 'false' },
  { key: 'gpg.openpgp.program', value: 'false' },
  { key: 'gpg.x509.program', value: 'false' },
  { key: 'gpg.ssh.program', value: 'false' },
  { key: 'gpg.ssh.defaultKeyCommand', value: 'false' },
  { key: 'commit.gpgSign', value: 'false' },
  { key: 'tag.gpgSign', value: 'false' },
  { key: 'push.gpgSign', value: 'false' },
  { key: 'log.showSignature', value: 'false' },
  { key: 'tag.forceSignAnnotated', value: 'false' },
  { key: 'protocol.ext.allow', value: 'never' },
  // Runs for `git add -p` on a terminal; nothing discovers it, and `cat` shows the diff as is.
  { key: 'interactive.diffFilter', value: 'cat' },
  // Submodules: no command descends into one on its own, so a submodule whose config changed
  // after the listing (or was populated after it) gets no child git to run its programs in.
  // `git status` still looks into populated submodules: the listing covers those.
  { key: 'diff.submodule', value: 'short' },
  { key: 'status.submoduleSummary', value: 'false' },
  { key: 'submodule.recurse', value: 'false' },
  { key: 'fetch.recurseSubmodules', value: 'false' },
  { key: 'push.recurseSubmodules', value: 'no' },
  // A bare repository found by walking up (`evil.git/` in the workspace) brings a config and
  // attributes of its own; only one named explicitly is used. Honoured from command scope.
  { key: 'safe.bareRepository', value: 'explicit' },
  // No housekeeping started by a command outlives it (auto gc and maintenance detach).
  { key: 'gc.auto', value: '0' },
  { key: 'maintenance.auto', value: 'false' },
];

export const GIT_HARDENED_VARIABLES: Readonly<Record<string, string>> = {
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_ATTR_NOSYSTEM: '1',
  GIT_PAGER: 'cat',
  PAGER: 'cat',
  GIT_EDITOR: 'false',
  GIT_SEQUENCE_EDITOR: 'false',
  GIT_ASKPASS: '',
  SSH_ASKPASS: '',
  GIT_TERMINAL_PROMPT: '0',
  GIT_PROXY_COMMAND: '',
  GIT_ALLOW_PROTOCOL: 'git:http:https:ssh',
};

/** Every variable the hardened environment sets: a command's own overrides may not touch them. */
export function isGitHardeningVariable(key: string): boolean {
  const upper = key.toUpperCase();
  return Object.hasOwn(GIT_HARDENED_VARIABLES, upper) || upper === 'GIT_CEILING_DIRECTORIES' || upper.startsWith('GIT_CONFIG_');
}

/**
 * Repository-set keys that run a program, by name (section and key lower case, as git lists
 * them) → the value that neutralises them. Values that stop git with an error (an empty
 * external diff command) fail closed: the command errors instead of running the program.
 */
const DISCOVERED: ReadonlyArray<{ match: RegExp; value: string | ((v: string) => string | null) }> = [
  { match: /^filter\..+\.(clean|smudge|process)$/, value: '' },
  { match: /^diff\..+\.textconv$/, value: 'cat' },
  { match: /^diff\..+\.command$/, value: '' },
  { match: /^diff\.external$/, value: '' },
  { match: /^merge\..+\.driver$/, value: '' },
  { match: /^core\.alternaterefscommand$/, value: '' },
  { match: /^trailer\..+\.(cmd|command)$/, value: '' },
  { match: /^(browser|man|difftool|mergetool|guitool)\..+\.(cmd|path)$/, value: 'false' },
  { match: /^hook\..+\.command$/, value: 'false' },
  // `update = !command` runs the command on `git submodule update`; other modes are harmless.
  { match: /^submodule\..+\.update$/, value: (v) => (v.trim().startsWith('!') ? 'none' : null) },
];

/** The neutralisations for a repository's listed config (`git config --list -z` output). */
export function neutralisationsFor(listing: string): GitNeutralisation[] {
  const out = new Map<string, GitNeutralisation>();
  for (const record of listing.split('\0')) {
    if (record === '') continue;
    const nl = record.indexOf('\n');
    const key = nl === -1 ? record : record.slice(0, nl);
    const current = nl === -1 ? '' : record.slice(nl + 1);
    const lower = lowerSectionAndKey(key);
    for (const rule of DISCOVERED) {
      if (!rule.match.test(lower)) continue;
      const value = typeof rule.value === 'function' ? rule.value(current) : rule.value;
      if (value !== null) out.set(key, { key, value });
    }
  }
  return [...out.values()];
}

/** `Filter.Evil.Clean` → `filter.Evil.clean`: section and key are case-insensitive, the subsection is not. */
function lowerSectionAndKey(key: string): string {
  const first = key.indexOf('.');
  const last = key.lastIndexOf('.');
  if (first === -1) return key.toLowerCase();
  if (first === last) return key.toLowerCase();
  return `${key.slice(0, first).toLowerCase()}${key.slice(first, last)}${key.slice(last).toLowerCase()}`;
}

export interface GitEnvOptions {
  /** Keys found in the working directory's repository (`discoverGitConfig`, git-discovery.ts). */
  discovered?: readonly GitNeutralisation[] | undefined;
  /** Git never looks for a repository above this directory's parent (the agent's workspace). */
  workspace?: string | undefined;
}

/** The variables to add to a child's environment. */
export function hardenedGitEnv(options: GitEnvOptions = {}): Record<string, string> {
  const env: Record<string, string> = { ...GIT_HARDENED_VARIABLES };
  const pairs = [...ALWAYS, ...(options.discovered ?? [])];
  env.GIT_CONFIG_COUNT = String(pairs.length);
  pairs.forEach((p, i) => {
    env[`GIT_CONFIG_KEY_${i}`] = p.key;
    env[`GIT_CONFIG_VALUE_${i}`] = p.value;
  });
  if (options.workspace) env.GIT_CEILING_DIRECTORIES = path.dirname(path.resolve(options.workspace));
  return env;
}
