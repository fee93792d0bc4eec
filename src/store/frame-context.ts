import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The open transaction of the caller's async context, for an engine's `tx`: an AsyncLocalStorage
 * that is switched off whenever no transaction is open. On Node 20 and 22 an enabled
 * AsyncLocalStorage turns on promise hooks for the whole process, so every promise anywhere (an
 * HTTP request's, a model stream's) pays for them; a message's writes go out as batches, and
 * transactions are rare and short, so the hooks now run only while one is open.
 *
 * A continuation made inside a transaction that runs after it (a timer it set) may still name
 * that transaction's frame while another transaction is open; engines already treat a frame that
 * is done, or that is not the open one, as no transaction. With none open, `current()` is
 * undefined whatever such a continuation carries.
 */
export class FrameContext<F> {
  private readonly storage = new AsyncLocalStorage<F>();
  private open = 0;

  /** The frame of the caller's context; undefined outside every transaction. */
  current(): F | undefined {
    return this.open === 0 ? undefined : this.storage.getStore();
  }

  /**
   * Runs `fn` with `frame` as the current frame of everything it calls, however deep. Its own
   * promise is returned, not one wrapped around it: a caller's next step (a COMMIT) comes no
   * later than without this class, which matters where another connection of the same process
   * waits for that commit synchronously (SQLite's busy wait).
   */
  run<T>(frame: F, fn: () => Promise<T>): Promise<T> {
    this.open++;
    let running: Promise<T>;
    try {
      running = this.storage.run(frame, fn);
    } catch (err) {
      this.ended();
      throw err;
    }
    // Registered before the caller's own reaction, so it runs first and delays nothing.
    running.then(this.ended, this.ended);
    return running;
  }

  private readonly ended = (): void => {
    if (--this.open === 0) this.storage.disable();
  };
}
