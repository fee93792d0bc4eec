import { describe, expect, it } from 'vitest';
import { chunkMarkdown, headingOf } from './memory-chunks.js';

describe('chunkMarkdown', () => {
  it('cuts at headings and keeps line ranges and the heading', () => {
    const md = ['intro line', '', '# Deploys', 'we deploy on fridays', '', '## Rollback', 'use the blue env', ''].join('\n');
    expect(chunkMarkdown(md)).toEqual([
      { startLine: 1, endLine: 1, heading: '', text: 'intro line' },
      { startLine: 3, endLine: 4, heading: 'Deploys', text: '# Deploys\nwe deploy on fridays' },
      { startLine: 6, endLine: 7, heading: 'Rollback', text: '## Rollback\nuse the blue env' },
    ]);
  });

  it('groups small paragraphs and splits at a paragraph once a chunk is half full', () => {
    const para = (w: string) => `${w} `.repeat(10).trim();
    const md = [para('aaa'), '', para('bbb'), '', para('ccc')].join('\n');
    const chunks = chunkMarkdown(md, 100);
    expect(chunks.map((c) => [c.startLine, c.endLine])).toEqual([
      [1, 3],
      [5, 5],
    ]);
  });

  it('cuts an oversized paragraph at line boundaries', () => {
    const md = Array.from({ length: 10 }, (_, i) => `line ${i} ${'x'.repeat(30)}`).join('\n');
    const chunks = chunkMarkdown(md, 100);
    expect(chunks.length).toBeGreaterThan(3);
    expect(chunks.every((c) => c.text.length <= 100)).toBe(true);
    expect(chunks[0]!.startLine).toBe(1);
    expect(chunks[chunks.length - 1]!.endLine).toBe(10);
  });

  it('returns nothing for blank files', () => {
    expect(chunkMarkdown('\n\n  \n')).toEqual([]);
  });
});

describe('headingOf', () => {
  const FORMER = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/;
  it.each([
    '# Title',
    '## Title ##',
    '### Title #  ',
    '   # indented',
    '    # too deep',
    '####### seven',
    '#no space',
    '# ',
    '#  ###',
    '# a # b',
    '# C# #',
    '# line\u2028break',
    '# trailing break\u2028',
    '# trailing # break \u2029 ##',
    '#\ttab\t#\t',
    '\u00a0# nbsp',
    'plain',
    '',
  ])('%j as the former pattern reads it', (line) => {
    expect(headingOf(line)).toBe(FORMER.exec(line)?.[1]);
  });

  it('returns at once on a heading of 100,000 blanks and marks', () => {
    expect(headingOf(`# a\u2028${' #'.repeat(50_000)} b`)).toBeUndefined();
    expect(headingOf(`# a${' '.repeat(100_000)}b\u2028`)).toBe(`a${' '.repeat(100_000)}b`);
    expect(chunkMarkdown(`# ${'a '.repeat(100_000)}`)).toHaveLength(1);
  });
});
