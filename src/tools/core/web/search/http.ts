import { guardedFetch, type UrlPolicy } from '../../../../net/index.js';
import type { NetworkSeams, ResolvedProvider } from './types.js';

export type HttpOutcome = { ok: true; status: number; text: string; contentType: string } | { ok: false; error: string };

/**
 * One request to a provider's API through the SSRF guard, pinned to the provider's host: no
 * redirect may leave it. A hosted API must be public (fake-IP proxy ranges allowed, as
 * OpenClaw does for provider hosts); a self-hosted one may be private, never cloud metadata.
 */
export async function providerRequest(
  provider: ResolvedProvider,
  url: string,
  init: { method?: 'GET' | 'POST'; headers?: Record<string, string>; json?: unknown; form?: Record<string, string>; timeoutMs: number; signal: AbortSignal; maxResponseBytes?: number },
  net: NetworkSeams,
): Promise<HttpOutcome> {
  const host = new URL(url).hostname;
  const policy: UrlPolicy = provider.selfHosted
    ? { allowPrivateNetwork: true, hostnameAllowlist: [host] }
    : { allowRfc2544BenchmarkRange: true, allowIpv6UniqueLocalRange: true, hostnameAllowlist: [host] };
  const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'Warden/0.1 (+web_search)', ...init.headers };
  let body: string | undefined;
  if (init.json !== undefined) {
    body = JSON.stringify(init.json);
    headers['content-type'] = 'application/json';
  } else if (init.form !== undefined) {
    body = new URLSearchParams(init.form).toString();
    headers['content-type'] = 'application/x-www-form-urlencoded';
  }
  const fetched = await guardedFetch(url, {
    surface: 'service',
    policy,
    resolve: net.resolve,
    dial: net.dial,
    method: init.method ?? (body === undefined ? 'GET' : 'POST'),
    body,
    headers,
    maxRedirects: 2,
    timeoutMs: init.timeoutMs,
    maxResponseBytes: init.maxResponseBytes ?? 4_000_000,
    signal: init.signal,
  });
  if (!fetched.ok) return { ok: false, error: fetched.blocked ? `the ${provider.id} endpoint is not reachable under the network policy (${fetched.error})` : `${provider.id} request failed: ${fetched.error}` };
  return { ok: true, status: fetched.status, text: fetched.body.toString('utf8'), contentType: fetched.contentType };
}

/** The sentence a failed status becomes; response bodies never reach the model. */
export function statusError(provider: ResolvedProvider, status: number): string {
  if (status === 401 || status === 403) return `the ${provider.id} API refused the credentials (HTTP ${status})${provider.keyEnv ? `: check ${provider.keyEnv}` : ''}`;
  if (status === 429) return `${provider.id} is rate-limiting requests (HTTP 429); try again later`;
  return `the ${provider.id} API answered HTTP ${status}`;
}

/** A JSON answer, or the error the model reads. */
export async function requestJson<T>(
  provider: ResolvedProvider,
  url: string,
  init: Parameters<typeof providerRequest>[2],
  net: NetworkSeams,
): Promise<{ ok: true; body: T } | { ok: false; error: string }> {
  const got = await providerRequest(provider, url, init, net);
  if (!got.ok) return got;
  if (got.status < 200 || got.status >= 300) return { ok: false, error: statusError(provider, got.status) };
  try {
    return { ok: true, body: JSON.parse(got.text) as T };
  } catch {
    return { ok: false, error: `${provider.id} answered with something that is not JSON` };
  }
}

export const joinUrl = (base: string, path: string) => `${base.replace(/\/+$/, '')}${path}`;
