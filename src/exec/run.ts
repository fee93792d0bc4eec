import { ExecJob } from './job.js';
import { sandboxIdentity, sandboxLaunch, type ExecHost, type SandboxIdentity } from './sandbox.js';
import { seccompProgram } from './seccomp.js';

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
  /** Sandbox host: who the command is on the host; default from Warden's own uid. */
  identity?: SandboxIdentity | undefined;
  /** Sandbox host: host paths masked inside (Warden's data dir, config, `.env`). */
  protect?: readonly string[] | undefined;
}

let program: Buffer | undefined;

/**
 * Starts the command. Throws when the sandbox cannot be launched at all (staging tools gone);
 * the exec tool checks `sandboxReadiness` first and reports that as a refusal.
 */
export function startCommand(spec: StartSpec): ExecJob {
  const shell = ['/bin/sh', '-c', spec.script];
  let file: string;
  let args: string[];
  let ids: { uid?: number | undefined; gid?: number | undefined } = {};
  let fd3: Uint8Array | undefined;
  if (spec.host === 'sandbox') {
    const launched = sandboxLaunch({ workspace: spec.workspace, cwd: spec.cwd, argv: shell, protect: spec.protect }, spec.identity ?? sandboxIdentity());
    if (!launched.ok) throw new Error(`the sandbox cannot start: ${launched.error}`);
    ({ file, args } = launched.launch);
    ids = { uid: launched.launch.uid, gid: launched.launch.gid };
    program ??= seccompProgram();
    fd3 = program;
  } else {
    [file, ...args] = shell as [string, ...string[]];
  }
  return new ExecJob({
    file,
    args,
    cwd: spec.cwd,
    env: spec.env,
    label: spec.label,
    timeoutMs: spec.timeoutMs,
    maxOutputChars: spec.maxOutputChars,
    ...ids,
    ...(fd3 ? { fd3 } : {}),
    ...(spec.killGraceMs !== undefined ? { killGraceMs: spec.killGraceMs } : {}),
    ...(spec.maxPendingChars !== undefined ? { maxPendingChars: spec.maxPendingChars } : {}),
  });
}
