import { commandName } from './resolve.js';
import { shellInvocation } from './wrappers.js';

/**
 * Which operands of an interpreter's argv name the file it runs: `python3 job.py` runs job.py,
 * `node -r ./hook.js app.js` runs both, `sh -e deploy.sh` runs deploy.sh. An allow-always grant
 * binds the content of these files, so the program that runs later is the one approved.
 *
 * The option grammar is the interpreter's own: an option whose value is a separate argument
 * (`python -W error job.py`, `perl -I lib x.pl`) is never mistaken for the script, and an
 * option this table does not know makes the script unknown (`unknown`), which allow-always
 * refuses to store: a value-taking option we misread would bind the wrong file. Pure.
 */
export type ScriptOperands =
  /** Not an interpreter, or one whose program is inline or on stdin (judged elsewhere). */
  | { kind: 'none' }
  | { kind: 'files'; files: string[] }
  | { kind: 'unknown'; why: string };

/**
 * Where a script operand sits in the argv: the word at `index` (argv[0] is the interpreter),
 * after `prefix` (`--import=`, `--file=`; empty for a word of its own). The verified run puts
 * the copy's path exactly there, and nowhere else.
 */
export interface OperandSite {
  index: number;
  prefix: string;
  value: string;
}

export type Sites = { kind: 'none' } | { kind: 'files'; sites: OperandSite[] } | { kind: 'unknown'; why: string };

const NONE: Sites = { kind: 'none' };
const unknown = (why: string): Sites => ({ kind: 'unknown', why });
const files = (...list: OperandSite[]): Sites => ({ kind: 'files', sites: list });
/** The operand at `args[i]` (args is argv without argv[0]), after `prefix`. */
const at = (args: readonly string[], i: number, prefix = ''): OperandSite => ({ index: i + 1, prefix, value: args[i]!.slice(prefix.length) });

/** `python3.12` → `python`, `pypy3` → `python`, `perl5.36` → `perl`, `nodejs` → `node`. */
export function interpreterFamily(token: string): string {
  const name = commandName(token);
  if (/^(python|pypy)(\d+(\.\d+)*)?$/.test(name)) return 'python';
  const versioned = /^(ruby|perl|php|lua|luajit|node|tclsh|wish)\d+(\.\d+)*$/.exec(name);
  if (versioned) return versioned[1]!;
  if (name === 'nodejs') return 'node';
  if (['ash', 'bash', 'dash', 'ksh', 'sh', 'zsh', 'mksh', 'fish'].includes(name)) return 'shell';
  if (['awk', 'gawk', 'mawk', 'nawk'].includes(name)) return 'awk';
  if (name === 'sed' || name === 'gsed') return 'sed';
  return name;
}

export function scriptOperands(argv: readonly string[]): ScriptOperands {
  const found = scriptOperandSites(argv);
  return found.kind === 'files' ? { kind: 'files', files: found.sites.map((s) => s.value) } : found;
}

/** The script operands with where each sits in the argv. */
export function scriptOperandSites(argv: readonly string[]): Sites {
  if (argv.length === 0) return NONE;
  const family = interpreterFamily(argv[0]!);
  const args = argv.slice(1);
  switch (family) {
    case 'python':
      return python(args);
    case 'node':
      return node(args);
    case 'perl':
      return perl(args);
    case 'ruby':
      return ruby(args);
    case 'php':
      return php(args);
    case 'lua':
    case 'luajit':
      return generic(args, { inline: ['-e'], values: ['-l'], flags: ['-i', '-v', '-E', '-W', '-'] });
    case 'shell':
      return shell(argv);
    case 'awk':
      return scriptFiles(args, ['-f', '--file'], ['-i', '--include']);
    case 'sed':
      return scriptFiles(args, ['-f', '--file'], []);
    case 'rscript':
      return generic(args, { inline: ['-e'], values: [], flags: ['--vanilla', '--verbose', '--default-packages', '--no-environ', '--no-site-file', '--no-init-file', '--restore', '--save', '--no-save'] });
    case 'tclsh':
    case 'wish':
    case 'expect':
      return generic(args, { inline: ['-c'], values: [], flags: [] });
    case 'osascript':
      return generic(args, { inline: ['-e'], values: ['-l', '-s'], flags: ['-i'] });
    case 'tsx':
    case 'ts-node':
      return node(args);
    case 'java':
      return java(args);
    case 'deno':
      return deno(args);
    case 'bun':
      return bun(args);
    case 'pwsh':
    case 'powershell':
      return pwsh(args);
    default:
      // Interpreters whose options this table does not spell out: the first operand, and any option makes it unknown.
      return FIRST_OPERAND.has(family) ? generic(args, { inline: [], values: [], flags: [] }) : NONE;
  }
}

