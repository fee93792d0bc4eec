import path from 'node:path';
import { commandName } from './resolve.js';
import { POSIX_SHELLS, shellInvocation, type RunsAs } from './wrappers.js';

/**
 * Inline code evaluation (reference A12): `python -c`, `node -e`, `find -exec`, `xargs CMD`, …
 * Such a command runs code its argv does not show as a program, so with strictInlineEval it
 * always needs a human, a timeout fallback never approves it, and allow-always never persists it.
 * Pure: works on the effective argv (wrappers removed).
 */
export interface InlineEvalHit {
  interpreter: string;
  flag: string;
}

/** Interpreter-like executables: persisted by allow-always only when not used inline (A6). */
export const INTERPRETER_LIKE = new Set([
  'python', 'python2', 'python3', 'pypy', 'pypy3', 'node', 'nodejs', 'bun', 'deno', 'awk', 'gawk', 'mawk', 'nawk',
  'ruby', 'perl', 'php', 'lua', 'osascript', 'find', 'make', 'gmake', 'sed', 'gsed', 'xargs',
  'luajit', 'julia', 'r', 'rscript', 'elixir', 'iex', 'erl', 'racket', 'guile', 'groovy', 'raku', 'rakudo', 'perl6', 'gjs', 'qjs',
  'kotlin', 'kotlinc', 'scala', 'expect', 'ghc', 'ghci', 'dc', 'tclsh', 'wish', 'irb', 'jshell', 'groovysh', 'pwsh', 'powershell', 'crystal',
]);

/** Options whose value is program text, by interpreter (case-sensitive: `php -R` is not `php -r`, both are code). */
const FLAGS: Record<string, readonly string[]> = {
  python: ['-c'], python2: ['-c'], python3: ['-c'], pypy: ['-c'], pypy3: ['-c'],
  node: ['-e', '--eval', '-p', '--print'], nodejs: ['-e', '--eval', '-p', '--print'],
  bun: ['-e', '--eval', '-p', '--print'], deno: ['-e', '--eval', '-p', '--print'],
  ruby: ['-e'], perl: ['-e', '-E'], php: ['-r', '-R', '-B', '-E'], lua: ['-e'], luajit: ['-e'], osascript: ['-e'],
  julia: ['-e', '-E', '--eval', '--print'], r: ['-e'], rscript: ['-e', '--expr'], elixir: ['-e', '--eval', '--rpc-eval'], iex: ['-e', '--eval'],
  erl: ['-eval', '-s', '-run', '-S'], racket: ['-e', '--eval'], guile: ['-c'], groovy: ['-e'], raku: ['-e'], rakudo: ['-e'], perl6: ['-e'],
  gjs: ['-c', '--command'], qjs: ['-e', '--eval'], kotlin: ['-e', '-expression'], kotlinc: ['-e', '-expression'], scala: ['-e'],
  expect: ['-c'], ghc: ['-e'], ghci: ['-e'], dc: ['-e', '--expression'],
};
/** Interpreters whose options are words after one dash (`erl -sname`): they never cluster. */
const NO_CLUSTERS = new Set(['erl', 'kotlin', 'kotlinc']);
const POWERSHELL = new Set(['pwsh', 'powershell']);
const AWKS = new Set(['awk', 'gawk', 'mawk', 'nawk']);
const SEDS = new Set(['sed', 'gsed']);
const FIND_EXEC = new Set(['-exec', '-execdir', '-ok', '-okdir']);
/** An operand that is not a file on disk: code in the argument, fetched, or from a registry. */
const NOT_A_FILE = /^(data|https?|npm|jsr|file):/i;

/** Normalises versioned names (`python3.12` → `python3`, `tclsh8.6` → `tclsh`) so they cannot slip past the table. */
function interpreterName(token: string): string {
  const name = commandName(token);
  const versioned = /^(python|ruby|perl|php|node|lua|luajit|tclsh|wish|julia|guile|racket|erl|elixir|pwsh|qjs)-?\d+(\.\d+)*$/.exec(name);
  if (versioned) return name.startsWith('python3') ? 'python3' : versioned[1]!;
  return name;
}

