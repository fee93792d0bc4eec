import { describe, expect, it, vi } from 'vitest';
import { background } from './background.js';

const logger = () => ({ warn: vi.fn(), error: vi.fn() });
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('background', () => {
  it('logs a rejection at warn, with the error and the fields, under the message given', async () => {
    const log = logger();
    const err = new Error('store closed');
    background(Promise.reject(err), 'last-seen time not recorded', { log, fields: { node: 'n1' } });
    await settle();
    expect(log.warn).toHaveBeenCalledWith({ err, node: 'n1' }, 'last-seen time not recorded');
    expect(log.error).not.toHaveBeenCalled();
  });

  it('logs at error when asked', async () => {
    const log = logger();
    background(Promise.reject(new Error('x')), 'reply not posted', { log, level: 'error' });
    await settle();
    expect(log.error).toHaveBeenCalledOnce();
    expect(log.warn).not.toHaveBeenCalled();
  });

  it('logs nothing when the work succeeds', async () => {
    const log = logger();
    background(Promise.resolve(42), 'never', { log });
    await settle();
    expect(log.warn).not.toHaveBeenCalled();
    expect(log.error).not.toHaveBeenCalled();
  });

  it('handles the rejection: no unhandledRejection reaches the process', async () => {
    const seen: unknown[] = [];
    const on = (reason: unknown) => seen.push(reason);
    process.on('unhandledRejection', on);
    try {
      background(Promise.reject(new Error('lost')), 'lost', { log: logger() });
      const thenable: PromiseLike<never> = { then: (_ok, fail) => (fail?.(new Error('thenable')), thenable) as never };
      background(thenable, 'thenable', { log: logger() });
      await settle();
      await settle();
    } finally {
      process.off('unhandledRejection', on);
    }
    expect(seen).toEqual([]);
  });
});
