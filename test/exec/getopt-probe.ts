import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * What a GNU binary's own option parser does, found by running it: which options exist and
 * whether each takes no argument, a required one or an optional one (getopt_long's
 * `no_argument` / `required_argument` / `optional_argument`). The option names come from the
 * binary itself — its `--help` text, the NUL-terminated words of the executable (where the
 * getopt table keeps the long names, hidden ones included) and every short option letter — and
 * each candidate is classified by glibc's own diagnostics:
 *
 *   `--opt`        → "option '--opt' requires an argument"      ⇒ required
 *   `--opt=probe`  → "option '--opt' doesn't allow an argument" ⇒ none, else optional
 *   `-x`           → "option requires an argument -- 'x'"       ⇒ required
 *   `-x@`          → "invalid option -- '@'" (`@` was read as the next option) ⇒ none,
 *                    else `@` was taken as the value ⇒ optional
 *
 * and, for none and optional, `--opt probe` must open `probe` as a file operand (the next word
 * was not taken as the value), else the option is reported as inconsistent.
 */
export type ArgKind = 'none' | 'required' | 'optional';

export interface ProbedOptions {
  binary: string;
  /** `--name` / `-x` → how its argument is parsed. */
  options: Map<string, ArgKind>;
  /** Long options the `--help` text does not list, found only in the executable's words. */
  hidden: string[];
  /** Options whose runs contradict each other. */
  inconsistent: string[];
  /** Whether an option after an operand is still an option (GNU argv permutation). */
  permutes: boolean;
}

export interface RunResult {
  status: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

export interface ProbeSetup {
  /** A scratch directory the binary runs in; `probe` must not exist there. */
  scratch: string;
  /** Arguments placed before the probed option (`tail -z` keeps tail's obsolete `-l` parser out). */
  lead?: readonly string[];
  /**
   * Arguments after which an operand is a FILE operand (grep's first operand is its pattern:
   * `-e x`; cut needs a list). Null for a binary whose operands are never files (tr).
   */
  fileLead?: readonly string[] | null;
}

/** The environment probes and proofs run under: C messages, no POSIX-version variables. */
export const PROBE_ENV: Readonly<Record<string, string>> = { PATH: '/usr/bin:/bin', LC_ALL: 'C', LANG: 'C' };
export const STRACE = ['/usr/bin/strace', '/bin/strace'].find((p) => existsSync(p)) ?? null;

/**
 * Runs the binary with argv as given and `input` on stdin. `trace` also lists the paths its file
 * system calls named. (stdin is a socket, as under Warden: `tail -f` follows one forever, so tail
 * is probed with a dead `--pid`.)
 */
export interface RunOptions {
  input?: string;
  trace?: boolean;
  /** Variables added to PROBE_ENV. */
  env?: Readonly<Record<string, string>>;
}

export function runBinary(binary: string, args: readonly string[], cwd: string, options: RunOptions = {}): RunResult & { paths: string[] } {
  const input = options.input ?? 'a\nb\nb\n';
  const traceDir = options.trace && STRACE ? mkdtempSync(path.join(tmpdir(), 'warden-strace-')) : null;
  const traceFile = traceDir ? path.join(traceDir, 'trace') : '';
  const argv = traceDir ? [STRACE!, '-f', '-qq', '-e', 'trace=%file', '-e', 'signal=none', '-o', traceFile, binary, ...args] : [binary, ...args];
  const r = spawnSync(argv[0]!, argv.slice(1), { cwd, env: { ...PROBE_ENV, ...options.env }, input, encoding: 'utf8', timeout: 5000, killSignal: 'SIGKILL' });
  let paths: string[] = [];
  if (traceDir) {
    paths = existsSync(traceFile) ? tracedPaths(readFileSync(traceFile, 'utf8')) : [];
    rmSync(traceDir, { recursive: true, force: true });
  }
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '', timedOut: r.error !== undefined || r.signal !== null, paths };
}

