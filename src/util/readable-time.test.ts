import { describe, expect, it } from 'vitest';
import { readableUtc } from './readable-time.js';

describe('a moment in chat text', () => {
  it.each([
    ['2026-12-07T09:00:00.000Z', 'Mon 7 Dec 2026, 09:00 UTC'],
    [Date.UTC(2027, 0, 1, 23, 5), 'Fri 1 Jan 2027, 23:05 UTC'],
    ['not a time', 'not a time'],
  ])('%s → %s', (at, text) => {
    expect(readableUtc(at)).toBe(text);
  });
});
