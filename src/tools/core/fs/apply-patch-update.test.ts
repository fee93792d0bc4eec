import { describe, expect, it } from 'vitest';
import type { UpdateChunk } from './apply-patch-parse.js';
import { applyUpdateChunks, seekSequence } from './apply-patch-update.js';

const chunk = (oldLines: string[], newLines: string[], extra: Partial<UpdateChunk> = {}): UpdateChunk => ({
  changeContext: undefined,
  oldLines,
  newLines,
  isEndOfFile: false,
  ...extra,
});

describe('seekSequence', () => {
  const lines = ['a', 'b  ', '  c', 'd \u2014 e', 'a'];
  it.each([
    [['a'], 0, false, 0],
    [['a'], 1, false, 4],
    [['a'], 0, true, 4],
    [['b'], 0, false, 1],
    [['c'], 0, false, 2],
    [['d - e'], 0, false, 3],
    [['x'], 0, false, -1],
    [[], 3, false, 3],
    [['a', 'b', 'c', 'd', 'e', 'f'], 0, false, -1],
  ] as const)('%j from %i (eof %s) → %i', (pattern, start, eof, expected) => {
    expect(seekSequence(lines, pattern, start, eof)).toBe(expected);
  });

  // Blocks that partly repeat themselves: the search must not skip a match that starts inside a near miss.
  it.each<[string, string[], string[], number]>([
    ['aaab / aab', ['a', 'a', 'a', 'b'], ['a', 'a', 'b'], 1],
    ['ababac / abac', ['a', 'b', 'a', 'b', 'a', 'c'], ['a', 'b', 'a', 'c'], 2],
    ['xabaabab / abab', ['x', 'a', 'b', 'a', 'a', 'b', 'a', 'b'], ['a', 'b', 'a', 'b'], 4],
    ['aaa / aaaa', ['a', 'a', 'a'], ['a', 'a', 'a', 'a'], -1],
    ['20,000 × a / 10,000 × a then b', [...Array(20_000).fill('a')], [...Array(10_000).fill('a'), 'b'], -1],
    ['trailing spaces, second pass', ['a  ', 'b', 'c'], ['a', 'b'], 0],
  ])('%s → %i', (_label, file, pattern, expected) => {
    expect(seekSequence(file, pattern, 0, false)).toBe(expected);
  });
});

describe('applyUpdateChunks', () => {
  const file = 'fn one() {\n  return 1;\n}\nfn two() {\n  return 1;\n}\n';
  it.each([
    { name: 'plain replacement', chunks: [chunk(['fn one() {'], ['fn uno() {'])], out: 'fn uno() {\n  return 1;\n}\nfn two() {\n  return 1;\n}\n' },
    {
      name: '@@ context picks the second of two equal blocks',
      chunks: [chunk(['  return 1;'], ['  return 2;'], { changeContext: 'fn two() {' })],
      out: 'fn one() {\n  return 1;\n}\nfn two() {\n  return 2;\n}\n',
    },
    {
      name: 'chunks search forward in order',
      chunks: [chunk(['  return 1;'], ['  return 10;']), chunk(['  return 1;'], ['  return 20;'])],
      out: 'fn one() {\n  return 10;\n}\nfn two() {\n  return 20;\n}\n',
    },
    { name: 'end of file anchor', chunks: [chunk(['}'], ['} // end'], { isEndOfFile: true })], out: 'fn one() {\n  return 1;\n}\nfn two() {\n  return 1;\n} // end\n' },
    { name: 'pure insertion after context', chunks: [chunk([], ['  // first'], { changeContext: 'fn one() {' })], out: 'fn one() {\n  // first\n  return 1;\n}\nfn two() {\n  return 1;\n}\n' },
    { name: 'pure insertion at end', chunks: [chunk([], ['fn three() {}'])], out: `${file}fn three() {}\n` },
    { name: 'trailing blank context stands for the final newline', chunks: [chunk(['}', ''], ['};', ''], { isEndOfFile: true })], out: 'fn one() {\n  return 1;\n}\nfn two() {\n  return 1;\n};\n' },
    { name: 'whitespace-tolerant pass', chunks: [chunk(['fn one() {   ', 'return 1;'], ['fn one() {', '  return 111;'])], out: 'fn one() {\n  return 111;\n}\nfn two() {\n  return 1;\n}\n' },
  ])('$name', ({ chunks, out }) => {
    expect(applyUpdateChunks(file, chunks, 'f.rs')).toEqual({ ok: true, content: out });
  });

  it('adds the final newline a file lacked', () => {
    expect(applyUpdateChunks('a\nb', [chunk(['b'], ['c'])], 'f')).toEqual({ ok: true, content: 'a\nc\n' });
  });

  it.each([
    [[chunk(['nope'], ['x'])], /^Failed to find expected lines in f\.rs:\nnope$/],
    [[chunk(['x'], ['y'], { changeContext: 'fn three() {' })], /^Failed to find context 'fn three\(\) \{' in f\.rs$/],
    [[chunk(['fn two() {'], ['x']), chunk(['fn one() {'], ['y'])], /Failed to find expected lines/],
  ])('fails: %#', (chunks, message) => {
    const r = applyUpdateChunks(file, chunks, 'f.rs');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).toMatch(message);
  });
});
