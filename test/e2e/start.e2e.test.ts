// `warden start` as a real process: the embedded web chat with state under ./data, graceful
// stop on SIGINT and SIGTERM, and refusal of an unsafe bind before anything starts.
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
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
      const m = /web chat at (http:\/\/\S+\/\S*)\s/.exec(out);
      if (m) resolve(m[1]!);
    });
    void child.then((r) => reject(new Error(`exited ${r.exitCode} before starting: ${r.stderr}`)));
  });
}

describe('warden start', () => {
  it('refuses tokens pasted into the wrong key before connecting, naming each key (the verdict doctor prints)', async () => {
    const dir = inDir('channels:\n  slack:\n    botToken: xoxp-1-2-abc\n    appToken: abc123\n');
    const r = await launch(dir);
    expect(r.exitCode).toBe(2);
    expect(String(r.stderr).trim()).toBe(
      [
        `invalid config ${path.join(dir, 'warden.config.yaml')}: 2 problems`,
        '  channels.slack.botToken: is a user token (xoxp-…); Warden needs the Bot User OAuth Token, xoxb-…, from OAuth & Permissions',
        '  channels.slack.appToken: does not start with xapp-; Socket Mode needs an app-level token, xapp-…, from Basic Information → App-Level Tokens (scope connections:write)',
      ].join('\n'),
    );
    expect(existsSync(path.join(dir, 'data'))).toBe(false);
  }, 30_000);

  it('treats a Discord block with an empty token as not configured, as doctor does: the web chat runs', async () => {
    const dir = inDir('channels:\n  discord:\n    token: ${DISCORD_TOKEN:-}\n  web:\n    port: 0\n');
    const child = launch(dir);
    const url = await waitForUrl(child);
    child.kill('SIGTERM');
    expect((await child).exitCode).toBe(0);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=/);
  }, 30_000);

  it.each(['SIGINT', 'SIGTERM'] as const)('serves the web chat with state in ./data and stops cleanly on %s', async (signal) => {
    const dir = inDir('channels:\n  web:\n    port: 0\n');
    const child = launch(dir);
    const url = await waitForUrl(child);
    // The printed address is ready to open: it carries the per-install token kept in the data dir.
    const m = /^(http:\/\/127\.0\.0\.1:\d+\/)\?token=([A-Za-z0-9_-]{43})$/.exec(url);
    expect(m).not.toBeNull();
    const [, base, token] = m!;
    const tokenFile = path.join(dir, 'data', 'web-token');
    expect(readFileSync(tokenFile, 'utf8').trim()).toBe(token);
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
    expect((await fetch(base!)).status).toBe(401);
    const opened = await fetch(url, { redirect: 'manual' });
    expect(opened.status).toBe(303);
    const cookie = opened.headers.get('set-cookie')!.split(';')[0]!;
    const page = await fetch(base!, { headers: { cookie } });
    expect(page.status).toBe(200);
    expect(existsSync(path.join(dir, 'data', 'warden.sqlite'))).toBe(true);

    child.kill(signal);
    const result = await child;
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('Warden stopped.');
    await expect(fetch(url)).rejects.toThrow();
  }, 30_000);

  it('keeps the per-install token across restarts', async () => {
    const dir = inDir('channels:\n  web:\n    port: 0\n');
    const first = launch(dir);
    const firstUrl = await waitForUrl(first);
    first.kill('SIGTERM');
    await first;
    const second = launch(dir);
    const secondUrl = await waitForUrl(second);
    second.kill('SIGTERM');
    await second;
    expect(new URL(secondUrl).searchParams.get('token')).toBe(new URL(firstUrl).searchParams.get('token'));
  }, 30_000);

  it('does not print a configured token', async () => {
    const dir = inDir('channels:\n  web:\n    port: 0\n    token: configured-secret\n');
    const child = launch(dir);
    const url = await waitForUrl(child);
    child.kill('SIGTERM');
    const result = await child;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(result.stdout).toContain('?token=<channels.web.token>');
    expect(result.stdout).not.toContain('configured-secret');
    expect(existsSync(path.join(dir, 'data', 'web-token'))).toBe(false);
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
