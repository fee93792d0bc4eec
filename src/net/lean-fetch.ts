import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import type { Dispatcher } from 'undici';

/**
 * The `fetch` the model SDKs and Slack's web client are given for their API calls: the request
 * goes out through undici's `request` (the dispatcher API under the global `fetch`) and the
 * answer comes back as a web `Response`, so the SDK reads it as before. The global `fetch`
 * spends about as much CPU again on the Fetch standard's machinery around an exchange (Request
 * and Headers objects checked field by field, a fetch controller, a web stream under the request
 * body) as on the HTTP exchange itself, and a chat message makes two such calls (the model, the
 * reply). What stays as it was, each shown in lean-fetch.test.ts:
 *  - the caller's signal aborts the request, before the answer and while its body streams (the
 *    SDKs' timeouts are signals, so they work the same way);
 *  - the connection goes through the process's global dispatcher, the one the global `fetch`
 *    uses: a proxy set for the process (undici's `setGlobalDispatcher`) carries these calls too;
 *  - a compressed answer (gzip, deflate, br) is decoded, as `fetch` decodes it;
 *  - retries and their backoff stay the callers' (Warden's retry.ts around a model call, the
 *    web client's own policy around a Slack call).
 * Redirects are stricter: `redirect: 'error'` fails on one (Slack's client asks for that),
 * `'manual'` hands it back, and the default follows only a 307 or 308 within the request's
 * origin (method and body kept, at most MAX_REDIRECTS); any other redirect comes back to the
 * caller as the error status it is, so a prompt and its key never follow a redirect to another host.
 * A body this does not send as is (form data, a stream, a Blob) goes to the global `fetch`.
 */
export const MAX_REDIRECTS = 3;

let undici: Promise<typeof import('undici')> | undefined;
// undici (hundreds of modules) is loaded at the first call, not at every start.
const load = () => (undici ??= import('undici'));

type FetchInput = string | URL | Request;

export function leanFetch(): typeof fetch {
  return (async (input: FetchInput, init?: RequestInit): Promise<Response> => {
    const body = init?.body;
    const plain = body === undefined || body === null || typeof body === 'string' || body instanceof Uint8Array || body instanceof ArrayBuffer;
    if (!plain || (typeof input !== 'string' && !(input instanceof URL))) return globalThis.fetch(input, init);
    const method = (init?.method ?? 'GET').toUpperCase();
    const answer = await leanRequest(typeof input === 'string' ? input : input.href, {
      method,
      headers: flatHeaders(init?.headers),
      body: body instanceof ArrayBuffer ? new Uint8Array(body) : (body ?? undefined),
      signal: init?.signal ?? undefined,
      redirect: init?.redirect ?? 'follow',
    });
    return toResponse(answer, method);
  }) as typeof fetch;
}

export interface LeanRequest {
  method: string;
  /** Names lowered, one value each (see flatHeaders). */
  headers: Record<string, string>;
  body?: string | Uint8Array | undefined;
  signal?: AbortSignal | undefined;
  redirect?: RequestRedirect;
}

/**
 * One HTTP exchange under leanFetch's rules (the global dispatcher, the redirect policy), for a
 * caller that reads the answer as a Node stream and needs no web Response: the answer's status,
 * headers and undici body, undecoded (see `decodedBody`).
 */
export async function leanRequest(url: string, init: LeanRequest): Promise<Dispatcher.ResponseData> {
  const { request } = await load();
  const { method, headers, body, signal } = init;
  const redirect = init.redirect ?? 'follow';
  for (let hop = 0; ; hop++) {
    const answer = await request(url, { method: method as Dispatcher.HttpMethod, headers, body, signal });
    const location = answer.headers.location;
    const redirected = answer.statusCode >= 300 && answer.statusCode < 400 && typeof location === 'string';
    if (redirected && redirect === 'error') {
      discard(answer);
      throw new TypeError(`fetch failed: redirect (${answer.statusCode}) from ${url} refused`);
    }
    if (redirected && redirect === 'follow' && (answer.statusCode === 307 || answer.statusCode === 308) && hop < MAX_REDIRECTS) {
      const next = sameOriginTarget(url, location);
      if (next !== undefined) {
        discard(answer);
        url = next;
        continue;
      }
    }
    return answer;
  }
}

export function discard(answer: Dispatcher.ResponseData): void {
  answer.body.on('error', () => {});
  answer.body.resume();
}

/** `location` resolved against `from`, when it stays on `from`'s origin. */
function sameOriginTarget(from: string, location: string): string | undefined {
  try {
    const base = new URL(from);
    const next = new URL(location, base);
    return next.origin === base.origin ? next.href : undefined;
  } catch {
    return undefined;
  }
}

/** Header names lowered, repeated names joined as the Fetch standard joins them. */
function flatHeaders(headers: RequestInit['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  if (!headers) return out;
  const add = (name: string, value: string) => {
    const key = name.toLowerCase();
    out[key] = key in out ? `${out[key]}, ${value}` : value;
  };
  if (headers instanceof Headers) headers.forEach((value, name) => add(name, value));
  else if (Array.isArray(headers)) for (const [name, value] of headers) add(name!, value!);
  else for (const [name, value] of Object.entries(headers)) if (value !== undefined && value !== null) add(name, String(value));
  return out;
}

const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/** The answer's body with its content coding (gzip, deflate, br) undone, as `fetch` undoes it. */
export function decodedBody(answer: Dispatcher.ResponseData): Readable {
  return decoded(answer.body, answer.headers['content-encoding']);
}

function decoded(body: Readable, encoding: string | string[] | undefined): Readable {
  const coding = typeof encoding === 'string' ? encoding.trim().toLowerCase() : '';
  const decoder =
    coding === 'gzip' || coding === 'x-gzip'
      ? zlib.createGunzip({ flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH })
      : coding === 'deflate'
        ? zlib.createInflate({ flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH })
        : coding === 'br'
          ? zlib.createBrotliDecompress({ flush: zlib.constants.BROTLI_OPERATION_FLUSH, finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH })
          : undefined;
  if (!decoder) return body;
  body.on('error', (err) => decoder.destroy(err));
  decoder.on('close', () => body.destroy());
  return body.pipe(decoder);
}

function toResponse(answer: Dispatcher.ResponseData, method: string): Response {
  const headers = new Headers();
  for (const name in answer.headers) {
    const value = answer.headers[name];
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else headers.append(name, value);
  }
  const init = { status: answer.statusCode, statusText: answer.statusText ?? '', headers };
  if (NULL_BODY.has(answer.statusCode) || method === 'HEAD') {
    discard(answer);
    return new Response(null, init);
  }
  const body = decodedBody(answer);
  return new Response(Readable.toWeb(body) as ReadableStream<Uint8Array>, init);
}
