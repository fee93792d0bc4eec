import { describe, expect, it } from 'vitest';
import { applyEdits, type EditSpec } from './edit-apply.js';

const file = 'const a = 1;\nconst b = 2;\nconst a2 = 1;\n';

describe('applyEdits', () => {
  const ok: Array<{ name: string; content?: string; edits: EditSpec[]; result: string; replacements: number; line: number }> = [
    { name: 'unique match', edits: [{ oldText: 'const b = 2;', newText: 'const b = 3;' }], result: 'const a = 1;\nconst b = 3;\nconst a2 = 1;\n', replacements: 1, line: 2 },
    { name: 'deletion', edits: [{ oldText: 'const b = 2;\n', newText: '' }], result: 'const a = 1;\nconst a2 = 1;\n', replacements: 1, line: 2 },
    { name: 'replaceAll', edits: [{ oldText: '= 1;', newText: '= 9;', replaceAll: true }], result: 'const a = 9;\nconst b = 2;\nconst a2 = 9;\n', replacements: 2, line: 1 },
    {
      name: 'several edits matched against the original',
      edits: [
        { oldText: 'const a = 1;', newText: 'const b = 2;' },
        { oldText: 'const b = 2;', newText: 'const c = 3;' },
      ],
      result: 'const b = 2;\nconst c = 3;\nconst a2 = 1;\n',
      replacements: 2,
      line: 1,
    },
    { name: 'CRLF kept', content: 'x\r\ny\r\n', edits: [{ oldText: 'x\ny', newText: 'x\nz' }], result: 'x\r\nz\r\n', replacements: 1, line: 1 },
    { name: 'BOM kept', content: '\uFEFFhello\n', edits: [{ oldText: 'hello', newText: 'bye' }], result: '\uFEFFbye\n', replacements: 1, line: 1 },
  ];
  it.each(ok)('$name', ({ content = file, edits, result, replacements, line }) => {
    expect(applyEdits(content, edits, 'f.ts')).toEqual({ ok: true, content: result, replacements, firstChangedLine: line });
  });

  const errors: Array<{ name: string; content?: string; edits: EditSpec[]; message: RegExp }> = [
    { name: 'no match', edits: [{ oldText: 'nothing here', newText: 'x' }], message: /^Could not find oldText in f\.ts\. The file may have changed/ },
    { name: 'many matches', edits: [{ oldText: '= 1;', newText: '= 9;' }], message: /^Found 2 occurrences of oldText in f\.ts \(lines 1, 3\); it must be unique\..*replaceAll: true/ },
    { name: 'empty oldText', edits: [{ oldText: '', newText: 'x' }], message: /oldText is empty/ },
    { name: 'no change', edits: [{ oldText: 'const b = 2;', newText: 'const b = 2;' }], message: /^No changes made to f\.ts/ },
    {
      name: 'overlap',
      edits: [
        { oldText: 'const a = 1;\nconst b', newText: 'x' },
        { oldText: 'const b = 2;', newText: 'y' },
      ],
      message: /edits\[0\] and edits\[1\] overlap in f\.ts \(line 2\)/,
    },
    { name: 'names the failing edit', edits: [{ oldText: 'const b', newText: 'x' }, { oldText: 'zzz', newText: 'y' }], message: /Could not find edits\[1\]\.oldText/ },
    { name: 'line numbers copied from read', edits: [{ oldText: '     2\tconst b = 2;', newText: 'x' }], message: /line-number prefixes/ },
    { name: 'whitespace-only difference', edits: [{ oldText: 'const  b =\t2;', newText: 'x' }], message: /differs only in whitespace, quotes or dashes starts at line 2/ },
    { name: 'smart quotes', content: "say('hi')\n", edits: [{ oldText: 'say(\u2018hi\u2019)', newText: 'x' }], message: /differs only in whitespace, quotes or dashes starts at line 1/ },
    { name: 'first line found, rest differs', edits: [{ oldText: 'const b = 2;\nconst zz', newText: 'x' }], message: /first line appears at line 2, but the lines after it differ/ },
  ];
  it.each(errors)('$name', ({ content = file, edits, message }) => {
    const r = applyEdits(content, edits, 'f.ts');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).toMatch(message);
  });
});

describe('applyEdits on a long near miss', () => {
  it('skips the whitespace-tolerant hint search and still points at the first line', () => {
    const content = 'a\n'.repeat(80_000);
    const r = applyEdits(content, [{ oldText: `${'a\n'.repeat(40_000)}b`, newText: 'x' }], 'big.txt');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).toMatch(/Its first line appears at line 1, 2, 3, 4, 5/);
  });
});
