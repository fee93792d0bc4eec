import { describe, expect, it } from 'vitest';
import { withoutTrailingSlashes } from './trailing-slashes.js';

describe('withoutTrailingSlashes', () => {
  it.each([
    ['https://api.example.com', 'https://api.example.com'],
    ['https://api.example.com/', 'https://api.example.com'],
    ['https://api.example.com///', 'https://api.example.com'],
    ['https://api.example.com/v1/', 'https://api.example.com/v1'],
    ['/', ''],
    ['', ''],
    ['a/b', 'a/b'],
    ['/a', '/a'],
  ])('%j → %j, as /\\/+$/ would', (input, expected) => {
    expect(withoutTrailingSlashes(input)).toBe(expected);
    expect(withoutTrailingSlashes(input)).toBe(input.replace(/\/+$/, ''));
  });

  it('returns at once on 100,000 slashes followed by another character', () => {
    const hostile = `${'/'.repeat(100_000)}x`;
    expect(withoutTrailingSlashes(hostile)).toBe(hostile);
  });
});
