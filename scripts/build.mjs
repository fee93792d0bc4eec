#!/usr/bin/env node
// Compiles what `warden` runs (src/ and adapters/, tests left out) to JavaScript under dist/,
// one output file per module, so the CLI starts without compiling TypeScript at run time. A
// single bundle would load every adapter and SDK at once; per-file output keeps the lazy
// imports lazy. Runs at `npm ci` (the `prepare` script), before `npm start` and before the
// tests; offline, and skipped when dist/ is newer than every source. The TypeScript sources
// stay the truth for development and tests.
//   node scripts/build.mjs [--force] [--quiet]
import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outdir = path.join(root, 'dist');
const stamp = path.join(outdir, 'BUILD');
const ROOTS = ['src', 'adapters'];
// Dependencies whose ESM build is a hundred small files, each a module to resolve and link at
// every start: bundled once into dist/vendor/ and imported from there. (zod is the config
// schema, loaded by every command.)
const VENDORED = { zod: 'export { z } from "zod";' };
const quiet = process.argv.includes('--quiet');

/** Every module under `dir`, tests excluded. */
function modules(dir) {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...modules(full));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !entry.name.endsWith('.d.ts')) found.push(full);
  }
  return found;
}

const started = Date.now();
const entryPoints = ROOTS.flatMap((r) => modules(path.join(root, r))).sort();
const listing = entryPoints.map((f) => path.relative(root, f)).join('\n');

/** Up to date: the same modules as the last build, none changed since, nor this script. */
function upToDate() {
  if (!existsSync(stamp)) return false;
  if (readFileSync(stamp, 'utf8') !== `${listing}\n`) return false;
  const built = statSync(stamp).mtimeMs;
  return [fileURLToPath(import.meta.url), ...entryPoints].every((f) => statSync(f).mtimeMs <= built);
}

if (!process.argv.includes('--force') && upToDate()) process.exit(0);

/** Rewrites each module's `from "zod"` to the bundle in vendor/, relative to the module. */
function pointAtVendored(out, sources) {
  for (const source of sources) {
    const file = path.join(out, path.relative(root, source)).replace(/\.ts$/, '.js');
    const text = readFileSync(file, 'utf8');
    let changed = text;
    for (const name of Object.keys(VENDORED)) {
      const rel = path.relative(path.dirname(file), path.join(out, 'vendor', `${name}.js`));
      changed = changed.replaceAll(` from "${name}";`, ` from "${rel.startsWith('.') ? rel : `./${rel}`}";`);
    }
    if (changed !== text) writeFileSync(file, changed);
  }
}

// Built beside dist/ and swapped in whole, so a process running from dist/ (another test run,
// a running bot) never reads a half-written file.
const staging = mkdtempSync(path.join(root, '.dist-'));
try {
  await build({
    entryPoints,
    outdir: staging,
    outbase: root,
    bundle: false,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
    // The module semantics tsc checks: type-only imports are marked `import type`.
    tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true, target: 'ES2022', useDefineForClassFields: true } },
  });
  pointAtVendored(staging, entryPoints);
  for (const [name, source] of Object.entries(VENDORED)) {
    await build({
      stdin: { contents: source, resolveDir: root, sourcefile: `${name}.js` },
      outfile: path.join(staging, 'vendor', `${name}.js`),
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      logLevel: 'warning',
    });
  }
  // The list of modules marks a finished build: bin/warden.js runs dist/ only when it is there.
  writeFileSync(path.join(staging, 'BUILD'), `${listing}\n`);
  const old = `${staging}-old`;
  try {
    renameSync(outdir, old);
  } catch (err) {
    if (err.code !== 'ENOENT') throw err;
  }
  try {
    renameSync(staging, outdir);
  } catch (err) {
    // A build running beside this one swapped its output in first; it compiled the same sources.
    if (err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err;
    rmSync(staging, { recursive: true, force: true });
  }
  rmSync(old, { recursive: true, force: true });
} catch (err) {
  rmSync(staging, { recursive: true, force: true });
  throw err;
}
if (!quiet) process.stderr.write(`build: ${entryPoints.length} modules → dist/ in ${Date.now() - started} ms\n`);
