import { pino, type Logger } from 'pino';

/**
 * The process-wide structured logger. Logs go to stderr so that commands whose stdout is a
 * machine-readable answer (`warden tools --json`) stay parseable.
 */
export const log: Logger = pino(
  { level: process.env.WARDEN_LOG_LEVEL ?? (process.env.VITEST ? 'silent' : 'info'), base: undefined },
  pino.destination({ fd: 2, sync: true }),
);

export type { Logger };
