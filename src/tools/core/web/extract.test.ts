import { describe, expect, it } from 'vitest';
import { linksToText, markdownToText } from './extract.js';

describe('linksToText', () => {
  it.each([
    'see [the docs](https://example.com/docs) now',
    '![logo](/img.png) and [a](b) and [c](d)',
    '[unclosed text',
    '[text] (not a link)',
    '[text](unclosed',
    '[a [b](c)',
    '[a](b [c](d)',
    '[](empty)',
    '[x]()',
    '] [ ( )',
    '[a]b](c)',
    '![a](b)',
    '!![a](b)',
    '[a](b)[c](d)',
    '$& [$1](x) $$',
    '',
  ])('%j as the former patterns write it', (markdown) => {
    expect(linksToText(markdown, '[')).toBe(markdown.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1'));
    expect(linksToText(markdown, '![')).toBe(markdown.replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1'));
  });

  it.each([
    ['100,000 unclosed `[`', '['.repeat(100_000)],
    ['100,000 unclosed `![`', '!['.repeat(100_000)],
    ['100,000 `[a](` without `)`', '[a]('.repeat(100_000)],
    ['100,000 `[a]` not followed by `(`', '[a]x'.repeat(100_000)],
  ])('markdownToText returns at once on %s', (_what, hostile) => {
    expect(typeof markdownToText(hostile)).toBe('string');
  });
});
