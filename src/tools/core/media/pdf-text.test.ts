import { describe, expect, it } from 'vitest';
import { tidyPageText } from './pdf-text.js';

const former = (text: string) => text.replace(/[ \t]+\n/g, '\n').replace(/\n{3,}/g, '\n\n').trim();

describe('tidyPageText', () => {
  it.each(['a  \nb', 'a\t \t\nb \n', 'a\n\n\n\nb', '  lead\n', 'no break   ', ' \n \n \n', 'x \u00a0\ny', ''])('%j as the former patterns tidy it', (text) => {
    expect(tidyPageText(text)).toBe(former(text));
  });

  it('returns at once on 100,000 blanks without a line end', () => {
    const hostile = `a${' '.repeat(100_000)}b`;
    expect(tidyPageText(hostile)).toBe(hostile);
  });
});
