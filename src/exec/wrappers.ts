import { commandName } from './resolve.js';

/**
 * Dispatch wrappers (reference A8). A transparent wrapper (`nice -n 5 git status`) is removed and
 * the policy judges the command it runs. A wrapper that changes what runs or how (`sudo`,
 * `env FOO=1`, unknown options) blocks the segment: it can never be satisfied or persisted.
 * Pure: works on argv only.
 */
export type Unwrapped =
  | { ok: true; argv: string[]; wrappers: string[] }
  | { ok: false; reason: string; wrappers: string[] };

const MAX_WRAPPER_DEPTH = 4;

const BLOCKED_WRAPPERS = new Set(['sudo', 'doas', 'chrt', 'ionice', 'setsid', 'taskset']);
/** Binaries that run the applet named by argv[0] (or by their first argument). */
export const MULTICALL_BINARIES: ReadonlySet<string> = new Set(['busybox', 'toybox']);
const MULTICALL = MULTICALL_BINARIES;
export const POSIX_SHELLS = new Set(['ash', 'bash', 'dash', 'fish', 'ksh', 'sh', 'zsh']);

/** Every name `peel` handles; any other argv[0] is no wrapper. */
const WRAPPER_NAMES: ReadonlySet<string> = new Set([...BLOCKED_WRAPPERS, ...MULTICALL, 'env', 'nice', 'nohup', 'timeout', 'stdbuf', 'time']);

const NUMBER = /^[+-]?\d+$/;
const DURATION = /^\d+(\.\d+)?[smhd]?$/;

type Peeled = { ok: true; rest: string[] } | { ok: false; reason: string };
type Step = Peeled | null;

/** Returns what remains after one wrapper, a blocking reason, or null when argv[0] is no wrapper. */
function peel(argv: string[]): Step {
  const name = commandName(argv[0]!);
  // Most segments run no wrapper: answer those before copying an argv that may hold thousands of words.
  if (!WRAPPER_NAMES.has(name)) return null;
  const args = argv.slice(1);
  if (BLOCKED_WRAPPERS.has(name)) return { ok: false, reason: `\`${name}\` changes who or how a command runs` };
  if (MULTICALL.has(name)) {
    const applet = args[0];
    if (applet !== undefined && POSIX_SHELLS.has(commandName(applet))) return { ok: true, rest: args };
    return { ok: false, reason: `\`${name}\` applet ${applet ? `\`${applet}\`` : '(none)'} is not a shell` };
  }
  switch (name) {
    case 'env':
      return peelEnv(args);
    case 'nice':
      return peelOptions(name, args, { values: new Set(['-n', '--adjustment', '--priority']), valueTest: NUMBER, numericShort: true });
    case 'nohup':
      return peelOptions(name, args, {});
    case 'timeout': {
      const step = peelOptions(name, args, {
        flags: new Set(['--foreground', '--preserve-status', '-v', '--verbose']),
        values: new Set(['-k', '--kill-after', '-s', '--signal']),
      });
      if (!step.ok) return step;
      const [duration, ...rest] = step.rest;
      if (duration === undefined || !DURATION.test(duration)) return { ok: false, reason: '`timeout` without a valid duration' };
      return { ok: true, rest };
    }
    case 'stdbuf':
      return peelOptions(name, args, { values: new Set(['-i', '-o', '-e', '--input', '--output', '--error']) });
    case 'time':
      return peelOptions(name, args, {
        flags: new Set(['-a', '-h', '-l', '-p', '-q', '-v', '-V', '--append', '--portability', '--quiet', '--verbose']),
        values: new Set(['-f', '--format']),
      });
    default:
      return null;
  }
}

function peelEnv(args: string[]): Step {
  const first = args[0];
  if (first === undefined) return { ok: false, reason: '`env` without a command' };
  if (first.startsWith('-') || first.includes('=')) {
    return { ok: false, reason: '`env` with options or assignments changes the environment' };
  }
  return { ok: true, rest: args };
}

interface OptionSpec {
  flags?: ReadonlySet<string>;
  values?: ReadonlySet<string>;
  valueTest?: RegExp;
  /** `nice -5`: a bare number is an adjustment. */
  numericShort?: boolean;
}

function peelOptions(name: string, args: string[], spec: OptionSpec): Peeled {
  let i = 0;
  while (i < args.length) {
    const arg = args[i]!;
    if (arg === '--') return { ok: true, rest: args.slice(i + 1) };
    if (!arg.startsWith('-') || arg === '-') break;
    if (spec.numericShort && /^-\d+$/.test(arg)) {
      i++;
      continue;
    }
    if (spec.flags?.has(arg)) {
      i++;
      continue;
    }
    const eq = arg.indexOf('=');
    if (arg.startsWith('--') && eq > 0 && spec.values?.has(arg.slice(0, eq))) {
      if (!validValue(arg.slice(eq + 1), spec)) return badOption(name, arg);
      i++;
      continue;
    }
    if (spec.values?.has(arg)) {
      const value = args[i + 1];
      if (value === undefined || !validValue(value, spec)) return badOption(name, arg);
      i += 2;
      continue;
    }
    // Short value flag with its value attached: `-n5`, `-k10`.
    const short = arg.slice(0, 2);
    if (!arg.startsWith('--') && arg.length > 2 && spec.values?.has(short)) {
      if (!validValue(arg.slice(2), spec)) return badOption(name, arg);
      i++;
      continue;
    }
    return badOption(name, arg);
  }
  return { ok: true, rest: args.slice(i) };
}

const validValue = (value: string, spec: OptionSpec): boolean => value !== '' && (spec.valueTest ? spec.valueTest.test(value) : true);
const badOption = (name: string, arg: string): Peeled => ({ ok: false, reason: `\`${name}\` option \`${arg}\` is not transparent` });

