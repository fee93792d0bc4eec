import { ExecJob } from './job.js';
import { BWRAP_PATH, bwrapArgs, type ExecHost } from './sandbox.js';

/** Starts a command text on a host: `/bin/sh -c` directly, or inside bubblewrap. */
export interface StartSpec {
  /** The text the shell runs: the enforced rewrite, or the approved raw command. */
  script: string;
  label: string;
  host: ExecHost;
  workspace: string;
  cwd: string;
  env: Record<string, string>;
  timeoutMs?: number | undefined;
  maxOutputChars: number;
  killGraceMs?: number | undefined;
  maxPendingChars?: number | undefined;
}

export function startCommand(spec: StartSpec): ExecJob {
  const shell = ['/bin/sh', '-c', spec.script];
  const [file, ...args] = spec.host === 'sandbox' ? [BWRAP_PATH, ...bwrapArgs({ workspace: spec.workspace, cwd: spec.cwd, argv: shell })] : shell;
  return new ExecJob({
    file: file!,
    args,
    cwd: spec.cwd,
    env: spec.env,
    label: spec.label,
    timeoutMs: spec.timeoutMs,
    maxOutputChars: spec.maxOutputChars,
    ...(spec.killGraceMs !== undefined ? { killGraceMs: spec.killGraceMs } : {}),
    ...(spec.maxPendingChars !== undefined ? { maxPendingChars: spec.maxPendingChars } : {}),
  });
}
