import path from 'node:path';

/**
 * Where Warden keeps what a command must never read or change: the data dir (approvals,
 * allow-always grants, sessions), the config file, and the `.env` files the config loader reads
 * (beside the config, and in the working directory). The audit flags a workspace containing
 * any of them; the sandbox masks them wherever a bound directory would show them. Pure.
 */
export interface WardenStatePath {
  what: string;
  at: string;
}

export function wardenStatePaths(options: { dataDir: string; configFile?: string | undefined; baseDir: string; cwd?: string | undefined }): WardenStatePath[] {
  const beside = options.configFile ? path.dirname(options.configFile) : options.baseDir;
  const paths: WardenStatePath[] = [
    { what: `the data dir ${options.dataDir} (approvals, allow-always grants)`, at: path.resolve(options.dataDir) },
    ...(options.configFile ? [{ what: `the config file ${options.configFile}`, at: path.resolve(options.configFile) }] : []),
    { what: 'the .env file next to the config', at: path.resolve(beside, '.env') },
  ];
  const cwdEnv = options.cwd ? path.resolve(options.cwd, '.env') : undefined;
  if (cwdEnv && !paths.some((p) => p.at === cwdEnv)) paths.push({ what: 'the .env file in the working directory', at: cwdEnv });
  return paths;
}
