import { describe, expect, it } from 'vitest';
import { compileLinearRegex, LINEAR_PROGRAM_MAX, LINEAR_WORK_MAX, linearRegexProblem, runsWithoutDfa, type LinearFlags } from './linear-regex.js';

function linear(source: string, flags: LinearFlags = '') {
  const compiled = compileLinearRegex(source, flags);
  if (!compiled.ok) throw new Error(`refused ${source}: ${compiled.error}`);
  return compiled.regex;
}

describe('compileLinearRegex: the meaning is JavaScript’s', () => {
  // Each row is decided by V8's own engine too; the linear engine must agree on every text.
  const rows: Array<[string, LinearFlags, string[]]> = [
    ['a.b', '', ['a\nb', 'axb', 'a\u2028b', 'a\rb', 'a\u2029b', 'a😀b']],
    ['a.b', 's', ['a\nb', 'a\u2028b']],
    ['^.$', '', ['😀', '\ud800', 'a', '']],
    ['^..$', '', ['😀', 'ab']],
    ['^.$', 'u', ['😀', '\ud800', 'ab']],
    ['^[^a]$', '', ['\udc00', '😀', 'b']],
    ['^[^a]$', 'u', ['😀', '\udc00']],
    ['\\s', '', ['\v', '\u00a0', '\ufeff', '\u180e', '\u200b', 'x', '\u3000']],
    ['^\\S+$', '', ['\u00a0', 'ab', '\u180e']],
    ['[\\S]', '', [' ', 'a']],
    ['^\\w+$', 'i', ['\u017f', '\u212a', 'aZ_9']],
    ['^SSH', 'i', ['ssh', '\u017fsh', 'SSH', 'sSh']],
    ['^k$', 'i', ['\u212a', 'K', 'k']],
    ['^[a-z]+$', 'i', ['ABC', '\u0130', '\u0131', '\u212a']],
    ['^[^a-z]$', 'i', ['A', '1']],
    ['^\u00df$', 'i', ['\u1e9e', 'SS', '\u00df']],
    ['^\u0131$', 'i', ['I', 'i', '\u0131']],
    ['[\\W]', 'i', ['k', 's', '\u017f', '!']],
    ['\\bfoo\\b', '', ['a foo b', 'afoo', 'éfooé', 'foo']],
    ['\\Bfoo', '', ['afoo', ' foo']],
    ['\\1', '', ['\u0001', '1']],
    ['[^]', '', ['x', '']],
    ['[]', '', ['x', '']],
    ['a{2,3}', '', ['a', 'aa']],
    ['a{2,}?b', '', ['aab', 'ab']],
    ['(?<year>\\d{4})-\\d{2}', '', ['2026-12', '26-12']],
    ['^(?:git|hg) (?:status|log)$', '', ['git status', 'hg log', 'git push']],
    ['\\p{L}+', 'u', ['é', '1']],
    ['^\\p{L}$', '', ['p{L}', 'é']],
    ['^\\p{Script=Greek}$', 'u', ['α', 'a']],
    ['^\\P{Lu}$', 'u', ['a', 'A']],
    ['^[\\p{N}x]$', 'u', ['5', 'x', 'y']],
    ['^\\u{1F600}$', 'u', ['😀', '\ud83d']],
    ['^\\ud83d\\ude00$', '', ['😀']],
    ['^[\\ud800-\\udbff]', '', ['😀', 'a']],
    ['x{', '', ['x{', 'x']],
    ['a|', '', ['b', '']],
    ['', '', ['x', '']],
    ['\\cJ', '', ['\n', 'cJ']],
    ['[\\b]', '', ['\b', 'b']],
    ['\\0', '', ['\0']],
    ['\\x41\\u0042', '', ['AB']],
    ['^\\$\\^\\.\\*\\+\\?\\(\\)\\[\\]\\{\\}\\|\\/\\\\$', '', ['$^.*+?()[]{}|/\\']],
    ['^[\\]-]+$', '', ['-]', 'a']],
    ['\x00', '', ['a\x00b', 'ab']],
    ['^git (-+)+x$', '', ['git --x', 'git --']],
  ];
  for (const [source, flags, texts] of rows) {
    it(`/${source}/${flags}`, () => {
      const re = linear(source, flags);
      for (const text of texts) expect([text, re.test(text)]).toEqual([text, new RegExp(source, flags).test(text)]);
    });
  }
});

