import path from 'node:path';
import { knownGitCommands, parseGitArgv } from './git-argv.js';
import { commandName } from './resolve.js';

/**
 * Binaries that execute repository configuration: what they run is named by files in the
 * working directory or repository (`.git/config` and hooks, a Makefile, `package.json` scripts,
 * `build.rs`, `conftest.py`, a compose file, …), so an argv that looks harmless (`git status`,
 * `make test`, `npm test`) runs whatever the agent last wrote there. The agent can write its
 * workspace, so an allowlist entry for such a binary is an entry for arbitrary code.
 *
 * The class boundary: a binary is in it when its ordinary operation — without any option
 * that asks for it — starts programs or evaluates code taken from project files it finds on
 * its own. Interpreters running a script named on the command line (`python3 job.py`) are not
 * in it: what they run is the named file, which allow-always binds by content instead. Tools
 * that only read data files (`grep`, `jq`, `cat`) are not in it.
 *
 * Pure apart from `knownGitCommands` (asks the git binary once which commands it has).
 */
export interface RepoConfigHit {
  /** The class member as named (`git`, `npm`, `python3 -m pytest`). */
  binary: string;
  /** What it runs from the repository, for messages and the audit. */
  reads: string;
  /**
   * Why even an entry with `trustRepoConfig: true` does not cover this invocation (a git alias,
   * `git -c …`); null when the operator's opt-in covers it.
   */
  untrusted: string | null;
}

const GIT = 'repository config (.git/config and what it includes: fsmonitor, pager, editor, filters, diff and merge drivers, ssh and credential programs, aliases) and hooks';
const NODE_PM = 'package.json scripts and lifecycle hooks, .npmrc (script-shell, node-options), installed packages';
const PY_PROJECT = 'setup.py / pyproject build backends, conftest.py, tox.ini, noxfile.py and modules in the working directory';

