import { pino, type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';

/**
 * The process-wide structured logger. Logs go to stderr so that commands whose stdout is a
 * machine-readable answer (`warden tools --json`) stay parseable: JSON lines, or readable lines
 * (pino-pretty) when stderr is a terminal, unless `WARDEN_LOG_FORMAT=json`.
 */
function destination(): DestinationStream {
  const tty = process.stderr.isTTY === true && !process.env.VITEST && process.env.WARDEN_LOG_FORMAT !== 'json';
  return tty ? pretty({ destination: 2, sync: true, colorize: true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname' }) : pino.destination({ fd: 2, sync: true });
}

export const log: Logger = pino({ level: process.env.WARDEN_LOG_LEVEL ?? (process.env.VITEST ? 'silent' : 'info'), base: undefined }, destination());

/**
 * A one-shot command (`tools`, `audit`, …) answers on stdout; its own progress logs would only
 * interleave with the answer on a terminal, so they are kept to warnings and errors.
 * `warden start` and `warden node` run as services and log at info. `WARDEN_LOG_LEVEL` wins.
 */
export function setCommandLogLevel(command: string): void {
  if (process.env.WARDEN_LOG_LEVEL || process.env.VITEST) return;
  if (command !== 'start' && command !== 'node') log.level = 'warn';
}

export type { Logger };
