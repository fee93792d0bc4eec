import { existsSync, readdirSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { log } from '../log/log.js';
import { BWRAP_PATH, type SandboxIdentity } from './sandbox.js';

/**
 * Whether another host process runs as the sandbox uid (tools.exec.sandbox.uid, Warden as root)
 * or with the sandbox gid (tools.exec.sandbox.gid).
 *
 * The sandbox's user namespace belongs to that uid, so any process of the same uid that can name
 * a sandboxed process by pid (one in Warden's pid namespace) may ptrace it or take its
 * descriptors with pidfd_getfd — including the egress channel. Before each sandboxed start as
 * root Warden scans /proc and refuses while such a process exists, unless the operator set
 * `tools.exec.sandbox.allowSharedUid`. The scan is a point-in-time check: it catches the daemon
 * that already runs as the uid (the usual case: `nobody`), not one started a moment later; a
 * dedicated uid is what makes the sandbox's uid its own.
 *
 * The gid counts the same way: the sandbox runs with gid tools.exec.sandbox.gid and no
 * supplementary groups (setpriv --regid --clear-groups), so what it writes in the workspace and
 * /tmp belongs to that group and any group-accessible file, socket or IPC object it makes is open
 * to every process holding the gid — as its real, effective or saved gid (it can switch to it)
 * or as a supplementary group — whatever that process's uid.
 *
 * Not counted, because they cannot reach a sandboxed process or run code of their own:
 * - processes every thread of which has exited or is exiting (see runsNothing);
 * - processes in a pid namespace below Warden's (every sandboxed command, Warden's and any
 *   other Warden's): they cannot name a process of Warden's namespace;
 * - Warden's own launches (the staging process that becomes bubblewrap's monitor), by pid;
 * - another Warden's launch: bubblewrap or setpriv whose parent is a root node process other
 *   than pid 1 (an orphan of another user is re-parented to pid 1 or a subreaper, never to a
 *   node process that did not start it; a process of the sandbox uid cannot make a root parent).
 */

/** One process's ids as /proc/<pid>/status gives them. Pure. */
export interface ProcStatus {
  name: string;
  /** The state letter: `Z` (zombie) and `X` (dead) have exited and run nothing. */
  state: string;
  ppid: number;
  /** Real, effective, saved and filesystem uid. */
  uids: number[];
  /** Real, effective, saved and filesystem gid. */
  gids: number[];
  /** Supplementary groups (`Groups:`). */
  groups: number[];
  /** The pid in each pid namespace, outermost first (`NSpid:`); its length is the depth. */
  nsDepth: number;
}

export function parseProcStatus(text: string): ProcStatus | null {
  let name = '';
  let state = '';
  let ppid = -1;
  let uids: number[] | null = null;
  let gids: number[] | null = null;
  let groups: number[] = [];
  let nsDepth = 1;
  for (const line of text.split('\n')) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const key = line.slice(0, colon);
    const value = line.slice(colon + 1).trim();
    if (key === 'Name') name = value;
    else if (key === 'State') state = value.slice(0, 1);
    else if (key === 'PPid') ppid = Number(value);
    else if (key === 'Uid') uids = value.split(/\s+/).map(Number);
    else if (key === 'Gid') gids = value.split(/\s+/).map(Number);
    else if (key === 'Groups') groups = value === '' ? [] : value.split(/\s+/).map(Number);
    else if (key === 'NSpid') nsDepth = value.split(/\s+/).length;
  }
  const ids = (list: number[] | null): list is number[] => list !== null && list.length >= 3 && list.every((u) => Number.isInteger(u));
  if (!ids(uids) || !ids(gids) || groups.some((g) => !Number.isInteger(g)) || !Number.isInteger(ppid)) return null;
  return { name, state, ppid, uids, gids, groups, nsDepth };
}

export interface SharedUidProcess {
  pid: number;
  name: string;
  /** Its parent: who started it (a supervisor to reconfigure), when known. */
  ppid?: number | undefined;
  /** Which of the sandbox's ids it holds (absent: the uid, as before the gid was scanned). */
  holds?: SharedId[] | undefined;
  /** An orphaned sandbox: see orphanedSandbox. */
  orphan?: true | undefined;
}

