import { argumentFilePath, argumentPathCandidates, bindFiles, type Binding } from '../exec/file-binding.js';

/**
 * The files a hook- or policy-approved call names in its arguments, bound by content like an
 * exec grant's scripts: an allow-always grant for `deploy({ script: "deploy.sh" })` covers that
 * deploy.sh, not whatever the agent writes there later. A string argument counts when it names
 * an existing regular file (relative to the workspace, or absolute) or reads as a path
 * (`./x`, `a/b`, `x.sh`, `~/…`) — a path that does not exist yet is bound as absent, so creating
 * it asks again — and so does a path inside a longer string (`--config=./x.sh`, `@./args.txt`). Directories, URLs and plain words are not files. Reads the file system only.
 */
export function argumentBinding(params: unknown, workspaceDir: string, home?: string): Binding {
  const paths = new Set<string>();
  for (const value of strings(params)) {
    // The whole string, each word of it, and a path inside a word: `--config=./x.sh`, `-f./Makefile`, `@./args.txt`.
    const text = value.trim();
    const words = new Set([text, ...text.split(/\s+/).slice(0, MAX_STRINGS)]);
    for (const word of words) {
      for (const candidate of argumentPathCandidates(word)) {
        const resolved = argumentFilePath(candidate.value, workspaceDir, home);
        if (resolved !== undefined && resolved !== 'unknown-cwd') paths.add(resolved);
      }
    }
  }
  return bindFiles([...paths].sort());
}

const MAX_STRINGS = 256;

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
