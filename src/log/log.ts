import { createRequire } from 'node:module';
import type { DestinationStream, Logger } from 'pino';
import { redactConfig } from '../redact/redact.js';
import { scrubSecrets } from '../redact/scrub.js';

const require = createRequire(import.meta.url);
let instance: Logger | undefined;
/** The level a one-shot command asked for before anything logged (`setCommandLogLevel`). */
let commandLevel: string | undefined;

/**
 * Logs go to stderr: JSON lines, or readable lines (pino-pretty) when stderr is a terminal,
 * unless `WARDEN_LOG_FORMAT=json`. Both are loaded at the first log only.
 */
function destination(pino: typeof import('pino').pino): DestinationStream {
  const tty = process.stderr.isTTY === true && !process.env.VITEST && process.env.WARDEN_LOG_FORMAT !== 'json';
  if (!tty) return pino.destination({ fd: 2, sync: true });
  const pretty = require('pino-pretty') as typeof import('pino-pretty');
  return pretty({ destination: 2, sync: true, colorize: true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname' });
}

/**
 * A config (or a part of one) logged under `config` or `changes` is logged as every other
 * path shows config: redacted by the one config redaction.
 */
export const LOG_SERIALIZERS = {
  config: (value: unknown) => redactConfig(value, { env: process.env }),
  changes: (value: unknown) => redactConfig(value, { env: process.env }),
};

/** Every line, whatever logged it, leaves without a known secret or a credential shape. */
export const LOG_HOOKS = { streamWrite: (line: string) => scrubSecrets(line) };

/** The level the logger is made with (and, until it is made, the one its lines are weighed against). */
const startLevel = (): string => process.env.WARDEN_LOG_LEVEL ?? commandLevel ?? (process.env.VITEST ? 'silent' : 'info');

/** pino's level values, for its standard levels only: any other name is pino's to accept or refuse. */
const LEVEL_VALUES: Readonly<Record<string, number>> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity };

/**
 * Whether a line at `method` would be dropped by the level the logger would be made with. Until
 * something is logged at a level that is on, pino is not loaded: a command that only drops lines
 * (`warden tools` under `WARDEN_LOG_LEVEL=silent`, warning that bubblewrap is missing) does not
 * pay for the thirty files of pino. pino's own method for a level that is off does nothing, so
 * a no-op in its place behaves the same.
 */
function droppedBeforeMade(method: PropertyKey): boolean {
  if (typeof method !== 'string' || method === 'silent') return false;
  const line = LEVEL_VALUES[method];
  const threshold = LEVEL_VALUES[startLevel()];
  return line !== undefined && threshold !== undefined && line < threshold;
}
const dropLine = (): void => undefined;

/** Made at the first use: a command that never logs (`warden tools`) does not load pino. */
function logger(): Logger {
  if (!instance) {
    const { pino } = require('pino') as typeof import('pino');
    const level = startLevel();
    instance = pino({ level, base: undefined, serializers: LOG_SERIALIZERS, hooks: LOG_HOOKS }, destination(pino));
  }
  return instance;
}

/**
 * The process-wide structured logger. Logs go to stderr so that commands whose stdout is a
 * machine-readable answer (`warden tools --json`) stay parseable.
 */
/**
 * Methods bound to the logger, by the function they bind: `log.debug(…)` runs on every message
 * and a fresh bound function per call was garbage per call. Keyed by the function itself, so a
 * level change (pino swaps a level's method for a no-op and back) binds the new one.
 */
type Method = (...args: never[]) => unknown;
const bound = new WeakMap<Method, { target: object; fn: Method }>();

export const log: Logger = new Proxy({} as Logger, {
  get(_, prop) {
    if (!instance && droppedBeforeMade(prop)) return dropLine;
    const real = logger();
    const value: unknown = Reflect.get(real, prop, real);
    if (typeof value !== 'function') return value;
    const method = value as Method;
    let entry = bound.get(method);
    if (entry?.target !== real) bound.set(method, (entry = { target: real, fn: method.bind(real) }));
    return entry.fn;
  },
  set: (_, prop, value) => Reflect.set(logger(), prop, value),
  has: (_, prop) => Reflect.has(logger(), prop),
});

/**
 * A one-shot command (`tools`, `audit`, …) answers on stdout; its own progress logs would only
 * interleave with the answer on a terminal, so they are kept to warnings and errors.
 * `warden start` and `warden node` run as services and log at info. `WARDEN_LOG_LEVEL` wins.
 */
export function setCommandLogLevel(command: string): void {
  if (process.env.WARDEN_LOG_LEVEL || process.env.VITEST || command === 'start' || command === 'node') return;
  commandLevel = 'warn';
  if (instance) instance.level = 'warn';
}

export type { Logger };
