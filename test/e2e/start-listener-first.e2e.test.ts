// `warden start` as a real process, with the web chat's listener opened before the rest of Warden:
// a start that fails behind it (a PostgreSQL store that accepts and never answers) serves the
// page, answers 503 with Retry-After to what needs the chat, then exits non-zero naming the key
// and leaves nothing listening; a config refused for a key never opens the listener at all.
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { freePort } from '../free-port.js';

const BIN = fileURLToPath(new URL('../../bin/warden.js', import.meta.url));
const TOKEN = 'listener-first-token-0123456789abcdef012345';
const AUTH = { authorization: `Bearer ${TOKEN}` };

function inDir(config: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-first-'));
  writeFileSync(path.join(dir, 'warden.config.yaml'), config);
  return dir;
}

const launch = (dir: string) => execa('node', [BIN, 'start'], { cwd: dir, env: { WARDEN_LOG_LEVEL: 'warn', WARDEN_DATA_DIR: '' }, reject: false, timeout: 60_000 });

/** Whether something accepts a TCP connection on the port now. */
const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

describe('warden start opens the web chat listener first', () => {
  it('when the rest fails behind it: the page answers, what needs the chat gets 503 with Retry-After, then it exits 2 naming store.url, nothing left listening', async () => {
    // A "PostgreSQL server" that accepts connections and hangs up after two seconds without a word.
    const held: Socket[] = [];
    const hole = createServer((socket) => {
      held.push(socket);
      setTimeout(() => socket.destroy(), 2000);
    }).listen(0, '127.0.0.1');
    await once(hole, 'listening');
    const pgPort = (hole.address() as AddressInfo).port;
    const port = await freePort();
    const dir = inDir(`channels:\n  web:\n    port: ${port}\n    token: ${TOKEN}\nops:\n  port: 0\nstore:\n  url: postgres://warden:s3cret-pw@127.0.0.1:${pgPort}/warden\n`);
    try {
      const child = launch(dir);
      const base = `http://127.0.0.1:${port}/`;
      let health: unknown;
      while (child.exitCode === null) {
        const r = await fetch(`${base}healthz`, { headers: AUTH }).catch(() => undefined);
        if (r?.status === 200) {
          health = await r.json();
          break;
        }
        await new Promise((r) => setTimeout(r, 10));
      }
      // The listener answers while the store is still connecting: the real page, and health saying so.
      expect(health).toEqual({ ok: true, ready: false });
      const page = await fetch(base, { headers: AUTH });
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<form id="composer"');
      // A reply's file needs the chat: it waits, and is answered 503 when the start fails.
      const file = await fetch(`${base}files/0123456789abcdef01234567`, { headers: AUTH });
      expect(file.status).toBe(503);
      expect(file.headers.get('retry-after')).toBe('5');
      const result = await child;
      expect(result.exitCode).toBe(2);
      expect(result.stderr).toMatch(/store\.url: PostgreSQL at postgres:\/\/warden@127\.0\.0\.1:\d+\/warden cannot be reached/);
      expect(result.stderr).not.toContain('s3cret-pw');
      expect(result.stdout).not.toContain('Warden is running');
      expect(await accepts(port)).toBe(false);
    } finally {
      for (const s of held) s.destroy();
      hole.close();
    }
  }, 90_000);

  it.each([
    ['store.url of another scheme', 'store:\n  url: mysql://root@127.0.0.1/warden\n', /store\.url: .*scheme mysql:/],
    ['a web chat beyond loopback without a token', 'channels:\n  web:\n    host: 0.0.0.0\n', /channels\.web\.token/],
    ['an unknown key', 'chanels: {}\n', /chanels/],
  ])('a bad config (%s) exits 2 naming the key, and its port never accepted a connection', async (_name, extra, message) => {
    const port = await freePort();
    const web = extra.startsWith('channels:') ? extra.replace('channels:\n  web:\n', `channels:\n  web:\n    port: ${port}\n`) : `channels:\n  web:\n    port: ${port}\n${extra}`;
    const child = launch(inDir(web));
    let accepted = false;
    while (child.exitCode === null) {
      if (await accepts(port)) accepted = true;
      await new Promise((r) => setTimeout(r, 2));
    }
    const result = await child;
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(accepted).toBe(false);
  }, 60_000);
});