/** The first path argument of every traced call (`openat(AT_FDCWD, "probe", …)` → `probe`). */
function tracedPaths(trace: string): string[] {
  const out: string[] = [];
  for (const line of trace.split('\n')) {
    const m = /^\d+\s+(\w+)\((?:[^"]*?)"((?:[^"\\]|\\.)*)"/.exec(line);
    if (m && m[1] !== 'execve' && m[2] !== '') out.push(m[2]!);
  }
  return out;
}

const esc = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const LONG_NAME = /^--[a-z0-9][a-z0-9-]*$/;

/** Every `--name` the help text mentions (option lines and prose: each is checked by running). */
export function helpLongNames(helpText: string): string[] {
  const names = [...helpText.matchAll(/(?<![\w-])--[a-z0-9][a-z0-9-]*/g)].map((m) => m[0].replace(/-+$/, ''));
  return [...new Set(names)].filter((n) => LONG_NAME.test(n));
}

/** NUL-terminated lower-case words of the executable: where getopt_long's table keeps its names. */
export function executableWords(binary: string): string[] {
  const data = readFileSync(binary).toString('latin1');
  const out = new Set<string>();
  for (const m of data.matchAll(/\0([a-z][a-z0-9-]{1,40})(?=\0)/g)) out.add(m[1]!);
  return [...out];
}

/** How getopt reads a long option as written: an option (exact or abbreviated), ambiguous, or unknown. */
export function longResolution(binary: string, written: string, setup: ProbeSetup): 'option' | 'ambiguous' | 'unrecognized' {
  const lead = setup.lead ?? [];
  const text = runBinary(binary, [...lead, written], setup.scratch).stderr + runBinary(binary, [...lead, `${written}=probe`], setup.scratch).stderr;
  if (new RegExp(`unrecognized option '${esc(written)}`).test(text)) return 'unrecognized';
  if (new RegExp(`option '${esc(written)}(=probe)?' is ambiguous`).test(text)) return 'ambiguous';
  return 'option';
}

/** glibc names the option it resolved in full, so an abbreviation shows up under another name. */
const namesExactly = (stderr: string, name: string): boolean => new RegExp(`option '${esc(name)}'`).test(stderr);

function classifyLong(binary: string, name: string, setup: ProbeSetup, early: EarlyExits): ArgKind | 'absent' | 'inconsistent' {
  const lead = setup.lead ?? [];
  const bare = runBinary(binary, [...lead, name], setup.scratch);
  if (new RegExp(`unrecognized option '${esc(name)}'`).test(bare.stderr)) return 'absent';
  if (new RegExp(`option '${esc(name)}' is ambiguous`).test(bare.stderr)) return 'absent';
  if (/option '--[a-z0-9-]+' requires an argument/.test(bare.stderr)) return namesExactly(bare.stderr, name) ? 'required' : 'absent';
  const attached = runBinary(binary, [...lead, `${name}=probe`], setup.scratch);
  if (/option '--[a-z0-9-]+' doesn't allow an argument/.test(attached.stderr)) {
    if (!namesExactly(attached.stderr, name)) return 'absent';
    return nextWordIsOperand(binary, name, setup, early) ? 'none' : 'inconsistent';
  }
  return nextWordIsOperand(binary, name, setup, early) ? 'optional' : 'inconsistent';
}

function classifyShort(binary: string, letter: string, setup: ProbeSetup, early: EarlyExits): ArgKind | 'absent' | 'inconsistent' {
  const lead = setup.lead ?? [];
  const bare = runBinary(binary, [...lead, `-${letter}`], setup.scratch);
  if (bare.stderr.includes(`invalid option -- '${letter}'`)) return 'absent';
  if (bare.stderr.includes(`option requires an argument -- '${letter}'`)) return 'required';
  const attached = runBinary(binary, [...lead, `-${letter}@`], setup.scratch);
  const kind: ArgKind = attached.stderr.includes(`invalid option -- '@'`) ? 'none' : 'optional';
  return nextWordIsOperand(binary, `-${letter}`, setup, early) ? kind : 'inconsistent';
}

interface EarlyExits {
  help: string;
  version: string;
}

/**
 * Whether `FLAG probe` makes the binary look for a FILE named `probe` (the word was not taken as
 * the option's value). Options that print help or version and exit read no operand at all.
 */
function nextWordIsOperand(binary: string, flag: string, setup: ProbeSetup, early: EarlyExits): boolean {
  if (setup.fileLead === null) return true;
  const args = [...(setup.fileLead ?? []), flag, 'probe'];
  const r = runBinary(binary, args, setup.scratch);
  if (r.stdout !== '' && (r.stdout === early.help || r.stdout === early.version)) return true;
  if (/probe'?( for reading)?: No such file or directory/.test(r.stderr)) return true;
  // Options that silence the message (`grep -s`): look at the calls themselves.
  return STRACE !== null && runBinary(binary, args, setup.scratch, { trace: true }).paths.includes('probe');
}

const SHORT_LETTERS = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'];

export function probeGnuOptions(binary: string, setup: ProbeSetup): ProbedOptions {
  const early = { help: runBinary(binary, ['--help'], setup.scratch).stdout, version: runBinary(binary, ['--version'], setup.scratch).stdout };
  const listed = helpLongNames(early.help);
  const options = new Map<string, ArgKind>();
  const inconsistent: string[] = [];
  const record = (flag: string, kind: ArgKind | 'absent' | 'inconsistent') => {
    if (kind === 'inconsistent') inconsistent.push(flag);
    else if (kind !== 'absent') options.set(flag, kind);
  };
  for (const name of listed) record(name, classifyLong(binary, name, setup, early));
  const hidden: string[] = [];
  for (const word of executableWords(binary)) {
    const name = `--${word}`;
    if (listed.includes(name)) continue;
    const kind = classifyLong(binary, name, setup, early);
    if (kind === 'absent') continue;
    // A word that abbreviates a listed option and parses like it is that option's prefix.
    if (listed.some((l) => l.startsWith(name) && options.get(l) === kind)) continue;
    hidden.push(name);
    record(name, kind);
  }
  for (const letter of SHORT_LETTERS) record(`-${letter}`, classifyShort(binary, letter, setup, early));
  // GNU getopt permutes: `FILE --version` still prints the version. A `+` optstring (tr) does not.
  const permutes = runBinary(binary, [...(setup.fileLead ?? []), 'probe', '--version'], setup.scratch).stdout === early.version;
  return { binary, options, hidden, inconsistent, permutes };
}

/**
 * Files in `dir` the binary named in a file system call (open, stat, create, …) while running
 * `args` there — relative paths included. Without strace: the files whose content reached the
 * output, or that were created or changed.
 */
export function filesTouched(binary: string, args: readonly string[], dir: string, options: Omit<RunOptions, 'trace'> = {}): string[] {
  const before = snapshot(dir);
  const r = runBinary(binary, args, dir, { ...options, trace: true });
  if (STRACE) return [...new Set(r.paths.filter((p) => !p.startsWith('/') || p.startsWith(`${dir}/`)))];
  const after = snapshot(dir);
  const changed = [...after].filter(([name, stamp]) => before.get(name) !== stamp).map(([name]) => name);
  const read = [...before.keys()].filter((name) => (r.stdout + r.stderr).includes(secretOf(name)));
  return [...new Set([...changed, ...read])];
}

/** The content a proof file holds: unique per name, so output that shows it names the file. */
export const secretOf = (name: string): string => `SECRET-${name}`;

function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (rel: string) => {
    for (const entry of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const name = path.join(rel, entry.name);
      if (entry.isDirectory()) walk(name);
      else {
        const st = statSync(path.join(dir, name));
        out.set(name, `${st.size}:${st.mtimeMs}`);
      }
    }
  };
  walk('');
  return out;
}

/**
 * `filesTouched` for many argv at once, under one strace: each run is started by bash as
 * `exec -a run-N BINARY ARGS…`, so the traced execve names the run its process belongs to.
 * Falls back to one `filesTouched` per argv without strace.
 */
export function filesTouchedEach(binary: string, forms: ReadonlyArray<readonly string[]>, dir: string, input = 'a\nb\nb\n'): string[][] {
  if (!STRACE || !existsSync('/bin/bash')) return forms.map((f) => filesTouched(binary, f, dir, { input }));
  const work = mkdtempSync(path.join(tmpdir(), 'warden-strace-'));
  try {
    const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
    const inputFile = path.join(work, 'input');
    writeFileSync(inputFile, input);
    const lines = forms.map((f, i) => `(exec -a run-${i} ${quote(binary)} ${f.map(quote).join(' ')}) < ${quote(inputFile)} > /dev/null 2>&1`);
    writeFileSync(path.join(work, 'runs.sh'), `${lines.join('\n')}\n`);
    const traceFile = path.join(work, 'trace');
    spawnSync(STRACE, ['-f', '-qq', '-e', 'trace=%file,%process', '-e', 'signal=none', '-o', traceFile, '/bin/bash', path.join(work, 'runs.sh')], {
      cwd: dir,
      env: { ...PROBE_ENV },
      timeout: 120_000,
    });
    const out = forms.map(() => new Set<string>());
    const runOf = new Map<string, number>();
    for (const line of readFileSync(traceFile, 'utf8').split('\n')) {
      const pid = /^(\d+)\s/.exec(line)?.[1];
      if (!pid) continue;
      const exec = /execve\("[^"]*", \["run-(\d+)"/.exec(line);
      if (exec) runOf.set(pid, Number(exec[1]));
      const child = /^\d+\s+(?:clone3?|fork|vfork)\(.*\)\s+=\s+(\d+)/.exec(line);
      if (child && runOf.has(pid)) runOf.set(child[1]!, runOf.get(pid)!);
      const run = runOf.get(pid);
      if (run === undefined || exec) continue;
      for (const p of tracedPaths(line)) if (!p.startsWith('/') || p.startsWith(`${dir}/`)) out[run]!.add(p);
    }
    return out.map((s) => [...s]);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
