import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';

/**
 * The environment a stdio MCP server starts with: a short list of harmless variables from
 * Warden's own environment (where programs are, who and where the user is, the locale) and the
 * variables the operator wrote in `mcp.servers.<name>.env` — never the rest of Warden's
 * environment, so platform tokens and model keys reach a server only when the operator names
 * them (`env: { GITHUB_TOKEN: "${GITHUB_TOKEN}" }`). As exec builds its children's (exec/env.ts),
 * from a list of keys, never by copying and deleting. Pure.
 */
const PASS_THROUGH = new Set(['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LANGUAGE', 'TZ', 'TERM', 'TMPDIR', 'NO_COLOR']);

export function mcpChildEnv(parent: NodeJS.ProcessEnv, configured: Readonly<Record<string, string>>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(parent)) {
    if (value === undefined || value.startsWith('()')) continue;
    if (PASS_THROUGH.has(key) || key.startsWith('LC_')) env[key] = value;
  }
  return { ...env, ...configured };
}

/**
 * The executable a command names, as the child would find it: a path (relative to `cwd`), or
 * the first executable file of that name on `PATH`. undefined when there is none, so a missing
 * program is reported by name instead of as a closed connection.
 */
export function resolveCommand(command: string, pathVar: string | undefined, cwd: string): string | undefined {
  const candidates = command.includes('/') ? [path.resolve(cwd, command)] : (pathVar ?? '').split(':').filter(Boolean).map((dir) => path.join(path.resolve(cwd, dir), command));
  for (const file of candidates) {
    try {
      if (statSync(file).isFile()) {
        accessSync(file, constants.X_OK);
        return file;
      }
    } catch {
      // not this one
    }
  }
  return undefined;
}
