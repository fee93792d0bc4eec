import { describe, expect, it } from 'vitest';
import { chunkText } from './chunk-text.js';

const fenceLines = (chunk: string) => chunk.split('\n').filter((l) => /^\s*(`{3,}|~{3,})/.test(l));

/** Removes the fence lines the chunker added, to compare content with the input. */
function rejoin(chunks: string[]): string {
  return chunks.join('\n');
}

describe('chunkText', () => {
  it.each([
    { name: 'empty text', text: '', limit: 100, chunks: [] as string[] },
    { name: 'text that fits', text: 'hello', limit: 100, chunks: ['hello'] },
    { name: 'exactly the limit', text: 'a'.repeat(40), limit: 40, chunks: ['a'.repeat(40)] },
    { name: 'splits at line breaks', text: `${'a'.repeat(30)}\n${'b'.repeat(30)}`, limit: 40, chunks: ['a'.repeat(30), 'b'.repeat(30)] },
    { name: 'cuts an overlong line hard', text: 'x'.repeat(90), limit: 40, chunks: ['x'.repeat(40), 'x'.repeat(40), 'x'.repeat(10)] },
    {
      name: 'closes and reopens a fence cut by a boundary, keeping the language',
      text: ['```ts', 'const a = 1;', 'const b = 2;', 'const c = 3;', '```', 'done'].join('\n'),
      limit: 36,
      chunks: ['```ts\nconst a = 1;\nconst b = 2;\n```', '```ts\nconst c = 3;\n```\ndone'],
    },
    {
      name: 'a fence line that would not fit with its closer moves to the next chunk',
      text: ['intro line here that is long', '```', 'code line', '```'].join('\n'),
      limit: 32,
      chunks: ['intro line here that is long', '```\ncode line\n```'],
    },
  ])('$name', ({ text, limit, chunks }) => {
    expect(chunkText(text, limit)).toEqual(chunks);
  });

  it('keeps every chunk within the limit and every chunk balanced, on mixed prose and code', () => {
    const parts: string[] = [];
    for (let i = 0; i < 40; i++) {
      parts.push(`Paragraph ${i}: ${'word '.repeat(i % 7 * 9)}`);
      if (i % 3 === 0) parts.push('```python', ...Array.from({ length: 12 }, (_, j) => `print(${i * 100 + j})  # ${'.'.repeat(j * 5)}`), '```');
      if (i % 11 === 0) parts.push('~~~', 'y'.repeat(250), '~~~');
    }
    const text = parts.join('\n');
    const chunks = chunkText(text, 200);
    expect(chunks.length).toBeGreaterThan(10);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(200);
      expect(fenceLines(chunk).length % 2).toBe(0);
    }
    // Nothing is lost: every input line (or each piece of a cut line) appears in order.
    const out = rejoin(chunks);
    let at = 0;
    for (const line of text.split('\n')) {
      for (let i = 0; i < line.length; i += 150) {
        const piece = line.slice(i, i + 150);
        const found = out.indexOf(piece.slice(0, 20), at);
        expect(found, `missing: ${piece.slice(0, 40)}`).toBeGreaterThanOrEqual(0);
        at = found;
      }
    }
  });

  it('rejects a limit too small to hold a fence', () => {
    expect(() => chunkText('abc', 10)).toThrow(RangeError);
  });
});
