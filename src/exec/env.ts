import { hardenedGitEnv, isGitHardeningVariable, type GitEnvOptions } from './git-env.js';
import { DEFAULT_PATH_DIRS } from './resolve.js';

/**
 * The child environment (reference A3 step 3, A14): built from a short list of harmless keys,
 * never by copying Warden's own environment, so platform tokens and model keys cannot reach a
 * command. Overrides asked for by the model are checked against OpenClaw's blocked lists; a
 * blocked key is refused with an error, never dropped silently. Pure.
 */
const PASS_THROUGH = new Set(['LANG', 'LANGUAGE', 'TZ', 'TERM', 'COLORTERM', 'NO_COLOR', 'FORCE_COLOR', 'USER', 'LOGNAME']);

/** Keys that change how programs load code or where they read config from. */
const BLOCKED_EVERYWHERE = new Set([
  'NODE_OPTIONS', 'NODE_PATH', 'NODE_REPL_EXTERNAL_MODULE', 'BASH_ENV', 'ENV', 'IFS', 'PS4', 'PROMPT_COMMAND', 'SHELLOPTS', 'BASHOPTS', 'CDPATH',
  'GLOBIGNORE', 'PYTHONSTARTUP', 'PYTHONPATH', 'PYTHONHOME', 'PYTHONUSERBASE', 'PERL5LIB', 'PERL5OPT', 'PERLLIB', 'PERL5DB', 'RUBYOPT', 'RUBYLIB',
  'GLIBC_TUNABLES', 'GCONV_PATH', 'HOSTALIASES', 'LOCALDOMAIN', 'RES_OPTIONS', 'JAVA_TOOL_OPTIONS', '_JAVA_OPTIONS', 'JDK_JAVA_OPTIONS',
  'GIT_SSH', 'GIT_SSH_COMMAND', 'GIT_EXEC_PATH', 'GIT_ASKPASS', 'SSH_ASKPASS', 'GIT_DIR', 'GIT_TEMPLATE_DIR', 'GIT_EXTERNAL_DIFF',
  'ZDOTDIR', 'LESSOPEN', 'LESSCLOSE', 'OPENSSL_CONF', 'OPENSSL_ENGINES', 'MAKEFLAGS', 'MFLAGS',
  // The rest of OpenClaw's blockedKeys: programs that start other programs or load code named here.
  'BROWSER', 'GIT_EDITOR', 'GIT_WORK_TREE', 'GIT_COMMON_DIR', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY', 'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_NAMESPACE', 'GIT_SEQUENCE_EDITOR', 'GIT_SSL_NO_VERIFY', 'GIT_SSL_CAINFO', 'GIT_SSL_CAPATH', 'KUBECONFIG', 'GOOGLE_APPLICATION_CREDENTIALS',
  'AWS_SHARED_CREDENTIALS_FILE', 'AWS_WEB_IDENTITY_TOKEN_FILE', 'AZURE_AUTH_LOCATION', 'CC', 'CXX', 'CARGO_BUILD_RUSTC', 'CARGO_BUILD_RUSTC_WRAPPER',
  'RUSTC_WRAPPER', 'CARGO_HOME', 'CMAKE_C_COMPILER', 'CMAKE_CXX_COMPILER', 'HELM_HOME', 'DOCKER_HOST', 'SSLKEYLOGFILE', 'JAVA_OPTS',
  'PYTHONBREAKPOINT', 'DOTNET_STARTUP_HOOKS', 'DOTNET_ADDITIONAL_DEPS', 'MAVEN_OPTS', 'SBT_OPTS', 'GRADLE_OPTS', 'ANT_OPTS', 'HGRCPATH',
  // Not in OpenClaw's list: `-W` filters name a category class, which Python imports from sys.path (the script's directory).
  'PYTHONWARNINGS',
  // Not in OpenClaw's list: they change how GNU programs parse their own arguments (options after
  // operands, `tail -c N`), which the safe-bin profiles judge under the default parsing.
  'POSIXLY_CORRECT', '_POSIX2_VERSION',
]);
const BLOCKED_EVERYWHERE_PREFIXES = ['LD_', 'DYLD_', 'BASH_FUNC_'];

