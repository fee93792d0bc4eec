import { randomBytes } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { execa, type ResultPromise } from 'execa';

/**
 * One running command (reference A14): its own process group, aggregated output capped (the
 * oldest output is dropped first, and the job says how much), a pending buffer for `process
 * poll`, a kill timeout, and a kill that escalates from SIGTERM to SIGKILL for processes that
 * ignore the first signal.
 */
export type JobStatus = 'running' | 'exited' | 'killed' | 'timed-out' | 'failed';

export interface JobOptions {
  /** What to spawn: the sandbox wrapper or `/bin/sh -c …`. */
  file: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string>;
  /** The command as the model and the approver saw it. */
  label: string;
  timeoutMs?: number | undefined;
  maxOutputChars: number;
  maxPendingChars?: number;
  /** Between SIGTERM and SIGKILL. */
  killGraceMs?: number;
  /** Spawn as this uid/gid (supplementary groups are cleared); default: as Warden. */
  uid?: number | undefined;
  gid?: number | undefined;
  /** Bytes the child reads from descriptors 3, 4, … (the sandbox's seccomp program and environment). */
  inputs?: readonly Uint8Array[] | undefined;
  /** A socketpair end the child inherits at this descriptor (after the inputs); `channel` is ours. */
  channelFd?: number | undefined;
  /** Another socketpair end, at this descriptor (after the channel); `gate` is ours. */
  gateFd?: number | undefined;
}

export const DEFAULT_PENDING_CHARS = 30_000;

/** 0-2 piped, the inputs from 3, and the channel (descriptors in between on /dev/null). */
type Stdio = ['pipe', 'pipe', 'pipe', ...Array<'pipe' | 'ignore' | Uint8Array>];

function stdioFor(options: JobOptions): Stdio {
  const stdio: Stdio = ['pipe', 'pipe', 'pipe', ...(options.inputs ?? [])];
  for (const fd of [options.channelFd, options.gateFd]) {
    if (fd === undefined) continue;
    if (fd < stdio.length) throw new Error(`descriptor ${fd} is already taken`);
    while (stdio.length < fd) stdio.push('ignore');
    stdio.push('pipe');
  }
  return stdio;
}

/**
 * Job ids are capabilities within their session: 128 random bits, so no caller can guess or
 * enumerate another job's id, and two jobs never share one in practice (the registry still
 * refuses a collision rather than replacing a job).
 */
export const JOB_ID_BYTES = 16;
export const newJobId = (): string => randomBytes(JOB_ID_BYTES).toString('hex');
const DEFAULT_KILL_GRACE_MS = 2_000;

export class ExecJob {
  readonly id = newJobId();
  readonly startedAt = Date.now();
  readonly label: string;
  readonly cwd: string;
  status: JobStatus = 'running';
  exitCode: number | null = null;
  signal: string | null = null;
  error: string | null = null;
  endedAt: number | null = null;
  /** When output last arrived; `process poll` uses it to hint that a job waits for input. */
  lastOutputAt: number;
  /** Characters dropped from the front of the aggregated output. */
  droppedChars = 0;
  readonly done: Promise<void>;

  private output = '';
  private pending = '';
  private readonly maxOutput: number;
  private readonly maxPending: number;
  private readonly killGraceMs: number;
  private readonly subprocess: ResultPromise;
  private timer: NodeJS.Timeout | undefined;
  private killTimer: NodeJS.Timeout | undefined;

  private readonly channelFd: number | undefined;
  private readonly gateFd: number | undefined;

