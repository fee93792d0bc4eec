import { log } from '../log/log.js';

/** Runs one item of a session; the signal aborts it (`/stop`, shutdown). */
export type SessionRunner<T> = (sessionKey: string, item: T, signal: AbortSignal) => Promise<void>;

export interface SessionQueueOptions {
  /** Items waiting per session, not counting the running one. */
  maxPending: number;
}

export type EnqueueResult =
  | { ok: true; /** 0 = runs now, n = n items ahead of it. */ position: number }
  | { ok: false; reason: 'full' | 'closed' };

interface Lane<T> {
  pending: T[];
  running: { item: T; controller: AbortController } | undefined;
}

export const DEFAULT_MAX_PENDING = 32;

const drainFailed = (err: unknown): void => log.error({ err }, 'session queue did not move on');

/**
 * One turn at a time per session, first in first out, bounded. A rejected enqueue is returned
 * to the caller (who owes the user a "busy" reply); nothing is dropped without the caller
 * knowing. Different sessions run concurrently. Idle sessions leave no state behind.
 */
export class SessionQueues<T> {
  private readonly lanes = new Map<string, Lane<T>>();
  private readonly idleWaiters: Array<() => void> = [];
  private closed = false;

  constructor(
    private readonly run: SessionRunner<T>,
    private readonly options: SessionQueueOptions = { maxPending: DEFAULT_MAX_PENDING },
  ) {}

  /**
   * Why an item for the session would be refused now (undefined: it would be queued), as
   * `enqueue` decides it: asked before anything about the item is written elsewhere.
   */
  refusal(sessionKey: string, options: { overflow?: boolean } = {}): 'closed' | 'full' | undefined {
    if (this.closed) return 'closed';
    const lane = this.lanes.get(sessionKey);
    if (lane?.running && lane.pending.length >= this.options.maxPending && options.overflow !== true) return 'full';
    return undefined;
  }

  /** `overflow`: queued even when the session is full (an item that must not be lost, like an approval's outcome). */
  enqueue(sessionKey: string, item: T, options: { overflow?: boolean } = {}): EnqueueResult {
    if (this.closed) return { ok: false, reason: 'closed' };
    let lane = this.lanes.get(sessionKey);
    if (!lane) {
      lane = { pending: [], running: undefined };
      this.lanes.set(sessionKey, lane);
    }
    if (!lane.running) {
      this.start(sessionKey, lane, item);
      return { ok: true, position: 0 };
    }
    if (lane.pending.length >= this.options.maxPending && options.overflow !== true) return { ok: false, reason: 'full' };
    lane.pending.push(item);
    return { ok: true, position: lane.pending.length };
  }

  /** Aborts the running item of a session; queued items still run. True when something was running. */
  abort(sessionKey: string, reason = 'stopped'): boolean {
    const running = this.lanes.get(sessionKey)?.running;
    if (!running || running.controller.signal.aborted) return false;
    running.controller.abort(new Error(reason));
    return true;
  }

  /** Sessions with an item running now. */
  runningKeys(): string[] {
    return [...this.lanes].filter(([, lane]) => lane.running !== undefined).map(([key]) => key);
  }

  isRunning(sessionKey: string): boolean {
    return this.lanes.get(sessionKey)?.running !== undefined;
  }

  pendingCount(sessionKey: string): number {
    return this.lanes.get(sessionKey)?.pending.length ?? 0;
  }

  stats(): { sessions: number; running: number; pending: number } {
    let running = 0;
    let pending = 0;
    for (const lane of this.lanes.values()) {
      if (lane.running) running++;
      pending += lane.pending.length;
    }
    return { sessions: this.lanes.size, running, pending };
  }

  /** Resolves once no session has anything running or waiting. */
  whenIdle(): Promise<void> {
    if (this.lanes.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops accepting items; what is queued still runs (see `whenIdle`). */
  close(): void {
    this.closed = true;
  }

  /** Aborts every running item and hands back every waiting one (the caller tells their senders). */
  abortAll(reason = 'shutting down'): T[] {
    const handedBack: T[] = [];
    for (const [key, lane] of this.lanes) {
      handedBack.push(...lane.pending.splice(0));
      this.abort(key, reason);
    }
    return handedBack;
  }

  /**
   * Runs a session's items one after another until none waits, then drops the lane. One loop
   * per busy session, not a chain of reactions per item: a message costs no closures here.
   */
  private start(sessionKey: string, lane: Lane<T>, item: T): void {
    void this.drain(sessionKey, lane, item).catch(drainFailed);
  }

  private async drain(sessionKey: string, lane: Lane<T>, first: T): Promise<void> {
    for (let item: T | undefined = first; item !== undefined; item = lane.pending.shift()) {
      const controller = new AbortController();
      lane.running = { item, controller };
      try {
        await this.run(sessionKey, item, controller.signal);
      } catch (err) {
        log.error({ err, sessionKey }, 'session item failed');
      }
      lane.running = undefined;
    }
    this.lanes.delete(sessionKey);
    if (this.lanes.size === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }
}
