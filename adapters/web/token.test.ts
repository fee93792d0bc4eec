import { chmodSync, mkdtempSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { WEB_TOKEN_FILE, webChatToken } from './token.js';

const dataDir = () => mkdtempSync(path.join(tmpdir(), 'warden-webtoken-'));

describe('webChatToken', () => {
  it('generates a 256-bit token at the first start, mode 600, and reuses it after', () => {
    const dir = dataDir();
    const first = webChatToken({ token: undefined }, dir);
    expect(first).toMatchObject({ ok: true, source: 'file', created: true });
    if (!first.ok) return;
    expect(first.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const file = path.join(dir, WEB_TOKEN_FILE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toBe(`${first.token}\n`);
    expect(webChatToken({ token: undefined }, dir)).toEqual({ ok: true, token: first.token, source: 'file', file, created: false });
  });

  it('uses channels.web.token as it is when set, and writes nothing', () => {
    const dir = dataDir();
    expect(webChatToken({ token: 'letmein' }, dir)).toEqual({ ok: true, token: 'letmein', source: 'config' });
    expect(() => statSync(path.join(dir, WEB_TOKEN_FILE))).toThrow();
  });

  it('tightens a token file others can read', () => {
    const dir = dataDir();
    const file = path.join(dir, WEB_TOKEN_FILE);
    writeFileSync(file, `${'a'.repeat(43)}\n`);
    chmodSync(file, 0o644);
    expect(webChatToken({ token: undefined }, dir)).toMatchObject({ ok: true, token: 'a'.repeat(43) });
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it.each([
    ['an empty file', (file: string) => writeFileSync(file, '', { mode: 0o600 }), /does not hold a token/],
    ['a short token', (file: string) => writeFileSync(file, 'abc\n', { mode: 0o600 }), /does not hold a token/],
    ['a symlink', (file: string) => symlinkSync('/etc/hostname', file), /ELOOP|symbolic/],
  ])('refuses %s rather than guessing', (_name, prepare, error) => {
    const dir = dataDir();
    prepare(path.join(dir, WEB_TOKEN_FILE));
    const result = webChatToken({ token: undefined }, dir);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(error);
  });
});