const FIRST_OPERAND = new Set(['julia', 'elixir', 'escript', 'guile', 'racket', 'ocaml', 'groovy', 'raku', 'rakudo', 'crystal', 'gjs', 'qjs', 'clisp', 'jshell', 'kotlin', 'scala']);

/** java: `-jar X` or a single-file `X.java`; a class name is looked up on the classpath (the working directory by default). */
function java(args: readonly string[]): Sites {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '-jar') return args[i + 1] === undefined ? NONE : files(at(args, i + 1));
    if (['-cp', '-classpath', '--class-path', '-p', '--module-path', '--source', '--add-modules', '-m', '--module'].includes(a)) {
      return unknown(`java \`${a}\` loads classes from a path, not one file`);
    }
    if (['-version', '--version', '-help', '--help', '-h', '-showversion'].includes(a)) return NONE;
    if (/^-(D|X|ea|da|esa|dsa|verbose|server|client|agentlib|agentpath|javaagent)/.test(a)) {
      if (/^-(agentlib|agentpath|javaagent)/.test(a)) return unknown(`java \`${a}\` loads an agent`);
      continue;
    }
    if (a.startsWith('-')) return unknown(`java option \`${a}\` is not known`);
    return a.endsWith('.java') ? files(at(args, i)) : unknown('a java class is looked up on the classpath, the working directory by default');
  }
  return NONE;
}

/** deno: `deno run [options] X` or `deno X`; --config and --import-map decide what the imports load. */
function deno(args: readonly string[]): Sites {
  let i = 0;
  if (args[0] === 'run') i = 1;
  else if (args[0] !== undefined && !args[0].startsWith('-') && !/[./]/.test(args[0])) return unknown(`\`deno ${args[0]}\` is not a script run`);
  const bound: OperandSite[] = [];
  for (; i < args.length; i++) {
    const a = args[i]!;
    const eq = a.indexOf('=');
    const flag = eq > 0 ? a.slice(0, eq) : a;
    if (!a.startsWith('-')) return files(...bound, at(args, i));
    if (['--config', '-c', '--import-map', '--env-file'].includes(flag)) {
      const value = eq > 0 ? at(args, i, a.slice(0, eq + 1)) : args[i + 1] === undefined ? undefined : at(args, ++i);
      if (value === undefined) return unknown(`\`${a}\` without a value`);
      bound.push(value);
      continue;
    }
    if (/^--(allow|deny)-/.test(a) || ['-A', '-q', '--quiet', '--no-prompt', '--check', '--no-check', '--reload', '-r', '--watch', '--cached-only'].includes(flag) || flag.startsWith('--unstable')) continue;
    if (eq > 0 && ['--v8-flags', '--seed', '--location', '--lock', '--cert'].includes(flag)) continue;
    return unknown(`deno option \`${a}\` is not known`);
  }
  return NONE;
}

/** bun: `bun [run] X.ts`; a name without a path or extension is a package script (repository configuration). */
function bun(args: readonly string[]): Sites {
  for (let i = args[0] === 'run' ? 1 : 0; i < args.length; i++) {
    const a = args[i]!;
    if (['-e', '--eval', '-p', '--print'].includes(a)) return NONE;
    if (['--watch', '--hot', '--smol', '-b', '--bun', '--silent'].includes(a)) continue;
    if (a.startsWith('-')) return unknown(`bun option \`${a}\` is not known`);
    return /[./]/.test(a) ? files(at(args, i)) : unknown(`\`bun ${a}\` runs a package script or binary, not one file`);
  }
  return NONE;
}

/** pwsh: `-File X` or the first operand; `-Command` is inline code. */
function pwsh(args: readonly string[]): Sites {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const lower = a.toLowerCase();
    if (lower === '-file' || lower === '-f') return args[i + 1] === undefined ? NONE : files(at(args, i + 1));
    if (['-command', '-c', '-encodedcommand', '-e', '-ec'].includes(lower)) return NONE;
    if (['-noprofile', '-nop', '-noninteractive', '-nologo', '-mta', '-sta'].includes(lower)) continue;
    if (a.startsWith('-')) return unknown(`pwsh option \`${a}\` is not known`);
    return files(at(args, i));
  }
  return NONE;
}

interface Grammar {
  /** Options whose value is code: no file to bind (inline evaluation is judged elsewhere). */
  inline: readonly string[];
  /** Options that take the next argument (or an attached value). */
  values: readonly string[];
  /** Options without a value. */
  flags: readonly string[];
}

