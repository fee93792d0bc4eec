// `store.url` from the config file to every command that opens the store: a bad URL or an
// unreachable server names the key and exits non-zero; `warden doctor` says which engine, whether
// it answers and whether its migrations are current; the CLI opens PostgreSQL when named and
// never loads the PostgreSQL client otherwise.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { freshStoreTarget } from '../store-engines.js';
import { BIN, freePort } from './harness.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function dirWith(store: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-store-url-'));
  writeFileSync(path.join(dir, 'warden.config.yaml'), `channels:\n  web:\n    port: 0\nops:\n  enabled: false\n${store}dataDir: ./data\n`);
  return dir;
}

const warden = (dir: string, args: string[], env: Record<string, string> = {}) =>
  execa('node', [BIN, ...args], { cwd: dir, env: { WARDEN_LOG_LEVEL: 'warn', WARDEN_DATA_DIR: '', ...env }, reject: false, timeout: 60_000 });

describe('store.url', () => {
  it.each([
    ['a URL of another scheme', 'store:\n  url: mysql://root@127.0.0.1/warden\n', /store\.url: .*scheme mysql:/],
    ['something that is not a URL', 'store:\n  url: not a url\n', /store\.url: .*not a URL/],
  ])('warden start refuses %s, naming store.url, and exits 2', async (_label, store, message) => {
    const result = await warden(dirWith(store), ['start']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(message);
  });

  it('warden start, approvals and doctor name store.url when the server cannot be reached; the password never shows', async () => {
    const port = await freePort();
    const dir = dirWith('store:\n  url: ${WARDEN_STORE_URL}\n');
    const env = { WARDEN_STORE_URL: `postgres://warden:s3cret-pw@127.0.0.1:${port}/warden` };
    const start = await warden(dir, ['start'], env);
    expect(start.exitCode).toBe(2);
    expect(start.stderr).toMatch(new RegExp(`store\\.url: PostgreSQL at postgres://warden@127\\.0\\.0\\.1:${port}/warden cannot be reached`));
    const list = await warden(dir, ['approvals', 'list'], env);
    expect(list.exitCode).toBe(2);
    expect(list.stderr).toMatch(/store\.url: PostgreSQL at .* cannot be reached/);
    const doctor = await warden(dir, ['doctor', '--json'], env);
    expect(doctor.exitCode).toBe(1);
    const store = (JSON.parse(doctor.stdout) as { checks: Array<{ name: string; ok: boolean; detail: string }> }).checks.find((c) => c.name === 'store')!;
    expect(store.ok).toBe(false);
    expect(store.detail).toMatch(/^postgres postgres:\/\/warden@127\.0\.0\.1:\d+\/warden: unreachable/);
    for (const out of [start.stderr, list.stderr, doctor.stdout]) expect(out).not.toContain('s3cret-pw');
  });

  it('doctor reports a fresh PostgreSQL database as reachable with migrations to apply; after a command opened it, current; commands work on it', async () => {
    const { url } = await freshStoreTarget('postgres');
    const dir = dirWith('store:\n  url: ${WARDEN_STORE_URL}\n');
    const env = { WARDEN_STORE_URL: url! };
    const storeCheck = async () => {
      const doctor = await warden(dir, ['doctor', '--json'], env);
      return (JSON.parse(doctor.stdout) as { checks: Array<{ name: string; ok: boolean; warn?: boolean; detail: string }> }).checks.find((c) => c.name === 'store')!;
    };
    const fresh = await storeCheck();
    expect(fresh).toMatchObject({ ok: true, warn: true });
    expect(fresh.detail).toMatch(/^postgres postgres:\/\/.* reachable, \d+ of \d+ migrations not applied yet$/);
    // Any command that opens the store migrates it (under the lock).
    const list = await warden(dir, ['approvals', 'list', '--json'], env);
    expect(list.exitCode).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual({ pending: [] });
    const current = await storeCheck();
    expect(current.ok).toBe(true);
    expect(current.warn).toBeUndefined();
    expect(current.detail).toMatch(/reachable, migrations current \(\d+\)$/);
  });

  it('doctor on the SQLite default names its file; the CLI never loads the PostgreSQL client then, and loads it when store.url names PostgreSQL', async () => {
    const dir = dirWith('');
    const doctor = await warden(dir, ['doctor', '--json']);
    const store = (JSON.parse(doctor.stdout) as { checks: Array<{ name: string; ok: boolean; detail: string }> }).checks.find((c) => c.name === 'store')!;
    expect(store).toMatchObject({ ok: true });
    expect(store.detail).toMatch(/^sqlite .*warden\.sqlite \(created at the first start\)$/);

    // pg is CommonJS: once imported it sits in the require cache, whichever module imported it.
    const probe = (args: string[], env: Record<string, string> = {}) =>
      execa(
        'node',
        [
          '--input-type=module',
          '-e',
          `import { createRequire } from 'node:module';
           const require = createRequire(${JSON.stringify(path.join(ROOT, 'package.json'))});
           const { main } = await import(${JSON.stringify(path.join(ROOT, 'dist/cli.js'))});
           const io = { stdout() {}, stderr() {}, cwd: ${JSON.stringify(dir)}, env: process.env };
           await main(${JSON.stringify(args)}, io);
           const loaded = Object.keys(require.cache).filter((k) => /node_modules[\\\\/]pg[\\\\/]/.test(k));
           process.stdout.write(JSON.stringify({ pg: loaded.length > 0 }));`,
        ],
        { cwd: dir, env: { WARDEN_LOG_LEVEL: 'silent', WARDEN_DATA_DIR: '', ...env }, timeout: 60_000 },
      );
    for (const args of [['doctor'], ['approvals', 'list'], ['--help']]) {
      expect(JSON.parse((await probe(args)).stdout), args.join(' ')).toEqual({ pg: false });
    }
    const { url } = await freshStoreTarget('postgres');
    writeFileSync(path.join(dir, 'warden.config.yaml'), `store:\n  url: ${url}\ndataDir: ./data\n`);
    expect(JSON.parse((await probe(['approvals', 'list'])).stdout)).toEqual({ pg: true });
  });
});