/** Removes transparent wrappers, at most four deep. Without a wrapper, `argv` itself is the answer (not a copy). */
export function unwrapDispatch(argv: string[]): Unwrapped {
  let current = argv;
  const wrappers: string[] = [];
  for (;;) {
    if (current.length === 0) return { ok: false, reason: 'wrapper without a command', wrappers };
    const step = peel(current);
    if (step === null) return { ok: true, argv: current, wrappers };
    wrappers.push(commandName(current[0]!));
    if (!step.ok) return { ok: false, reason: step.reason, wrappers };
    if (wrappers.length > MAX_WRAPPER_DEPTH) return { ok: false, reason: 'wrappers nested more than 4 deep', wrappers };
    current = step.rest;
  }
}

/**
 * The program a segment runs as. The enforced rewrite starts the executable's real path, so a
 * link's own name (`rbash`, `./mysh` → bash, `sh` → dash) is not what decides how options are
 * read — except for a multi-call binary, which is started under its link name and picks its
 * applet by it.
 */
export interface RunsAs {
  /** The name the program is started under. */
  name: string;
  /** Basename of the executable's real path. */
  real: string;
}

export function runsAs(exe: { realPath: string | null; resolvedPath: string | null }): RunsAs | null {
  if (exe.realPath === null) return null;
  const real = commandName(exe.realPath);
  return { name: MULTICALL.has(real) && exe.resolvedPath ? commandName(exe.resolvedPath) : real, real };
}

export interface ShellInvocation {
  shell: string;
  /** The `-c` payload, when given. */
  payload: string | null;
  /** Where the payload sits in the argv; null with it. */
  payloadIndex: number | null;
  /**
   * The operand the shell reads its program from when there is no `-c`; null when there is none
   * or an option this parser does not know may have taken it as a value.
   */
  operand: string | null;
  /** Where `operand` sits in the argv; null with it. */
  operandIndex: number | null;
  /**
   * The carried script, set only for a plain carrier: `SHELL SCRIPT [ARG…]` with no option at
   * all, run by a shell whose non-interactive startup reads no file (see CARRIER_SHELLS). Only
   * then may an allowlist entry for SCRIPT cover the command.
   */
  script: string | null;
  /** The script's own arguments (what an entry's argPattern for the script is matched against). */
  scriptArgs: string[];
  /** Login or interactive shells read startup files, so their payload cannot be bound. */
  loginOrInteractive: boolean;
}

