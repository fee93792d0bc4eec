#!/usr/bin/env node
// Makes sure the system packages the test suite drives for real are present: Debian's
// Chromium (browser and web-chat tests), bubblewrap (sandboxed exec) and PostgreSQL (the store
// tests' second engine; the tests start a throwaway cluster of their own). Installs them with
// apt-get when running as root; otherwise says exactly what to install and exits non-zero.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';

/** Debian installs the server binaries per major version, outside PATH. */
const postgresInitdb = () => {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(`${root}/${v}/bin/initdb`)) : [];
  return versions.length > 0 ? `${root}/${versions[0]}/bin/initdb` : `${root}/<version>/bin/initdb`;
};

const NEEDS = [
  { bin: '/usr/bin/chromium', pkg: 'chromium', why: 'browser and web-chat tests (playwright-core drives it)' },
  { bin: '/usr/bin/bwrap', pkg: 'bubblewrap', why: 'sandboxed exec tests' },
  { bin: postgresInitdb(), pkg: 'postgresql', why: 'store tests on the PostgreSQL engine', recheck: postgresInitdb },
];

const missing = NEEDS.filter((n) => !existsSync(n.bin));
if (missing.length === 0) process.exit(0);

const pkgs = missing.map((m) => m.pkg);
const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const hasApt = spawnSync('sh', ['-c', 'command -v apt-get'], { stdio: 'ignore' }).status === 0;

if (!isRoot || !hasApt) {
  process.stderr.write(
    `test setup: missing ${missing.map((m) => `${m.bin} (${m.why})`).join(', ')}.\n` +
      `Install Debian's packages first: sudo apt-get update && sudo apt-get install -y ${pkgs.join(' ')}\n`,
  );
  process.exit(1);
}

process.stderr.write(`test setup: installing ${pkgs.join(' ')} from Debian's packages…\n`);
const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
try {
  execFileSync('apt-get', ['update', '-qq'], { stdio: ['ignore', 'ignore', 'inherit'], env });
  execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...pkgs], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env,
  });
} catch (err) {
  process.stderr.write(`test setup: apt-get failed (${err.message}); install ${pkgs.join(' ')} by hand.\n`);
  process.exit(1);
}
const still = missing.filter((m) => !existsSync(m.recheck ? m.recheck() : m.bin));
if (still.length > 0) {
  process.stderr.write(`test setup: still missing ${still.map((m) => m.bin).join(', ')} after apt-get.\n`);
  process.exit(1);
}