/**
 * Subcommands and operands that run code the argv does not name as a file: `deno eval`, `deno
 * run -` (stdin), `deno run https://…` (fetched), `bun exec` (a shell script in the argument),
 * `bun x` / `deno x` (a package), `crystal eval`, the REPLs. Returns the word that makes it so.
 * Package scripts and tasks (`node --run build`, `bun run build`, `deno task build`, `bun
 * install`) are repository configuration, not inline code: repo-config.ts asks for them unless
 * an entry opts in with trustRepoConfig.
 */
function subcommandEval(name: string, args: readonly string[]): string | null {
  const positional = firstOperand(args);
  if (name === 'deno') {
    // Global options may come before the subcommand and some take a value (`deno -L info eval …`):
    // every operand up to the first one that looks like a path is a subcommand candidate.
    for (const operand of operands(args)) {
      if (DENO_EVALS.has(operand)) return operand;
      if (/[./\\:]/.test(operand)) break;
    }
    return args.find((a) => a === '-' || NOT_A_FILE.test(a)) ?? null;
  }
  if (name === 'bun') {
    const fetched = args.find((a) => a === '-' || NOT_A_FILE.test(a));
    if (fetched !== undefined) return fetched;
    return positional !== null && BUN_EVALS.has(positional.value) ? positional.value : null;
  }
  if (name === 'crystal') return positional !== null && ['eval', 'i', 'interactive', 'play'].includes(positional.value) ? positional.value : null;
  return null;
}

const DENO_EVALS = new Set(['eval', 'repl', 'x', 'jupyter', 'install', 'add']);
const BUN_EVALS = new Set(['exec', 'x', 'repl', 'create', 'c']);

/** The arguments that are not options, in order (an option's value is among them: callers fail closed). */
function operands(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--') return [...out, ...args.slice(i + 1)];
    if (!args[i]!.startsWith('-') || args[i] === '-') out.push(args[i]!);
  }
  return out;
}

/** The first argument that is not an option, and where it is (option values are not told apart: fail closed). */
function firstOperand(args: readonly string[]): { value: string; index: number } | null {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') return args[i + 1] === undefined ? null : { value: args[i + 1]!, index: i + 1 };
    if (a.startsWith('-') && a !== '-') continue;
    return { value: a, index: i };
  }
  return null;
}

/**
 * PowerShell reads any unambiguous prefix of a parameter name, in any case, after `-`, `--`, `/`
 * or a Unicode dash (en dash, em dash, horizontal bar): `-c`, `-Com`, `/command`, `–Command`,
 * `-CommandWithArgs`/`-cwa`, `-e`, `-ec`, `-enc`, `-EncodedCommand`. `-File -` reads stdin.
 * Option values are not told apart (`-ExecutionPolicy Bypass`), so the scan goes on past them and
 * stops only at `-File`; Windows PowerShell takes a bare operand as `-Command`, pwsh as `-File`.
 */
function powershellEval(name: string, args: readonly string[]): string | null {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const option = /^(?:[-\u2013\u2014\u2015]{1,2}|\/)([A-Za-z]+)(?::(.*))?$/.exec(a);
    if (!option) {
      if (name === 'powershell') return a;
      continue;
    }
    const key = option[1]!.toLowerCase();
    if ('file'.startsWith(key)) return (option[2] ?? args[i + 1]) === '-' ? a : null;
    if (key === 'e' || key === 'ec' || key === 'cwa' || (key.startsWith('c') && ('command'.startsWith(key) || 'commandwithargs'.startsWith(key)))) return a;
    if (key.startsWith('en') && 'encodedcommand'.startsWith(key)) return a;
  }
  return null;
}

/**
 * Inline code by the name written or by the program the segment runs as, whichever finds it:
 * `./py -c …` where `./py` links to python3 is `python3 -c …`.
 */
export function detectInlineEval(argv: readonly string[], program?: RunsAs | null): InlineEvalHit | null {
  const byName = inlineEvalByName(argv);
  if (byName || !program || argv.length === 0) return byName;
  // The answer depends on the name and the arguments only: the same name needs no second look
  // (nor a copy of an argv that may hold thousands of words).
  if (interpreterName(program.name) === interpreterName(argv[0]!)) return null;
  return inlineEvalByName(withName(program.name, argv));
}

/** `argv` with its first word replaced (a copy, no spread proportional to its size). */
function withName(name: string, argv: readonly string[]): string[] {
  const out = argv.slice();
  out[0] = name;
  return out;
}

