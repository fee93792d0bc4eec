// The build users run: bin/warden.js runs the JavaScript in dist/ and behaves as the sources do.
// (The global setup has just brought dist/ up to date.)
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { BUNDLED_SKILLS_DIR } from '../../src/skills/roots.js';
import { PACKAGE_ROOT } from '../../src/util/package-root.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = path.join(root, 'bin/warden.js');
const run = (args: string[], env: Record<string, string> = {}) => execa('node', [BIN, ...args], { cwd: root, env: { WARDEN_LOG_LEVEL: 'silent', ...env }, reject: false });

describe('the build in dist/', () => {
  it('holds one JavaScript file per source module, tests left out', () => {
    const listed = readFileSync(path.join(root, 'dist/BUILD'), 'utf8').trim().split('\n');
    expect(listed).toContain('src/cli.ts');
    expect(listed).toContain('adapters/discord/index.ts');
    expect(listed.some((f) => f.endsWith('.test.ts'))).toBe(false);
    for (const f of listed) expect(existsSync(path.join(root, 'dist', f.replace(/\.ts$/, '.js'))), f).toBe(true);
  });

  it('imports zod from its one-file bundle in dist/vendor/, never the package', () => {
    const listed = readFileSync(path.join(root, 'dist/BUILD'), 'utf8').trim().split('\n');
    const importers = listed.filter((f) => /from "[./]*vendor\/zod\.js"/.test(readFileSync(path.join(root, 'dist', f.replace(/\.ts$/, '.js')), 'utf8')));
    expect(importers).toContain('src/config/schema/index.ts');
    for (const f of listed) expect(readFileSync(path.join(root, 'dist', f.replace(/\.ts$/, '.js')), 'utf8'), f).not.toMatch(/from "zod"/);
  });

  it('finds the package folder (skills/, config/) from dist/ as from src/', async () => {
    expect(PACKAGE_ROOT).toBe(root);
    expect(BUNDLED_SKILLS_DIR).toBe(path.join(root, 'skills'));
    const built = (await import(pathToFileURL(path.join(root, 'dist/src/skills/roots.js')).href)) as { BUNDLED_SKILLS_DIR: string };
    expect(built.BUNDLED_SKILLS_DIR).toBe(BUNDLED_SKILLS_DIR);
  });

  it.each([
    ['--help'],
    ['tools', '--json'],
    ['skills', '--json'],
    ['exec-check', '--json', '--', 'echo hi; rm -rf /'],
  ])('`warden %s` prints the same from the build and from the sources', async (...args) => {
    const [built, source] = await Promise.all([run(args), run(args, { WARDEN_FROM_SOURCE: '1' })]);
    expect(built.exitCode).toBe(source.exitCode);
    expect(built.stdout).toBe(source.stdout);
    expect(built.stdout.length).toBeGreaterThan(0);
  });
});
