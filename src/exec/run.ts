import net from 'node:net';
import { closeInheritedDescriptors } from './descriptors.js';
import { EGRESS_FD, relayChannel } from './egress/channel.js';
import { proxyEnv } from './egress/forwarder.js';
import { log } from '../log/log.js';
import { ExecJob } from './job.js';
import { GATE_FD, sandboxIdentity, sandboxLaunch, type ExecHost, type SandboxIdentity } from './sandbox.js';
import { checkSandboxUid, ownSandboxLaunches } from './sandbox-uid.js';
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
  /** Host directories the command reads at their own path, read-only (the verified copies). */
  readOnly?: readonly string[] | undefined;
  /**
   * Sandbox host: egress through the proxy listening on `socket` (a path only Warden can reach),
   * by the forwarder run by `node`; the sandbox gets a channel descriptor, not the path
   * (egress/channel.ts), and Warden makes each proxy connection itself.
   */
  egress?: { socket: string; node: string } | undefined;
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
  let env = spec.env;
  let ids: { uid?: number | undefined; gid?: number | undefined } = {};
  const inputs: Uint8Array[] = [];
  if (spec.host === 'sandbox') {
    // The proxy variables last: nothing the command's environment says replaces where they point.
    const commandEnv = spec.egress ? { ...spec.env, ...proxyEnv() } : spec.env;
    const identity = spec.identity ?? sandboxIdentity();
    // As root: no start while another host process runs as the sandbox uid (sandbox-uid.ts).
    const shared = checkSandboxUid(identity);
    if (!shared.ok) throw new Error(shared.error);
    const launched = sandboxLaunch({ workspace: spec.workspace, cwd: spec.cwd, argv: shell, protect: spec.protect, readOnly: spec.readOnly, egress: spec.egress ? { node: spec.egress.node } : undefined }, identity, commandEnv);
    if (!launched.ok) throw new Error(`the sandbox cannot start: ${launched.error}`);
    ({ file, args, env } = launched.launch);
    ids = { uid: launched.launch.uid, gid: launched.launch.gid };
    program ??= seccompProgram();
    // Descriptor 3: the seccomp program (SECCOMP_FD); 4: the environment (ENV_ARGS_FD).
    inputs.push(program);
    if (launched.launch.envArgs) inputs.push(launched.launch.envArgs);
  } else {
    [file, ...args] = shell as [string, ...string[]];
  }
  // Nothing of Warden's reaches the command but what the spawn names (descriptors.ts).
  closeInheritedDescriptors();
  const job = new ExecJob({
    file,
    args,
    cwd: spec.cwd,
    env,
    label: spec.label,
    timeoutMs: spec.timeoutMs,
    maxOutputChars: spec.maxOutputChars,
    ...ids,
    ...(inputs.length > 0 ? { inputs } : {}),
    ...(spec.killGraceMs !== undefined ? { killGraceMs: spec.killGraceMs } : {}),
    ...(spec.maxPendingChars !== undefined ? { maxPendingChars: spec.maxPendingChars } : {}),
    ...(spec.host === 'sandbox' && spec.egress ? { channelFd: EGRESS_FD } : {}),
    ...(spec.host === 'sandbox' ? { gateFd: GATE_FD } : {}),
  });
  // The sandbox asks once its init is armed to die with the launch (sandbox.ts START_GATE); a
  // live Warden answers while the job still runs (a job killed or timed out during the setup
  // took its monitor down before the init was armed: no answer, and that sandbox exits).
  // Anything else on the gate is not the gate's question: no answer.
  const gate = job.gate;
  if (gate) {
    gate.on('error', () => {});
    gate.once('data', (chunk: Buffer) => {
      if (chunk.toString('latin1') === 'r\n' && job.status === 'running' && job.running) gate.end('go\n');
      else gate.destroy();
    });
  }
  // Warden's own launch: not "another process of the sandbox uid" for its other commands.
  const launchPid = spec.host === 'sandbox' ? job.pid : undefined;
  if (launchPid !== undefined) {
    ownSandboxLaunches.add(launchPid);
    const forget = () => ownSandboxLaunches.delete(launchPid);
    void job.done.then(forget, forget);
  }
  const channel = job.channel;
  if (spec.egress && channel) {
    const socket = spec.egress.socket;
    relayChannel(channel, () => net.connect(socket), (why) => log.warn({ command: spec.label, why }, 'egress channel dropped'));
  }
  return job;
}
