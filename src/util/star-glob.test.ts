import { describe, expect, it } from 'vitest';
import { starPartsMatch } from './star-glob.js';

/** The same glob as a regex, for comparison on short texts. */
function viaRegExp(parts: readonly string[], text: string): boolean {
  return new RegExp(`^${parts.map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[\\s\\S]*')}$`).test(text);
}

describe('starPartsMatch', () => {
  it.each([
    [['git'], 'git', true],
    [['git'], 'gitx', false],
    [['git ', ''], 'git status', true],
    [['', ' --force'], 'push --force', true],
    [['a', 'b', 'c'], 'abc', true],
    [['a', 'b', 'c'], 'ac', false],
    [['ab', 'ba'], 'aba', false],
    [['ab', 'ba'], 'abba', true],
    [['a', 'a', 'a'], 'aa', false],
    [['a', 'a', 'a'], 'aaa', true],
    [['', ''], '', true],
    [['x', '', 'y'], 'x\ny', true],
  ])('%j on %j is %s', (parts, text, expected) => {
    expect(starPartsMatch(parts, text)).toBe(expected);
    expect(viaRegExp(parts, text)).toBe(expected);
  });

  it('agrees with the regex reading on every short text over a small alphabet', () => {
    const globs = [['a', 'b'], ['', 'ab', ''], ['a', 'a', ''], ['b', 'ab', 'a'], ['', 'a', 'b', ''], ['aa', 'a', 'aa']];
    const texts = [''];
    for (let n = 0; n < 7; n++) for (const t of texts.splice(0)) texts.push(t, `${t}a`, `${t}b`);
    for (const parts of globs) for (const text of texts) expect([parts, text, starPartsMatch(parts, text)]).toEqual([parts, text, viaRegExp(parts, text)]);
  });

  it('decides a hostile text in one pass (a backtracking regex would take polynomial time)', () => {
    const parts = ['', 'a', 'a', 'a', 'a', 'a', 'b'];
    expect(starPartsMatch(parts, 'a'.repeat(100_000))).toBe(false);
  });
});