/**
 * A sandbox whose Warden died while it started: bubblewrap running as the sandbox uid (real,
 * effective and saved) whose parent is init — in practice the init of a sandbox's pid namespace,
 * whose monitor died with Warden. Every launch arms the parent-death signal before bubblewrap and
 * checks its parent after (sandbox.ts PARENT_CHECK), and the sandbox runs nothing before Warden
 * answers its start gate (START_GATE), by when the init has armed its own signal; this is the
 * last line for a Warden that dies between its answer and that arming. A live launch of any
 * Warden has that Warden, one of its launch programs or its monitor as parent, never init. Pure.
 */
export function orphanedSandbox(status: Pick<ProcStatus, 'ppid' | 'uids'>, exe: string | null, uid: number): boolean {
  return exe === BWRAP_PATH && status.ppid === 1 && status.uids.slice(0, 3).every((u) => u === uid);
}

/** How a process holds a sandbox id: its uid, its gid (real, effective or saved), a supplementary group. */
export type SharedId = 'uid' | 'gid' | 'group';

/** Which of the sandbox's ids a process holds. Pure. */
export function sharedIds(status: Pick<ProcStatus, 'uids' | 'gids' | 'groups'>, uid: number, gid: number | undefined): SharedId[] {
  const held: SharedId[] = [];
  if (status.uids.slice(0, 3).includes(uid)) held.push('uid');
  if (gid !== undefined && status.gids.slice(0, 3).includes(gid)) held.push('gid');
  if (gid !== undefined && status.groups.includes(gid)) held.push('group');
  return held;
}

export interface ScanOptions {
  procRoot?: string | undefined;
  /** Warden's own pid (its launches' parent). */
  self?: number | undefined;
  /** Pids of Warden's live sandbox launches. */
  own?: ReadonlySet<number> | undefined;
  /** The sandbox gid: also count processes holding it (see sharedIds). */
  gid?: number | undefined;
}

/** What the scan needs of /proc/<pid>/task/<tid>/stat: the thread's state letter and flags. Pure. */
export function parseTaskStat(text: string): { state: string; flags: number } | null {
  // The name (field 2) is in parentheses and may hold spaces and parentheses of its own.
  const close = text.lastIndexOf(')');
  if (close < 0) return null;
  const fields = text.slice(close + 1).trim().split(/\s+/);
  const state = fields[0] ?? '';
  const flags = Number(fields[6]);
  if (!/^[A-Za-z]$/.test(state) || !Number.isSafeInteger(flags) || flags < 0) return null;
  return { state, flags };
}

/** The kernel's flag for a thread inside exit(): it never returns to user space. */
const PF_EXITING = 0x4;

function tasksOf(procRoot: string, pid: number): string[] | null {
  try {
    return readdirSync(path.join(procRoot, String(pid), 'task'));
  } catch {
    return null;
  }
}

/**
 * Whether a process runs no code again: every thread of it has exited (a zombie, `Z`/`X`) or is
 * inside exit() (PF_EXITING). /proc/<pid>/status's state is the first thread's alone: a process
 * whose first thread called pthread_exit shows `Z` while its other threads run (ps's `Zl`), so a
 * zombie's state letter cannot clear a process. And a process in the middle of exiting, as each
 * sandbox's bubblewrap is when its command ends, has already lost its exe link while its state is
 * still `R` or `D`: without its flags it reads as a stranger.
 *
 * Fails closed: a thread that cannot be read while the process is still there counts as running.
 * Two passes, the second over a listing that may hold no thread the first did not: a thread
 * started between the first listing and its reads (only a live thread starts one), or one that
 * took the process over by exec from another thread (its tid becomes the process's, and the old
 * first thread exits meanwhile), shows as live in the second.
 */
export function runsNothing(procRoot: string, pid: number): boolean {
  const dir = path.join(procRoot, String(pid));
  let seen: ReadonlySet<string> | null = null;
  for (let pass = 0; pass < 2; pass++) {
    const tasks = tasksOf(procRoot, pid);
    if (tasks === null) return !existsSync(dir); // reaped since the listing, or not a /proc we know
    if (seen !== null && tasks.some((tid) => !seen!.has(tid))) return false;
    for (const tid of tasks) {
      let text: string;
      try {
        text = readFileSync(path.join(dir, 'task', tid, 'stat'), 'utf8');
      } catch {
        return !existsSync(dir);
      }
      const stat = parseTaskStat(text);
      if (!stat || (stat.state !== 'Z' && stat.state !== 'X' && (stat.flags & PF_EXITING) === 0)) return false;
    }
    seen = new Set(tasks);
  }
  return true;
}

