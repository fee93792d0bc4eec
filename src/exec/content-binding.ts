import { closeSync, openSync, readSync, statSync } from 'node:fs';
import path from 'node:path';
import type { ResolvedExecutable } from './resolve.js';
import { executableLanguage, operandLanguage, scriptLoads } from './script-loads.js';
import { scriptOperandSites } from './script-operands.js';
import { argumentFilePath, argumentPathCandidates } from './file-binding.js';

/**
 * The files an allow-always grant (and an approval card) binds by content: the script an
 * interpreter runs, any executable outside the system directories (`./deploy.sh`, `bin/tool`),
 * what those load from outside the system directories (script-loads.ts: a Python script's
 * modules beside it, a Node script's relative requires and package.json), and every file an
 * argument names, also inside a longer word (`--config=./x.sh`, `-f./Makefile`, `@./args.txt`;
 * see argumentPathCandidates). A program that may load what the scan cannot follow is not
 * bindable. A grant holds each
 * file's path as resolved at approval (relative operands against the working directory then),
 * the target it resolved to through links, and the sha256 of its content, or null when it did
 * not exist. The grant covers a later command only when every file still resolves to the same
 * target with the same content. Reads the file system; writes nothing.
 */
/** Executables here are the system's own, read-only in the sandbox: bound by path alone. */
const SYSTEM_PREFIXES = ['/usr/', '/bin/', '/sbin/', '/lib/', '/lib32/', '/lib64/', '/libx32/'];

export interface SegmentFilesInput {
  /** Effective argv (wrappers removed). */
  argv: readonly string[];
  exe: ResolvedExecutable | null;
  /** The directory relative operands resolve against; null when an earlier `cd` made it unknown. */
  cwd: string | null;
  home: string;
}

/** A script operand's place in the argv and the absolute path it names. */
export interface ProgramSite {
  index: number;
  prefix: string;
  path: string;
}

export type SegmentFiles =
  | {
      ok: true;
      /** Every path bound, in a stable order (programs, their loads, argument files), without repeats. */
      paths: string[];
      /** The script operands: run from the verified copy, put at exactly these places. */
      sites: ProgramSite[];
      /** The executable, when it is a file outside the system directories (run from the verified copy too). */
      exe: string | null;
    }
  | { ok: false; why: string };

/** The files one segment binds, or why they cannot be told. */
export function segmentScriptPaths(input: SegmentFilesInput): SegmentFiles {
  const { exe } = input;
  const programExe = exe?.realPath && exe.resolvedPath && !isSystemPath(exe.realPath) ? exe.resolvedPath : null;
  const found = scriptOperandSites(input.argv);
  if (found.kind === 'unknown') return { ok: false, why: `cannot tell which file \`${input.argv[0]}\` runs: ${found.why}` };
  const sites: ProgramSite[] = [];
  for (const site of found.kind === 'files' ? found.sites : []) {
    // An empty word names no file, yet the interpreter still runs something: `python3 ''` runs
    // the working directory's __main__.py, `node ''` and `perl ''` read their program from stdin.
    if (site.value === '') return { ok: false, why: `\`${input.argv[0]}\` is given an empty script operand \`''\`, which names no file` };
    const resolved = resolveOperand(site.value, input.cwd, input.home);
    if (typeof resolved !== 'string') return resolved;
    sites.push({ index: site.index, prefix: site.prefix, path: resolved });
  }
  const paths = new Set<string>();
  const loads = (file: string, language: ReturnType<typeof operandLanguage>, argv: readonly string[] | null): string | null => {
    paths.add(file);
    const loaded = scriptLoads(file, language, argv);
    if (!loaded.ok) return loaded.why;
    for (const f of loaded.files) paths.add(f);
    return null;
  };
  if (programExe) {
    const head = readHead(programExe);
    const why = head === null ? (paths.add(programExe), null) : loads(programExe, executableLanguage(head), null);
    if (why) return { ok: false, why };
  }
  for (const site of sites) {
    const why = loads(site.path, operandLanguage(input.argv[0]!), input.argv);
    if (why) return { ok: false, why };
  }
  // Argument files: a path inside a longer word (`--config=./x.sh`, `-f./Makefile`, `@args.txt`)
  // for every program; the plain words too for a program bound by content, whose arguments
  // are its own inputs (`./deploy.sh prod.env`). A system program's plain operands are its data.
  const plainToo = programExe !== null || sites.length > 0;
  for (let k = 1; k < input.argv.length; k++) {
    for (const candidate of argumentPathCandidates(input.argv[k]!)) {
      if (candidate.prefix === '' && !plainToo) continue;
      const file = argumentFilePath(candidate.value, input.cwd, input.home);
      if (file === 'unknown-cwd') return { ok: false, why: `\`${input.argv[k]}\` names a path relative to a directory an earlier \`cd\` changed` };
      if (file !== undefined && !isSystemPath(file)) paths.add(file);
    }
  }
  return { ok: true, paths: [...paths], sites, exe: programExe };
}

function resolveOperand(operand: string, cwd: string | null, home: string): string | { ok: false; why: string } {
  const expanded = operand === '~' || operand.startsWith('~/') ? path.join(home, operand.slice(1)) : operand;
  if (expanded.startsWith('~')) return { ok: false, why: `cannot resolve \`${operand}\`` };
  if (path.isAbsolute(expanded)) return path.normalize(expanded);
  if (cwd === null) return { ok: false, why: `\`${operand}\` is relative to a directory an earlier \`cd\` changed` };
  return path.resolve(cwd, expanded);
}

/** Files the system owns: read-only in the sandbox, the operator's on the gateway host. */
function isSystemPath(file: string): boolean {
  return SYSTEM_PREFIXES.some((p) => file.startsWith(p)) || /^\/(etc|dev|proc|sys)(\/|$)/.test(file);
}

function readHead(file: string): Buffer | null {
  try {
    if (!statSync(file).isFile()) return null;
    const fd = openSync(file, 'r');
    try {
      const buffer = Buffer.alloc(256);
      return buffer.subarray(0, readSync(fd, buffer, 0, 256, 0));
    } finally {
      closeSync(fd);
    }
  } catch {
    return null;
  }
}

export { bindingChange, CHANGED } from './binding-change.js';
export { argumentFilePath, argumentPathCandidates, bindFiles, MAX_BOUND_FILE_BYTES, type Binding, type BoundFile } from './file-binding.js';
