import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AUDIT_ARCH,
  DENIED_CALLS,
  EAFNOSUPPORT,
  ENOSYS,
  EPERM,
  MAX_REVIEWED_NR,
  SECCOMP_RET_ALLOW,
  SECCOMP_RET_ERRNO,
  SECCOMP_RET_KILL_PROCESS,
  SYSCALL,
  seccompInstructions,
  seccompProgram,
  type SeccompArch,
  type SockFilter,
} from '../../src/exec/seccomp.js';
import { sandboxIdentity } from '../../src/exec/sandbox.js';
import { arena, canSandbox, perlSyscall, type Arena } from './sandbox-harness.js';

/**
 * The seccomp filter, attacked two ways: every rule evaluated for both architectures by a
 * classic-BPF interpreter over the exact bytes bubblewrap loads, and the calls an attacker
 * would make, made for real inside the sandbox on this machine.
 */

/** Runs a program the way the kernel does for one syscall; answers the return value. */
function evaluate(program: readonly SockFilter[], data: { arch: number; nr: number; args?: readonly bigint[] }): number {
  const buf = Buffer.alloc(64);
  buf.writeInt32LE(data.nr | 0, 0);
  buf.writeUInt32LE(data.arch >>> 0, 4);
  (data.args ?? []).forEach((a, i) => buf.writeBigUInt64LE(BigInt.asUintN(64, a), 16 + 8 * i));
  let acc = 0;
  for (let pc = 0; pc < program.length; pc++) {
    const { code, jt, jf, k } = program[pc]!;
    switch (code) {
      case 0x20:
        acc = buf.readUInt32LE(k);
        break;
      case 0x15:
        pc += acc === k ? jt : jf;
        break;
      case 0x25:
        pc += acc > k ? jt : jf;
        break;
      case 0x45:
        pc += (acc & k) !== 0 ? jt : jf;
        break;
      case 0x06:
        return k >>> 0;
      default:
        throw new Error(`unexpected opcode ${code.toString(16)} at ${pc}`);
    }
  }
  throw new Error('fell off the end of the program');
}

/** The program as bubblewrap reads it: decoded back from the bytes. */
const program: SockFilter[] = (() => {
  const bytes = seccompProgram();
  const out: SockFilter[] = [];
  for (let i = 0; i < bytes.length; i += 8) out.push({ code: bytes.readUInt16LE(i), jt: bytes[i + 2]!, jf: bytes[i + 3]!, k: bytes.readUInt32LE(i + 4) });
  return out;
})();

const ERRNO = (e: number) => (SECCOMP_RET_ERRNO | e) >>> 0;
const ALLOW = SECCOMP_RET_ALLOW >>> 0;
const KILL = SECCOMP_RET_KILL_PROCESS >>> 0;
const ARCHES: SeccompArch[] = ['x86_64', 'aarch64'];
const call = (arch: SeccompArch, nr: number, args: bigint[] = []) => evaluate(program, { arch: AUDIT_ARCH[arch], nr, args });

