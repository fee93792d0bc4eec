import { describe, expect, it } from 'vitest';
import { numberLine, paginate, splitLines } from './read-page.js';

const five = ['l1', 'l2', 'l3', 'l4', 'l5'];
const base = { maxLines: 2000, maxChars: 100_000, maxLineChars: 2000 };

describe('splitLines', () => {
  it.each([
    ['', []],
    ['a', ['a']],
    ['a\n', ['a']],
    ['a\n\n', ['a', '']],
    ['a\r\nb\r\n', ['a', 'b']],
  ])('%j', (text, lines) => expect(splitLines(text)).toEqual(lines));
});

describe('paginate', () => {
  const cases: Array<{ name: string; lines?: string[]; opts: Partial<typeof base> & { offset?: number; limit?: number }; shown: [number, number]; notice?: string }> = [
    { name: 'whole file', opts: {}, shown: [1, 5] },
    { name: 'user limit stops early', opts: { limit: 2 }, shown: [1, 2], notice: '[3 more lines in file. Use offset=3 to continue.]' },
    { name: 'limit reaching the end exactly', opts: { offset: 4, limit: 2 }, shown: [4, 5] },
    { name: 'limit past the end', opts: { offset: 5, limit: 10 }, shown: [5, 5] },
    { name: 'offset to the end', opts: { offset: 4 }, shown: [4, 5] },
    { name: 'line cap', opts: { maxLines: 3 }, shown: [1, 3], notice: '[Showing lines 1-3 of 5. Use offset=4 to continue.]' },
    { name: 'line cap equal to the file', opts: { maxLines: 5 }, shown: [1, 5] },
    { name: 'limit above the line cap is capped', opts: { maxLines: 3, limit: 4 }, shown: [1, 3], notice: '[Showing lines 1-3 of 5. Use offset=4 to continue.]' },
    {
      name: 'character budget',
      opts: { maxChars: numberLine(1, 'l1').length * 2 + 2 },
      shown: [1, 2],
      notice: `[Showing lines 1-2 of 5 (${numberLine(1, 'l1').length * 2 + 2}-character page limit). Use offset=3 to continue.]`,
    },
    { name: 'budget always shows one line', lines: ['x'.repeat(500), 'y'], opts: { maxChars: 10 }, shown: [1, 1], notice: '[Showing lines 1-1 of 2 (10-character page limit). Use offset=2 to continue.]' },
  ];
  it.each(cases)('$name', ({ lines = five, opts, shown, notice }) => {
    const page = paginate(lines, { ...base, ...opts });
    expect([page.firstLine, page.lastLine]).toEqual(shown);
    expect(page.body.split('\n')).toHaveLength(shown[1] - shown[0] + 1);
    expect(page.body.split('\n')[0]).toBe(numberLine(shown[0], lines[shown[0] - 1]!));
    expect(page.notice).toBe(notice);
  });

  it('reports an offset past the end without lines', () => {
    const page = paginate(five, { ...base, offset: 6 });
    expect(page.body).toBe('');
    expect(page.lastLine).toBe(0);
    expect(page.notice).toBe('[offset=6 is past the end of the file (5 lines). Use offset from 1 to 5.]');
  });

  it('says an empty file is empty', () => {
    expect(paginate([], base).notice).toBe('[The file is empty.]');
  });

  it('cuts very long lines and says so', () => {
    const page = paginate(['a'.repeat(30), 'b'], { ...base, maxLineChars: 10 });
    expect(page.body).toContain(`${'a'.repeat(10)}… [line cut: 30 characters]`);
    expect(page.truncatedLines).toBe(1);
    expect(page.notice).toMatch(/1 line\(s\) longer than 10 characters were cut/);
  });

  it('numbers lines cat -n style', () => {
    expect(numberLine(7, 'x')).toBe('     7\tx');
  });
});
