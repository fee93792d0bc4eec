// The forgotten-promise check over its fixture folder: every line marked `// expect: <rule>` is
// reported with that rule, and every line marked `// ok:` is not. One Program serves all cases.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { findForgottenPromises, programFromConfig } from '../../scripts/check-promises.mjs';

const FIXTURES = fileURLToPath(new URL('../fixtures/forgotten-promises/', import.meta.url));

interface Case {
  file: string;
  line: number;
  why: string;
  rule?: string;
}

const cases: Case[] = readdirSync(FIXTURES, { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.ts'))
  .flatMap((file) =>
    readFileSync(path.join(FIXTURES, file), 'utf8')
      .split('\n')
      .flatMap((text, i): Case[] => {
        const expected = /\/\/ expect: (\w+)\s+(.*)$/.exec(text);
        if (expected) return [{ file, line: i + 1, rule: expected[1]!, why: expected[2]! }];
        const ok = /\/\/ ok: (.*)$/.exec(text);
        return ok ? [{ file, line: i + 1, why: ok[1]! }] : [];
      }),
  );

const findings = findForgottenPromises(programFromConfig(path.join(FIXTURES, 'tsconfig.json'))).map((f) => ({ ...f, file: path.relative(FIXTURES, f.file) }));
const at = (c: Case) => findings.filter((f) => f.file === c.file && f.line === c.line);

describe('the forgotten-promise check', () => {
  it('has cases of every kind in its fixtures', () => {
    expect(cases.filter((c) => c.rule === 'floating').length).toBeGreaterThanOrEqual(10);
    expect(cases.filter((c) => c.rule === 'condition').length).toBeGreaterThanOrEqual(10);
    expect(cases.filter((c) => c.rule === 'expect').length).toBeGreaterThanOrEqual(5);
    expect(cases.filter((c) => c.rule === 'void').length).toBeGreaterThanOrEqual(10);
    expect(cases.filter((c) => c.rule === undefined).length).toBeGreaterThanOrEqual(10);
  });

  it.each(cases.filter((c) => c.rule).map((c) => [`${c.file}:${c.line}`, c] as const))('reports %s: %s', (_where, c) => {
    expect(at(c).map((f) => f.rule)).toEqual([c.rule]);
    const message = { floating: /dropped: await it/, condition: /always true: await it/, expect: /handed to expect: assert `await`/, void: /ends the process: add `\.catch\(handler\)`/ }[
      c.rule as 'floating' | 'condition' | 'expect' | 'void'
    ];
    expect(at(c)[0]!.message).toMatch(message);
  });

  it.each(cases.filter((c) => !c.rule).map((c) => [`${c.file}:${c.line}`, c] as const))('accepts %s', (_where, c) => {
    expect(at(c)).toEqual([]);
  });

  it('reports nothing on an unmarked line', () => {
    const marked = new Set(cases.map((c) => `${c.file}:${c.line}`));
    expect(findings.filter((f) => !marked.has(`${f.file}:${f.line}`))).toEqual([]);
  });
});
