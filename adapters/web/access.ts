import { createHash, timingSafeEqual } from 'node:crypto';
import ipaddr from 'ipaddr.js';

/** Whether a bind host only accepts connections from this machine. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.trim().replace(/^\[|\]$/g, '').toLowerCase();
  if (bare === 'localhost') return true;
  if (!ipaddr.isValid(bare)) return false;
  const addr = ipaddr.process(bare);
  return addr.range() === 'loopback';
}

/**
 * The web chat's local user is the owner and may approve exec, so reaching it from another
 * machine needs a secret: binding anywhere but loopback without `channels.web.token` is refused.
 */
export function checkBind(host: string, token: string | undefined): { ok: true } | { ok: false; path: string; message: string } {
  if (isLoopbackHost(host) || token) return { ok: true };
  return {
    ok: false,
    path: 'channels.web.token',
    message: `required when channels.web.host is not a loopback address (got "${host}"): anyone who can reach the web chat acts as the owner`,
  };
}

/** Constant-time comparison; both sides are hashed first, so not even the length leaks. */
export function tokensMatch(given: string | undefined, expected: string): boolean {
  if (given === undefined || expected === '') return false;
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/**
 * Guards against other web pages driving the chat from the user's browser. A browser always
 * sends `Origin` on a WebSocket handshake and a cross-site POST; it must be this server. On a
 * loopback bind the `Host` header must name a loopback host too, which defeats DNS rebinding
 * (evil.example resolving to 127.0.0.1). Clients that are not browsers send no Origin.
 */
export function checkRequestOrigin(headers: { host?: string | undefined; origin?: string | undefined }, loopbackBind: boolean): boolean {
  const host = headers.host;
  if (!host) return false;
  if (loopbackBind && !isLoopbackHost(hostnameOf(host))) return false;
  if (headers.origin === undefined) return true;
  let origin: URL;
  try {
    origin = new URL(headers.origin);
  } catch {
    return false;
  }
  return (origin.protocol === 'http:' || origin.protocol === 'https:') && origin.host.toLowerCase() === host.toLowerCase();
}

/** `127.0.0.1:3000` → `127.0.0.1`, `[::1]:3000` → `::1`. */
function hostnameOf(hostHeader: string): string {
  const v6 = /^\[([^\]]+)\](?::\d+)?$/.exec(hostHeader);
  if (v6) return v6[1]!;
  return hostHeader.replace(/:\d+$/, '');
}

/** The token from `?token=`, a `warden_token` cookie, or `Authorization: Bearer`. */
export function tokenFromRequest(url: URL, headers: { cookie?: string | undefined; authorization?: string | undefined }): string | undefined {
  const q = url.searchParams.get('token');
  if (q) return q;
  const bearer = /^Bearer\s+(.+)$/i.exec(headers.authorization ?? '');
  if (bearer) return bearer[1]!.trim();
  for (const part of (headers.cookie ?? '').split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name === TOKEN_COOKIE) return decodeURIComponent(rest.join('='));
  }
  return undefined;
}

export const TOKEN_COOKIE = 'warden_token';
