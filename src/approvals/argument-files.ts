import { lstatSync, statSync } from 'node:fs';
import path from 'node:path';
import { bindFiles, type Binding } from '../exec/content-binding.js';

/**
 * The files a hook- or policy-approved call names in its arguments, bound by content like an
 * exec grant's scripts: an allow-always grant for `deploy({ script: "deploy.sh" })` covers that
 * deploy.sh, not whatever the agent writes there later. A string argument counts when it names
 * an existing regular file (relative to the workspace, or absolute) or reads as a path
 * (`./x`, `a/b`, `x.sh`, `~/…`) — a path that does not exist yet is bound as absent, so creating
 * it asks again. Directories, URLs and plain words are not files. Reads the file system only.
 */
export function argumentBinding(params: unknown, workspaceDir: string, home?: string): Binding {
  const paths = new Set<string>();
  for (const value of strings(params)) {
    const resolved = candidatePath(value, workspaceDir, home);
    if (resolved !== undefined) paths.add(resolved);
  }
  return bindFiles([...paths].sort());
}

const MAX_STRINGS = 256;
const MAX_PATH = 4096;
const URL_LIKE = /^[a-z][a-z0-9+.-]*:/i;
const PATH_LIKE = /[/\\]|^\.|^~|\.[A-Za-z0-9]{1,10}$/;

/** Every string in the arguments, depth first (keys too: a path can be a map key), up to a bound. */
function strings(value: unknown, out: string[] = [], depth = 0): string[] {
  if (out.length >= MAX_STRINGS || depth > 8) return out;
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) strings(v, out, depth + 1);
  else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      out.push(k);
      strings(v, out, depth + 1);
    }
  }
  return out;
}

function candidatePath(value: string, workspaceDir: string, home: string | undefined): string | undefined {
  const text = value.trim();
  if (text === '' || text.length > MAX_PATH || /[\0\r\n]/.test(text) || (URL_LIKE.test(text) && !/^[A-Za-z]:[\\/]/.test(text))) return undefined;
  let expanded = text;
  if (text === '~' || text.startsWith('~/')) {
    if (home === undefined) return undefined;
    expanded = path.join(home, text.slice(1));
  }
  const absolute = path.isAbsolute(expanded) ? path.normalize(expanded) : path.resolve(workspaceDir, expanded);
  let kind: 'file' | 'other' | 'absent';
  try {
    const stat = lstatSync(absolute);
    // A link is followed by the binding (its target is what is hashed); anything else but a file is not content.
    kind = stat.isFile() ? 'file' : stat.isSymbolicLink() ? linkKind(absolute) : 'other';
  } catch {
    kind = 'absent';
  }
  if (kind === 'other') return undefined;
  if (kind === 'absent' && !PATH_LIKE.test(text)) return undefined;
  return absolute;
}

function linkKind(link: string): 'file' | 'other' | 'absent' {
  try {
    return statSync(link).isFile() ? 'file' : 'other';
  } catch {
    return 'absent';
  }
}