  constructor(options: JobOptions) {
    this.channelFd = options.channelFd;
    this.gateFd = options.gateFd;
    this.label = options.label;
    this.cwd = options.cwd;
    this.maxOutput = options.maxOutputChars;
    this.maxPending = options.maxPendingChars ?? DEFAULT_PENDING_CHARS;
    this.killGraceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
    this.lastOutputAt = this.startedAt;
    this.subprocess = execa(options.file, [...options.args], {
      cwd: options.cwd,
      env: options.env,
      extendEnv: false,
      // Its own process group, so a kill reaches every process the command started.
      detached: true,
      cleanup: false,
      buffer: false,
      reject: false,
      stdio: stdioFor(options),
      ...(options.uid !== undefined ? { uid: options.uid } : {}),
      ...(options.gid !== undefined ? { gid: options.gid } : {}),
      encoding: 'utf8',
    });
    const onData = (chunk: unknown) => this.append(String(chunk));
    this.subprocess.stdout?.on('data', onData);
    this.subprocess.stderr?.on('data', onData);
    // Writing to a command that has closed its stdin is the command's business, not a crash.
    this.subprocess.stdin?.on('error', () => {});
    if (options.timeoutMs !== undefined && options.timeoutMs > 0) {
      this.timer = setTimeout(() => {
        if (this.status !== 'running') return;
        this.status = 'timed-out';
        this.kill();
      }, options.timeoutMs);
      this.timer.unref();
    }
    this.done = this.subprocess.then((result) => {
      clearTimeout(this.timer);
      // The kill timer stays armed: a process that ignored SIGTERM may outlive the group leader.
      this.endedAt = Date.now();
      this.exitCode = typeof result.exitCode === 'number' ? result.exitCode : null;
      this.signal = result.signal ?? null;
      if (this.status === 'running') {
        if (result.exitCode === undefined && result.signal === undefined) {
          this.status = 'failed';
          this.error = result.message ?? 'the command could not start';
        } else this.status = 'exited';
      }
    });
  }

  get pid(): number | undefined {
    return this.subprocess.pid;
  }

  /** Our end of the socketpair the child holds at `channelFd` (Node makes a 'pipe' at fd 3+ a socketpair). */
  get channel(): Duplex | undefined {
    return this.channelFd === undefined ? undefined : ((this.subprocess.stdio[this.channelFd] as Duplex | null | undefined) ?? undefined);
  }

  /** Our end of the socketpair the child holds at `gateFd`. */
  get gate(): Duplex | undefined {
    return this.gateFd === undefined ? undefined : ((this.subprocess.stdio[this.gateFd] as Duplex | null | undefined) ?? undefined);
  }

  get running(): boolean {
    return this.endedAt === null;
  }

  private append(text: string): void {
    this.lastOutputAt = Date.now();
    this.output += text;
    if (this.output.length > this.maxOutput) {
      const cut = this.output.length - this.maxOutput;
      this.output = this.output.slice(cut);
      this.droppedChars += cut;
    }
    this.pending += text;
    if (this.pending.length > this.maxPending) this.pending = this.pending.slice(this.pending.length - this.maxPending);
  }

  /** The aggregated output, with a notice when the oldest part was dropped. */
  outputText(): string {
    const notice = this.droppedChars > 0 ? `[output capped: the first ${this.droppedChars} characters were dropped]\n` : '';
    return notice + this.output;
  }

  /** Output that arrived since the last drain. */
  drainPending(): string {
    const text = this.pending;
    this.pending = '';
    return text;
  }

  write(data: string): boolean {
    const stdin = this.subprocess.stdin;
    if (!this.running || !stdin || stdin.destroyed || stdin.writableEnded) return false;
    stdin.write(data);
    return true;
  }

  endInput(): boolean {
    const stdin = this.subprocess.stdin;
    if (!this.running || !stdin || stdin.writableEnded) return false;
    stdin.end();
    return true;
  }

  /** SIGTERM to the process group, SIGKILL after the grace period if anything still runs. */
  kill(): void {
    if (!this.running) return;
    if (this.status === 'running') this.status = 'killed';
    this.signalGroup('SIGTERM');
    this.killTimer = setTimeout(() => this.signalGroup('SIGKILL'), this.killGraceMs);
    this.killTimer.unref();
  }

  /** Immediate SIGKILL, for shutdown. */
  killNow(): void {
    if (!this.running) return;
    if (this.status === 'running') this.status = 'killed';
    this.signalGroup('SIGKILL');
  }

  private signalGroup(signal: NodeJS.Signals): void {
    const pid = this.subprocess.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, signal);
    } catch {
      // The group is gone already.
    }
  }
}
