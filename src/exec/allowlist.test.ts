import { describe, expect, it } from 'vitest';
import { GLOB_CACHE_MAX, argGlobMatches, argPatternMatches, exactArgPattern, globCache, pathGlobMatches } from './allowlist.js';

describe('argGlobMatches: `*` any run, `?` one character, anchored', () => {
  it.each<[string, string, boolean]>([
    ['status*', 'status', true],
    ['status*', 'status -s --porcelain', true],
    ['status*', 'xstatus', false],
    ['*status', 'git status', true],
    ['st?tus', 'status', true],
    ['st?tus', 'sttus', false],
    ['a*b*c', 'abc', true],
    ['a*b*c', 'a-b-b-c', true],
    ['a*b*c', 'a-b-b-c-', false],
    ['a*b*c', 'acb', false],
    ['*', '', true],
    ['', '', true],
    ['', 'x', false],
    ['**', 'anything at all', true],
    ['status*--force*--yes', 'status --force x --yes', true],
    ['status*--force*--yes', `status ${'--force '.repeat(5000)}`, false],
    // Regex characters are literal in a glob.
    ['a.c', 'abc', false],
    ['(x)|y', '(x)|y', true],
  ])('%j against %j → %s', (glob, text, matches) => {
    expect(argGlobMatches(glob, text)).toBe(matches);
  });
});

describe('argPatternMatches', () => {
  it('reads `^…` as a regex and a NUL pattern as an exact argv', () => {
    expect(argPatternMatches('^status( -s)?$', ['status', '-s'])).toBe(true);
    expect(argPatternMatches('^status( -s)?$', ['status', '-v'])).toBe(false);
    expect(argPatternMatches(exactArgPattern(['-rf', 'build/']), ['-rf', 'build/'])).toBe(true);
    expect(argPatternMatches(exactArgPattern(['-rf', 'build/']), ['-rf build/'])).toBe(false);
    expect(argPatternMatches(exactArgPattern([]), [])).toBe(true);
  });

  it.each<[string, string, string[], boolean]>([
    // Exact bindings tell every empty argument apart, the no-argument one included.
    ['exact', '-rf build/', ['-rf', 'build/', ''], false],
    ['exact', '-rf build/', ['-rf', '', 'build/'], false],
    ['exact', '-rf build/', ['', '-rf', 'build/'], false],
    ['exact', '', ['', ''], false],
    ['exact', '', [''], false],
    ['exact', "''", [''], true],
    ['exact', "''", [], false],
    ['exact', "''", ['', ''], false],
    ['exact', "'' ''", ['', ''], true],
    // A pattern over the space-joined text cannot see where an empty argument stands.
    ['glob', '-rf build/*', ['-rf', 'build/', ''], false],
    ['glob', '*', [''], false],
    ['glob', 'a  b', ['a', '', 'b'], false],
    ['regex', '^-rf build/ ?$', ['-rf', 'build/', ''], false],
    ['glob', '-rf build/*', ['-rf', 'build/x'], true],
  ])('%s %j against %j → %s', (kind, written, args, expected) => {
    // `exact` rows name the bound argv as sh words.
    const pattern = kind === 'exact' ? exactArgPattern(written === '' ? [] : written.split(' ').map((w) => (w === "''" ? '' : w))) : written;
    expect(argPatternMatches(pattern, args)).toBe(expected);
  });
});

describe('exact-argv bindings past any regex budget', () => {
  it('compare as text: a 40,000-character argv matches its own binding and nothing else', () => {
    const args = ['-cf', 'out.tar', 'x'.repeat(40_000), 'a.b*c'];
    const pattern = exactArgPattern(args);
    expect(argPatternMatches(pattern, args)).toBe(true);
    expect(argPatternMatches(pattern, [...args.slice(0, 3), 'aXb*c'])).toBe(false);
    expect(argPatternMatches(pattern, [...args, ''])).toBe(false);
  });
});

describe('compiled path globs stay bounded over a long-lived process', () => {
  it('allowlist globs added and expiring over months keep at most its bound compiled; an evicted glob matches as before', () => {
    expect(pathGlobMatches('/opt/tool-0/**/bin/*', '/opt/tool-0/a/b/bin/run')).toBe(true);
    for (let i = 1; i <= GLOB_CACHE_MAX + 200; i++) expect(pathGlobMatches(`/opt/tool-${i}/*`, `/opt/tool-${i}/run`)).toBe(true);
    expect(globCache.size).toBeLessThanOrEqual(GLOB_CACHE_MAX);
    expect(globCache.has('/opt/tool-0/**/bin/*')).toBe(false);
    expect(pathGlobMatches('/opt/tool-0/**/bin/*', '/opt/tool-0/a/b/bin/run')).toBe(true);
    expect(pathGlobMatches('/opt/tool-0/**/bin/*', '/opt/tool-0/a/b/sbin/run')).toBe(false);
  });
});