/** Member names (normalised: lower case, no `.exe`, version suffix stripped) → what they read. */
const MEMBERS: ReadonlyMap<string, string> = new Map([
  ['git', GIT],
  ['hg', '.hg/hgrc hooks and extensions'],
  ['make', 'Makefile recipes'], ['gmake', 'Makefile recipes'], ['bmake', 'Makefile recipes'], ['pmake', 'Makefile recipes'],
  ['cmake', 'CMakeLists.txt (execute_process, custom commands)'], ['ctest', 'CTest files and the tests they name'],
  ['meson', 'meson.build (run_command, custom targets)'], ['ninja', 'build.ninja commands'], ['scons', 'SConstruct (Python)'],
  ['bazel', 'BUILD / WORKSPACE files and .bazelrc'], ['bazelisk', '.bazelversion, BUILD files and .bazelrc'],
  ['just', 'justfile recipes'], ['task', 'Taskfile.yml tasks'], ['rake', 'Rakefile (Ruby)'],
  ['npm', NODE_PM], ['npx', NODE_PM], ['pnpm', NODE_PM], ['pnpx', NODE_PM], ['yarn', NODE_PM], ['yarnpkg', NODE_PM],
  ['bunx', NODE_PM], ['corepack', 'package.json packageManager and the package manager it fetches'],
  ['cargo', 'build.rs, proc macros, .cargo/config.toml (runner, rustc-wrapper, aliases)'],
  ['go', 'go.mod toolchain lines, go:generate directives, test code, go.work'],
  ['pip', PY_PROJECT], ['pipx', PY_PROJECT], ['uv', 'pyproject.toml, build backends and uv.toml'], ['poetry', 'pyproject.toml and build backends'],
  ['pdm', 'pyproject.toml scripts and build backends'], ['hatch', 'pyproject.toml environments and build hooks'], ['pipenv', 'Pipfile and setup.py'],
  ['tox', 'tox.ini / pyproject commands'], ['nox', 'noxfile.py'], ['pytest', 'conftest.py, pytest.ini addopts and plugins, test modules'],
  ['py.test', 'conftest.py, pytest.ini addopts and plugins, test modules'],
  ['sphinx-build', 'conf.py (Python)'], ['mkdocs', 'mkdocs.yml hooks and plugins'], ['django-admin', 'the settings module of the project'],
  ['mvn', 'pom.xml plugins, .mvn/extensions.xml, .mvn/jvm.config'], ['mvnw', '.mvn/wrapper and pom.xml plugins'],
  ['gradle', 'build.gradle(.kts), settings.gradle, init scripts, gradle.properties'], ['gradlew', 'gradle/wrapper and build.gradle(.kts)'],
  ['ant', 'build.xml'], ['sbt', 'build.sbt and project/*.scala'], ['lein', 'project.clj'], ['mix', 'mix.exs'],
  ['bundle', 'Gemfile (Ruby)'], ['bundler', 'Gemfile (Ruby)'], ['gem', 'gemspecs and native extensions'],
  ['composer', 'composer.json scripts'], ['dotnet', 'project files (MSBuild tasks)'], ['msbuild', 'project files (MSBuild tasks)'],
  ['swift', 'Package.swift'],
  ['terraform', 'providers, external data sources and local-exec provisioners'], ['tofu', 'providers, external data sources and local-exec provisioners'],
  ['terragrunt', 'terragrunt.hcl hooks and run_cmd'], ['ansible', 'ansible.cfg in the working directory and its plugins'],
  ['ansible-playbook', 'playbooks, ansible.cfg in the working directory and its plugins'], ['vagrant', 'Vagrantfile (Ruby)'],
  ['docker-compose', 'compose files (build contexts, volumes)'], ['podman-compose', 'compose files (build contexts, volumes)'],
  ['direnv', '.envrc (shell)'], ['pre-commit', '.pre-commit-config.yaml hooks'], ['lefthook', 'lefthook.yml hooks'], ['husky', '.husky hooks'],
  ['mise', '.mise.toml tasks and env hooks'], ['nix-shell', 'shell.nix / default.nix'], ['nix', 'flake.nix and nix expressions'],
  ['eslint', 'eslint.config.js (JavaScript) and plugins'], ['prettier', 'prettier.config.js and plugins'], ['jest', 'jest.config.js and test files'],
  ['vitest', 'vitest.config.ts and test files'], ['mocha', '.mocharc.js and test files'], ['webpack', 'webpack.config.js'],
  ['vite', 'vite.config.js'], ['rollup', 'rollup.config.js'], ['babel', 'babel.config.js and plugins'],
  ['gulp', 'gulpfile.js'], ['grunt', 'Gruntfile.js'], ['nx', 'project.json targets and plugins'], ['turbo', 'turbo.json tasks (package scripts)'],
  ['lerna', 'package scripts across the workspace'], ['rush', 'rush.json commands and package scripts'], ['next', 'next.config.js'],
  ['nuxt', 'nuxt.config.ts'], ['astro', 'astro.config.mjs'], ['gatsby', 'gatsby-config.js and gatsby-node.js'], ['ng', 'angular.json builders'],
  ['hardhat', 'hardhat.config.js'], ['truffle', 'truffle-config.js'], ['forge', 'foundry.toml (ffi) and build scripts'],
  ['zig', 'build.zig (Zig code)'], ['cabal', 'Setup.hs and package hooks'], ['stack', 'stack.yaml, Setup.hs and package hooks'],
  ['dune', 'dune files (rules and actions)'], ['rebar3', 'rebar.config hooks and plugins'], ['pants', 'BUILD files and pants.toml plugins'],
  ['buck', 'BUCK files'], ['buck2', 'BUCK files'], ['xmake', 'xmake.lua'], ['premake5', 'premake5.lua'], ['waf', 'wscript (Python)'],
  ['qmake', '.pro files (system())'], ['autoreconf', 'configure.ac and m4 macros (m4_esyscmd)'], ['autoconf', 'configure.ac and m4 macros'],
  ['automake', 'Makefile.am and m4 macros'], ['aclocal', 'm4 macros'], ['xcodebuild', 'project build phases'], ['pod', 'Podfile (Ruby)'],
  ['fastlane', 'Fastfile (Ruby)'], ['rails', 'the application code and config'], ['rspec', '.rspec and spec_helper.rb'], ['phpunit', 'phpunit.xml bootstrap'],
  ['cucumber', 'step definitions and support files'], ['behave', 'steps and environment.py'], ['cpanm', 'Makefile.PL / Build.PL'],
  ['conda', 'environment.yml (pip and post-link scripts)'], ['mamba', 'environment.yml (pip and post-link scripts)'],
  ['micromamba', 'environment.yml (pip and post-link scripts)'], ['rye', 'pyproject.toml scripts and build backends'], ['pixi', 'pixi.toml tasks'],
  ['flit', 'pyproject.toml and the package module'], ['maturin', 'build.rs and pyproject.toml'], ['invoke', 'tasks.py'], ['fab', 'fabfile.py'],
  ['pulumi', 'the Pulumi program in the project'], ['cdk', 'the CDK app (cdk.json app command)'], ['serverless', 'serverless.yml plugins and hooks'],
  ['sls', 'serverless.yml plugins and hooks'], ['packer', 'provisioners in the template'], ['earthly', 'Earthfile'], ['skaffold', 'skaffold.yaml hooks'],
  ['tilt', 'Tiltfile (Starlark, local())'], ['helmfile', 'helmfile.yaml hooks'], ['act', 'workflow files (run steps)'],
]);