/** First operand after options, with a small option grammar. */
function generic(args: readonly string[], g: Grammar): Sites {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') return args[i + 1] === undefined ? NONE : files(at(args, i + 1));
    if (a === '-') return NONE;
    if (!a.startsWith('-')) return files(at(args, i));
    if (g.inline.some((o) => a === o || a.startsWith(o))) return NONE;
    if (g.values.includes(a)) {
      i++;
      continue;
    }
    if (g.values.some((o) => a.startsWith(o) && o.length === 2)) continue;
    if (g.flags.includes(a)) continue;
    return unknown(`option \`${a}\` is not known`);
  }
  return NONE;
}

/** CPython's grammar: short flags cluster; -W/-X take a value; -c, -m and `-` end the options. */
function python(args: readonly string[]): Sites {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') return args[i + 1] === undefined ? NONE : files(at(args, i + 1));
    if (a === '-') return NONE;
    if (!a.startsWith('-')) return files(at(args, i));
    if (a === '--help' || a === '--version') return NONE;
    if (a === '--check-hash-based-pycs') {
      i++;
      continue;
    }
    if (a.startsWith('--')) return unknown(`python option \`${a}\` is not known`);
    for (let k = 1; k < a.length; k++) {
      const c = a[k]!;
      if (c === 'c') return NONE;
      // The module is looked up on sys.path, the working directory first: no one file runs.
      if (c === 'm') return unknown('`python -m` runs a module found on sys.path (the working directory first), not one file');
      if (c === 'W' || c === 'X' || c === 'Q') {
        if (k === a.length - 1) i++;
        break;
      }
      if (!'bBdEhiIOPqsSuvVx3tR'.includes(c)) return unknown(`python option \`-${c}\` is not known`);
    }
  }
  return NONE;
}

/** Node options that take no value. Anything else without `=` makes the script unknown. */
const NODE_FLAGS = new Set([
  '--no-warnings', '--enable-source-maps', '--trace-warnings', '--trace-uncaught', '--trace-deprecation', '--throw-deprecation',
  '--no-deprecation', '--pending-deprecation', '--expose-gc', '--abort-on-uncaught-exception', '--preserve-symlinks',
  '--preserve-symlinks-main', '--experimental-vm-modules', '--experimental-specifier-resolution', '--no-experimental-fetch',
  '--experimental-strip-types', '--experimental-transform-types', '--no-experimental-strip-types', '--inspect', '--inspect-brk',
  '--frozen-intrinsics', '--disable-proto', '--zero-fill-buffers', '--use-strict', '--check', '-c', '--interactive', '-i', '--watch',
  '--no-addons', '--jitless', '--experimental-detect-module', '--no-experimental-detect-module', '--experimental-wasm-modules',
]);
const NODE_VALUES = new Set(['--title', '--input-type', '--conditions', '-C', '--stack-size', '--max-old-space-size', '--unhandled-rejections', '--dns-result-order']);
/** Options whose value is a module node loads before the script: code as much as the script. */
const NODE_PRELOADS = new Set(['-r', '--require', '--import', '--loader', '--experimental-loader']);

function node(args: readonly string[]): Sites {
  const bound: OperandSite[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') return args[i + 1] === undefined ? NONE : files(...bound, at(args, i + 1));
    if (a === '-') return NONE;
    if (!a.startsWith('-')) return files(...bound, at(args, i));
    const eq = a.indexOf('=');
    const flag = eq > 0 ? a.slice(0, eq) : a;
    if (['-e', '--eval', '-p', '--print'].includes(flag)) return NONE;
    if (a === '--version' || a === '-v' || a === '--help' || a === '-h') return NONE;
    if (NODE_PRELOADS.has(flag) || flag === '--env-file' || flag === '--env-file-if-exists') {
      const value = eq > 0 ? at(args, i, a.slice(0, eq + 1)) : args[i + 1] === undefined ? undefined : at(args, ++i);
      if (value === undefined) return unknown(`\`${a}\` without a value`);
      // A bare specifier resolves through node_modules, which the agent can write: no one file.
      if (NODE_PRELOADS.has(flag) && !/^(\.{1,2}\/|\/)/.test(value.value)) return unknown(`\`${flag} ${value.value}\` loads a package from node_modules, not one file`);
      bound.push(value);
      continue;
    }
    if (NODE_VALUES.has(flag)) {
      if (eq < 0) i++;
      continue;
    }
    if (NODE_FLAGS.has(flag) || (eq > 0 && flag.startsWith('--'))) continue;
    return unknown(`node option \`${a}\` is not known`);
  }
  return NONE;
}