// A generated corpus: random patterns over the constructs the translation handles, random texts
// over an alphabet of the characters where engines disagree (case, white space, surrogates).
describe('compileLinearRegex: generated patterns agree with V8', () => {
  const ALPHABET = ['a', 'b', 'A', 'B', 's', 'S', '\u017f', 'k', 'K', '\u212a', '0', '9', '_', ' ', '\t', '\n', '\r', '\u2028', '\u00a0', '\ufeff', '-', '.', '\ud83d', '\ude00', 'é', 'É', '\u0130', '\u0131', 'ß', '\u1e9e'];
  const LITERALS = ['a', 'b', 'A', 's', 'k', 'K', '0', '_', ' ', '-', 'é', '\\.', '\\-', '\\n', '\\t', '\\u0130', '\\u212a', '\\u017f', '\\ud83d', 'ß'];
  const ESCAPES = ['.', '\\d', '\\D', '\\w', '\\W', '\\s', '\\S'];
  const CLASS_ITEMS = ['a', 'b', 'K', 'a-z', 'A-Z', '0-9', '\\u00c0-\\u017f', '\\d', '\\W', '\\s', '\\S', '_', '\\-', '\\ud800-\\udbff', '\\u2028'];

  // mulberry32: a seeded generator, so a failure names a pattern that reproduces.
  let seed = 20261201;
  const random = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = <T,>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

  function atom(depth: number, unicode: boolean): string {
    const r = random();
    if (r < 0.3) return literal(unicode);
    if (r < 0.45) return pick(ESCAPES);
    if (r < 0.6) {
      const n = 1 + Math.floor(random() * 3);
      const items = Array.from({ length: n }, () => pick(CLASS_ITEMS).replace(/\\ud800-\\udbff/, unicode ? '\\u{1F600}-\\u{1F64F}' : '\\ud800-\\udbff'));
      return `[${random() < 0.3 ? '^' : ''}${items.join('')}]`;
    }
    if (r < 0.68) return pick(['^', '$', '\\b', '\\B']);
    if (r < 0.72 && unicode) return pick(['\\p{L}', '\\P{Ll}', '\\u{1F600}', '[\\p{Lu}a]']);
    if (depth < 2) {
      const inner = sequence(depth + 1, unicode);
      const alt = random() < 0.4 ? `|${sequence(depth + 1, unicode)}` : '';
      return pick(['(?:', '(', '(?<g' + Math.floor(random() * 1e6) + '>']) + inner + alt + ')';
    }
    return literal(unicode);
  }
  // A lone surrogate is refused with `u` (its own table row); the corpus leaves it out there.
  const literal = (unicode: boolean) => (unicode ? pick(LITERALS.filter((l) => l !== '\\ud83d')) : pick(LITERALS));
  function quantified(depth: number, unicode: boolean): string {
    const a = atom(depth, unicode);
    if (/^(?:\^|\$|\\b|\\B)$/.test(a) || random() < 0.55) return a;
    return a + pick(['*', '+', '?', '{0,2}', '{1,}', '{2}', '*?', '+?', '??']);
  }
  function sequence(depth: number, unicode: boolean): string {
    const n = 1 + Math.floor(random() * 4);
    return Array.from({ length: n }, () => quantified(depth, unicode)).join('');
  }
  const text = () => Array.from({ length: Math.floor(random() * 7) }, () => pick(ALPHABET)).join('');

  for (const flags of ['', 'i', 's', 'u', 'is', 'us'] as const) {
    it(`flags "${flags}": 600 patterns × 25 texts`, () => {
      let compared = 0;
      const disagreements: string[] = [];
      for (let p = 0; p < 600; p++) {
        const source = sequence(0, flags.includes('u'));
        let v8: RegExp;
        try {
          v8 = new RegExp(source, flags);
        } catch {
          continue;
        }
        const compiled = compileLinearRegex(source, flags);
        if (!compiled.ok) {
          disagreements.push(`/${source}/${flags} refused: ${compiled.error}`);
          continue;
        }
        for (let t = 0; t < 25; t++) {
          const s = random() < 0.2 ? source.replace(/\\./g, '').replace(/[^\w ]/g, '').slice(0, 10) : text(); // short: V8's side backtracks
          const got = compiled.regex.test(s);
          if (got !== v8.test(s)) disagreements.push(`/${source}/${flags} on ${JSON.stringify(s)}: linear ${String(got)}, V8 ${String(!got)}`);
          compared++;
        }
      }
      expect(disagreements.slice(0, 10)).toEqual([]);
      expect(compared).toBeGreaterThan(10_000);
    });
  }
});

