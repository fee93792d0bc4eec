import { existsSync, lstatSync, readlinkSync } from 'node:fs';
import { log } from '../log.js';

/**
 * Where exec runs (`tools.exec.host`): `sandbox` under bubblewrap, `gateway` on the host.
 * The sandbox sees the system read-only (no home directories, no Warden data dir, only the
 * /etc files programs need), the agent's workspace read-write, a private /tmp, no network, its
 * own PID namespace, and dies with Warden.
 */
export const BWRAP_PATH = '/usr/bin/bwrap';
export type ExecHost = 'sandbox' | 'gateway';

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

const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/opt'];
/** What programs read from /etc: users, name resolution, libraries, certificates, alternatives. */
const ETC_FILES = [
  '/etc/passwd', '/etc/group', '/etc/hosts', '/etc/nsswitch.conf', '/etc/resolv.conf', '/etc/ld.so.cache', '/etc/ld.so.conf',
  '/etc/ld.so.conf.d', '/etc/ssl', '/etc/ca-certificates', '/etc/alternatives', '/etc/localtime', '/etc/timezone', '/etc/mime.types',
  '/etc/gitconfig', '/etc/os-release', '/etc/debian_version', '/etc/profile', '/etc/bash.bashrc', '/etc/inputrc', '/etc/magic',
];

export interface SandboxSpec {
  workspace: string;
  cwd: string;
  /** The command to run inside, e.g. ['/bin/sh', '-c', text]. */
  argv: readonly string[];
}

/** bwrap's argv for a command. Reads only whether system paths are links or directories. */
export function bwrapArgs(spec: SandboxSpec): string[] {
  const args = ['--die-with-parent', '--new-session', '--unshare-net', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try'];
  for (const dir of SYSTEM_DIRS) {
    let stat;
    try {
      stat = lstatSync(dir);
    } catch {
      continue;
    }
    if (stat.isSymbolicLink()) args.push('--symlink', readlinkSync(dir), dir);
    else args.push('--ro-bind', dir, dir);
  }
  for (const file of ETC_FILES) args.push('--ro-bind-try', file, file);
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp', '--tmpfs', '/var/tmp', '--tmpfs', '/run');
  // After /tmp: a workspace under /tmp is bound on top of the private tmpfs.
  args.push('--bind', spec.workspace, spec.workspace);
  // The sandbox's own root (where mount points were made) is read-only too; only the
  // workspace, /tmp, /var/tmp and /run take writes, and those last three vanish with it.
  args.push('--remount-ro', '/', '--chdir', spec.cwd, '--', ...spec.argv);
  return args;
}
