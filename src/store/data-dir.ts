import path from 'node:path';

/**
 * Where Warden keeps its state: `WARDEN_DATA_DIR` when set and not empty, else the config's
 * `dataDir` (default `./data`), relative paths resolved against `cwd`.
 */
export function resolveDataDir(options: { configDataDir?: string | undefined; env?: NodeJS.ProcessEnv; cwd: string }): string {
  const fromEnv = options.env?.WARDEN_DATA_DIR;
  const chosen = fromEnv !== undefined && fromEnv.trim() !== '' ? fromEnv : (options.configDataDir ?? './data');
  return path.resolve(options.cwd, chosen);
}

/** The SQLite file inside a data dir. */
export const DATABASE_FILE = 'warden.sqlite';
