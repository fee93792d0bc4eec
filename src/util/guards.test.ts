import { describe, expect, it } from 'vitest';
import { isRecord, isRegExp } from './guards.js';

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

  it.each([
    ['^status', true],
    ['^(a', false],
    ['[', false],
  ])('isRegExp(%s) is %s', (source, expected) => {
    expect(isRegExp(source)).toBe(expected);
  });
});