/** Keys Warden sets itself: the model may not override them. */
const BLOCKED_OVERRIDE = new Set([
  // bash started with a socket on stdin (Node's pipes are socketpairs) and SHLVL unset takes
  // itself for an sshd-run command and reads ~/.bashrc; Warden sets SHLVL=1 so it never does.
  'SHLVL',
  'HOME', 'PATH', 'SHELL', 'TMPDIR', 'EDITOR', 'VISUAL', 'PAGER', 'GIT_PAGER', 'MANPAGER', 'GIT_EDITOR', 'HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY',
  'NO_PROXY', 'FTP_PROXY', 'SSL_CERT_FILE', 'SSL_CERT_DIR', 'NODE_EXTRA_CA_CERTS', 'REQUESTS_CA_BUNDLE', 'CURL_CA_BUNDLE', 'NODE_TLS_REJECT_UNAUTHORIZED',
  'XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_CACHE_HOME',
  // The rest of OpenClaw's blockedOverrideKeys: where tools read config, credentials, packages and hooks from.
  'GRADLE_USER_HOME', 'GIT_PROXY_COMMAND', 'FCEDIT', 'SUDO_EDITOR', 'HISTFILE', 'PERL5DBCMD', 'WGETRC', 'CURL_HOME', 'CLASSPATH', 'CGO_CFLAGS',
  'CGO_LDFLAGS', 'GOFLAGS', 'CORECLR_PROFILER_PATH', 'PHPRC', 'PHP_INI_SCAN_DIR', 'DENO_DIR', 'BUN_CONFIG_REGISTRY', 'YARN_RC_FILENAME',
  'DOCKER_TLS_VERIFY', 'DOCKER_CERT_PATH', 'DOCKER_CONTEXT', 'PIP_INDEX_URL', 'PIP_PYPI_URL', 'PIP_EXTRA_INDEX_URL', 'PIP_CONFIG_FILE',
  'PIP_FIND_LINKS', 'PIP_TRUSTED_HOST', 'UV_INDEX', 'UV_INDEX_URL', 'UV_PYTHON', 'UV_EXTRA_INDEX_URL', 'UV_DEFAULT_INDEX', 'LIBRARY_PATH', 'CPATH',
  'C_INCLUDE_PATH', 'CPLUS_INCLUDE_PATH', 'OBJC_INCLUDE_PATH', 'GOPROXY', 'GONOSUMCHECK', 'GONOSUMDB', 'GONOPROXY', 'GOPRIVATE', 'GOENV', 'GOPATH',
  'RUSTFLAGS', 'VIRTUAL_ENV', 'LUA_PATH', 'LUA_CPATH', 'GEM_HOME', 'GEM_PATH', 'BUNDLE_GEMFILE', 'COMPOSER_HOME', 'AWS_CONFIG_FILE',
]);
const BLOCKED_OVERRIDE_PREFIXES = ['GIT_CONFIG_', 'NPM_CONFIG_', 'CARGO_REGISTRIES_', 'TF_VAR_'];

export type EnvOverrideCheck = { ok: true } | { ok: false; error: string };

/** Why an override key is refused, or null when it may be set. */
export function blockedOverride(key: string): string | null {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) return 'not a valid variable name';
  const upper = key.toUpperCase();
  if (BLOCKED_EVERYWHERE.has(upper) || BLOCKED_EVERYWHERE_PREFIXES.some((p) => upper.startsWith(p))) return 'it changes how programs load code';
  if (BLOCKED_OVERRIDE.has(upper) || BLOCKED_OVERRIDE_PREFIXES.some((p) => upper.startsWith(p)) || isGitHardeningVariable(upper)) return 'Warden sets it for every command';
  return null;
}

export function checkEnvOverrides(overrides: Readonly<Record<string, unknown>>): EnvOverrideCheck {
  const problems: string[] = [];
  for (const [key, value] of Object.entries(overrides)) {
    const why = blockedOverride(key);
    if (why) problems.push(`${key} (${why})`);
    else if (typeof value !== 'string') problems.push(`${key} (value must be a string)`);
    else if (value.includes('\0')) problems.push(`${key} (value contains NUL)`);
  }
  if (problems.length === 0) return { ok: true };
  return { ok: false, error: `Security violation: environment override refused: ${problems.join(', ')}` };
}

export interface ChildEnvOptions {
  /** The sandbox's private HOME, or Warden's own on the gateway host. */
  home: string;
  /** Model-requested variables; must have passed checkEnvOverrides (a blocked key throws). */
  overrides?: Readonly<Record<string, string>> | undefined;
  /** What git's hardened environment (git-env.ts) adds for this command's repository. */
  git?: GitEnvOptions | undefined;
}

/**
 * The environment a command starts with: the pass-through keys, Warden's PATH, HOME and SHELL,
 * and the checked overrides. `ENV` and `BASH_ENV` (startup files a shell runs), like every other
 * blocked key, can never be in it: they are not passed through and an override naming one throws.
 */
export function buildChildEnv(parent: NodeJS.ProcessEnv, options: ChildEnvOptions): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(parent)) {
    if (value === undefined) continue;
    if (PASS_THROUGH.has(key) || key.startsWith('LC_')) env[key] = value;
  }
  env.PATH = DEFAULT_PATH_DIRS.join(':');
  env.HOME = options.home;
  env.SHELL = '/bin/sh';
  env.SHLVL = '1';
  env.LANG ??= 'C.UTF-8';
  for (const [key, value] of Object.entries(options.overrides ?? {})) {
    const why = blockedOverride(key);
    if (why) throw new Error(`environment override ${key} refused: ${why}`);
    env[key] = value;
  }
  Object.assign(env, hardenedGitEnv(options.git));
  return env;
}
