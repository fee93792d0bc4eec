import { log as rootLog, type Logger } from '../log/log.js';

export interface ProcessHandlerOptions {
  log?: Pick<Logger, 'error' | 'fatal'>;
  /** Counts an unhandled rejection (the `/metrics` counter). */
  countRejection?: () => void;
  /** Ends the process after an uncaught exception; `process.exit` unless a test watches. */
  exit?: (code: number) => void;
  /** The process whose events are handled; a test passes an emitter. */
  proc?: Pick<NodeJS.Process, 'on' | 'off'>;
}

/**
 * The last-resort handlers of a long-running command (`warden start`, `warden node`).
 *
 * A promise rejection nothing handled is logged at error level and counted, and the process
 * keeps running: it lost one piece of work (a plugin's background call, a store write), and
 * Node's default, ending the process, would drop every conversation with it. Application code
 * handles its own rejections (scripts/check-promises.mjs sees to it); this catches what slips
 * past, such as a plugin's.
 *
 * An uncaught exception stays fatal: it is logged, then the process exits 1. A throw that
 * unwound through code in the middle of a change leaves state nobody can vouch for, and a
 * restart by the supervisor is safer than serving from it.
 *
 * Returns a function that removes both handlers.
 */
export function installProcessHandlers(options: ProcessHandlerOptions = {}): () => void {
  const proc = options.proc ?? process;
  const logger = options.log ?? rootLog;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const onRejection = (reason: unknown) => {
    options.countRejection?.();
    logger.error({ err: reason }, 'unhandled promise rejection; Warden keeps running');
  };
  const onException = (err: Error, origin: string) => {
    try {
      logger.fatal({ err, origin }, 'uncaught exception; Warden exits');
    } finally {
      exit(1);
    }
  };
  proc.on('unhandledRejection', onRejection);
  proc.on('uncaughtException', onException);
  return () => {
    proc.off('unhandledRejection', onRejection);
    proc.off('uncaughtException', onException);
  };
}
