import { describe, expect, it } from 'vitest';
import { isRecord } from './guards.js';

describe('guards', () => {
  it.each([
    [{}, true],
    [{ a: 1 }, true],
    [[], false],
    [null, false],
    ['x', false],
    [undefined, false],
  ])('isRecord(%o) is %s', (value, expected) => {
    expect(isRecord(value)).toBe(expected);
  });
});
