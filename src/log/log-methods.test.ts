import { afterEach, describe, expect, it } from 'vitest';
import { log } from './log.js';

describe("the process logger's methods", () => {
  const level = log.level;
  afterEach(() => {
    log.level = level;
  });

  it('are the same function on every read, not a fresh bound copy per call', () => {
    expect(log.info).toBe(log.info);
    expect(log.debug).toBe(log.debug);
  });

  it("follow a level change: pino swaps a level's method for a no-op and back", () => {
    log.level = 'silent';
    const off = log.info;
    log.level = 'info';
    const on = log.info;
    expect(on).not.toBe(off);
    expect(log.isLevelEnabled('info')).toBe(true);
    expect(log.info).toBe(on);
    log.level = 'silent';
    expect(log.isLevelEnabled('info')).toBe(false);
    expect(log.info).not.toBe(on);
  });
});
