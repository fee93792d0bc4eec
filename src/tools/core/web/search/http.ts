import { serviceRequest } from '../../../../net/index.js';
import type { NetworkSeams, ResolvedProvider } from './types.js';
import { withoutTrailingSlashes } from '../../../../util/trailing-slashes.js';

export type HttpOutcome = { ok: true; status: number; text: string; contentType: string } | { ok: false; error: string };

/** One request to a provider's API, through the guard and pinned to its host (net/service.ts). */
export async function providerRequest(
  provider: ResolvedProvider,
  url: string,
  init: { method?: 'GET' | 'POST'; headers?: Record<string, string>; json?: unknown; form?: Record<string, string>; timeoutMs: number; signal: AbortSignal; maxResponseBytes?: number },
  net: NetworkSeams,
): Promise<HttpOutcome> {
  const headers: Record<string, string> = { 'user-agent': 'Warden/0.1 (+web_search)', ...init.headers };
  let body: string | undefined;
  if (init.json !== undefined) {
    body = JSON.stringify(init.json);
    headers['content-type'] = 'application/json';
  } else if (init.form !== undefined) {
    body = new URLSearchParams(init.form).toString();
    headers['content-type'] = 'application/x-www-form-urlencoded';
  }
  const got = await serviceRequest(url, { method: init.method, headers, body, selfHosted: provider.selfHosted, timeoutMs: init.timeoutMs, signal: init.signal, maxResponseBytes: init.maxResponseBytes, ...net });
  if (!got.ok) return { ok: false, error: got.blocked ? `the ${provider.id} endpoint is not reachable under the network policy (${got.error})` : `${provider.id} request failed: ${got.error}` };
  return { ok: true, status: got.status, text: got.body.toString('utf8'), contentType: got.contentType };
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

export const joinUrl = (base: string, path: string) => `${withoutTrailingSlashes(base)}${path}`;
