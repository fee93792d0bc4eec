import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildChildEnv } from '../../src/exec/env.js';
import { startCommand, type StartSpec } from '../../src/exec/run.js';
import { sandboxReadiness } from '../../src/exec/sandbox-probe.js';
import { bwrapAvailable, defaultSandboxId, SANDBOX_HOME, sandboxIdentity, type SandboxIdentity } from '../../src/exec/sandbox.js';

/**
 * Runs attack scripts in the real sandbox, the way the exec tool does: the readiness check
 * first (the host gives every isolation property, the workspace belongs to the sandbox user),
 * then the command through startCommand.
 */
export const isRoot = process.getuid?.() === 0;
export const canSandbox = bwrapAvailable() && process.platform === 'linux';

/** The two ways a sandbox starts: Warden as root, and bubblewrap started by an unprivileged user. */
export const LAUNCHES: ReadonlyArray<readonly [string, SandboxIdentity]> = [
  [`Warden as root (staged, sandbox uid ${defaultSandboxId()})`, sandboxIdentity({})],
  [
    `an unprivileged Warden (bubblewrap started as uid ${defaultSandboxId()})`,
    { uid: defaultSandboxId(), gid: defaultSandboxId(), staged: false, spawnAs: { uid: defaultSandboxId(), gid: defaultSandboxId() } },
  ],
];

export interface Arena {
  /** Parent of the workspace and of the files it must not reach. */
  root: string;
  workspace: string;
  identity: SandboxIdentity;
  protect: string[];
  run: (script: string, over?: Partial<StartSpec>) => Promise<{ exitCode: number | null; output: string }>;
  cleanup: () => void;
}

/**
 * A workspace under `base` (default the temp dir). `reachable` opens the parent to everyone, as
 * an unprivileged Warden's own directories are open to itself.
 */
export async function arena(identity: SandboxIdentity, options: { base?: string; protect?: string[]; reachable?: boolean } = {}): Promise<Arena> {
  const root = mkdtempSync(path.join(options.base ?? tmpdir(), 'warden-sec-'));
  if (options.reachable) chmodSync(root, 0o755);
  const workspace = path.join(root, 'workspace');
  mkdirSync(workspace);
  const protect = options.protect ?? [];
  const ready = await sandboxReadiness(workspace, identity, protect);
  if (!ready.ok) throw new Error(`sandbox not ready: ${ready.error}`);
  return {
    root,
    workspace,
    identity,
    protect,
    run: async (script, over = {}) => {
      const job = startCommand({
        script,
        label: script,
        host: 'sandbox',
        workspace,
        cwd: workspace,
        env: buildChildEnv({ LANG: 'C.UTF-8' }, { home: SANDBOX_HOME }),
        maxOutputChars: 200_000,
        timeoutMs: 20_000,
        identity,
        protect,
        ...over,
      });
      await job.done;
      return { exitCode: job.exitCode, output: job.outputText() };
    },
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

/**
 * A perl one-liner that makes one raw syscall and prints `ok` or the errno: the probe for what
 * the seccomp filter does with a call, whatever libc or coreutils would wrap around it. String
 * arguments must be these (writable) variables: $usr "/usr", $tmp "/tmp", $none "none",
 * $tmpfs "tmpfs", $empty "", $x "x", $handle (a struct file_handle with room for 128 bytes),
 * $int (4 bytes), $zero (256 zero bytes).
 */
export function perlSyscall(args: string): string {
  const vars = 'my ($usr, $tmp, $none, $tmpfs, $empty, $x) = ("/usr", "/tmp", "none", "tmpfs", "", "x"); my $handle = pack("LL", 128, 0) . ("\\0" x 128); my $int = pack("L", 0); my $zero = "\\0" x 256;';
  return `perl -e '${vars} my $r = syscall(${args}); print(($r < 0 ? $!+0 : "ok"), "\\n")'`;
}
