import { existsSync, lstatSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { defaultSandboxId } from '../config/sandbox-id.js';
import { log } from '../log/log.js';
import { isWithinOrEqual, realOrSelf } from '../util/path-within.js';
import { EGRESS_FD } from './egress/channel.js';
import { FORWARDER_PORT, FORWARDER_SCRIPT } from './egress/forwarder.js';

/**
 * Where exec runs (`tools.exec.host`): `sandbox` under bubblewrap, `gateway` on the host.
 *
 * The sandbox sees the system read-only (no home directories, no Warden data dir, config or
 * `.env` — masked even where they sit under a bound system directory — only the /etc files
 * programs need), the agent's workspace read-write, a private empty HOME, /tmp, /var/tmp and
 * /run, no network, its own PID, IPC and UTS namespaces, and dies with Warden. It runs in its
 * own user namespace as an unprivileged host uid (see SandboxIdentity), with every capability
 * dropped, no_new_privs set, further user namespaces disabled and the seccomp filter of
 * seccomp.ts loaded.
 */
export const BWRAP_PATH = '/usr/bin/bwrap';
export type ExecHost = 'sandbox' | 'gateway';

/** The sandbox's HOME: an empty tmpfs made for each command, never the workspace. */
export const SANDBOX_HOME = '/home/sandbox';
/** The descriptor bubblewrap reads the seccomp program from (see run.ts). */
export const SECCOMP_FD = 3;
/** The descriptor the staged start hands the command's environment on (bubblewrap `--args`). */
export const ENV_ARGS_FD = 4;
/** The start gate's socket inside the sandbox (START_GATE); closed before the command runs. */
export const GATE_FD = 6;
/**
 * The sandbox's first process: asks Warden to go over GATE_FD and runs the command only on its
 * answer. bubblewrap arms the parent-death signal of the sandbox's init only once its setup is
 * done (the mounts take hundreds of ms), after its monitor has forked; a Warden killed during the
 * setup takes the monitor with it (setpriv armed the monitor) but leaves the init re-parented to
 * pid 1, which would run the command to its end. By the time this runs the init has armed its
 * signal (right after it forked this process); a live Warden answers, a dead one has closed its
 * end (the write fails or the read sees the end), and the gate exits — and the init with it.
 * The descriptor is closed before the command (or the egress forwarder) starts. Single-digit
 * descriptor: /bin/sh (dash) redirects only 0-9.
 */
export const START_GATE = `echo r >&${GATE_FD} && read -r g <&${GATE_FD} && [ "$g" = go ] || exit 125; exec ${GATE_FD}<&- && exec "$@"`;
// The default id (65533, or WARDEN_SANDBOX_ID) and why it is that id: config/sandbox-id.ts.
export { DEFAULT_SANDBOX_ID, defaultSandboxId } from '../config/sandbox-id.js';

let bwrapPresent: boolean | undefined;
/** Cached: availability checks run on every turn and must not touch the disk each time. */
export function bwrapAvailable(): boolean {
  bwrapPresent ??= existsSync(BWRAP_PATH);
  return bwrapPresent;
}

let warned = false;
/** The configured host, else sandbox when bubblewrap is installed, else gateway with a warning. */
export function resolveExecHost(configured: ExecHost | undefined, hasBwrap: boolean = bwrapAvailable()): ExecHost {
  if (configured) return configured;
  if (hasBwrap) return 'sandbox';
  if (!warned) {
    warned = true;
    log.warn({ bwrap: BWRAP_PATH }, 'exec: bubblewrap is not installed; commands run on the host (tools.exec.host = gateway)');
  }
  return 'gateway';
}

/**
 * What `~` means when a command is judged: in the command, the HOME it runs with (the sandbox's
 * private one, or Warden's on the gateway host); in allowlist patterns, always the operator's,
 * who wrote them.
 */
export function execHomes(host: ExecHost, operatorHome: string = homedir()): { home: string; patternHome: string } {
  return { home: host === 'sandbox' ? SANDBOX_HOME : operatorHome, patternHome: operatorHome };
}

/**
 * Who a sandboxed command is on the host. bubblewrap run by root keeps host uid 0 behind any
 * uid it shows inside, so root-owned files in the bound system directories would stay readable;
 * a Warden running as root therefore starts the sandbox as `uid`/`gid` (default 65533), whose
 * own user namespace holds nothing over the host. A Warden running as another user runs the
 * sandbox as itself: an unprivileged user namespace of its own uid.
 */
export interface SandboxIdentity {
  /** Host uid/gid of every process in the sandbox (the same numbers inside). */
  uid: number;
  gid: number;
  /**
   * Warden is root: the command starts in a private mount namespace where the workspace is
   * bound at a directory the sandbox uid can reach, then drops to uid/gid and runs bubblewrap
   * (bubblewrap resolves bind sources with its caller's permissions, so a workspace under a
   * mode-700 /root would be out of its reach otherwise).
   */
  staged: boolean;
  /**
   * `tools.exec.sandbox.allowSharedUid`: start even while another host process runs as `uid`
   * (sandbox-uid.ts refuses otherwise). Only staged starts are checked.
   */
  allowSharedUid?: boolean | undefined;
  /** Start bubblewrap directly as this uid/gid (tests: a non-root Warden, played by root). */
  spawnAs?: { uid: number; gid: number } | undefined;
}

export interface ProcessIds {
  uid: number;
  gid: number;
}

export function ownIds(): ProcessIds {
  return { uid: process.getuid?.() ?? -1, gid: process.getgid?.() ?? -1 };
}

/** The identity for `tools.exec.sandbox` (uid/gid apply only when Warden is root). */
export function sandboxIdentity(configured: { uid?: number | undefined; gid?: number | undefined; allowSharedUid?: boolean | undefined } = {}, own: ProcessIds = ownIds()): SandboxIdentity {
  if (own.uid === 0) {
    return { uid: configured.uid ?? defaultSandboxId(), gid: configured.gid ?? defaultSandboxId(), staged: true, ...(configured.allowSharedUid === true ? { allowSharedUid: true } : {}) };
  }
  return { uid: own.uid, gid: own.gid, staged: false };
}

const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/opt'];
/** What programs read from /etc: users, name resolution, libraries, certificates, alternatives. */
const ETC_FILES = [
  '/etc/passwd', '/etc/group', '/etc/hosts', '/etc/nsswitch.conf', '/etc/resolv.conf', '/etc/ld.so.cache', '/etc/ld.so.conf',
  '/etc/ld.so.conf.d', '/etc/ssl', '/etc/ca-certificates', '/etc/alternatives', '/etc/localtime', '/etc/timezone', '/etc/mime.types',
  '/etc/gitconfig', '/etc/os-release', '/etc/debian_version', '/etc/profile', '/etc/bash.bashrc', '/etc/inputrc', '/etc/magic',
];

export interface SandboxSpec {
  /** The workspace, at the same path inside as on the host. */
  workspace: string;
  cwd: string;
  /** The command to run inside, e.g. ['/bin/sh', '-c', text]. */
  argv: readonly string[];
  /** Where bubblewrap finds the workspace when it is not at its own path (the staged bind). */
  workspaceSource?: string | undefined;
  /**
   * Host paths the sandbox must not read (Warden's data dir, config file, `.env`): masked
   * wherever a bound directory would show them. Missing paths are skipped.
   */
  protect?: readonly string[] | undefined;
  /** Host directories shown read-only at their own path (the verified copies of bound files). */
  readOnly?: readonly string[] | undefined;
  /**
   * Network egress through Warden's proxy (tools.exec.sandbox.network): the node that runs the
   * forwarder in front of the command, which reaches the proxy only over the channel inherited
   * at EGRESS_FD (egress/channel.ts) — nothing of the proxy is bound into the sandbox. The
   * namespace stays without any interface but `lo` either way.
   */
  egress?: { node: string } | undefined;
}

/** bwrap's argv for a command. Reads only whether system paths are links or directories and where protected paths lead. */
export function bwrapArgs(spec: SandboxSpec): string[] {
  const args = [
    '--die-with-parent', '--new-session',
    // Its own user namespace, no capability in it, none further inside.
    '--unshare-user', '--disable-userns', '--cap-drop', 'ALL',
    '--unshare-net', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try',
    '--seccomp', String(SECCOMP_FD),
  ];
  const binds: Array<{ src: string; dest: string }> = [];
  for (const dir of SYSTEM_DIRS) {
    let stat;
    try {
      stat = lstatSync(dir);
    } catch {
      continue;
    }
    if (stat.isSymbolicLink()) args.push('--symlink', readlinkSync(dir), dir);
    else {
      args.push('--ro-bind', dir, dir);
      binds.push({ src: realOrSelf(dir), dest: dir });
    }
  }
  for (const file of ETC_FILES) {
    args.push('--ro-bind-try', file, file);
    if (existsSync(file)) binds.push({ src: realOrSelf(file), dest: file });
  }
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp', '--tmpfs', '/var/tmp', '--tmpfs', '/run', '--tmpfs', SANDBOX_HOME);
  binds.push({ src: realOrSelf(spec.workspace), dest: spec.workspace });

  const masks = maskTargets(spec.protect ?? [], binds);
  // A mask around the workspace goes first, so the workspace is bound back on top of it.
  const around = masks.filter((m) => isStrictlyWithin(m.at, spec.workspace));
  const inside = masks.filter((m) => !isStrictlyWithin(m.at, spec.workspace));
  for (const mask of around) args.push('--tmpfs', mask.at);
  // After /tmp: a workspace under /tmp is bound on top of the private tmpfs.
  args.push('--bind', spec.workspaceSource ?? spec.workspace, spec.workspace);
  // Read-only once the workspace's mount point is made in it.
  for (const mask of around) args.push('--remount-ro', mask.at);
  for (const mask of inside) args.push(...maskArgs(mask));
  // Read-only: the command reads the verified bytes there and nothing inside can change them.
  for (const dir of spec.readOnly ?? []) args.push('--ro-bind', dir, dir);
  // The sandbox's own root (where mount points were made) is read-only too; only the
  // workspace, HOME, /tmp, /var/tmp and /run take writes, and all but the workspace vanish with it.
  const argv = spec.egress ? [spec.egress.node, '-e', FORWARDER_SCRIPT, String(EGRESS_FD), String(FORWARDER_PORT), ...spec.argv] : spec.argv;
  args.push('--remount-ro', '/', '--chdir', spec.cwd, '--', '/bin/sh', '-c', START_GATE, 'warden-gate', ...argv);
  return args;
}

interface Mask {
  /** Path inside the sandbox. */
  at: string;
  directory: boolean;
}

/** Every place inside the sandbox where a protected path shows through a bind. */
function maskTargets(protect: readonly string[], binds: ReadonlyArray<{ src: string; dest: string }>): Mask[] {
  const masks = new Map<string, Mask>();
  for (const p of protect) {
    let real: string;
    let directory: boolean;
    try {
      real = realpathSync(p);
      directory = statSync(real).isDirectory();
    } catch {
      continue;
    }
    for (const bind of binds) {
      if (!isWithinOrEqual(real, bind.src)) continue;
      const at = path.join(bind.dest, path.relative(bind.src, real));
      masks.set(at, { at, directory });
    }
  }
  return [...masks.values()];
}

function maskArgs(mask: Mask): string[] {
  // /dev/null on a nodev bind: opening it fails, so the file reads as nothing at all.
  return mask.directory ? ['--tmpfs', mask.at, '--remount-ro', mask.at] : ['--ro-bind', '/dev/null', mask.at];
}

/** `dir` lies inside `target` (and is not `target` itself). */
function isStrictlyWithin(target: string, dir: string): boolean {
  const rel = path.relative(target, dir);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

/**
 * Binaries a launch needs (util-linux and a POSIX shell): setpriv for every launch (the
 * parent-death signal, see PARENT_CHECK), unshare and mount for the staged start as root.
 */
const STAGE_TOOLS = ['unshare', 'setpriv', 'mount'] as const;
type StageTool = (typeof STAGE_TOOLS)[number];
const TOOL_DIRS = ['/usr/bin', '/bin', '/usr/sbin', '/sbin'];

/** Where each launch tool is (`only`: just these), or which are missing. */
export function stageTools(only: readonly StageTool[] = STAGE_TOOLS): { ok: true; paths: Record<StageTool, string> } | { ok: false; missing: string[] } {
  const paths: Partial<Record<StageTool, string>> = {};
  const missing: string[] = [];
  for (const tool of only) {
    const found = TOOL_DIRS.map((d) => path.join(d, tool)).find((p) => existsSync(p));
    if (found) paths[tool] = found;
    else missing.push(tool);
  }
  return missing.length === 0 ? { ok: true, paths: paths as Record<StageTool, string> } : { ok: false, missing };
}

/** The launch tools an identity needs. */
export function launchToolsFor(identity: SandboxIdentity): readonly StageTool[] {
  return identity.staged ? STAGE_TOOLS : ['setpriv'];
}

/** Top-level directories the staged start may cover with the workspace in its private mount namespace. */
const STAGE_POINTS = ['/mnt', '/media', '/srv', '/run'];

/** The stage point for a workspace: an existing directory unrelated to it and to every bound path. */
export function stagePoint(workspace: string): string | null {
  const ws = realOrSelf(workspace);
  const sources = [...SYSTEM_DIRS, ...ETC_FILES].map(realOrSelf);
  for (const point of STAGE_POINTS) {
    try {
      if (!lstatSync(point).isDirectory()) continue;
    } catch {
      continue;
    }
    if (isWithinOrEqual(ws, point) || isWithinOrEqual(point, ws)) continue;
    if (sources.some((s) => isWithinOrEqual(s, point))) continue;
    return point;
  }
  return null;
}

// Run as root in a fresh private mount namespace: show the workspace at the stage point, then
// become the sandbox user. Arguments arrive as $1.. so no path is ever parsed by the shell.
const STAGE_SCRIPT = '"$1" -n --rbind "$2" "$3" && shift 3 && exec "$@"';

/**
 * Run by the sandbox uid right after setpriv set the parent-death signal (SIGKILL) and before
 * bubblewrap: exits unless its parent is still Warden ($1). bubblewrap's --die-with-parent
 * arms the signal only once its monitor has forked, and every program before it (unshare, the
 * stage shell, mount, setpriv) starts while Warden may already be gone; a launch whose Warden
 * died in that window would be re-parented to init and run its command to the end, holding the
 * sandbox uid. With the signal armed first and the parent checked after, either Warden was alive
 * when the signal was armed (its death now kills the launch) or the check sees another parent.
 * The signal survives the exec of sh and bubblewrap (neither changes credentials nor is setuid).
 * Reads the PPid field of /proc/$$/stat after the last ") " (the name may hold anything).
 */
export const PARENT_CHECK = 'read -r s < /proc/$$/stat && p=${s##*) } && p=${p#* } && p=${p%% *} && [ "$p" = "$1" ] || exit 125; shift; exec "$@"';

export interface SandboxLaunch {
  file: string;
  args: string[];
  /** The environment to spawn with. */
  env: Record<string, string>;
  /** Spawn as this uid/gid; absent: as Warden. */
  uid?: number | undefined;
  gid?: number | undefined;
  /** Bytes for descriptor ENV_ARGS_FD, when the launch reads the command's environment there. */
  envArgs?: Uint8Array | undefined;
}

// What the root part of a staged start runs with: nothing from the command's environment, so no
// variable the model chose (LOCPATH, LIBMOUNT_*, ...) ever reaches a process running as root.
const STAGE_ENV = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' };

/** `--clearenv` then `--setenv KEY VALUE` for each variable, NUL-separated for `--args`. */
export function envAsBwrapArgs(env: Readonly<Record<string, string>>): Buffer {
  const args = ['--clearenv', ...Object.entries(env).flatMap(([k, v]) => ['--setenv', k, v])];
  return Buffer.from(args.map((a) => `${a}\0`).join(''), 'utf8');
}

export type LaunchResult = { ok: true; launch: SandboxLaunch } | { ok: false; error: string };

/**
 * What to spawn for a sandboxed command with its environment under an identity. `parent`: the
 * pid of the process that spawns it (Warden), which the launch checks it still has (PARENT_CHECK).
 *
 * Every launch runs the launch programs with STAGE_ENV and hands the command's environment to
 * bubblewrap on ENV_ARGS_FD: setpriv sets the parent-death signal and the sandbox uid's shell
 * checks the parent, then bubblewrap (--die-with-parent) carries the signal on to its monitor,
 * the sandbox's init and, through the pid namespace, to every process inside.
 */
export function sandboxLaunch(spec: SandboxSpec, identity: SandboxIdentity, env: Record<string, string>, parent: number = process.pid): LaunchResult {
  const tools = stageTools(launchToolsFor(identity));
  if (!tools.ok) return { ok: false, error: `running the sandbox${identity.staged ? ` as uid ${identity.uid}` : ''} needs ${tools.missing.join(', ')} (util-linux)` };
  const { unshare, setpriv, mount } = tools.paths;
  // The command's environment travels on a descriptor, past every launch program, to bubblewrap
  // (which, unlike an argv, no other user can read in /proc).
  const checked = (bwrapSpec: SandboxSpec): string[] => ['/bin/sh', '-c', PARENT_CHECK, 'warden-launch', String(parent), BWRAP_PATH, '--args', String(ENV_ARGS_FD), ...bwrapArgs(bwrapSpec)];
  if (!identity.staged) {
    return {
      ok: true,
      launch: { file: setpriv, args: ['--pdeathsig', 'SIGKILL', '--', ...checked(spec)], env: STAGE_ENV, envArgs: envAsBwrapArgs(env), uid: identity.spawnAs?.uid, gid: identity.spawnAs?.gid },
    };
  }
  const point = stagePoint(spec.workspace);
  if (!point) return { ok: false, error: `no directory among ${STAGE_POINTS.join(', ')} can stage the workspace ${spec.workspace}` };
  // setpriv arms the parent-death signal after it changed the ids (a change of ids clears it).
  const dropToSandboxUser = [setpriv, '--reuid', String(identity.uid), '--regid', String(identity.gid), '--clear-groups', '--inh-caps=-all', '--bounding-set=-all', '--pdeathsig', 'SIGKILL', '--'];
  return {
    ok: true,
    launch: {
      file: unshare,
      args: ['--mount', '--propagation', 'private', '--', '/bin/sh', '-c', STAGE_SCRIPT, 'warden-stage', mount, spec.workspace, point, ...dropToSandboxUser, ...checked({ ...spec, workspaceSource: point })],
      env: STAGE_ENV,
      envArgs: envAsBwrapArgs(env),
    },
  };
}

/**
 * The node that runs the egress forwarder inside the sandbox: Warden's own when it lies in a
 * bound system directory, else the system one; null when neither is visible in the sandbox.
 */
export function sandboxNode(execPath: string = process.execPath): string | null {
  for (const candidate of [execPath, '/usr/bin/node', '/usr/local/bin/node']) {
    const real = realOrSelf(candidate);
    if (!existsSync(real)) continue;
    if (SYSTEM_DIRS.some((dir) => isWithinOrEqual(candidate, dir) && isWithinOrEqual(real, realOrSelf(dir)))) return candidate;
  }
  return null;
}
