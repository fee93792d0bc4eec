import type { WardenConfig } from '../config/index.js';
import { log } from '../log/log.js';
import { urlPolicyFor, type Resolver } from '../net/index.js';
import { browserProfiles, profileFor, type BrowserProfileSpec } from './profiles.js';
import { BrowserSession } from './session.js';
import { closeOnShutdown } from './shutdown.js';
import { background } from '../util/background.js';

export interface BrowserManagerOptions {
  config: WardenConfig;
  /** Warden's data dir: profiles live under `<dataDir>/browser/<profile>/user-data`. */
  dataDir: string;
  /** Test seams of the guard proxy: a fake DNS and a dialler. Production code sets neither. */
  resolve?: Resolver | undefined;
  dial?: ((checkedAddress: string) => string) | undefined;
}

export type WithSession<T> = { ok: true; value: T } | { ok: false; error: string };

/**
 * One Chromium per browser profile, launched on first use and closed after
 * `browser.idleTimeoutSec` without a call, on `stop`, and when Warden shuts down. Calls on one
 * profile run one at a time, so two tool calls never act on the same tab at once.
 */
export class BrowserManager {
  private readonly starting = new Map<string, Promise<BrowserSession>>();
  private readonly queues = new Map<string, Promise<unknown>>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly unregister: () => void;

  constructor(private readonly options: BrowserManagerOptions) {
    this.unregister = closeOnShutdown(this);
  }

  get config(): WardenConfig {
    return this.options.config;
  }

  /** The resolver navigation checks use (the guard proxy's, so both see the same answers). */
  get resolve(): Resolver | undefined {
    return this.options.resolve;
  }

  profiles(): BrowserProfileSpec[] {
    return [...browserProfiles(this.options.config, this.options.dataDir).values()];
  }

  /** The running session of a profile, without starting one. */
  async running(name: string): Promise<BrowserSession | undefined> {
    const pending = this.starting.get(name);
    if (!pending) return undefined;
    const session = await pending.catch(() => undefined);
    return session && !session.isClosed ? session : undefined;
  }

  /**
   * Runs `fn` on a profile's session, after the calls before it on the same profile. With
   * `start: false` a profile that is not running is reported, not launched; a `gate` that
   * answers ends the call before any session is needed.
   */
  async withSession<T>(
    profile: string | undefined,
    fn: (session: BrowserSession) => Promise<T>,
    options: { start?: boolean; gate?: () => Promise<T | undefined> } = {},
  ): Promise<WithSession<T>> {
    const found = profileFor(this.options.config, this.options.dataDir, profile);
    if (!found.ok) return found;
    const { spec } = found;
    return this.enqueue(spec.name, async (): Promise<WithSession<T>> => {
      clearTimeout(this.timers.get(spec.name));
      // A gate answers in the call's turn without a browser (a refused URL starts no Chromium).
      const answered = await options.gate?.();
      if (answered !== undefined) return { ok: true, value: answered };
      let session = await this.running(spec.name);
      if (!session) {
        if (options.start === false) return { ok: false, error: `The browser profile "${spec.name}" is not running. Use action "start" (or "open") first.` };
        try {
          session = await this.launch(spec);
        } catch (err) {
          return { ok: false, error: `Could not start Chromium for profile "${spec.name}": ${(err as Error).message.split('\n')[0]}` };
        }
      }
      try {
        return { ok: true, value: await fn(session) };
      } finally {
        this.armIdleTimer(spec.name);
      }
    });
  }

  /** Runs `task` after every task queued before it on the same profile. */
  private enqueue<T>(name: string, task: () => Promise<T>): Promise<T> {
    const run = (this.queues.get(name) ?? Promise.resolve()).then(task);
    this.queues.set(name, run.catch(() => undefined));
    return run;
  }

  private launch(spec: BrowserProfileSpec): Promise<BrowserSession> {
    const started = BrowserSession.start(spec, { policy: urlPolicyFor(this.options.config, 'browser'), resolve: this.options.resolve, dial: this.options.dial });
    this.starting.set(spec.name, started);
    started.catch(() => this.starting.delete(spec.name));
    return started;
  }

  private armIdleTimer(name: string): void {
    clearTimeout(this.timers.get(name));
    const timer = setTimeout(() => {
      log.info({ profile: name }, 'browser idle; closing');
      background(this.enqueue(name, () => this.stop(name)), 'idle browser not closed', { fields: { profile: name } });
    }, this.options.config.browser.idleTimeoutSec * 1000);
    timer.unref();
    this.timers.set(name, timer);
  }

  /** The `stop` action: closes a profile's Chromium after the calls queued before it. */
  async stopProfile(profile: string | undefined): Promise<WithSession<{ profile: string; wasRunning: boolean }>> {
    const found = profileFor(this.options.config, this.options.dataDir, profile);
    if (!found.ok) return found;
    const name = found.spec.name;
    const wasRunning = await this.enqueue(name, () => this.stop(name));
    return { ok: true, value: { profile: name, wasRunning } };
  }

  /** Closes a profile's Chromium; true when one was running. */
  async stop(name: string): Promise<boolean> {
    clearTimeout(this.timers.get(name));
    this.timers.delete(name);
    const session = await this.running(name);
    this.starting.delete(name);
    if (!session) return false;
    await session.close();
    return true;
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.starting.keys()].map((name) => this.stop(name)));
  }

  /** Closes everything and forgets this manager (tests, and a tool being replaced). */
  async dispose(): Promise<void> {
    this.unregister();
    await this.closeAll();
  }
}