describe('the seccomp program bubblewrap loads', () => {
  it('is what the kernel accepts: at most 4096 instructions, forward jumps in range, ending in a return', () => {
    expect(program.length).toBeLessThanOrEqual(4096);
    expect(program).toEqual(seccompInstructions());
    program.forEach((insn, pc) => {
      if ([0x15, 0x25, 0x45].includes(insn.code)) {
        expect(pc + 1 + insn.jt).toBeLessThan(program.length);
        expect(pc + 1 + insn.jf).toBeLessThan(program.length);
      }
    });
    expect(program.at(-1)!.code).toBe(0x06);
  });

  it.each([
    ['i386 (int 0x80 on an x86_64 kernel)', 0x40000003],
    ['32-bit ARM', 0x40000028],
    ['x86_64 big-endian spelling', 0x3e],
    ['riscv64', 0xc00000f3],
    ['aarch64 big-endian', 0x800000b7],
  ])('kills a process calling through a foreign ABI: %s', (_abi, arch) => {
    for (const nr of [0, 2, 39, 165]) expect(evaluate(program, { arch, nr })).toBe(KILL);
  });

  const denied = ARCHES.flatMap((arch) => DENIED_CALLS.filter((c) => c.nr[arch] !== undefined).map((c) => [arch, c.name, c.nr[arch]!, c.errno] as const));
  it.each(denied)('%s: %s (%i) gets errno %i whatever the arguments', (arch, _name, nr, errno) => {
    for (const args of [[], [0n, 0n, 0n], [0xffffffffn, -1n, 0x10000000n]]) expect(call(arch, nr, args)).toBe(ERRNO(errno));
  });

  it.each(ARCHES)('%s: syscall numbers past the reviewed table, and the x32 ABI, get ENOSYS', (arch) => {
    for (const nr of [MAX_REVIEWED_NR + 1, 467 /* open_tree_attr */, 1000, 0x40000000 | 39 /* x32 getpid */, 0x40000000 | 165 /* x32 mount */, 0xffffffff]) {
      expect(call(arch, nr)).toBe(ERRNO(ENOSYS));
    }
  });

  const NS = {
    CLONE_NEWNS: 0x00020000n,
    CLONE_NEWCGROUP: 0x02000000n,
    CLONE_NEWUTS: 0x04000000n,
    CLONE_NEWIPC: 0x08000000n,
    CLONE_NEWUSER: 0x10000000n,
    CLONE_NEWPID: 0x20000000n,
    CLONE_NEWNET: 0x40000000n,
  };
  const SIGCHLD = 17n;
  it.each(ARCHES.flatMap((arch) => Object.entries(NS).map(([flag, bit]) => [arch, flag, bit] as const)))('%s: clone with %s is refused', (arch, _flag, bit) => {
    expect(call(arch, SYSCALL.clone[arch], [bit | SIGCHLD])).toBe(ERRNO(EPERM));
    // Bits above 32 are ignored by the kernel's clone, and cannot hide the flag.
    expect(call(arch, SYSCALL.clone[arch], [(1n << 40n) | bit | SIGCHLD])).toBe(ERRNO(EPERM));
  });
  it.each(ARCHES)('%s: fork, vfork and threads (clone without namespace flags) run', (arch) => {
    const CLONE_VM = 0x100n;
    const CLONE_VFORK = 0x4000n;
    const THREAD = 0x3d0f00n;
    for (const flags of [SIGCHLD, CLONE_VM | CLONE_VFORK | SIGCHLD, THREAD]) expect(call(arch, SYSCALL.clone[arch], [flags])).toBe(ALLOW);
  });

  it.each(ARCHES)('%s: personality only with the values programs use', (arch) => {
    for (const p of [0x0n, 0x8n, 0x20000n, 0x20008n, 0xffffffffn]) expect(call(arch, SYSCALL.personality[arch], [p])).toBe(ALLOW);
    const ADDR_NO_RANDOMIZE = 0x0040000n;
    const READ_IMPLIES_EXEC = 0x0400000n;
    const MMAP_PAGE_ZERO = 0x0100000n;
    const ADDR_COMPAT_LAYOUT = 0x0200000n;
    for (const p of [ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC, MMAP_PAGE_ZERO, ADDR_COMPAT_LAYOUT, ADDR_NO_RANDOMIZE | 0x8n]) {
      expect(call(arch, SYSCALL.personality[arch], [p])).toBe(ERRNO(EPERM));
    }
  });

  it.each(ARCHES)('%s: TIOCSTI and TIOCLINUX are refused, also with high bits set; other ioctls run', (arch) => {
    for (const req of [0x5412n, 0x541cn, (1n << 32n) | 0x5412n, (0xffffffffn << 32n) | 0x541cn]) {
      expect(call(arch, SYSCALL.ioctl[arch], [0n, req])).toBe(ERRNO(EPERM));
    }
    const TCGETS = 0x5401n;
    const TIOCGWINSZ = 0x5413n;
    const FIONREAD = 0x541bn;
    for (const req of [TCGETS, TIOCGWINSZ, FIONREAD]) expect(call(arch, SYSCALL.ioctl[arch], [1n, req])).toBe(ALLOW);
  });

  it.each(ARCHES)('%s: sockets only for unix, inet, inet6 and netlink', (arch) => {
    for (const family of [1n, 2n, 10n, 16n]) expect(call(arch, SYSCALL.socket[arch], [family, 1n, 0n])).toBe(ALLOW);
    const AF_PACKET = 17n;
    const AF_BLUETOOTH = 31n;
    const AF_ALG = 38n;
    const AF_VSOCK = 40n;
    const AF_XDP = 44n;
    for (const family of [AF_PACKET, AF_BLUETOOTH, AF_ALG, AF_VSOCK, AF_XDP, (1n << 32n) | 40n]) {
      expect(call(arch, SYSCALL.socket[arch], [family, 1n, 0n])).toBe(ERRNO(EAFNOSUPPORT));
    }
  });

  it.each([
    ['x86_64', [0 /* read */, 1 /* write */, 2 /* open */, 257 /* openat */, 59 /* execve */, 57 /* fork */, 60 /* exit */, 39 /* getpid */, 231 /* exit_group */, 334 /* rseq */, 439 /* faccessat2 */, 462 /* mseal */]],
    ['aarch64', [63 /* read */, 64 /* write */, 56 /* openat */, 221 /* execve */, 93 /* exit */, 172 /* getpid */, 94 /* exit_group */, 293 /* rseq */, 439 /* faccessat2 */]],
  ] as const)('%s: ordinary calls run', (arch, nrs) => {
    for (const nr of nrs) expect(call(arch, nr)).toBe(ALLOW);
  });
});

