import { createHash, timingSafeEqual } from 'node:crypto';
import type { GatewayHttpConfig } from '../../config/index.js';

/** The configured tokens by label: `token` is `default`, `tokens` adds the rest. */
export function httpTokens(http: GatewayHttpConfig): Array<{ label: string; digest: Buffer }> {
  const out: Array<{ label: string; digest: Buffer }> = [];
  if (http.token) out.push({ label: 'default', digest: digest(http.token) });
  for (const [label, token] of Object.entries(http.tokens ?? {})) out.push({ label, digest: digest(token) });
  return out;
}

const digest = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

/**
 * The label of the token a request presents, or undefined. Every configured token is compared
 * (fixed-length digests, `timingSafeEqual`), so the time taken says nothing about which one
 * was close.
 */
export function matchToken(presented: string | undefined, tokens: ReadonlyArray<{ label: string; digest: Buffer }>): string | undefined {
  if (presented === undefined) return undefined;
  const candidate = digest(presented);
  let found: string | undefined;
  for (const t of tokens) if (timingSafeEqual(candidate, t.digest) && found === undefined) found = t.label;
  return found;
}

/** `Authorization: Bearer <token>`; anything else is no token. */
export function bearerOf(header: string | undefined): string | undefined {
  const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? '');
  return m?.[1];
}

/** Calls per token per minute: a bucket per label that refills continuously. */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes one call; when none is left, how many seconds until one is. */
  take(label: string): { ok: true } | { ok: false; retryAfterSec: number } {
    const now = this.now();
    const rate = this.perMinute / 60_000;
    // Keys may come from the network (remote addresses): bounded, forgetting all at the cap.
    if (!this.buckets.has(label) && this.buckets.size >= 10_000) this.buckets.clear();
    const b = this.buckets.get(label) ?? { tokens: this.perMinute, at: now };
    b.tokens = Math.min(this.perMinute, b.tokens + (now - b.at) * rate);
    b.at = now;
    this.buckets.set(label, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return { ok: true };
    }
    return { ok: false, retryAfterSec: Math.max(1, Math.ceil((1 - b.tokens) / rate / 1000)) };
  }
}
