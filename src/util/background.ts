import { log as rootLog, type Logger } from '../log/log.js';

/** Where a background failure is logged: a module's logger (or a child of it). */
export type BackgroundLog = Pick<Logger, 'warn' | 'error'>;

export interface BackgroundOptions {
  /** The module's logger; the process-wide one by default. */
  log?: BackgroundLog;
  /** `error` where the failure loses something the user or operator expects to happen; `warn` by default. */
  level?: 'warn' | 'error';
  /** Fields that say which conversation, approval, server … the work was for. */
  fields?: Record<string, unknown>;
}

/**
 * Lets `work` run on without waiting for it, and logs its failure as `what` (the message says
 * what did not happen: "approval card not updated"). A promise nobody handles ends the process
 * on its rejection, so every fire-and-forget in application code goes through here or has its
 * own `.catch`. Success changes nothing: the result is dropped.
 */
export function background(work: PromiseLike<unknown>, what: string, options: BackgroundOptions = {}): void {
  const logger = options.log ?? rootLog;
  const level = options.level ?? 'warn';
  Promise.resolve(work).then(undefined, (err: unknown) => {
    logger[level]({ err, ...options.fields }, what);
  });
}
