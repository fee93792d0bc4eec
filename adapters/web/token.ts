import { randomBytes } from 'node:crypto';
import { closeSync, constants, fchmodSync, fstatSync, openSync, readFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { WebConfig } from '../../src/config/schema/channels.js';
import { log } from '../../src/log/log.js';

/** The file in the data dir that keeps the web chat's generated token (mode 600). */
export const WEB_TOKEN_FILE = 'web-token';

export type WebToken =
  | { ok: true; token: string; source: 'config' }
  | { ok: true; token: string; source: 'file'; file: string; created: boolean }
  | { ok: false; error: string };

const TOKEN_SHAPE = /^[A-Za-z0-9_-]{32,}$/;

/**
 * The web chat's access token: `channels.web.token` as it is when set, else the per-install
 * token in `<dataDir>/web-token`, generated (256 random bits) on the first start. The person at
 * the page is the owner and approver, so even on loopback the page needs a secret that other
 * local users and processes cannot read.
 */
export function webChatToken(config: Pick<WebConfig, 'token'>, dataDir: string): WebToken {
  if (config.token) return { ok: true, token: config.token, source: 'config' };
  const file = path.join(dataDir, WEB_TOKEN_FILE);
  try {
    return { ok: true, token: readToken(file), source: 'file', file, created: false };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return { ok: false, error: `web chat token ${file}: ${(err as Error).message}` };
  }
  const token = randomBytes(32).toString('base64url');
  try {
    // O_EXCL: never write through a file or link someone else put there; O_NOFOLLOW: never follow one.
    const fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    try {
      writeSync(fd, `${token}\n`);
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    // Another start created it meanwhile: use that one.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return webChatToken(config, dataDir);
    return { ok: false, error: `web chat token ${file}: ${(err as Error).message}` };
  }
  return { ok: true, token, source: 'file', file, created: true };
}

function readToken(file: string): string {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new Error('is not a regular file');
    if ((stat.mode & 0o077) !== 0) {
      // Readable by others: tighten it, and say so (the token may have leaked; delete the file to get a new one).
      fchmodSync(fd, 0o600);
      log.warn({ file, mode: (stat.mode & 0o777).toString(8) }, 'web chat token file was readable by others; set to 600 (delete it to get a new token)');
    }
    const token = readFileSync(fd, 'utf8').trim();
    if (!TOKEN_SHAPE.test(token)) throw new Error('does not hold a token (delete it and start again to get a new one)');
    return token;
  } finally {
    closeSync(fd);
  }
}
