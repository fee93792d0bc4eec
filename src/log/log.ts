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

/** Made at the first use: a command that never logs (`warden tools`) does not load pino. */
function logger(): Logger {
  if (!instance) {
    const { pino } = require('pino') as typeof import('pino');
    const level = process.env.WARDEN_LOG_LEVEL ?? commandLevel ?? (process.env.VITEST ? 'silent' : 'info');
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
