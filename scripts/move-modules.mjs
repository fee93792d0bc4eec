#!/usr/bin/env node
// Moves TypeScript modules with `git mv` and rewrites every relative import that names them, so
// a file changes place without a copy left behind and without hand-editing its importers.
//
// Usage: node scripts/move-modules.mjs <moves file>
//   Each line of the moves file is `old/path.ts -> new/path.ts` (or a folder: `old/dir -> new/dir`);
//   blank lines and lines starting with `#` are skipped. A module's `.test.ts` twin moves with it.
//   A move whose source is already gone is taken as done: its importers are still rewritten, so
//   the same file can be replayed over a branch that added imports of the old paths.
//
// Rewritten: `from '…'`, `import('…')`, `import '…'`, `vi.mock('…')` and `vi.importActual('…')`
// specifiers that start with `./` or `../`, in src/, adapters/, plugins/, test/, bench/ and
// scripts/. Specifiers keep their style (`.js` for a `.ts` module).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SCAN = ['src', 'adapters', 'plugins', 'test', 'bench', 'scripts'];
const SOURCE = /\.(ts|mts|cts|mjs|cjs|js)$/;

const walk = (dir) =>
  !existsSync(dir)
    ? []
    : readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
        const full = path.join(dir, e.name);
        if (e.name === 'node_modules' || e.name === 'dist') return [];
        return e.isDirectory() ? walk(full) : [full];
      });

/** old absolute file → new absolute file, for every file a line of the moves file covers. */
function expandMoves(text) {
  const map = new Map();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const [from, to] = line.split('->').map((s) => s.trim());
    if (!from || !to) throw new Error(`moves: cannot read line: ${line}`);
    const a = path.join(root, from);
    const b = path.join(root, to);
    if (existsSync(a) && statSync(a).isDirectory()) {
      for (const f of walk(a)) map.set(f, path.join(b, path.relative(a, f)));
    } else if (existsSync(b) && statSync(b).isDirectory() && !from.match(SOURCE)) {
      for (const f of walk(b)) map.set(path.join(a, path.relative(b, f)), f);
    } else {
      map.set(a, b);
      const twin = (p) => p.replace(/\.ts$/, '.test.ts');
      if (from.endsWith('.ts') && !from.endsWith('.test.ts')) map.set(twin(a), twin(b));
    }
  }
  return map;
}

/** The file a relative specifier names, seen from `dir`, or undefined. */
function resolveSpec(dir, spec, exists) {
  const base = path.resolve(dir, spec);
  const candidates = [base, base.replace(/\.js$/, '.ts'), base.replace(/\.mjs$/, '.mts'), `${base}.ts`, path.join(base, 'index.ts')];
  return candidates.find(exists);
}

function specFor(fromFile, target, oldSpec) {
  let rel = path.relative(path.dirname(fromFile), target).split(path.sep).join('/');
  if (!rel.startsWith('.')) rel = `./${rel}`;
  if (/\.ts$/.test(target) && !/\.ts$/.test(oldSpec)) rel = rel.replace(/\.ts$/, '.js');
  return rel;
}

const SPEC = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\bvi\.mock\(\s*|\bvi\.importActual(?:<[^>]*>)?\(\s*)(['"])(\.{1,2}\/[^'"\n]+)\2/g;

function main() {
  const file = process.argv[2];
  if (!file) throw new Error('usage: node scripts/move-modules.mjs <moves file>');
  const moves = expandMoves(readFileSync(file, 'utf8'));
  const pending = [...moves].filter(([a]) => existsSync(a));
  const movedNow = new Map(pending.map(([a, b]) => [b, a]));

  // Before: which files exist (old names), to resolve specifiers as they were written.
  const before = new Set(SCAN.flatMap((d) => walk(path.join(root, d))));
  for (const [a, b] of pending) {
    execFileSync('mkdir', ['-p', path.dirname(b)]);
    execFileSync('git', ['mv', a, b], { cwd: root });
  }
  const after = new Set(SCAN.flatMap((d) => walk(path.join(root, d))));
  const forward = (p) => moves.get(p) ?? p;

  let changed = 0;
  for (const f of after) {
    if (!SOURCE.test(f)) continue;
    const text = readFileSync(f, 'utf8');
    // A file moved now wrote its specifiers from its old folder; any other file from where it is.
    const wasAt = movedNow.get(f) ?? f;
    const next = text.replace(SPEC, (all, lead, quote, spec) => {
      const target = resolveSpec(path.dirname(wasAt), spec, (p) => before.has(p) || after.has(p) || moves.has(p));
      if (!target) return all;
      const now = forward(target);
      if (!after.has(now)) return all;
      const spec2 = specFor(f, now, spec);
      return spec2 === spec ? all : `${lead}${quote}${spec2}${quote}`;
    });
    if (next !== text) {
      writeFileSync(f, next);
      changed++;
    }
  }
  process.stderr.write(`moved ${pending.length} files, rewrote imports in ${changed} files\n`);
}

main();
