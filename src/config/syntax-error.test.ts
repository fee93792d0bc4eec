import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from './load.js';

function problemsOf(name: string, text: string): string[] {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-syntax-'));
  writeFileSync(path.join(dir, name), text);
  const r = loadConfig({ cwd: dir, file: name, env: {} });
  if (r.ok) throw new Error('expected a syntax error');
  return r.error.problems.map((p) => `${p.path || '(root)'}: ${p.message}`);
}

describe('a malformed config file, shown where the fix goes', () => {
  it.each([
    [
      'YAML: a stray indent on line 5 (yaml reports line 4, twice)',
      'warden.config.yaml',
      'models:\n  default: anthropic/claude-sonnet-4-5\ntools:\n  profile: coding\n    deny: [browser]\n',
      [
        '(root): malformed YAML at line 5, column 5: this line is indented under "profile: coding", which already has a value; indent it like the keys beside that one\n' +
          '    4 |   profile: coding\n' +
          '    5 |     deny: [browser]\n' +
          '      |     ^',
      ],
    ],
    [
      'YAML: the stray line after a comment',
      'warden.config.yaml',
      'tools:\n  profile: coding\n  # exec below\n      exec: { security: deny }\n',
      [
        '(root): malformed YAML at line 4, column 7: this line is indented under "profile: coding", which already has a value; indent it like the keys beside that one\n' +
          '    3 |   # exec below\n' +
          '    4 |       exec: { security: deny }\n' +
          '      |       ^',
      ],
    ],
    [
      'YAML: an unclosed flow sequence',
      'warden.config.yaml',
      'tools:\n  profile: [coding\n',
      undefined,
    ],
    [
      'YAML: a key written twice',
      'warden.config.yaml',
      'tools:\n  deny: [a]\n  deny: [b]\n',
      ['(root): malformed YAML at line 3, column 3: Map keys must be unique\n    2 |   deny: [a]\n    3 |   deny: [b]\n      |   ^'],
    ],
    [
      'JSON5: an unquoted string value',
      'warden.json5',
      '{\n  models: {\n    default: "a/b",\n  },\n  tools: { profile: coding }\n}\n',
      ["(root): malformed JSON5 at line 5, column 21: invalid character 'c'\n    4 |   },\n    5 |   tools: { profile: coding }\n      |                     ^"],
    ],
    [
      'JSON5: the first line',
      'warden.json',
      '{ tools: [ }\n',
      ["(root): malformed JSON5 at line 1, column 12: invalid character '}'\n    1 | { tools: [ }\n      |            ^"],
    ],
  ] as const)('%s', (_name, file, text, want) => {
    const problems = problemsOf(file, text);
    if (want) expect(problems).toEqual(want);
    // Never the parser's dangling colon, always a line and a caret.
    for (const p of problems) {
      expect(p.split('\n')[0]).not.toMatch(/:$/);
      expect(p).toMatch(/^\(root\): malformed (YAML|JSON5) at line \d+, column \d+: .+\n(    .+\n)+ +\| +\^$/);
    }
  });
});
