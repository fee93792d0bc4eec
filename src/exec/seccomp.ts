import { endianness } from 'node:os';

/**
 * The sandbox's seccomp filter, as the classic-BPF program bubblewrap loads with `--seccomp FD`
 * (an array of `struct sock_filter`, 8 bytes each, in the host's byte order).
 *
 * A deny list over an allowed ABI: the architecture is checked first (x86_64 and aarch64; any
 * other ABI, including i386 and x32 on an x86_64 kernel, is killed, because its syscall numbers
 * mean other calls), then the calls below get an error, then syscall numbers newer than the
 * table get ENOSYS until someone reviews them, and everything else runs. Capabilities are
 * already gone inside the sandbox; the filter closes what an unprivileged process in its own
 * user namespace can still reach: kernel interfaces that are not namespaced (keyrings, vsock,
 * the kernel log), file handles that walk around the mount tree, mount and namespace calls,
 * and calls with a history of local privilege escalations. Pure.
 */

export type SeccompArch = 'x86_64' | 'aarch64';

/** `AUDIT_ARCH_*` as the kernel reports it in `seccomp_data.arch`. */
export const AUDIT_ARCH: Record<SeccompArch, number> = { x86_64: 0xc000003e, aarch64: 0xc00000b7 };

export const EPERM = 1;
export const ENOSYS = 38;
export const EAFNOSUPPORT = 97;

export const SECCOMP_RET_KILL_PROCESS = 0x80000000;
export const SECCOMP_RET_ERRNO = 0x00050000;
export const SECCOMP_RET_ALLOW = 0x7fff0000;

/**
 * The highest syscall number the table below was reviewed against (removexattrat, Linux 6.13,
 * the same on both architectures). Newer calls (open_tree_attr, a mount call, is 467) return
 * ENOSYS, which is what programs already handle on older kernels.
 */
export const MAX_REVIEWED_NR = 466;

type Numbers = { x86_64?: number; aarch64?: number };

interface DeniedCall {
  name: string;
  nr: Numbers;
  errno: number;
}

/** Denied whatever the arguments. Each group says why. */
const DENIED: ReadonlyArray<readonly [string, number | undefined, number | undefined, number]> = [
  // File handles name an inode by number and bypass the mount tree: open_by_handle_at reads any
  // file of a file system the sandbox can see a part of (the classic container escape).
  ['open_by_handle_at', 304, 265, EPERM],
  ['name_to_handle_at', 303, 264, EPERM],
  // Mounts and root changes: the sandbox's file system view is fixed by bubblewrap.
  ['mount', 165, 40, EPERM],
  ['umount2', 166, 39, EPERM],
  ['move_mount', 429, 429, EPERM],
  ['fsopen', 430, 430, EPERM],
  ['fsconfig', 431, 431, EPERM],
  ['fsmount', 432, 432, EPERM],
  ['fspick', 433, 433, EPERM],
  ['open_tree', 428, 428, EPERM],
  ['mount_setattr', 442, 442, EPERM],
  ['pivot_root', 155, 41, EPERM],
  ['chroot', 161, 51, EPERM],
  // New namespaces give back capabilities over them (and a way to remount); joining others
  // leaves the sandbox. clone is checked by its flags below.
  ['unshare', 272, 97, EPERM],
  ['setns', 308, 268, EPERM],
  // clone3 passes its flags in memory a filter cannot read; ENOSYS makes libc fall back to
  // clone, whose flags are checked.
  ['clone3', 435, 435, ENOSYS],
  // The kernel itself: loading code, replacing the kernel, rebooting.
  ['kexec_load', 246, 104, EPERM],
  ['kexec_file_load', 320, 294, EPERM],
  ['init_module', 175, 105, EPERM],
  ['finit_module', 313, 273, EPERM],
  ['delete_module', 176, 106, EPERM],
  ['reboot', 169, 142, EPERM],
  ['swapon', 167, 224, EPERM],
  ['swapoff', 168, 225, EPERM],
  ['acct', 163, 89, EPERM],
  ['quotactl', 179, 60, EPERM],
  ['quotactl_fd', 443, 443, EPERM],
  // In-kernel programs, performance counters and user-fault handling: large attack surface,
  // the usual first step of a kernel exploit, never needed by a command.
  ['bpf', 321, 280, EPERM],
  ['perf_event_open', 298, 241, EPERM],
  ['userfaultfd', 323, 282, EPERM],
  // io_uring bypasses this filter for the operations it runs; ENOSYS makes libuv, liburing
  // users and others fall back to ordinary calls.
  ['io_uring_setup', 425, 425, ENOSYS],
  ['io_uring_enter', 426, 426, ENOSYS],
  ['io_uring_register', 427, 427, ENOSYS],
  // Reading and writing other processes' memory and descriptors.
  ['ptrace', 101, 117, EPERM],
  ['process_vm_readv', 310, 270, EPERM],
  ['process_vm_writev', 311, 271, EPERM],
  ['pidfd_getfd', 438, 438, EPERM],
  ['process_madvise', 440, 440, EPERM],
  ['kcmp', 312, 272, EPERM],
  // Keyrings are not namespaced: the user's and the session's keys would be shared with the host.
  ['keyctl', 250, 219, EPERM],
  ['add_key', 248, 217, EPERM],
  ['request_key', 249, 218, EPERM],
  // The system clock is global.
  ['settimeofday', 164, 170, EPERM],
  ['clock_settime', 227, 112, EPERM],
  ['clock_adjtime', 305, 266, EPERM],
  ['adjtimex', 159, 171, EPERM],
  // The kernel log (readable by anyone where dmesg_restrict is 0) and other global interfaces.
  ['syslog', 103, 116, EPERM],
  ['fanotify_init', 300, 262, EPERM],
  ['lookup_dcookie', 212, 18, EPERM],
  ['vhangup', 153, 58, EPERM],
  ['nfsservctl', 180, 42, EPERM],
  // x86 only: port I/O and obsolete loaders.
  ['iopl', 172, undefined, EPERM],
  ['ioperm', 173, undefined, EPERM],
  ['uselib', 134, undefined, EPERM],
  ['_sysctl', 156, undefined, EPERM],
];

