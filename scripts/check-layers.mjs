#!/usr/bin/env node
// Checks that imports point down Warden's layers and that no two folders import each other
// (the rules are in .dependency-cruiser.cjs; docs/development.md lists the layers).
// It runs dependency-cruiser over src/ and adapters/ of a project folder and prints every
// violation with the rule it breaks and, for a cycle, the loop of folders.
//
// Usage: node scripts/check-layers.mjs [--root <project folder>]; exits 1 on a violation.
// The rules file is always this repository's; --root points it at another tree (the test's
// fixtures). Violations listed in <root>/.dependency-cruiser-known-violations.json are
// tolerated while they are being removed (none are, when that file is absent).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const config = path.join(here, '..', '.dependency-cruiser.cjs');

/**
 * Runs the check over `root` (a folder holding src/ and, optionally, adapters/ and tsconfig.json).
 * @returns {{ ok: boolean, output: string }}
 */
export function checkLayers(root) {
  const bin = path.join(here, '..', 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');
  const known = path.join(root, '.dependency-cruiser-known-violations.json');
  const targets = ['src', 'adapters'].filter((d) => existsSync(path.join(root, d)));
  const args = [bin, '--config', config, '--output-type', 'err', ...(existsSync(known) ? ['--ignore-known', known] : []), ...targets];
  const run = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8' });
  if (run.error) throw run.error;
  return { ok: run.status === 0, output: `${run.stdout}${run.stderr}` };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const at = process.argv.indexOf('--root');
  const root = at >= 0 && process.argv[at + 1] ? path.resolve(process.argv[at + 1]) : path.join(here, '..');
  const { ok, output } = checkLayers(root);
  process.stdout.write(output);
  if (!ok) process.stderr.write('check-layers: an import points up the layers or closes a folder cycle (see .dependency-cruiser.cjs)\n');
  process.exitCode = ok ? 0 : 1;
}
