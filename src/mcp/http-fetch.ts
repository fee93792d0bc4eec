import type { Agent } from 'undici';
import { checkUrlWithPolicy, systemResolver, type Resolver, type UrlPolicy } from '../net/check.js';
import { pinnedLookup } from '../net/fetch.js';
import type { OwnListener } from '../net/own-listeners.js';

/**
 * The `fetch` the MCP SDK's streamable HTTP transport is given: every request to the server
 * goes through Warden's SSRF guard on the `service` surface (an endpoint the operator
 * configured, as a self-hosted search provider is). Each request must stay on the configured
 * origin; its host's DNS answers are checked — cloud metadata and Warden's own listeners are
 * refused whatever the policy, private addresses unless the server may use them — and the
 * connection is pinned to the checked addresses, so a second DNS answer cannot send it
 * elsewhere. Redirects are refused, never followed (they would carry the configured headers).
 * Environment proxies are not used. A response body is cut at `maxResponseBytes`.
 */

export interface GuardedFetchSettings {
  /** The configured endpoint. */
  url: string;
  allowPrivateNetwork: boolean;
  /** Warden's listeners as the config declares them (the running ones are always added). */
  ownListeners: readonly OwnListener[];
  maxResponseBytes?: number | undefined;
  connectTimeoutMs?: number | undefined;
  /** Test seams, as for guardedFetch: a fake DNS and a dialler. */
  resolve?: Resolver | undefined;
  dial?: ((address: string) => string) | undefined;
}

/** Checked DNS answers (and their connection pool) are reused this long. */
const VERDICT_TTL_MS = 30_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;


export class McpRequestBlocked extends Error {}

export function guardedMcpFetch(settings: GuardedFetchSettings): typeof fetch {
  const origin = new URL(settings.url).origin;
  const host = new URL(settings.url).hostname;
  const policy: UrlPolicy = settings.allowPrivateNetwork
    ? { allowPrivateNetwork: true, hostnameAllowlist: [host], ownListeners: settings.ownListeners }
    : { allowRfc2544BenchmarkRange: true, allowIpv6UniqueLocalRange: true, hostnameAllowlist: [host], ownListeners: settings.ownListeners };
  const resolve = settings.resolve ?? systemResolver;
  const dial = settings.dial ?? ((a: string) => a);
  let cached: { key: string; agent: Agent; until: number } | undefined;

  const agentFor = async (url: string): Promise<Agent> => {
    const verdict = await checkUrlWithPolicy(url, 'service', policy, resolve);
    if (!verdict.allowed || !verdict.addresses) throw new McpRequestBlocked(`Blocked: ${verdict.reason}`);
    const pinned = verdict.addresses.map(dial);
    const key = pinned.join(',');
    const now = Date.now();
    if (cached && cached.key === key && cached.until > now) return cached.agent;
    const previous = cached?.agent;
    // undici is loaded at the first request to an MCP server, not at every start.
    const { Agent } = await import('undici');
    const agent = new Agent({ connect: { lookup: pinnedLookup(pinned), timeout: settings.connectTimeoutMs ?? 30_000 } });
    cached = { key, agent, until: now + VERDICT_TTL_MS };
    // Requests still running on the old pool finish there.
    if (previous) void previous.close().catch(() => {});
    return agent;
  };

  const guarded = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      throw new McpRequestBlocked(`Blocked: invalid URL ${url}`);
    }
    if (target.origin !== origin) throw new McpRequestBlocked(`Blocked: ${target.origin} is not the configured MCP server ${origin}`);
    const dispatcher = await agentFor(target.href);
    // The transport hands every request the session's one signal; undici leaves a listener on it
    // per request. Each request gets its own, tied to the session's until its response has ended.
    const outer = init?.signal ?? undefined;
    const own = new AbortController();
    const forward = () => own.abort(outer?.reason);
    if (outer?.aborted) own.abort(outer.reason);
    else outer?.addEventListener('abort', forward, { once: true });
    const unlink = () => outer?.removeEventListener('abort', forward);
    let response: Response;
    try {
      const { fetch: undiciFetch } = await import('undici');
      response = (await undiciFetch(target.href, { ...(init as object), signal: own.signal, dispatcher, redirect: 'manual' } as Parameters<typeof undiciFetch>[1])) as unknown as Response;
    } catch (err) {
      unlink();
      throw err;
    }
    if (response.status >= 300 && response.status < 400) {
      unlink();
      await response.body?.cancel().catch(() => {});
      throw new McpRequestBlocked(`Blocked: the MCP server answered ${response.status} with a redirect to ${response.headers.get('location') ?? '(nowhere)'}; MCP requests are not redirected (configure the final URL)`);
    }
    const method = (init?.method ?? 'GET').toUpperCase();
    // The standalone notification stream (GET) lives as long as the session; a response to a request does not.
    if (method === 'GET') return response;
    if (!response.body) {
      unlink();
      return response;
    }
    return capped(response, settings.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES, unlink);
  };
  return guarded as typeof fetch;
}

function capped(response: Response, max: number, done: () => void): Response {
  let seen = 0;
  const limit = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      seen += chunk.byteLength;
      if (seen > max) {
        done();
        controller.error(new Error(`the MCP server's response exceeds ${max} bytes`));
      } else controller.enqueue(chunk);
    },
    flush: done,
  });
  return new Response(response.body!.pipeThrough(limit), { status: response.status, statusText: response.statusText, headers: response.headers });
}