export const DENIED_CALLS: readonly DeniedCall[] = DENIED.map(([name, x86_64, aarch64, errno]) => ({
  name,
  nr: { ...(x86_64 !== undefined ? { x86_64 } : {}), ...(aarch64 !== undefined ? { aarch64 } : {}) },
  errno,
}));

/** Calls decided by an argument. */
export const SYSCALL: Record<'clone' | 'personality' | 'ioctl' | 'socket', Required<Numbers>> = {
  clone: { x86_64: 56, aarch64: 220 },
  personality: { x86_64: 135, aarch64: 92 },
  ioctl: { x86_64: 16, aarch64: 29 },
  socket: { x86_64: 41, aarch64: 198 },
};

/**
 * clone flags that make a namespace (NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET).
 * The kernel reads only the low 32 bits of clone's flags; so does the filter.
 */
export const CLONE_NAMESPACE_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000;

/**
 * personality values programs use (Linux, 32-bit uname, their combination, and the query
 * 0xffffffff). Everything else carries flags that weaken the process: ADDR_NO_RANDOMIZE turns
 * off ASLR, READ_IMPLIES_EXEC makes data executable, MMAP_PAGE_ZERO maps page 0.
 */
export const PERSONALITY_ALLOWED = [0x0, 0x8, 0x20000, 0x20008, 0xffffffff];

/**
 * Terminal injection: TIOCSTI pushes bytes into a terminal's input queue (they run as typed
 * commands in whatever shell reads it), TIOCLINUX does the same through the console's paste
 * buffer. ioctl's request is an unsigned int, so the low 32 bits are what the kernel uses.
 */
export const TIOCSTI = 0x5412;
export const TIOCLINUX = 0x541c;

/**
 * Socket families: --unshare-net gives the sandbox only a loopback for these. AF_VSOCK (a VM's
 * line to its host), Bluetooth, AF_ALG and the other families are not behind the network
 * namespace, or are attack surface without a use here; they get EAFNOSUPPORT.
 */
export const SOCKET_FAMILIES_ALLOWED = [1 /* AF_UNIX */, 2 /* AF_INET */, 10 /* AF_INET6 */, 16 /* AF_NETLINK */];

// seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6]. Little-endian hosts only:
// the low half of args[i] is at 16 + 8*i.
const OFF_NR = 0;
const OFF_ARCH = 4;
const argLow = (i: number) => 16 + 8 * i;

// Classic BPF opcodes.
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGT_K = 0x25;
const JSET_K = 0x45;
const RET_K = 0x06;

export interface SockFilter {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

/** A jump target: a label defined later in the same program (filters only jump forward). */
type Target = number | string;
type Insn = { code: number; jt: Target; jf: Target; k: number } | { label: string };

class Assembler {
  readonly insns: Insn[] = [];
  private next = 0;
  fresh(prefix: string): string {
    return `${prefix}${this.next++}`;
  }
  ld(offset: number) {
    this.insns.push({ code: LD_W_ABS, jt: 0, jf: 0, k: offset });
  }
  jeq(k: number, jt: Target, jf: Target) {
    this.insns.push({ code: JEQ_K, jt, jf, k: k >>> 0 });
  }
  jgt(k: number, jt: Target, jf: Target) {
    this.insns.push({ code: JGT_K, jt, jf, k: k >>> 0 });
  }
  jset(k: number, jt: Target, jf: Target) {
    this.insns.push({ code: JSET_K, jt, jf, k: k >>> 0 });
  }
  ret(k: number) {
    this.insns.push({ code: RET_K, jt: 0, jf: 0, k: k >>> 0 });
  }
  label(name: string) {
    this.insns.push({ label: name });
  }

