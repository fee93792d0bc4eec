#!/usr/bin/env node
// Extracts the OpenClaw compatibility corpus into test fixtures, so the corpus tests run
// without downloading the 95 MB package on every run:
//
//   - every JSON5 block of the package's docs (docs/**/*.md) that carries a `tools` section
//     (a top-level `tools`, or an agent's `agents.entries.<id>.tools` / `agents.list[].tools`),
//     one fixture per block, headed by its source doc path and line;
//   - every SKILL.md the package ships, with the small text files of its folder that the
//     SKILL.md names (references, scripts, examples) and the folder's licence file.
//
// Usage: node scripts/extract-openclaw-corpus.mjs [--package DIR]
//   Without --package it runs `npm pack openclaw@<VERSION>` into a temporary folder and reads
//   the tarball; with it, DIR is an already unpacked package (the folder holding package.json).
// The fixtures it writes are committed; re-run it only when moving to another OpenClaw version.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import JSON5 from 'json5';

const VERSION = '2026.9.6';
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.join(ROOT, 'test/fixtures/openclaw');
/** A file beside a SKILL.md is copied when the SKILL.md names it and it is small text. */
const MAX_SKILL_FILE_BYTES = 32_000;
const LICENCE_NAMES = /^(license|licence|copying|notice)(\.(txt|md))?$/i;

function packageDir() {
  const i = process.argv.indexOf('--package');
  if (i !== -1) {
    const dir = path.resolve(process.argv[i + 1] ?? '');
    if (!existsSync(path.join(dir, 'package.json'))) throw new Error(`--package ${dir}: no package.json there`);
    return { dir, cleanup: () => {} };
  }
  const tmp = mkdtempSync(path.join(tmpdir(), 'openclaw-pack-'));
  const out = execFileSync('npm', ['pack', `openclaw@${VERSION}`, '--pack-destination', tmp, '--json'], { encoding: 'utf8' });
  const [{ filename }] = JSON.parse(out);
  execFileSync('tar', ['-xzf', path.join(tmp, filename), '-C', tmp]);
  return { dir: path.join(tmp, 'package'), cleanup: () => rmSync(tmp, { recursive: true, force: true }) };
}

function walk(dir, keep, out = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(full, keep, out);
    else if (keep(full)) out.push(full);
  }
  return out.sort();
}

/** The JSON5 code blocks of a Markdown file: their text and the line of the opening fence. */
function json5Blocks(text) {
  const lines = text.split('\n');
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```json5\b/.exec(lines[i]);
    if (!open) continue;
    const indent = open[1].length;
    const body = [];
    let j = i + 1;
    while (j < lines.length && !/^\s*```\s*$/.test(lines[j])) {
      const line = lines[j];
      const lead = line.length - line.trimStart().length;
      body.push(line.slice(Math.min(indent, lead)));
      j++;
    }
    blocks.push({ line: i + 1, text: body.join('\n') });
    i = j;
  }
  return blocks;
}

/** Where a block carries a tools section Warden reads: top-level, or an agent's. */
function toolsSections(value) {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return [];
  const found = [];
  if (value.tools !== undefined) found.push('tools');
  const entries = value.agents?.entries;
  if (entries && typeof entries === 'object') for (const id of Object.keys(entries)) if (entries[id]?.tools !== undefined) found.push(`agents.entries.${id}.tools`);
  const list = value.agents?.list;
  if (Array.isArray(list)) list.forEach((a, i) => a?.tools !== undefined && found.push(`agents.list[${i}].tools`));
  return found;
}

function extractDocs(pkg) {
  const target = path.join(OUT, 'docs-tools');
  rmSync(target, { recursive: true, force: true });
  mkdirSync(target, { recursive: true });
  const docsDir = path.join(pkg, 'docs');
  const index = [];
  for (const file of walk(docsDir, (f) => f.endsWith('.md'))) {
    const doc = path.relative(docsDir, file).split(path.sep).join('/');
    for (const block of json5Blocks(readFileSync(file, 'utf8'))) {
      let value;
      try {
        value = JSON5.parse(block.text);
      } catch {
        continue; // Illustrations with placeholders (`...`) are not configs.
      }
      const sections = toolsSections(value);
      if (sections.length === 0) continue;
      const name = `${doc.replace(/\.md$/, '').replaceAll('/', '__')}__L${block.line}.json5`;
      writeFileSync(path.join(target, name), `// openclaw@${VERSION} docs/${doc}:${block.line}\n${block.text}\n`);
      index.push({ file: name, doc: `docs/${doc}`, line: block.line, sections });
    }
  }
  writeFileSync(path.join(target, 'index.json'), `${JSON.stringify(index, null, 1)}\n`);
  return index.length;
}

/** Relative files of a skill folder that its SKILL.md mentions by path or by name. */
function referencedFiles(skillDir, skillText) {
  return walk(skillDir, (f) => path.basename(f) !== 'SKILL.md').filter((file) => {
    const rel = path.relative(skillDir, file).split(path.sep).join('/');
    if (statSync(file).size > MAX_SKILL_FILE_BYTES) return false;
    if (readFileSync(file).includes(0)) return false;
    return LICENCE_NAMES.test(path.basename(file)) || skillText.includes(rel) || skillText.includes(path.basename(file));
  });
}

const fixturePath = (rel) => rel.replace(/^node_modules\//, 'dependencies/');

function extractSkills(pkg) {
  const target = path.join(OUT, 'skills');
  rmSync(target, { recursive: true, force: true });
  const skillFiles = walk(pkg, (f) => path.basename(f) === 'SKILL.md');
  const licences = new Map();
  for (const skillFile of skillFiles) {
    const skillDir = path.dirname(skillFile);
    // The fixture keeps the folder's place in the package (skills/<name>, dist/extensions/<x>/skills/<name>);
    // a bundled dependency's node_modules/<dep> becomes dependencies/<dep>, out of reach of ignore rules.
    const rel = path.relative(pkg, skillDir).split(path.sep).join('/');
    const dest = path.join(target, fixturePath(rel));
    mkdirSync(dest, { recursive: true });
    copyFileSync(skillFile, path.join(dest, 'SKILL.md'));
    for (const file of referencedFiles(skillDir, readFileSync(skillFile, 'utf8'))) {
      const to = path.join(dest, path.relative(skillDir, file));
      mkdirSync(path.dirname(to), { recursive: true });
      copyFileSync(file, to);
    }
    // A skill from a bundled dependency keeps that dependency's licence beside it.
    const dep = /^(node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(rel)?.[1];
    if (dep && !licences.has(dep)) {
      const licence = readdirSync(path.join(pkg, dep)).find((n) => LICENCE_NAMES.test(n));
      if (licence) licences.set(dep, path.join(pkg, dep, licence));
    }
  }
  for (const [dep, file] of licences) copyFileSync(file, path.join(target, fixturePath(dep), path.basename(file)));
  return skillFiles.length;
}

const { dir, cleanup } = packageDir();
try {
  mkdirSync(OUT, { recursive: true });
  copyFileSync(path.join(dir, 'LICENSE'), path.join(OUT, 'LICENSE'));
  const blocks = extractDocs(dir);
  const skills = extractSkills(dir);
  process.stdout.write(`openclaw@${VERSION}: ${blocks} docs blocks with a tools section, ${skills} SKILL.md files → ${path.relative(ROOT, OUT)}\n`);
} finally {
  cleanup();
}