/** Pids of this process's live sandbox launches (run.ts adds and removes them). */
export const ownSandboxLaunches = new Set<number>();

function readStatus(procRoot: string, pid: number): ProcStatus | null {
  try {
    return parseProcStatus(readFileSync(path.join(procRoot, String(pid), 'status'), 'utf8'));
  } catch {
    return null; // gone since the listing
  }
}

function exeOf(procRoot: string, pid: number): string | null {
  try {
    return readlinkSync(path.join(procRoot, String(pid), 'exe'));
  } catch {
    return null;
  }
}

function realShell(): string[] {
  try {
    return [realpathSync('/bin/sh')];
  } catch {
    return [];
  }
}
// The shell too: a launch runs the sandbox uid's parent check in /bin/sh before bubblewrap.
const LAUNCH_EXES = new Set([BWRAP_PATH, '/usr/bin/setpriv', '/bin/setpriv', ...realShell()]);

/**
 * Another Warden's launch: bubblewrap or setpriv started by a root node process that is neither
 * pid 1 nor this one (this one's launches are known by pid; any other child of its is an orphan
 * re-parented here, as when Warden is a container's pid 1). Bubblewrap forks helpers of its own
 * while it sets a sandbox up, briefly in the host's pid namespace, so a launch program whose
 * parent is a launch program (of Warden's or another Warden's) counts as that launch: a process
 * of the sandbox uid cannot make itself the child of one (only init and subreapers adopt).
 */
function anotherWardensLaunch(procRoot: string, pid: number, status: ProcStatus, self: number, own: ReadonlySet<number>, hops = 0): boolean {
  const exe = exeOf(procRoot, pid);
  if (!exe || !LAUNCH_EXES.has(exe) || status.ppid <= 1 || status.ppid === self) return false;
  if (own.has(status.ppid)) return true;
  const parent = readStatus(procRoot, status.ppid);
  if (!parent) return false;
  if (parent.uids.every((u) => u === 0)) {
    const parentExe = exeOf(procRoot, status.ppid);
    return parentExe !== null && /^node(js)?(\d+)?$/.test(path.basename(parentExe));
  }
  return hops < 3 && anotherWardensLaunch(procRoot, status.ppid, parent, self, own, hops + 1);
}

/**
 * The processes that run as `uid` (real, effective or saved), or hold `options.gid` (real,
 * effective, saved or supplementary), and could reach a sandboxed process or its files.
 * Synchronous: it runs right before the sandbox is spawned, with nothing between.
 */
export function processesSharingUid(uid: number, options: ScanOptions = {}): SharedUidProcess[] {
  const procRoot = options.procRoot ?? '/proc';
  const self = options.self ?? process.pid;
  const own = options.own ?? ownSandboxLaunches;
  const selfStatus = readStatus(procRoot, self);
  const depth = selfStatus?.nsDepth ?? 1;
  const found: SharedUidProcess[] = [];
  for (const entry of readdirSync(procRoot)) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid <= 0 || String(pid) !== entry || pid === self) continue;
    const status = readStatus(procRoot, pid);
    if (!status) continue;
    const holds = sharedIds(status, uid, options.gid);
    if (holds.length === 0) continue;
    // Before the namespace test: an orphaned sandbox's init lives in the pid namespace below.
    const orphan = orphanedSandbox(status, exeOf(procRoot, pid), uid);
    if (!orphan) {
      if (status.nsDepth > depth) continue;
      if (own.has(pid)) continue;
      if (anotherWardensLaunch(procRoot, pid, status, self, own)) continue;
    }
    // Last, after every read of its exe link: a process that began to exit stays exiting, so one
    // whose link was already gone to exit() shows it now (read first, it could start to exit
    // between this and the exe reads, and be taken for a stranger after all).
    if (runsNothing(procRoot, pid)) continue;
    found.push({ pid, name: status.name, ppid: status.ppid, holds, ...(orphan ? { orphan: true as const } : {}) });
  }
  return found;
}

export type SharedUidVerdict = { ok: true } | { ok: false; error: string };