/** `python -m <module>`: modules that run project code (tests, builds, installs). */
const PYTHON_MODULES = new Set(['pip', 'pytest', 'tox', 'nox', 'unittest', 'build', 'setuptools', 'poetry', 'pdm', 'hatch', 'uv', 'pipenv', 'sphinx', 'mkdocs', 'django', 'invoke', 'doit', 'behave', 'alembic', 'flask']);
const PYTHONS = /^(python|pypy)(\d+(\.\d+)*)?$/;

/** Lower case, no `.exe`, no trailing version (`pip3.11` → `pip`, `python3.12` → `python`). */
export function memberName(token: string): string {
  const name = commandName(token);
  if (MEMBERS.has(name)) return name;
  const unversioned = withoutVersion(name);
  return MEMBERS.has(unversioned) ? unversioned : name;
}

const isDigitAt = (text: string, i: number) => i >= 0 && i < text.length && text.charCodeAt(i) >= 0x30 && text.charCodeAt(i) <= 0x39;

/**
 * `name` without the trailing version `/-?\d+(\.\d+)*$/` takes off, scanned back from the end:
 * the pattern is retried from every digit of a long run, and argv[0] is the model's.
 */
export function withoutVersion(name: string): string {
  let start = name.length;
  while (isDigitAt(name, start - 1) || (name[start - 1] === '.' && isDigitAt(name, start - 2) && isDigitAt(name, start))) start--;
  if (start === name.length) return name;
  if (name[start - 1] === '-') start--;
  return name.slice(0, start);
}

export interface ClassifyOptions {
  /** Resolved real path of argv[0]: a link named `g` to git is git. */
  realPath?: string | null | undefined;
}

/** Whether this effective argv (wrappers removed) runs repository configuration, and how. */
export function repoConfigInvocation(argv: readonly string[], options: ClassifyOptions = {}): RepoConfigHit | null {
  if (argv.length === 0) return null;
  const names = [memberName(argv[0]!), ...(options.realPath ? [memberName(options.realPath)] : [])];
  // The arguments are copied only for the programs that read them: most argvs are none of these.
  const args = (): readonly string[] => argv.slice(1);
  if (names.includes('git')) {
    const gitPath = options.realPath ?? (path.isAbsolute(argv[0]!) ? argv[0]! : null);
    const parsed = parseGitArgv(args(), gitPath ? knownGitCommands(gitPath) : null);
    return { binary: 'git', reads: GIT, untrusted: parsed.untrusted };
  }
  const member = names.find((n) => MEMBERS.has(n));
  if (member) return { binary: member, reads: MEMBERS.get(member)!, untrusted: null };
  const name = names[0]!;
  if (PYTHONS.test(name)) return pythonModule(name, args());
  if (name === 'node' || name === 'nodejs') {
    // `node --run X` runs a package.json script; `node --test` runs every test file it finds.
    const flag = args().find((a) => /^--(run|test)(=|$)/.test(a));
    if (flag) return { binary: `${name} ${flag.split('=')[0]}`, reads: flag.startsWith('--run') ? NODE_PM : 'test files found in the working directory', untrusted: null };
    return null;
  }
  const sub = firstOperand(argv, 1);
  if (name === 'deno' && (sub === 'task' || sub === 'test' || sub === 'bench')) return { binary: `deno ${sub}`, reads: 'deno.json tasks and test files', untrusted: null };
  if (name === 'bun' && sub !== null && !/[./]/.test(sub)) return { binary: `bun ${sub}`, reads: NODE_PM, untrusted: null };
  if ((name === 'docker' || name === 'podman') && (sub === 'compose' || sub === 'build' || sub === 'buildx')) {
    return { binary: `${name} ${sub}`, reads: 'compose files and Dockerfiles (build steps, bind mounts)', untrusted: null };
  }
  return null;
}