describe('compileLinearRegex: what it refuses, and why', () => {
  const rows: Array<[string, LinearFlags, RegExp]> = [
    ['(?=a)', '', /lookahead/],
    ['(?!a)b', '', /negative lookahead/],
    ['(?<=a)b', '', /lookbehind/],
    ['(?<!a)b', '', /negative lookbehind/],
    ['(a)\\1', '', /backreference/],
    ['(?<n>a)\\k<n>', '', /backreference/],
    ['a{1001}', '', /too complex/],
    ['(?:a{100}){100}', '', /too complex/],
    ['(?:[a-z0-9]{1,64}\\.){1,10}', '', /too large|too complex/],
    ['(', '', /not a regular expression/],
    ['[z-a]', '', /not a regular expression/],
    ['\\p{Emoji}', 'u', /property/],
    ['\\p{Script_Extensions=Latin}', 'u', /property/],
    ['\\ud800', 'u', /lone surrogate/],
  ];
  for (const [source, flags, why] of rows) {
    it(`/${source}/${flags}`, () => {
      const problem = linearRegexProblem(source, flags);
      expect(problem).toMatch(why);
    });
  }
});

describe('compileLinearRegex: bounded work', () => {
  it('matches text up to the work budget over the program size, and no longer', () => {
    const re = linear('^git push.*--force');
    expect(re.maxInput).toBeGreaterThan(1_000);
    expect(re.maxInput).toBeLessThanOrEqual(LINEAR_WORK_MAX);
    expect(re.test(`git push ${'x'.repeat(re.maxInput - 18)} --force`)).toBe(true);
    expect(re.test(`git push ${'x'.repeat(re.maxInput)} --force`)).toBe('too-long');
  });

  it('gives typical argPatterns 4,500–14,000 characters of arguments (the README’s figures)', () => {
    for (const source of ['^push (origin|upstream) [a-z0-9/_-]+$', '^status .*--force']) {
      expect([source, linear(source).maxInput >= 4_500 && linear(source).maxInput <= 14_000]).toEqual([source, true]);
    }
  });

  it('refuses a program larger than the limit at compile time', () => {
    expect(linearRegexProblem('(?:abcdefghij|klmnopqrst){0,120}')).toMatch(new RegExp(`too large.*${LINEAR_PROGRAM_MAX.toLocaleString('en-US')}|too complex`));
  });

  it('decides the catastrophic patterns of a backtracking engine on the longest text they take', () => {
    // Each would run for minutes (or forever) on V8's engine with this text.
    const rows: Array<[string, (n: number) => string]> = [
      ['^git (-+)+x$', (n) => `git ${'-'.repeat(n - 4)}`],
      ['(a|a)*b', (n) => 'a'.repeat(n)],
      ['^(\\w+\\s?)*$', (n) => `${'aaaa '.repeat(n / 5 - 1)}!`],
      ['(x+x+)+y', (n) => 'x'.repeat(n)],
      ['^(a|aa)+$', (n) => `${'a'.repeat(n - 1)}!`],
    ];
    for (const [source, make] of rows) {
      const re = linear(source);
      expect([source, re.test(make(re.maxInput))]).toEqual([source, false]);
    }
  });

  it('runs without re2js’s DFA (its state building is the slow path for hostile text)', () => {
    expect(runsWithoutDfa(linear('a[ab]{20}c'))).toBe(true);
    expect(linear('a[ab]{20}c').test(`${'ab'.repeat(500)}a${'b'.repeat(20)}c`)).toBe(true);
  });

  it('caches compiled patterns by flags and source', () => {
    expect(compileLinearRegex('^a+$', '')).toBe(compileLinearRegex('^a+$', ''));
    expect(compileLinearRegex('^a+$', 'i')).not.toBe(compileLinearRegex('^a+$', ''));
  });
});
