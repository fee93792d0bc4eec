import { describe, expect, it } from 'vitest';
import { plain, withoutTags } from './clean.js';

describe('withoutTags', () => {
  it.each(['<b>bold</b> text', 'a < b and c > d', '<a<b>c', 'x <unclosed', '<>', '>><<', 'no tags', '<a href="x>y">', ''])(
    '%j as /<[^>]*>/g drops them',
    (text) => {
      expect(withoutTags(text)).toBe(text.replace(/<[^>]*>/g, ''));
    },
  );

  it('plain returns at once on 100,000 `<` that never close', () => {
    expect(plain('<'.repeat(100_000), 10)).toBe('<<<<<<<<<…');
  });
});
