// `warden start` as a real process: the embedded web chat with state under ./data, graceful
// stop on SIGINT and SIGTERM, and refusal of an unsafe bind before anything starts.
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';
import { describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../../bin/warden.js', import.meta.url));

function inDir(config?: string) {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-start-'));
  if (config !== undefined) writeFileSync(path.join(dir, 'warden.config.yaml'), config);
  return dir;
}

function launch(dir: string): ResultPromise {
  return execa('node', [BIN, 'start'], { cwd: dir, env: { WARDEN_LOG_LEVEL: 'warn', WARDEN_DATA_DIR: '' }, reject: false });
}

function waitForUrl(child: ResultPromise): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /web chat at (http:\/\/\S+\/)/.exec(out);
      if (m) resolve(m[1]!);
    });
    void child.then((r) => reject(new Error(`exited ${r.exitCode} before starting: ${r.stderr}`)));
  });
}

describe('warden start', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)('serves the web chat with state in ./data and stops cleanly on %s', async (signal) => {
    const dir = inDir('channels:\n  web:\n    port: 0\n');
    const child = launch(dir);
    const url = await waitForUrl(child);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(existsSync(path.join(dir, 'data', 'warden.sqlite'))).toBe(true);

    child.kill(signal);
    const result = await child;
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('Warden stopped.');
    await expect(fetch(url)).rejects.toThrow();
  }, 30_000);

  it('refuses a non-loopback web chat without a token, naming the key, and starts nothing', async () => {
    const dir = inDir('channels:\n  web:\n    host: 0.0.0.0\n    port: 0\n');
    const result = await launch(dir);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('channels.web.token');
    expect(result.stdout).not.toContain('Warden is running');
    expect(existsSync(path.join(dir, 'data'))).toBe(false);
  }, 30_000);
});