/** Long options of bash and friends that take no value. */
const SHELL_LONG_FLAGS = new Set([
  '--debugger', '--dump-po-strings', '--dump-strings', '--help', '--noediting', '--noprofile', '--norc', '--posix', '--pretty-print',
  '--protected', '--restricted', '--verbose', '--version',
]);
/** Long options that take the next argument as their value. */
const SHELL_LONG_VALUES = new Set(['--rcfile', '--init-file']);

/**
 * Shells that run `SHELL SCRIPT` without reading any startup file, given the environment exec
 * commands get (no `ENV`, no `BASH_ENV`): dash and bash, checked against the real binaries by
 * test/security/exec-shell-carriers.test.ts. Any option changes that — `-l` reads ~/.profile
 * (dash) or ~/.bash_profile (bash), `-i` / `-o interactive` read $ENV or ~/.bashrc,
 * `--rcfile`/`--init-file` name the file, `--debugger` sources bashdb, `-s` reads stdin instead
 * — so a carrier has none. zsh always reads ~/.zshenv, fish always reads config.fish; ash, ksh
 * and others are not known here: they never carry a script.
 */
const CARRIER_SHELLS = new Set(['bash', 'dash']);

/**
 * Recognises `sh -c '…'`, `bash -lc '…'`, `sh script.sh`; null when the segment does not run a
 * POSIX shell (by the name written or the program it runs as). Option values (`-o name`,
 * `-O name`, `--rcfile file`) are never mistaken for the script; `+c`, `+l`, `+i` mean what
 * `-c`, `-l`, `-i` do.
 */
export function shellInvocation(argv: readonly string[], program?: RunsAs | null): ShellInvocation | null {
  const written = commandName(argv[0] ?? '');
  const shell = program && POSIX_SHELLS.has(program.name) ? program.name : POSIX_SHELLS.has(written) ? written : null;
  if (shell === null) return null;
  let inline = false;
  let login = false;
  let unknown = false;
  let i = 1;
  for (; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--' || arg === '-') {
      i++;
      break;
    }
    if (arg === '--login' || arg === '--interactive') {
      login = true;
      continue;
    }
    if (arg.startsWith('--')) {
      if (SHELL_LONG_VALUES.has(arg)) i++;
      else if (!SHELL_LONG_FLAGS.has(arg)) unknown = true;
      continue;
    }
    if (!arg.startsWith('-') && !arg.startsWith('+')) break;
    const letters = arg.slice(1);
    if (letters.includes('c')) inline = true;
    if (letters.includes('l') || letters.includes('i')) login = true;
    // `-o name` / `-O name` (and `+o`, `+O`): each such letter takes the next argument.
    for (const letter of letters) {
      if (letter !== 'o' && letter !== 'O') continue;
      i++;
      if (argv[i] === 'interactive') login = true;
    }
  }
  const operand = argv[i] ?? null;
  const none = { scriptArgs: [] as string[] };
  if (inline) return { shell, payload: operand, payloadIndex: operand === null ? null : i, operand: null, operandIndex: null, script: null, ...none, loginOrInteractive: login || shell === 'fish' };
  const plain = i === 1 && operand !== null && operand !== '' && program != null && CARRIER_SHELLS.has(program.real) && CARRIER_SHELLS.has(program.name);
  return {
    shell,
    payload: null,
    payloadIndex: null,
    operand: unknown ? null : operand,
    operandIndex: unknown || operand === null ? null : i,
    script: plain ? operand : null,
    scriptArgs: plain ? argv.slice(2) : [],
    loginOrInteractive: login,
  };
}