/** The kernel's own numbering, where its headers are installed, is what the table says. */
describe('the syscall numbers in the table', () => {
  const headers: Record<SeccompArch, string> = { x86_64: '/usr/include/x86_64-linux-gnu/asm/unistd_64.h', aarch64: '/usr/include/asm-generic/unistd.h' };
  const numbersIn = (file: string) => {
    const found = new Map<string, number>();
    for (const m of readFileSync(file, 'utf8').matchAll(/#define __NR(?:3264)?_(\w+)\s+(\d+)/g)) found.set(m[1]!, Number(m[2]));
    return found;
  };
  it.each(ARCHES)('%s matches the installed headers', (arch) => {
    if (!existsSync(headers[arch])) return;
    const known = numbersIn(headers[arch]);
    const checked: string[] = [];
    const calls = [...DENIED_CALLS.map((c) => [c.name, c.nr[arch]] as const), ...Object.entries(SYSCALL).map(([name, nr]) => [name, nr[arch]] as const)];
    for (const [name, nr] of calls) {
      if (nr === undefined || !known.has(name)) continue;
      expect([name, nr]).toEqual([name, known.get(name)]);
      checked.push(name);
    }
    expect(checked.length).toBeGreaterThan(40);
  });
});

describe.skipIf(!canSandbox || process.arch !== 'x64')('the filter inside the real sandbox (x86_64)', () => {
  let box: Arena;
  beforeAll(async () => {
    box = await arena(sandboxIdentity({}));
  });
  afterAll(() => box?.cleanup());

  // Each row: the call an attacker makes, and the errno the filter answers (ok = it runs).
  it.each([
    ['name_to_handle_at (the first half of the open_by_handle_at escape)', '303, -100, $usr, $handle, $int, 0', '1'],
    ['open_by_handle_at', '304, 0, $handle, 0', '1'],
    ['mount', '165, $none, $tmp, $tmpfs, 0, 0', '1'],
    ['umount2', '166, $usr, 0', '1'],
    ['pivot_root', '155, $tmp, $tmp', '1'],
    ['chroot', '161, $tmp', '1'],
    ['open_tree', '428, -100, $usr, 1', '1'],
    ['fsopen', '430, $tmpfs, 0', '1'],
    ['unshare(CLONE_NEWUSER)', '272, 0x10000000', '1'],
    ['unshare(CLONE_NEWNS)', '272, 0x20000', '1'],
    ['setns', '308, 0, 0', '1'],
    ['clone(CLONE_NEWUSER)', '56, 0x10000011, 0, 0, 0, 0', '1'],
    ['clone3 (answered ENOSYS so libc falls back to clone)', '435, $empty, 0', '38'],
    ['io_uring_setup (ENOSYS: libuv falls back)', '425, 1, $zero', '38'],
    ['keyctl (keyrings are not namespaced)', '250, 0, -3, 0', '1'],
    ['add_key', '248, $x, $x, $x, 1, -3', '1'],
    ['bpf', '321, 5, $zero, 128', '1'],
    ['perf_event_open', '298, $zero, 0, -1, -1, 0', '1'],
    ['userfaultfd', '323, 0', '1'],
    ['ptrace(PTRACE_TRACEME)', '101, 0, 0, 0, 0', '1'],
    ['process_vm_readv', '310, 1, 0, 0, 0, 0, 0', '1'],
    ['personality(ADDR_NO_RANDOMIZE)', '135, 0x40000', '1'],
    ['personality query', '135, 0xffffffff', 'ok'],
    ['ioctl(TIOCSTI) (terminal injection)', '16, 0, 0x5412, $x', '1'],
    ['ioctl(TIOCLINUX)', '16, 0, 0x541c, $x', '1'],
    ["socket(AF_VSOCK) (a VM guest's line to its host)", '41, 40, 1, 0', '97'],
    ['socket(AF_INET) (loopback only, by the network namespace)', '41, 2, 1, 0', 'ok'],
    ['syslog (the kernel log)', '103, 10, 0, 0', '1'],
    ['adjtimex', '159, $zero', '1'],
    ['settimeofday', '164, 0, 0', '1'],
    ['kexec_load', '246, 0, 0, 0, 0', '1'],
    ['finit_module', '313, 0, $empty, 0', '1'],
    ['reboot', '169, 0, 0, 0, 0', '1'],
    ['acct', '163, 0', '1'],
    ['syscall 467 (open_tree_attr, newer than the table)', '467, -100, $usr, 1, 0, 0', '38'],
    ['x32 ABI getpid', '0x40000027', '38'],
  ])('%s', async (_what, args, expected) => {
    const { output } = await box.run(perlSyscall(args));
    expect(output.trim()).toBe(expected);
  });

  it('the same probes run on the host where nothing filters them', async () => {
    // Shows the probe itself is sound: without the filter these calls succeed.
    const { output } = await box.run([perlSyscall('303, -100, $usr, $handle, $int, 0'), perlSyscall('135, 0x40000')].join('; '), { host: 'gateway' });
    expect(output.trim().split('\n')).toEqual(['ok', 'ok']);
  });
});
