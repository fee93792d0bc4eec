import { closeSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { log } from '../log/log.js';

/**
 * Descriptors Warden's process would hand to every program it starts.
 *
 * A child started by Node gets its stdio (0-2) and the descriptors the spawn names (the sandbox's
 * seccomp program, its environment, the egress channel), and besides those every descriptor of
 * Warden's that lacks close-on-exec: Node, libuv and SQLite open everything with O_CLOEXEC, so
 * those are descriptors Warden inherited from whoever started it (a supervisor's status pipe, a
 * shell's redirection, a socket handed down) and never uses. Passed on, a sandboxed command could
 * read or write them — outside the sandbox's reach by every other measure. Node cannot set
 * close-on-exec on a descriptor, so Warden closes them before it starts a command: the only way
 * no child ever sees them. stdio stays (every child's 0-2 are replaced by the spawn anyway).
 */

/** Linux's O_CLOEXEC in the octal `flags:` line of /proc/<pid>/fdinfo/<fd>. */
const O_CLOEXEC = 0o2000000;

/** Whether an fdinfo text says close-on-exec; null when it has no `flags:` line. Pure. */
export function closesOnExec(fdinfo: string): boolean | null {
  for (const line of fdinfo.split('\n')) {
    if (!line.startsWith('flags:')) continue;
    const flags = Number.parseInt(line.slice('flags:'.length).trim(), 8);
    return Number.isNaN(flags) ? null : (flags & O_CLOEXEC) !== 0;
  }
  return null;
}

/**
 * The descriptors (above stdio) that a child would inherit, given each open descriptor's
 * fdinfo. An fdinfo that cannot be read or parsed counts as inherited (fail closed). Pure.
 */
export function inheritedDescriptors(fdinfos: ReadonlyMap<number, string | null>): number[] {
  const found: number[] = [];
  for (const [fd, info] of fdinfos) {
    if (fd <= 2) continue;
    if (info === null || closesOnExec(info) !== true) found.push(fd);
  }
  return found.sort((a, b) => a - b);
}

function readFdinfos(): Map<number, string | null> {
  const infos = new Map<number, string | null>();
  for (const entry of readdirSync('/proc/self/fd')) {
    const fd = Number(entry);
    if (!Number.isInteger(fd)) continue;
    try {
      infos.set(fd, readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'));
    } catch {
      // Closed since the listing: the descriptor that read /proc/self/fd itself, among others.
    }
  }
  return infos;
}

const reported = new Set<string>();

/**
 * Closes every descriptor of Warden's process a child would inherit (see above), logging each
 * once. Synchronous, so nothing runs between it and the spawn that follows. Returns what it
 * closed. Off Linux (no /proc/self/fdinfo) it closes nothing.
 */
export function closeInheritedDescriptors(): number[] {
  let infos: Map<number, string | null>;
  try {
    infos = readFdinfos();
  } catch {
    return [];
  }
  const closed: number[] = [];
  for (const fd of inheritedDescriptors(infos)) {
    let target = 'unknown';
    try {
      target = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      // Reported as unknown.
    }
    try {
      closeSync(fd);
      closed.push(fd);
    } catch {
      continue; // closed meanwhile
    }
    const key = `${fd} ${target}`;
    if (!reported.has(key)) {
      reported.add(key);
      log.warn({ fd, target }, 'exec: closed a descriptor Warden inherited without close-on-exec, so no command it starts receives it');
    }
  }
  return closed;
}
