import { createRequire } from 'node:module';
import type { Logger } from 'pino';

const require = createRequire(import.meta.url);
let instance: Logger | undefined;

/** Made at the first use: a command that never logs (`warden tools`) does not load pino. */
function logger(): Logger {
  if (!instance) {
    const { pino } = require('pino') as typeof import('pino');
    instance = pino({ level: process.env.WARDEN_LOG_LEVEL ?? (process.env.VITEST ? 'silent' : 'info'), base: undefined }, pino.destination({ fd: 2, sync: true }));
  }
  return instance;
}

/**
 * The process-wide structured logger. Logs go to stderr so that commands whose stdout is a
 * machine-readable answer (`warden tools --json`) stay parseable.
 */
export const log: Logger = new Proxy({} as Logger, {
  get(_, prop) {
    const real = logger();
    const value: unknown = Reflect.get(real, prop, real);
    return typeof value === 'function' ? value.bind(real) : value;
  },
  set: (_, prop, value) => Reflect.set(logger(), prop, value),
  has: (_, prop) => Reflect.has(logger(), prop),
});

export type { Logger };
