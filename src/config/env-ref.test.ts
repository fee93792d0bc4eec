import { describe, expect, it } from 'vitest';
import { envReferenceNames, replaceEnvReferences } from './env-ref.js';

// The pattern the scan replaces; kept here as the specification it must match exactly.
const SPEC = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;
const bySpec = (text: string) => text.replace(SPEC, (_m, name: string, fallback: string | undefined) => `<${name}|${fallback ?? '∅'}>`);
const byScan = (text: string) => replaceEnvReferences(text, (name, fallback) => `<${name}|${fallback ?? '∅'}>`);

describe('replaceEnvReferences matches the ${NAME} / ${NAME:-default} pattern exactly', () => {
  it.each([
    ['plain', 'a ${HOME} b', 'a <HOME|∅> b'],
    ['default', '${A:-x y}', '<A|x y>'],
    ['empty default', '${A:-}', '<A|>'],
    ['two', '${A}${B:-c}', '<A|∅><B|c>'],
    ['not a name', '${1A} ${} ${-x}', '${1A} ${} ${-x}'],
    ['unclosed', '${A', '${A'],
    ['default unclosed', '${A:-x', '${A:-x'],
    ['other operator', '${A:=x} ${A-x}', '${A:=x} ${A-x}'],
    ['nested opening', '${A:-${B}}', '<A|${B>}'],
    ['dollar dollar', '$${A}', '$<A|∅>'],
    ['default with braces after', '${A:-x}y}', '<A|x>y}'],
    ['no reference at all', 'plain $ { } text', 'plain $ { } text'],
  ])('%s', (_what, text, expected) => {
    expect(byScan(text)).toBe(expected);
    expect(bySpec(text)).toBe(expected);
  });

  it('agrees with the pattern on 20,000 random strings over its alphabet', () => {
    let seed = 42;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const alphabet = ['$', '{', '}', ':', '-', 'A', 'b', '_', '1', ' ', '${', ':-'];
    for (let n = 0; n < 20_000; n++) {
      let text = '';
      const length = Math.floor(next() * 16);
      for (let i = 0; i < length; i++) text += alphabet[Math.floor(next() * alphabet.length)];
      expect(byScan(text), JSON.stringify(text)).toBe(bySpec(text));
    }
  });

  // The pattern rescans to the end from every `${NAME:-` no `}` follows: 200,000 characters of
  // them took seconds on V8, and a config.patch from the model reaches this function.
  it.each([
    ['unclosed defaults', '${a:-'.repeat(40_000)],
    ['unclosed names', '${a'.repeat(60_000)],
    ['openings only', '${'.repeat(100_000)],
    ['defaults closed once at the end', `${'${a:-'.repeat(40_000)}}`],
  ])('hostile input in linear time: %s', (_what, text) => {
    const out = byScan(text);
    expect(out.length).toBeGreaterThan(0);
    expect(envReferenceNames(text).length).toBeLessThanOrEqual(1);
  });

  it('returns the same string when nothing is referenced', () => {
    const text = 'no references here';
    expect(replaceEnvReferences(text, () => 'x')).toBe(text);
    expect(envReferenceNames('${A} and ${B:-c} and ${A}')).toEqual(['A', 'B', 'A']);
  });
});
