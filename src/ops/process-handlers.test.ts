import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { installProcessHandlers } from './process-handlers.js';

function harness() {
  const proc = new EventEmitter();
  const log = { error: vi.fn(), fatal: vi.fn() };
  const countRejection = vi.fn();
  const exit = vi.fn();
  const uninstall = installProcessHandlers({ proc: proc as unknown as NodeJS.Process, log, countRejection, exit });
  return { proc, log, countRejection, exit, uninstall };
}

describe('the last-resort process handlers', () => {
  it('log an unhandled rejection at error level, count it, and keep the process running', () => {
    const h = harness();
    const err = new Error('store write failed');
    h.proc.emit('unhandledRejection', err, Promise.resolve());
    expect(h.log.error).toHaveBeenCalledWith({ err }, expect.stringMatching(/unhandled promise rejection; Warden keeps running/));
    expect(h.countRejection).toHaveBeenCalledOnce();
    expect(h.exit).not.toHaveBeenCalled();
  });

  it('log a rejection with a value that is no Error as it is', () => {
    const h = harness();
    h.proc.emit('unhandledRejection', 'closed', Promise.resolve());
    expect(h.log.error).toHaveBeenCalledWith({ err: 'closed' }, expect.any(String));
  });

  it('keep an uncaught exception fatal: logged, then exit 1', () => {
    const h = harness();
    const err = new TypeError('state is broken');
    h.proc.emit('uncaughtException', err, 'uncaughtException');
    expect(h.log.fatal).toHaveBeenCalledWith({ err, origin: 'uncaughtException' }, expect.stringMatching(/uncaught exception; Warden exits/));
    expect(h.exit).toHaveBeenCalledWith(1);
    expect(h.countRejection).not.toHaveBeenCalled();
  });

  it('exit even when logging the exception throws', () => {
    const h = harness();
    h.log.fatal.mockImplementation(() => {
      throw new Error('stderr closed');
    });
    expect(() => h.proc.emit('uncaughtException', new Error('x'), 'uncaughtException')).toThrow('stderr closed');
    expect(h.exit).toHaveBeenCalledWith(1);
  });

  it('are removed by the function they return', () => {
    const h = harness();
    expect(h.proc.listenerCount('unhandledRejection')).toBe(1);
    expect(h.proc.listenerCount('uncaughtException')).toBe(1);
    h.uninstall();
    expect(h.proc.listenerCount('unhandledRejection')).toBe(0);
    expect(h.proc.listenerCount('uncaughtException')).toBe(0);
  });
});
