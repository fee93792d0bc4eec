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
]);

const FLAGS: Record<string, readonly string[]> = {
  python: ['-c'], python2: ['-c'], python3: ['-c'], pypy: ['-c'], pypy3: ['-c'],
  node: ['-e', '--eval', '-p', '--print'], nodejs: ['-e', '--eval', '-p', '--print'],
  bun: ['-e', '--eval', '-p', '--print'], deno: ['-e', '--eval', '-p', '--print'],
  ruby: ['-e'], perl: ['-e', '-E'], php: ['-r'], lua: ['-e'], osascript: ['-e'],
};
const AWKS = new Set(['awk', 'gawk', 'mawk', 'nawk']);
const SEDS = new Set(['sed', 'gsed']);
const FIND_EXEC = new Set(['-exec', '-execdir', '-ok', '-okdir']);

/** Normalises versioned names (`python3.12` → `python3`) so they cannot slip past the table. */
function interpreterName(token: string): string {
  const name = commandName(token);
  const versioned = /^(python|ruby|perl|php|node|lua)\d+(\.\d+)*$/.exec(name);
  if (versioned) return name.startsWith('python3') ? 'python3' : versioned[1]!;
  return name;
}

/**
 * Inline code by the name written or by the program the segment runs as, whichever finds it:
 * `./py -c …` where `./py` links to python3 is `python3 -c …`.
 */
export function detectInlineEval(argv: readonly string[], program?: RunsAs | null): InlineEvalHit | null {
  return inlineEvalByName(argv) ?? (program ? inlineEvalByName([program.name, ...argv.slice(1)]) : null);
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
  const flags = FLAGS[name];
  if (!flags) return null;
  const loaders = MODULE_LOADERS[name];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') break;
    const lower = a.toLowerCase();
    for (const flag of flags) {
      const raw = flag === '-E' || flag === '-e';
      const candidate = raw ? a : lower;
      if (candidate === flag || candidate.startsWith(`${flag}=`)) return hit(flag);
      // Clustered short flags, the code possibly attached: `python -Ic`, `perl -ne`, `python -c1`.
      if (flag.length === 2 && clusterLetters(candidate).includes(flag[1]!)) return hit(flag);
    }
    // A module given as a `data:` URL is code written into the argument.
    if (loaders) {
      const eq = a.indexOf('=');
      const [flag, value] = eq > 0 && a.startsWith('--') ? [a.slice(0, eq), a.slice(eq + 1)] : [a, args[i + 1]];
      if (loaders.has(flag) && value !== undefined && /^data:/i.test(value)) return hit(flag);
    }
  }
  return null;
}

/** The letters of a short-option cluster up to where an attached value starts (`-Ic1` → `Ic`). */
function clusterLetters(token: string): string {
  return /^-([A-Za-z]*)/.exec(token)?.[1] ?? '';
}

const NODE_LOADERS = new Set(['--import', '--require', '-r', '--loader', '--experimental-loader']);
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

const STDIN_INTERPRETERS = new Set(['python', 'python2', 'python3', 'pypy', 'pypy3', 'node', 'nodejs', 'bun', 'deno', 'ruby', 'perl', 'php', 'lua']);
/** `-i` means "a REPL after the script" here (for perl and ruby it means in-place editing). */
const INTERACTIVE_AFTER_SCRIPT = new Set(['python', 'python2', 'python3', 'pypy', 'pypy3', 'node', 'nodejs', 'lua']);

/**
 * A shell or interpreter without a script operand reads its program from stdin: `curl … | sh`,
 * `echo … | python3`. That is inline code too, so it is always confirmed and never stored.
 */
export function detectStdinProgram(argv: readonly string[], program?: RunsAs | null): InlineEvalHit | null {
  return stdinProgramByName(argv, program) ?? (program ? stdinProgramByName([program.name, ...argv.slice(1)], program) : null);
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
  if (operand === '-') return true;
  if (!operand.startsWith('/')) return false;
  const p = path.posix.normalize(operand);
  return p === '/dev/stdin' || /^\/dev\/fd\/\d+$/.test(p) || /^\/proc\/(self|thread-self|\d+)\/fd\/\d+$/.test(p);
}