/** perl: clustered switches; -e/-E code; -I/-M/-m take a value, attached or next. */
function perl(args: readonly string[]): Sites {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') return args[i + 1] === undefined ? NONE : files(at(args, i + 1));
    if (a === '-') return NONE;
    if (!a.startsWith('-')) return files(at(args, i));
    const cluster = a.slice(1);
    // Switches with an attached value end the cluster: -Ilib, -MFoo, -i.bak, -l0, -0777, -d:Trace.
    for (let k = 0; k < cluster.length; k++) {
      const c = cluster[k]!;
      if (c === 'e' || c === 'E') return NONE;
      if (c === 'I' || c === 'M' || c === 'm') {
        if (k === cluster.length - 1) i++;
        break;
      }
      if ('ilx0CdDV'.includes(c)) break;
      if (!'acfnpsStTuUvwWX'.includes(c)) return unknown(`perl switch \`-${c}\` is not known`);
    }
  }
  return NONE;
}

/** ruby: -e code; -I/-r/-E/-F take a value; -C and -S change which file runs. */
function ruby(args: readonly string[]): Sites {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') return args[i + 1] === undefined ? NONE : files(at(args, i + 1));
    if (a === '-') return NONE;
    if (!a.startsWith('-')) return files(at(args, i));
    if (a.startsWith('-e')) return NONE;
    if (a.startsWith('-C') || a === '-S' || a.startsWith('-x')) return unknown(`ruby \`${a}\` changes which file runs`);
    if (['-I', '-r', '-E', '-F'].includes(a)) {
      i++;
      continue;
    }
    if (/^-[IrEFKW]./.test(a)) continue;
    if (/^-[wvdclnpas]+$/.test(a) || ['--disable-gems', '--verbose', '--version', '--help'].includes(a) || /^--(enable|disable)=/.test(a)) continue;
    return unknown(`ruby option \`${a}\` is not known`);
  }
  return NONE;
}

/** php: `-f file` or the first operand; `-r` code; ini options (`-c`, `-d`) can prepend other files. */
function php(args: readonly string[]): Sites {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') return args[i + 1] === undefined ? NONE : files(at(args, i + 1));
    if (a === '-f') return args[i + 1] === undefined ? NONE : files(at(args, i + 1));
    if (!a.startsWith('-')) return files(at(args, i));
    if (a === '-r' || a === '-R' || a === '-B' || a === '-E' || a === '-a') return NONE;
    if (a === '-c' || a === '-d' || a.startsWith('-d')) return unknown(`php \`${a}\` sets ini options that can load other files`);
    if (['-n', '-q', '-H', '-e', '-l', '-s', '-w'].includes(a)) continue;
    return unknown(`php option \`${a}\` is not known`);
  }
  return NONE;
}

/** A shell runs its script operand; the shell's own option parser (wrappers.ts) finds it. */
function shell(argv: readonly string[]): Sites {
  const invocation = shellInvocation(argv);
  if (!invocation) return NONE;
  if (invocation.payload !== null) return NONE; // `-c`: the payload's own commands are bound
  // The file the shell reads its program from, with or without options (a carrier or not).
  if (invocation.operand !== null && invocation.operandIndex !== null) return invocation.operand === '-' ? NONE : files({ index: invocation.operandIndex, prefix: '', value: invocation.operand });
  // No script and no payload: stdin (judged as inline code), or an option we cannot read.
  return argv.slice(1).some((a) => !a.startsWith('-') && !a.startsWith('+')) ? unknown('the shell has options this check cannot read') : NONE;
}

/** awk/sed: program files given with -f (and gawk's -i includes); without one the program is inline. */
function scriptFiles(args: readonly string[], fileOptions: readonly string[], includeOptions: readonly string[]): Sites {
  const found: OperandSite[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') break;
    const eq = a.indexOf('=');
    const flag = eq > 0 && a.startsWith('--') ? a.slice(0, eq) : a;
    if (fileOptions.includes(flag) || includeOptions.includes(flag)) {
      const value = eq > 0 && a.startsWith('--') ? at(args, i, a.slice(0, eq + 1)) : args[i + 1] === undefined ? undefined : at(args, ++i);
      if (value !== undefined) found.push(value);
      continue;
    }
    if (a === '-l' || a === '--load') return unknown('gawk `-l` loads a shared library');
    if (a === '-F' || a === '-v') i++;
  }
  return found.length > 0 ? files(...found) : NONE;
}