  /** Resolves labels to relative offsets; every jump must land within 255 instructions. */
  assemble(): SockFilter[] {
    const at = new Map<string, number>();
    const code: Array<Exclude<Insn, { label: string }>> = [];
    for (const insn of this.insns) {
      if ('label' in insn) at.set(insn.label, code.length);
      else code.push(insn);
    }
    return code.map((insn, pc) => {
      const offset = (t: Target): number => {
        if (typeof t === 'number') return t;
        const dest = at.get(t);
        if (dest === undefined) throw new Error(`seccomp: undefined label ${t}`);
        const rel = dest - pc - 1;
        if (rel < 0 || rel > 255) throw new Error(`seccomp: jump to ${t} out of range (${rel})`);
        return rel;
      };
      return { code: insn.code, jt: offset(insn.jt), jf: offset(insn.jf), k: insn.k };
    });
  }
}

const errno = (e: number) => SECCOMP_RET_ERRNO | e;

/** One architecture's rules; A holds the syscall number on entry. */
function archBlock(asm: Assembler, arch: SeccompArch): void {
  const allow = asm.fresh('allow');
  const enosys = asm.fresh('enosys');
  asm.ld(OFF_NR);
  // Also catches the x32 ABI, whose numbers carry bit 30.
  asm.jgt(MAX_REVIEWED_NR, enosys, 0);
  for (const call of DENIED_CALLS) {
    const nr = call.nr[arch];
    if (nr === undefined) continue;
    asm.jeq(nr, 0, 1);
    asm.ret(errno(call.errno));
  }

  const afterClone = asm.fresh('after');
  asm.jeq(SYSCALL.clone[arch], 0, afterClone);
  asm.ld(argLow(0));
  asm.jset(CLONE_NAMESPACE_FLAGS, 0, allow);
  asm.ret(errno(EPERM));
  asm.label(afterClone);

  const afterPersonality = asm.fresh('after');
  asm.jeq(SYSCALL.personality[arch], 0, afterPersonality);
  asm.ld(argLow(0));
  for (const value of PERSONALITY_ALLOWED) asm.jeq(value, allow, 0);
  asm.ret(errno(EPERM));
  asm.label(afterPersonality);

  const afterIoctl = asm.fresh('after');
  const ioctlDenied = asm.fresh('deny');
  asm.jeq(SYSCALL.ioctl[arch], 0, afterIoctl);
  asm.ld(argLow(1));
  asm.jeq(TIOCSTI, ioctlDenied, 0);
  asm.jeq(TIOCLINUX, ioctlDenied, allow);
  asm.label(ioctlDenied);
  asm.ret(errno(EPERM));
  asm.label(afterIoctl);

  const afterSocket = asm.fresh('after');
  asm.jeq(SYSCALL.socket[arch], 0, afterSocket);
  asm.ld(argLow(0));
  for (const family of SOCKET_FAMILIES_ALLOWED) asm.jeq(family, allow, 0);
  asm.ret(errno(EAFNOSUPPORT));
  asm.label(afterSocket);

  asm.label(allow);
  asm.ret(SECCOMP_RET_ALLOW);
  asm.label(enosys);
  asm.ret(errno(ENOSYS));
}

/** The filter as instructions: the architecture check, then one block per architecture. */
export function seccompInstructions(): SockFilter[] {
  const asm = new Assembler();
  asm.ld(OFF_ARCH);
  asm.jeq(AUDIT_ARCH.x86_64, 'x86_64', 0);
  asm.jeq(AUDIT_ARCH.aarch64, 'aarch64', 0);
  asm.ret(SECCOMP_RET_KILL_PROCESS);
  for (const arch of ['x86_64', 'aarch64'] as const) {
    asm.label(arch);
    archBlock(asm, arch);
  }
  return asm.assemble();
}

/** Where this filter can run: a little-endian x86_64 or aarch64 host; otherwise why not. */
export function seccompUnsupported(arch: string = process.arch, byteOrder: string = endianness()): string | null {
  if (arch !== 'x64' && arch !== 'arm64') return `the sandbox's seccomp filter is built for x86_64 and aarch64, not ${arch}`;
  if (byteOrder !== 'LE') return "the sandbox's seccomp filter is built for little-endian hosts";
  return null;
}

/** The program bytes bubblewrap reads from its `--seccomp` descriptor. */
export function seccompProgram(): Buffer {
  const insns = seccompInstructions();
  const buf = Buffer.alloc(insns.length * 8);
  insns.forEach((insn, i) => {
    buf.writeUInt16LE(insn.code, i * 8);
    buf.writeUInt8(insn.jt, i * 8 + 2);
    buf.writeUInt8(insn.jf, i * 8 + 3);
    buf.writeUInt32LE(insn.k, i * 8 + 4);
  });
  return buf;
}