function pythonModule(name: string, args: readonly string[]): RepoConfigHit | null {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--' || !a.startsWith('-') || a === '-') return null;
    // `.*$` fails on a line break; tested first, so the pattern never retries the rest from every `m`.
    const m = /[\n\r\u2028\u2029]/.test(a) ? null : /^-[A-Za-z]*m([\s\S]*)$/.exec(a);
    if (m && !/c/.test(a.slice(1, a.indexOf('m')))) {
      const module = (m[1] || args[i + 1] || '').split('.')[0]!;
      // Every `-m` module is looked up in the working directory first; these run project code by design.
      return PYTHON_MODULES.has(module) ? { binary: `${name} -m ${module}`, reads: PY_PROJECT, untrusted: null } : null;
    }
    if (/^-[A-Za-z]*c/.test(a)) return null;
    if (['-W', '-X', '-Q', '--check-hash-based-pycs'].includes(a)) i++;
  }
  return null;
}

/** The first of `args` from index `from` that is not an option. */
function firstOperand(args: readonly string[], from: number): string | null {
  for (let i = from; i < args.length; i++) if (!args[i]!.startsWith('-')) return args[i]!;
  return null;
}

/** Every class member's name, for docs and tests. */
export const REPO_CONFIG_MEMBERS: readonly string[] = [...MEMBERS.keys()];

/** Binaries that are class members only with some arguments (`python3 -m pytest`, `node --run`). */
const CONDITIONAL = ['python', 'python3', 'pypy', 'pypy3', 'node', 'nodejs', 'deno', 'bun', 'docker', 'podman'];

/**
 * The class members an allowlist entry can cover: its pattern names one (`/usr/bin/git`, `git`,
 * `/usr/bin/g*`, `*`, `/usr/**`), or names an interpreter and its argPattern leaves room for a
 * member form (`python3` with no argPattern covers `python3 -m pytest`). For the audit and for
 * whoever builds a default allowlist.
 */
export function entryRepoConfigMembers(entry: { pattern: string; argPattern?: string | undefined }): string[] {
  const { pattern, argPattern } = entry;
  if (pattern.startsWith('=')) return [];
  const last = pattern === '*' || pattern.endsWith('**') ? '*' : (pattern.split('/').pop() ?? pattern);
  const re = new RegExp(`^${last.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*+/g, '.*').replace(/\?/g, '.')}$`, 'i');
  const matches = (name: string) => re.test(name) || memberName(last) === name;
  const found = REPO_CONFIG_MEMBERS.filter(matches);
  // `/usr/bin/python3.11` is python: versioned names count as their interpreter.
  const conditional = /[*?]/.test(last) ? CONDITIONAL.filter(matches) : CONDITIONAL.filter((c) => c === commandName(last) || (PYTHONS.test(commandName(last)) && PYTHONS.test(c)));
  for (const name of conditional.slice(0, /[*?]/.test(last) ? undefined : 1)) {
    // An argPattern this check cannot read (a regex, a glob) may allow a member form: flag it.
    const readable = argPattern !== undefined && argPattern !== '' && !argPattern.startsWith('^') && !/[*?]/.test(argPattern) && !argPattern.includes('\x00');
    if (!readable) found.push(`${name} (with arguments that run project code)`);
    else {
      const hit = repoConfigInvocation([name, ...argPattern.split(' ')]);
      if (hit) found.push(hit.binary);
    }
  }
  return found;
}