/** The refusal for a sandboxed start as root while another process runs as the sandbox uid. Pure. */
export function sharedUidVerdict(identity: SandboxIdentity, others: readonly SharedUidProcess[]): SharedUidVerdict {
  if (!identity.staged || identity.allowSharedUid === true || others.length === 0) return { ok: true };
  const named = others.slice(0, 3).map((p) => `${p.name} (pid ${p.pid}${p.ppid !== undefined ? `, parent ${p.ppid}` : ''}, ${holdsText(p.holds ?? ['uid'], identity)})`).join(', ');
  const keys = [...new Set(others.flatMap((p) => p.holds ?? ['uid']).map((h) => (h === 'uid' ? 'tools.exec.sandbox.uid' : 'tools.exec.sandbox.gid')))];
  return {
    ok: false,
    error:
      `another process runs as the sandbox uid ${identity.uid} or with the sandbox gid ${identity.gid} outside the sandbox: ${named}${others.length > 3 ? ` and ${others.length - 3} more` : ''}; ` +
      `it could control sandboxed commands or their files. Set ${keys.join(' and ')} to an id no other process uses, ` +
      `or tools.exec.sandbox.allowSharedUid: true to accept it`,
  };
}

function holdsText(holds: readonly SharedId[], identity: SandboxIdentity): string {
  return holds.map((h) => (h === 'uid' ? `uid ${identity.uid}` : h === 'gid' ? `gid ${identity.gid}` : `gid ${identity.gid} as a supplementary group`)).join(', ');
}

/**
 * The check before a sandboxed start (run.ts); as root only. Scans the uid and the gid. An
 * orphaned sandbox (orphanedSandbox) is killed — what its dead Warden's parent-death signal would
 * have done; its init's death ends every process in its pid namespace — and does not count.
 */
export function checkSandboxUid(identity: SandboxIdentity, options: ScanOptions & { kill?: (pid: number) => boolean } = {}): SharedUidVerdict {
  if (!identity.staged || identity.allowSharedUid === true) return { ok: true };
  const kill = options.kill ?? killOrphan;
  const others = processesSharingUid(identity.uid, { ...options, gid: identity.gid }).filter((p) => !(p.orphan && kill(p.pid)));
  return sharedUidVerdict(identity, others);
}

function killOrphan(pid: number): boolean {
  try {
    // SIGKILL cannot be caught or blocked: the process runs nothing more once it is sent.
    process.kill(pid, 'SIGKILL');
    log.warn({ pid }, 'exec: killed an orphaned sandbox left by a Warden that died while starting it');
    return true;
  } catch {
    return false;
  }
}

/** The names /etc/passwd gives `uid` (an account of that uid owns files and may run processes). */
export function passwdNames(uid: number, passwd: string): string[] {
  const names: string[] = [];
  for (const line of passwd.split('\n')) {
    const fields = line.split(':');
    if (fields.length >= 3 && fields[2] === String(uid) && fields[0]) names.push(fields[0]);
  }
  return names;
}

export interface SandboxUidReport {
  ok: boolean;
  warn?: true;
  detail: string;
  fix?: string;
}

/**
 * `warden doctor`'s line on the sandbox uid: which it is and whether another process uses it
 * now (the same scan and verdict a sandboxed start runs). Pure. `used`: exec uses the sandbox.
 */
export function sandboxUidReport(identity: SandboxIdentity, others: readonly SharedUidProcess[], accounts: readonly string[], used: boolean): SandboxUidReport {
  const who = `uid ${identity.uid}, gid ${identity.gid}`;
  if (!identity.staged) return { ok: true, detail: `${who}: Warden's own (not root), so no other user shares the sandbox's user namespace` };
  const account = accounts.length > 0 ? ` (the account ${accounts.join(', ')} in /etc/passwd)` : ' (no account in /etc/passwd)';
  const fix = 'set tools.exec.sandbox.uid and gid to an id no other process or account uses (the default 65533 is meant for Warden alone)';
  if (others.length === 0) {
    return accounts.length > 0
      ? { ok: true, warn: true, detail: `${who}${account}: no other process runs as it now, but the account may start one, which would stop sandboxed commands`, fix }
      : { ok: true, detail: `${who}${account}: no other process runs as it` };
  }
  const verdict = sharedUidVerdict(identity, others);
  if (verdict.ok) {
    return { ok: true, warn: true, detail: `${who}${account}: ${others.length} other process(es) run as it, allowed by tools.exec.sandbox.allowSharedUid; they could control sandboxed commands`, fix };
  }
  return { ok: !used, ...(used ? {} : { warn: true as const }), detail: `${who}${account}: ${verdict.error}${used ? '' : ' (not used: exec does not run in the sandbox)'}`, fix: `${fix}; until then every sandboxed command is refused` };
}
