import type { LookupAddress, LookupOptions } from 'node:dns';
import { checkUrlWithPolicy, systemResolver, type Resolver, type UrlPolicy, type UrlSurface } from './check.js';
import { background } from '../util/background.js';

export interface GuardedFetchOptions {
  surface: UrlSurface;
  policy: UrlPolicy;
  resolve?: Resolver;
  /** Redirects followed, each checked again (default 3). */
  maxRedirects?: number;
  timeoutMs?: number;
  /** The body is cut at this many bytes (the result says so). */
  maxResponseBytes?: number;
  headers?: Record<string, string>;
  /**
   * Headers sent only while the request stays on the first URL's origin: an operator's routing
   * or credential header never follows a redirect to another site.
   */
  originHeaders?: Record<string, string>;
  /** GET (default) or POST with a body; a POST follows only 307/308 redirects with its body. */
  method?: 'GET' | 'POST';
  body?: string | Buffer;
  signal?: AbortSignal;
  /**
   * Test seam: maps a checked address to the address actually dialled, so tests can serve
   * "public" answers from a loopback server. Production code never sets it.
   */
  dial?: (checkedAddress: string) => string;
}

export type GuardedFetchResult =
  | {
      ok: true;
      url: string;
      status: number;
      contentType: string;
      body: Buffer;
      truncated: boolean;
      /** The address the final hop was pinned to. */
      address: string;
      redirects: string[];
    }
  | { ok: false; blocked: boolean; error: string; url: string };

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * GET a URL under the SSRF policy: DNS is resolved once per hop and checked, the connection is
 * pinned to the checked addresses (a second DNS answer cannot differ), environment proxies are
 * ignored, and every redirect hop is checked again. Errors are values: `blocked` says the policy
 * refused, otherwise the network or server failed.
 */
export async function guardedFetch(rawUrl: string, options: GuardedFetchOptions): Promise<GuardedFetchResult> {
  const maxRedirects = options.maxRedirects ?? 3;
  const resolve = options.resolve ?? systemResolver;
  const seen = new Set<string>();
  const redirects: string[] = [];
  let url = rawUrl;
  let method = options.method ?? 'GET';
  let body = method === 'POST' ? options.body : undefined;
  const firstOrigin = originOf(rawUrl);

  for (let hop = 0; ; hop++) {
    const verdict = await checkUrlWithPolicy(url, options.surface, options.policy, resolve);
    if (!verdict.allowed || !verdict.addresses) return { ok: false, blocked: true, error: `Blocked: ${verdict.reason}`, url };
    if (seen.has(url)) return { ok: false, blocked: false, error: 'Redirect loop detected', url };
    seen.add(url);

    const dial = options.dial ?? ((a: string) => a);
    const pinned = verdict.addresses.map((a) => dial(a));
    // undici (hundreds of modules) is loaded at the first fetch, not at every start.
    const { Agent, request } = await import('undici');
    const agent = new Agent({ connect: { lookup: pinnedLookup(pinned), timeout: options.timeoutMs ?? 30_000 } });
    try {
      const response = await request(url, {
        method,
        body,
        dispatcher: agent,
        headers: {
          'user-agent': 'Warden/0.1 (+web_fetch)',
          accept: 'text/html,text/plain,application/json;q=0.9,*/*;q=0.5',
          ...options.headers,
          ...(options.originHeaders && originOf(url) === firstOrigin ? options.originHeaders : {}),
        },
        signal: options.signal,
        headersTimeout: options.timeoutMs ?? 30_000,
        bodyTimeout: options.timeoutMs ?? 30_000,
      });
      if (REDIRECTS.has(response.statusCode)) {
        await response.body.dump();
        const location = response.headers.location;
        const next = Array.isArray(location) ? location[0] : location;
        if (!next) return { ok: false, blocked: false, error: `Redirect (${response.statusCode}) without a Location header`, url };
        if (hop >= maxRedirects) return { ok: false, blocked: false, error: `Too many redirects (limit: ${maxRedirects})`, url };
        url = new URL(next, url).href;
        redirects.push(url);
        // As browsers do: 307/308 repeat the request, the others turn it into a GET.
        if (response.statusCode !== 307 && response.statusCode !== 308) {
          method = 'GET';
          body = undefined;
        }
        continue;
      }
      const { body: received, truncated } = await readCapped(response.body, options.maxResponseBytes ?? 2_000_000);
      const type = response.headers['content-type'];
      return {
        ok: true,
        url,
        status: response.statusCode,
        contentType: (Array.isArray(type) ? type[0] : type) ?? '',
        body: received,
        truncated,
        address: verdict.address ?? verdict.addresses[0]!,
        redirects,
      };
    } catch (err) {
      if (options.signal?.aborted) throw err;
      return { ok: false, blocked: false, error: `Fetch failed: ${(err as Error).message}`, url };
    } finally {
      background(agent.close(), 'web_fetch connection pool not closed');
    }
  }
}

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/** A dns.lookup replacement that answers only with the checked addresses. */
export function pinnedLookup(addresses: string[]) {
  const entries: LookupAddress[] = addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  let next = 0;
  return (
    _hostname: string,
    options: LookupOptions | number | undefined,
    callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ) => {
    const opts: LookupOptions = typeof options === 'number' ? { family: options } : (options ?? {});
    const wanted = opts.family === 4 || opts.family === 6 ? entries.filter((e) => e.family === opts.family) : entries;
    const pool = wanted.length > 0 ? wanted : entries;
    if (opts.all) return callback(null, pool);
    const pick = pool[next++ % pool.length]!;
    callback(null, pick.address, pick.family);
  };
}

async function readCapped(stream: AsyncIterable<Buffer | Uint8Array> & { destroy?: () => void }, cap: number): Promise<{ body: Buffer; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buf = Buffer.from(chunk);
    if (size + buf.length > cap) {
      chunks.push(buf.subarray(0, cap - size));
      stream.destroy?.();
      return { body: Buffer.concat(chunks), truncated: true };
    }
    chunks.push(buf);
    size += buf.length;
  }
  return { body: Buffer.concat(chunks), truncated: false };
}
