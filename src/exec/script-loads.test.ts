import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { argumentPathCandidates } from './content-binding.js';
import { executableLanguage, fromClauseSpecifiers, scriptLoads, withoutBlockComments, type Language } from './script-loads.js';

const root = mkdtempSync(path.join(tmpdir(), 'warden-loads-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Writes the files into a fresh directory and scans `entry` there. */
function loads(files: Record<string, string>, entry: string, language: Language | null) {
  const dir = mkdtempSync(path.join(root, 'case-'));
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), text);
  }
  const out = scriptLoads(path.join(dir, entry), language, null);
  return out.ok ? { ok: true, files: out.files.map((f) => path.relative(dir, f)).sort() } : out;
}

describe('what a program loads from beside it', () => {
  it.each<[string, Record<string, string>, string, Language, string[]]>([
    ['python: a module beside it, and what that imports', { 'm.py': 'import a\nfrom b import x\n', 'a.py': 'import c\n', 'b.py': '', 'c.py': '' }, 'm.py', 'python', ['a.py', 'b.py', 'c.py']],
    ['python: system modules are not bound', { 'm.py': 'import os, sys\nfrom json import loads\n' }, 'm.py', 'python', []],
    ['python: a commented-out import neither binds nor refuses', { 'm.py': '# import importlib\nimport a  # subprocess\n', 'a.py': '' }, 'm.py', 'python', ['a.py']],
    ['python: a module shadowing the standard library beside it is bound', { 'm.py': 'import json\n', 'json.py': '' }, 'm.py', 'python', ['json.py']],
    ['node: relative requires with and without extension, and package.json', { 'm.js': "require('./a')\nimport b from './b.mjs'\n", 'a.js': "require('./c.json')\n", 'b.mjs': '', 'c.json': '{}', 'package.json': '{}' }, 'm.js', 'node', ['a.js', 'b.mjs', 'c.json', 'package.json']],
    ['node: builtins are not bound', { 'm.js': "require('fs'); require('node:path'); import('node:url')\n" }, 'm.js', 'node', []],
    ['shell: plain commands', { 'x.sh': 'set -e\necho hi | tr a b\n[ -f x ] && ls\n' }, 'x.sh', 'shell', []],
  ])('%s', (_name, files, entry, language, expected) => {
    expect(loads(files, entry, language)).toEqual({ ok: true, files: expected });
  });

  it.each<[string, Record<string, string>, string, Language | null, RegExp]>([
    ['python: importlib in an imported module', { 'm.py': 'import a\n', 'a.py': 'import importlib\n' }, 'm.py', 'python', /a\.py may load/],
    ['node: a bare package', { 'm.js': "require('left-pad')\n" }, 'm.js', 'node', /node_modules/],
    ['node: a relative require in a required module that computes its name', { 'm.js': "require('./a')\n", 'a.js': 'require(x)\n' }, 'm.js', 'node', /a\.js requires or imports a module by a computed name/],
    ['shell: `command ./x`', { 'x.sh': 'command ./other\n' }, 'x.sh', 'shell', /by path/],
    ['shell: `nohup sh other.sh &`', { 'x.sh': 'nohup sh other.sh &\n' }, 'x.sh', 'shell', /sh other\.sh/],
    ['a language the scan does not follow', { 'x.ts': '' }, 'x.ts', null, /does not follow/],
  ])('%s: not bindable', (_name, files, entry, language, why) => {
    const out = loads(files, entry, language);
    expect(out.ok).toBe(false);
    expect(!out.ok && 'why' in out && out.why).toMatch(why);
  });

  it.each<[string, Language | null]>([
    ['#!/bin/sh\n', 'shell'],
    ['#!/usr/bin/env python3\n', 'python'],
    ['#!/usr/bin/env -S node --no-warnings\n', 'node'],
    ['echo no shebang\n', 'shell'],
    ['\x7fELF\x02\x01', 'binary'],
    ['#!/usr/bin/env ruby\n', 'ruby'],
    ['#!/opt/weird/interp\n', null],
  ])('an executable starting %j runs as %s', (head, language) => {
    expect(executableLanguage(Buffer.from(head, 'latin1'))).toBe(language);
  });
});

describe('where a path may start inside an argument word', () => {
  it.each<[string, string[]]>([
    ['./x.sh', ['./x.sh']],
    ['--config=./x.sh', ['--config=./x.sh', './x.sh']],
    ['-c./x', ['-c./x', './x']],
    ['@./args.txt', ['@./args.txt', './args.txt']],
    ['--opts=@a.txt', ['--opts=@a.txt', '@a.txt', 'a.txt']],
    ['FOO=./x.sh', ['FOO=./x.sh', './x.sh']],
  ])('%s → %j', (word, values) => {
    expect(argumentPathCandidates(word).map((c) => c.value)).toEqual(values);
  });
});

// The scans read scripts the agent writes (up to the scan's 4 MiB): each must finish in linear
// time on the inputs that made the patterns they replace rescan from every start.
describe('the scans are linear on hostile scripts, and find what the patterns found', () => {
  const SPEC_FROM = /\b(?:import|export)\b[^'"`;]*?\bfrom\s*(['"])([^'"\n]*)\1/g;
  const SPEC_BLOCK = /\/\*[\s\S]*?\*\//g;

  it('fromClauseSpecifiers agrees with the pattern on 20,000 random texts', () => {
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const parts = ['import', 'export', ' ', 'from', "'", '"', '`', ';', '\n', 'x', '{a}', 'afrom', '*'];
    for (let n = 0; n < 20_000; n++) {
      let text = '';
      for (let i = Math.floor(next() * 14); i > 0; i--) text += parts[Math.floor(next() * parts.length)];
      expect(fromClauseSpecifiers(text), JSON.stringify(text)).toEqual([...text.matchAll(SPEC_FROM)].map((m) => m[2]));
    }
  });

  it('withoutBlockComments agrees with the pattern on 20,000 random texts', () => {
    let seed = 11;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const parts = ['/*', '*/', '/', '*', 'a', '\n', '/**/'];
    for (let n = 0; n < 20_000; n++) {
      let text = '';
      for (let i = Math.floor(next() * 12); i > 0; i--) text += parts[Math.floor(next() * parts.length)];
      expect(withoutBlockComments(text), JSON.stringify(text)).toBe(text.replace(SPEC_BLOCK, ' '));
    }
  });

  it.each([
    ['node: keywords with no from', 'node', 'import '.repeat(300_000)],
    ['node: unclosed block comments', 'node', '/* '.repeat(600_000)],
    ['node: side-effect imports after blank lines', 'node', '\n'.repeat(1_000_000) + 'x'],
    ['awk: prints with no pipe into a command', 'awk', 'print '.repeat(300_000)],
    ['perl: blank lines before a use', 'perl', '\n'.repeat(1_000_000) + 'x'],
    ['shell: a case pattern of bars', 'shell', `${'a|'.repeat(500_000)}\n`],
  ] as const)('%s', (_what, language, text) => {
    const result = loads({ 'big.x': text }, 'big.x', language);
    expect(result).toBeDefined();
  });
});