function inlineEvalByName(argv: readonly string[]): InlineEvalHit | null {
  if (argv.length === 0) return null;
  const name = interpreterName(argv[0]!);
  const args = argv.slice(1);
  const hit = (flag: string): InlineEvalHit => ({ interpreter: name, flag });

  if (name === 'find') {
    const found = args.find((a) => FIND_EXEC.has(a.toLowerCase()));
    return found ? hit(found) : null;
  }
  if (name === 'xargs') {
    // Any positional is a command xargs will run with input-derived arguments.
    // Only options whose value is required take the next token; `-i`, `-l`, `-e` (and their
    // long forms) take theirs attached or not at all, so the token after them is the command.
    const positional = firstPositional(args, new Set(['-a', '-d', '-E', '-I', '-L', '-n', '-P', '-s', '--arg-file', '--delimiter', '--max-args', '--max-procs', '--max-chars', '--process-slot-var']));
    return positional !== null ? hit(positional) : null;
  }
  if (name === 'make' || name === 'gmake') {
    // A command-line variable overrides the Makefile's, SHELL and recipe commands included.
    const assignment = args.find((a) => !a.startsWith('-') && a.includes('='));
    if (assignment !== undefined) return hit(assignment);
    for (const a of args) {
      if (a === '--') break;
      const lower = a.toLowerCase();
      if (['-f', '--file', '--makefile', '--eval'].includes(lower) || /^(--file|--makefile|--eval)=/.test(lower)) return hit(a);
      if (/^-f./.test(a) || a.startsWith('-E')) return hit(a);
    }
    return null;
  }
  if (AWKS.has(name) || SEDS.has(name)) {
    let scriptFile = false;
    for (let i = 0; i < args.length; i++) {
      const a = args[i]!;
      if (a === '--') {
        const next = args[i + 1];
        return !scriptFile && next !== undefined ? hit(next) : null;
      }
      if (SEDS.has(name) && (a === '-e' || a.startsWith('-e') || a === '--expression' || a.startsWith('--expression='))) return hit(a);
      if (AWKS.has(name) && (a === '-e' || a === '--source' || a.startsWith('--source='))) return hit(a);
      if (a === '-f' || a === '--file' || a.startsWith('--file=')) {
        scriptFile = true;
        if (a === '-f' || a === '--file') i++;
        continue;
      }
      if (a.startsWith('-') && a !== '-') {
        // Value-taking options of awk (-F fs, -v var=val) consume the next token.
        if (AWKS.has(name) && (a === '-F' || a === '-v')) i++;
        continue;
      }
      // The first positional is the program text unless a script file was named.
      return scriptFile ? null : hit(a);
    }
    return null;
  }
  if (POWERSHELL.has(name)) {
    const found = powershellEval(name, args);
    return found ? hit(found) : null;
  }
  const sub = subcommandEval(name, args);
  if (sub !== null) return hit(sub);
  const flags = FLAGS[name];
  if (!flags) return null;
  const loaders = MODULE_LOADERS[name];
  const clusters = !NO_CLUSTERS.has(name);
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') break;
    for (const flag of flags) {
      if (a === flag || a.startsWith(`${flag}=`)) return hit(flag);
      // Clustered short flags, the code possibly attached: `python -Ic`, `perl -ne`, `python -c1`.
      if (clusters && flag.length === 2 && clusterLetters(a).includes(flag[1]!)) return hit(flag);
      // A one-dash word option with its value attached is not a thing; a long one is (`--eval=…`).
    }
    // A module given as a `data:` URL is code written into the argument; `https:`, `npm:` and
    // `jsr:` ones are fetched.
    if (loaders) {
      const eq = a.indexOf('=');
      const [flag, value] = eq > 0 && a.startsWith('--') ? [a.slice(0, eq), a.slice(eq + 1)] : [a, args[i + 1]];
      if (loaders.has(flag) && value !== undefined && NOT_A_FILE.test(value)) return hit(flag);
    }
  }
  return null;
}

/** The letters of a short-option cluster up to where an attached value starts (`-Ic1` → `Ic`). */
function clusterLetters(token: string): string {
  return /^-([A-Za-z]*)/.exec(token)?.[1] ?? '';
}

