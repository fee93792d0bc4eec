import { describe, expect, it } from 'vitest';
import { escapeGlob, globMatch } from './glob.js';

describe('grant globs', () => {
  it.each([
    ['read', 'read', true],
    ['read', 'reader', false],
    ['web_*', 'web_fetch', true],
    ['*', '', true],
    ['git status*', 'git status -s', true],
    ['git status*', 'git  status', false],
    ['{"path":"*"}', '{"path":"a/b.txt"}', true],
    ['a.c', 'abc', false],
    ['a?c', 'abc', false],
    ['[ab]', 'a', false],
    ['\\*', '*', true],
    ['\\*', 'x', false],
    ['line*', 'line1\nline2', true],
  ])('%j against %j → %s', (pattern, text, expected) => {
    expect(globMatch(pattern, text)).toBe(expected);
  });

  it.each(['plain', 'with * star', 'back\\slash', 'both \\* here', '{"q":"*"}'])('escapeGlob(%j) matches only itself', (text) => {
    expect(globMatch(escapeGlob(text), text)).toBe(true);
    expect(globMatch(escapeGlob(text), `${text}x`)).toBe(false);
    if (text.includes('*')) expect(globMatch(escapeGlob(text), text.replace('*', 'ANYTHING'))).toBe(false);
  });
});
