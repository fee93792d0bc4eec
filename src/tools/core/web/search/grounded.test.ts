import { describe, expect, it } from 'vitest';
import { markdownLinks } from './grounded.js';

const FORMER = /\[([^\]]{1,200})\]\((https?:\/\/[^\s)]+)\)/g;

describe('markdownLinks', () => {
  it.each([
    'See [Example](https://example.com/a) and [Other](http://other.example/b?q=1).',
    '[no scheme](example.com) [ftp](ftp://x) [bare](https://)',
    '[x](https://a b) [y](https://c)',
    '[a [b](https://c)',
    `[${'t'.repeat(200)}](https://ok) [${'t'.repeat(201)}](https://long)`,
    `[${'t'.repeat(300)}[inner](https://inner)`,
    '[](https://empty-title)',
    '[s](httpsx://no) [s](https:/one) [s](https://two)',
    '[a](https://x[b](https://y)',
    '[a](https://x\n[b](https://y)',
    '[a](https://x',
    '][ [',
    '',
  ])('%j as the former pattern finds them', (text) => {
    expect(markdownLinks(text)).toEqual([...text.matchAll(FORMER)].map((m) => ({ title: m[1], url: m[2] })));
  });

  it.each([
    ['100,000 `[a](https://x` without a `)`', '[a](https://x'.repeat(100_000)],
    ['100,000 `[` without a `]`', '['.repeat(100_000)],
    ['a `[` and 100,000 characters of title', `${'['.repeat(1_000)}${'t'.repeat(100_000)}]`],
  ])('returns at once on %s', (_what, hostile) => {
    expect(markdownLinks(hostile)).toEqual([]);
  });
});