const NODE_LOADERS = new Set(['--import', '--require', '-r', '--loader', '--experimental-loader', '--preload']);
const MODULE_LOADERS: Record<string, ReadonlySet<string>> = { node: NODE_LOADERS, nodejs: NODE_LOADERS, bun: NODE_LOADERS, deno: NODE_LOADERS };

function firstPositional(args: readonly string[], valueFlags: ReadonlySet<string>): string | null {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') return args[i + 1] ?? null;
    if (a.startsWith('-') && a !== '-') {
      if (valueFlags.has(a)) i++;
      continue;
    }
    return a;
  }
  return null;
}

/** Interpreters that, given no script operand, read their program from stdin (a REPL on a pipe). */
const STDIN_INTERPRETERS = new Set([
  'python', 'python2', 'python3', 'pypy', 'pypy3', 'node', 'nodejs', 'bun', 'deno', 'ruby', 'perl', 'php', 'lua', 'luajit',
  'julia', 'r', 'rscript', 'erl', 'iex', 'racket', 'guile', 'raku', 'rakudo', 'perl6', 'qjs', 'tclsh', 'wish', 'expect', 'irb', 'jshell',
  'ghci', 'groovysh', 'pwsh', 'powershell', 'osascript', 'dc',
]);
/** `-i` means "a REPL after the script" here (for perl and ruby it means in-place editing). */
const INTERACTIVE_AFTER_SCRIPT = new Set(['python', 'python2', 'python3', 'pypy', 'pypy3', 'node', 'nodejs', 'lua']);

/**
 * A shell or interpreter without a script operand reads its program from stdin: `curl … | sh`,
 * `echo … | python3`. That is inline code too, so it is always confirmed and never stored.
 */
export function detectStdinProgram(argv: readonly string[], program?: RunsAs | null): InlineEvalHit | null {
  const byName = stdinProgramByName(argv, program);
  if (byName || !program || argv.length === 0) return byName;
  // Only a shell or a stdin interpreter can read its program from stdin (stdinProgramByName's first test).
  const name = interpreterName(program.name);
  if (!POSIX_SHELLS.has(name) && !STDIN_INTERPRETERS.has(name)) return null;
  return stdinProgramByName(withName(program.name, argv), program);
}

function stdinProgramByName(argv: readonly string[], program: RunsAs | null | undefined): InlineEvalHit | null {
  if (argv.length === 0) return null;
  const name = interpreterName(argv[0]!);
  const shell = POSIX_SHELLS.has(name);
  if (!shell && !STDIN_INTERPRETERS.has(name)) return null;
  const stdin: InlineEvalHit = { interpreter: name, flag: 'stdin' };
  if (shell) {
    // The shell's own option parser tells the script operand from option values (`-o name`).
    const invocation = shellInvocation(argv, program);
    if (invocation?.payload != null) return null; // `-c`: the payload is judged elsewhere
    for (const a of argv.slice(1)) {
      if (a === '--' || a === '-' || !/^[-+]/.test(a)) break;
      if (/^[-+][a-zA-Z]*s/.test(a)) return stdin;
    }
    return invocation?.operand == null || readsStdin(invocation.operand) ? stdin : null;
  }
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i]!;
    if (readsStdin(a)) return stdin;
    // Interactive after the script: whatever is written to stdin later is code.
    if (INTERACTIVE_AFTER_SCRIPT.has(name) && (a === '--interactive' || (/^-[A-Za-z]+$/.test(a) && a.includes('i')))) return stdin;
    if (a === '--') return argv[i + 1] === undefined || readsStdin(argv[i + 1]!) ? stdin : null;
    if (a.startsWith('-')) continue;
    return null;
  }
  return { interpreter: name, flag: 'stdin' };
}

/** `-`, `/dev/stdin` and descriptor paths (`/dev/fd/0`, `/proc/self/fd/0`) name stdin, not a script. */
function readsStdin(operand: string): boolean {
  // An empty word names no script: `node ''` and `perl ''` read their program from stdin, and
  // `python3 ''` runs the working directory's __main__.py — code no operand pins down.
  if (operand === '-' || operand === '') return true;
  if (!operand.startsWith('/')) return false;
  const p = path.posix.normalize(operand);
  return p === '/dev/stdin' || /^\/dev\/fd\/\d+$/.test(p) || /^\/proc\/(self|thread-self|\d+)\/fd\/\d+$/.test(p);
}
