import { builtinModules } from 'node:module';
import { closeSync, existsSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import path from 'node:path';
import { interpreterFamily, scriptOperands } from './script-operands.js';

/**
 * What a bound program loads besides itself, read from its text: the workspace modules a Python
 * script imports, the relative modules a Node script requires, and, for every language, whether
 * it may load or run a file this scan cannot follow. A grant binds the program together with
 * the files found here (content-binding.ts), and the verified run serves all of them from one
 * private copy (verified-run.ts), so a module the scan did not find is simply absent there.
 *
 * A scan is a reading of text, not of the program's run: it fails closed. Anything that can load
 * a file by a name computed at run time (`__import__`, `importlib`, `require(name)`,
 * `subprocess`, `eval`, a shell `.`/`source`, a command word that is a path or an expansion)
 * makes the program unbindable, and a command running it asks every time. Reads files; pure
 * otherwise.
 */
export type Loads = { ok: true; files: string[] } | { ok: false; why: string };

export type Language = 'python' | 'node' | 'shell' | 'perl' | 'ruby' | 'php' | 'lua' | 'awk' | 'sed' | 'binary' | 'data';

/** At most this many files in one program's closure: a bigger tree is not bound. */
export const MAX_LOADED_FILES = 200;
const MAX_SCAN_BYTES = 4 * 1024 * 1024;

/** The language a script operand is read in, from the interpreter that runs it. */
export function operandLanguage(interpreter: string): Language | null {
  const family = interpreterFamily(interpreter);
  if (family === 'shell') return 'shell';
  if (family === 'tsx' || family === 'ts-node') return null;
  return (['python', 'node', 'perl', 'ruby', 'php', 'lua', 'awk', 'sed'] as const).find((l) => l === family) ?? (family === 'luajit' ? 'lua' : null);
}

/** The language an executable file runs in: its `#!` line, ELF, or sh for a text file without one (execve's fallback). */
export function executableLanguage(text: Buffer): Language | null {
  if (text.subarray(0, 4).equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]))) return 'binary';
  const head = text.subarray(0, 256).toString('latin1');
  if (!head.startsWith('#!')) return 'shell';
  const words = head.slice(2).split('\n')[0]!.trim().split(/\s+/);
  let program = words[0] ?? '';
  // `#!/usr/bin/env python3`, `#!/usr/bin/env -S node --flag`: the first word that is not an option.
  if (path.basename(program) === 'env') program = words.slice(1).find((w) => !w.startsWith('-')) ?? '';
  return operandLanguage(program);
}

/**
 * The closure of what `entry` loads from outside the system directories, `entry` excluded.
 * `argv` is how it is run (null for an executable run directly), for options that add load paths.
 */
export function scriptLoads(entry: string, language: Language | null, argv: readonly string[] | null): Loads {
  if (language === null) return { ok: false, why: `Warden does not follow what ${path.basename(entry)}'s language loads, so its imports cannot be bound` };
  const found: string[] = [];
  const seen = new Set<string>([entry]);
  const queue: Array<[string, Language]> = [[entry, language]];
  while (queue.length > 0) {
    const [file, lang] = queue.shift()!;
    const text = readText(file);
    if (text === null) continue; // absent: bound as absent by the caller, nothing to follow
    const step = scan(file, lang, text, file === entry ? argv : null);
    if (!step.ok) return step;
    for (const [next, nextLang] of step.files) {
      if (seen.has(next)) continue;
      seen.add(next);
      found.push(next);
      if (found.length > MAX_LOADED_FILES) return { ok: false, why: `${path.basename(entry)} loads more than ${MAX_LOADED_FILES} files` };
      if (nextLang !== 'data') queue.push([next, nextLang]);
    }
  }
  return { ok: true, files: found };
}

type Step = { ok: true; files: Array<[string, Language]> } | { ok: false; why: string };

