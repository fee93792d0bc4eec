/**
 * Which workspace files are memory: `MEMORY.md` at the root and markdown files under
 * `memory/`. Every candidate goes through the workspace guard, so a memory file that is a
 * symlink leading out of the workspace is reported and skipped, never read.
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { resolveWorkspacePath, type ResolvedPath } from '../fs/workspace.js';

export const MEMORY_FILE = 'MEMORY.md';
export const MEMORY_DIR = 'memory';
/** Guards against a runaway directory tree; the search reports when it stops early. */
export const MAX_MEMORY_FILES = 2000;

/** Whether a canonical workspace-relative path is a memory file. */
export function isMemoryPath(rel: string): boolean {
  return rel === MEMORY_FILE || (rel.startsWith(`${MEMORY_DIR}/`) && rel.toLowerCase().endsWith('.md'));
}

export interface MemoryListing {
  files: ResolvedPath[];
  refused: Array<{ path: string; reason: string }>;
  truncated: boolean;
}

export async function listMemoryFiles(workspaceDir: string): Promise<MemoryListing> {
  const out: MemoryListing = { files: [], refused: [], truncated: false };
  const seen = new Set<string>();
  const consider = async (rel: string) => {
    const r = await resolveWorkspacePath(workspaceDir, rel);
    if (!r.ok) {
      out.refused.push({ path: rel, reason: r.message });
      return;
    }
    if (!r.stat?.isFile() || seen.has(r.abs)) return;
    // A link inside memory/ pointing at another workspace file must not smuggle it in.
    if (!isMemoryPath(r.rel)) {
      out.refused.push({ path: rel, reason: `resolves to ${r.rel}, which is not a memory file` });
      return;
    }
    seen.add(r.abs);
    out.files.push(r);
  };

  await consider(MEMORY_FILE);
  const dir = await resolveWorkspacePath(workspaceDir, MEMORY_DIR);
  if (!dir.ok) {
    out.refused.push({ path: MEMORY_DIR, reason: dir.message });
  } else if (dir.stat?.isDirectory()) {
    // readdir does not follow symlinked subdirectories; symlinked files are checked one by one.
    const entries = await readdir(dir.abs, { recursive: true, withFileTypes: true });
    const names = entries
      .filter((e) => (e.isFile() || e.isSymbolicLink()) && e.name.toLowerCase().endsWith('.md'))
      .map((e) => [MEMORY_DIR, ...path.relative(dir.abs, path.join(e.parentPath, e.name)).split(path.sep)].join('/'))
      .sort();
    if (names.length > MAX_MEMORY_FILES) out.truncated = true;
    for (const name of names.slice(0, MAX_MEMORY_FILES)) await consider(name);
  }
  return out;
}