function scan(file: string, lang: Language, text: string, argv: readonly string[] | null): Step {
  const name = path.basename(file);
  const refuse = (what: string): Step => ({ ok: false, why: `${name} ${what}, which Warden cannot bind` });
  const dynamic = (pattern: RegExp, what: string): Step | null => {
    const hit = pattern.exec(stripComments(text, lang));
    return hit ? refuse(`${what} (\`${hit[0].trim()}\`)`) : null;
  };
  switch (lang) {
    case 'binary':
    case 'data':
      return { ok: true, files: [] };
    case 'python':
      return dynamic(PYTHON_DYNAMIC, 'may load or run files chosen at run time') ?? python(file, text, refuse);
    case 'node':
      return dynamic(NODE_DYNAMIC, 'may load or run files chosen at run time') ?? node(file, text, refuse);
    case 'shell':
      return shell(text, refuse);
    case 'perl':
      if (argv?.some((a) => /^-[^-]*I/.test(a)) && /^[ \t]*(use|require)\s+[A-Z]/m.test(text)) return refuse('loads modules from an `-I` directory');
      return dynamic(/\b(use\s+lib|FindBin|eval|system|exec|qx|readpipe)\b|\b(require|do)\s*["'$(]|`/, 'may load or run other files') ?? { ok: true, files: [] };
    case 'ruby':
      return dynamic(/\b(require_relative|load|require\s*\(?\s*["'][./]|eval|instance_eval|class_eval|system|exec|spawn|Kernel|IO\.popen|Open3)\b|\$LOAD_PATH|\$:|%x|`/, 'may load or run other files') ?? { ok: true, files: [] };
    case 'php':
      return dynamic(/\b(include|require)(_once)?\b|\b(eval|system|exec|passthru|shell_exec|proc_open|popen|assert|create_function)\s*\(|`/i, 'may load or run other files') ?? { ok: true, files: [] };
    case 'lua':
      return dynamic(/\b(require|dofile|loadfile|loadstring|load|os\.execute|io\.popen|package\.loadlib)\b/, 'may load or run other files') ?? { ok: true, files: [] };
    case 'awk':
      return dynamic(/@(include|load)\b|\bsystem\s*\(|\|\s*getline|\|\s*"/, 'may load or run other files') ?? { ok: true, files: [] };
    case 'sed':
      return { ok: true, files: [] };
  }
}

// --- Python -----------------------------------------------------------------------------------

/** Anything that loads a module or runs a program by a name computed at run time. */
const PYTHON_DYNAMIC =
  /\b(__import__|importlib|imp|runpy|pkgutil|zipimport|execfile|subprocess|ctypes|cffi)\b|(?<![.\w])(exec|eval|compile)\s*\(|\bsys\.(path|meta_path|path_hooks)\b|\bsite\.addsitedir\b|\bos\.(system|popen|exec\w*|spawn\w*|posix_spawn\w*)\b|\bpty\.spawn\b/;

/**
 * `import a.b`, `from a import b`: the first name of each module is looked up in the script's
 * directory first (sys.path[0]); a file there is bound and followed, a package directory or a
 * compiled module there is not bindable. A name not in the directory is the system's.
 */
function python(file: string, text: string, refuse: (what: string) => Step): Step {
  const dir = path.dirname(file);
  const modules: string[] = [];
  const body = stripComments(text, 'python');
  for (const m of body.matchAll(/^[ \t]*import[ \t]+([^\n;#]+)/gm)) {
    for (const part of m[1]!.replace(/[()\\]/g, ' ').split(',')) modules.push(part.trim().split(/\s+/)[0]!);
  }
  for (const m of body.matchAll(/^[ \t]*from[ \t]+(\S+)[ \t]+import\b/gm)) modules.push(m[1]!);
  const out: Array<[string, Language]> = [];
  for (const mod of modules) {
    if (mod === '' ) continue;
    if (mod.startsWith('.')) return refuse(`makes a relative import (\`from ${mod} import\`)`);
    const top = mod.split('.')[0]!;
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(top)) return refuse(`imports \`${mod}\`, a name this scan cannot read`);
    if (isDir(path.join(dir, top))) return refuse(`imports the package directory ${top}/ from its own directory`);
    const compiled = siblingsStartingWith(dir, `${top}.`).find((f) => /\.(so|pyd|pyc|pyw|pth)$/.test(f) || /\.cpython-/.test(f));
    if (compiled) return refuse(`imports ${top}, and ${compiled} beside it is a compiled module`);
    const source = path.join(dir, `${top}.py`);
    if (existsSync(source)) out.push([source, 'python']);
  }
  return { ok: true, files: out };
}

// --- Node -------------------------------------------------------------------------------------

const NODE_DYNAMIC = /\b(createRequire|process\.dlopen|process\.binding|Module\._load|require\.extensions)\b|(?<![.\w])eval\s*\(|\bnew\s+Function\b|(?<![.\w])Function\s*\(/;
const BUILTINS = new Set(builtinModules);
/** Builtins that run other programs or code: what they run is not in the script's text. */
const RUNNING_BUILTINS = new Set(['child_process', 'vm', 'worker_threads', 'module', 'cluster', 'inspector', 'repl', 'wasi']);

/** Relative specifiers are resolved as Node does and followed; builtins are the system's; anything else asks. */
function node(file: string, text: string, refuse: (what: string) => Step): Step {
  const body = stripComments(text, 'node');
  const literal = [
    ...body.matchAll(/\brequire\s*\(\s*(['"`])([^'"`\n]*)\1\s*\)/g),
    ...body.matchAll(/\bimport\s*\(\s*(['"`])([^'"`\n]*)\1\s*[,)]/g),
  ].map((m) => m[2]!);
  literal.push(...fromClauseSpecifiers(body));
  for (const m of body.matchAll(/(?:^|[;\n])[ \t]*import\s*(?:'([^'"\n]*)'|"([^'"\n]*)")/g)) literal.push((m[1] ?? m[2])!);
  const calls = (body.match(/\brequire\s*\(/g)?.length ?? 0) + (body.match(/\bimport\s*\(/g)?.length ?? 0);
  const literalCalls = (body.match(/\brequire\s*\(\s*(['"`])[^'"`\n]*\1\s*\)/g)?.length ?? 0) + (body.match(/\bimport\s*\(\s*(['"`])[^'"`\n]*\1\s*[,)]/g)?.length ?? 0);
  if (calls > literalCalls) return refuse('requires or imports a module by a computed name');
  const out: Array<[string, Language]> = [];
  const dir = path.dirname(file);
  for (const spec of literal) {
    if (spec.includes('${')) return refuse(`imports \`${spec}\`, a computed name`);
    const bare = spec.startsWith('node:') ? spec.slice(5) : spec;
    const builtin = BUILTINS.has(bare) ? bare : BUILTINS.has(bare.split('/')[0]!) ? bare.split('/')[0]! : null;
    if (builtin !== null && RUNNING_BUILTINS.has(builtin)) return refuse(`uses \`${spec}\`, which runs other programs or code`);
    if (builtin !== null) continue;
    if (!/^(\.{1,2}\/|\/|\.{1,2}$)/.test(spec)) return refuse(`loads \`${spec}\` from node_modules, which the agent can write`);
    const resolved = resolveNode(path.resolve(dir, spec));
    if (resolved === 'directory') return refuse(`imports the directory \`${spec}\``);
    if (resolved !== null) out.push([resolved, /\.(json|node)$/.test(resolved) ? 'data' : 'node']);
  }
  const pkg = nearestPackageJson(dir);
  if (pkg) out.push([pkg, 'data']);
  return { ok: true, files: out };
}

function resolveNode(target: string): string | 'directory' | null {
  for (const candidate of [target, ...['.js', '.mjs', '.cjs', '.json', '.node'].map((ext) => target + ext)]) {
    try {
      const st = statSync(candidate);
      if (st.isFile()) return candidate;
      if (st.isDirectory() && candidate === target) return 'directory';
    } catch {
      /* not there */
    }
  }
  return null;
}

/** package.json decides whether `.js` is CommonJS or an ES module: it is part of what runs. */
function nearestPackageJson(dir: string): string | null {
  for (let d = dir; ; d = path.dirname(d)) {
    const candidate = path.join(d, 'package.json');
    if (existsSync(candidate)) return /^\/(usr|lib|lib64|bin|sbin|etc)\//.test(candidate) ? null : candidate;
    if (path.dirname(d) === d) return null;
  }
}

// --- Shell ------------------------------------------------------------------------------------

const SHELL_RESERVED = new Set(['if', 'then', 'elif', 'else', 'fi', 'do', 'done', 'while', 'until', 'for', 'case', 'esac', 'in', '!', 'time', 'function', 'select', 'coproc', '{', '}', '[[', ']]']);
const SYSTEM_COMMAND = /^\/(usr\/)?(s?bin|lib|libexec)\//;
/** Words that run the command after them (with their options). */
const SHELL_PREFIXES = new Set(['exec', 'command', 'builtin', 'nohup', 'env', 'nice', 'timeout', 'stdbuf', 'xargs', 'sudo', 'time']);
/** Interpreters: run from a script, each reads its program by a path or from text the scan cannot serve. */
const INTERPRETERS = new Set(['python', 'node', 'perl', 'ruby', 'php', 'lua', 'luajit', 'shell', 'tclsh', 'deno', 'bun', 'tsx', 'ts-node', 'java', 'pwsh', 'powershell', 'rscript', 'julia', 'expect', 'osascript']);

/**
 * A shell script runs its commands by name: one that sources a file (`.`, `source`), evaluates
 * text (`eval`), runs a path or an expanded word, or hands a file to an interpreter (`python3
 * x.py`, `sh other.sh`) loads what this scan cannot serve from the verified copy.
 */
function shell(text: string, refuse: (what: string) => Step): Step {
  // `start|stop)` and `*)` are case patterns, not commands.
  const body = stripComments(text, 'shell').replace(/^[ \t]*\(?[^\s()|]+(?:[ \t]*\|[ \t]*[^\s()|]+)*\)/gm, '');
  for (const chunk of body.split(/\n|;|&&|\|\||\||&|\(|\)|`|\$\(|\bthen\b|\bdo\b|\belse\b/)) {
    const words = chunk.trim().split(/\s+/).filter((w) => w !== '');
    // `case WORD in`, `for NAME in …`: the words after the keyword are not commands.
    if (['case', 'for', 'select'].includes(words[0] ?? '')) continue;
    let k = 0;
    for (;;) {
      while (k < words.length && (SHELL_RESERVED.has(words[k]!) || /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[k]!))) k++;
      if (k >= words.length || !SHELL_PREFIXES.has(words[k]!)) break;
      k++;
      while (k < words.length && (words[k]!.startsWith('-') || /^\d+[smhd]?$/.test(words[k]!))) k++;
    }
    const command = words[k];
    if (command === undefined) continue;
    const bare = command.replace(/^["']|["']$/g, '');
    if (bare === '.' || bare === 'source' || bare === 'eval') return refuse(`runs \`${bare}\`, which loads text as code`);
    if (bare === '[' || bare === '[[') continue;
    if (/[$`\\*?[{~]/.test(bare)) return refuse(`runs a command named by an expansion (\`${command}\`)`);
    if (bare.includes('/') && !SYSTEM_COMMAND.test(bare)) return refuse(`runs \`${bare}\` by path`);
    const argv = words.slice(k).map((w) => w.replace(/^["']|["']$/g, ''));
    if (INTERPRETERS.has(interpreterFamily(bare))) return refuse(`runs \`${argv.join(' ')}\`, a program read by path or from text`);
    const operands = scriptOperands(argv);
    if (operands.kind === 'files') return refuse(`runs \`${argv.join(' ')}\`, a script read by path`);
    if (operands.kind === 'unknown') return refuse(`runs \`${argv.join(' ')}\` (${operands.why})`);
  }
  return { ok: true, files: [] };
}

// --- Helpers ----------------------------------------------------------------------------------

/** Line comments removed (roughly: a `#` or `//` starting a word), so a commented-out import neither binds nor refuses. */
function stripComments(text: string, lang: Language): string {
  if (lang === 'node') return withoutBlockComments(text).replace(/(^|[\s;])\/\/[^\n]*/g, '$1');
  if (lang === 'php' || lang === 'lua') return text;
  return text.replace(/(^|\s)#[^\n]*/g, '$1');
}

function readText(file: string): string | null {
  let fd: number;
  try {
    if (!statSync(file).isFile()) return null;
    fd = openSync(file, 'r');
  } catch {
    return null;
  }
  try {
    const buffer = Buffer.alloc(MAX_SCAN_BYTES);
    const n = readSync(fd, buffer, 0, buffer.length, 0);
    return buffer.subarray(0, n).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function siblingsStartingWith(dir: string, prefix: string): string[] {
  try {
    return readdirSync(dir).filter((f) => f.startsWith(prefix));
  } catch {
    return [];
  }
}

/**
 * `/* … *\/` comments replaced by a space, as `/\/\*[\s\S]*?\*\//g` would, by a scan: the pattern
 * rescans to the end from every `/*` that no `*\/` follows (a script the agent writes can hold
 * millions). Once no `*\/` is left, nothing after can close either.
 */
export function withoutBlockComments(text: string): string {
  let out = '';
  let copied = 0;
  for (let open = text.indexOf('/*'); open !== -1; open = text.indexOf('/*', copied)) {
    const close = text.indexOf('*/', open + 2);
    if (close === -1) break;
    out += `${text.slice(copied, open)} `;
    copied = close + 2;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/**
 * The specifiers of `import … from 'x'` and `export … from "x"`, as
 * `/\b(?:import|export)\b[^'"`;]*?\bfrom\s*(['"])([^'"\n]*)\1/g` finds them, by a scan: the
 * clause after the keyword runs to the first quote, backtick or semicolon, which must be the
 * quote opening the specifier, right after a `from`. A keyword whose clause fails shares its end
 * with every keyword inside the clause, so the scan goes on after it: linear where the pattern's
 * lazy gap rescanned from every keyword.
 */
export function fromClauseSpecifiers(body: string): string[] {
  const out: string[] = [];
  const keyword = /\b(?:import|export)\b/g;
  for (let m = keyword.exec(body); m !== null; m = keyword.exec(body)) {
    const start = m.index + m[0].length;
    let end = start;
    while (end < body.length && !CLAUSE_END.has(body[end]!)) end++;
    const quote = body[end];
    const clause = body.slice(start, end).trimEnd();
    const before = clause.length - 4;
    if ((quote === "'" || quote === '"') && clause.endsWith('from') && (before === 0 || !/\w/.test(clause[before - 1]!))) {
      let close = end + 1;
      while (close < body.length && body[close] !== "'" && body[close] !== '"' && body[close] !== '\n') close++;
      if (body[close] === quote) {
        out.push(body.slice(end + 1, close));
        keyword.lastIndex = close + 1;
        continue;
      }
    }
    keyword.lastIndex = Math.max(keyword.lastIndex, end);
  }
  return out;
}
const CLAUSE_END = new Set(["'", '"', '`', ';']);
