import { guardedFetch } from './fetch.js';
import type { Resolver, UrlPolicy } from './check.js';

/**
 * One request to an API endpoint the operator configured (a search provider, a transcription or
 * vision model), through the SSRF guard and pinned to that endpoint's host: no redirect may
 * leave it. A hosted endpoint must be public (the fake-IP proxy ranges allowed); a self-hosted
 * one (a local Ollama, a SearXNG on the LAN) may be private, never cloud metadata.
 */
export interface ServiceRequest {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string | Buffer;
  selfHosted: boolean;
  timeoutMs: number;
  signal: AbortSignal;
  maxResponseBytes?: number;
  /** Test seams, as for guardedFetch. */
  resolve?: Resolver | undefined;
  dial?: ((address: string) => string) | undefined;
}

export type ServiceResponse = { ok: true; status: number; body: Buffer; contentType: string } | { ok: false; blocked: boolean; error: string };

export async function serviceRequest(url: string, request: ServiceRequest): Promise<ServiceResponse> {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return { ok: false, blocked: true, error: `invalid endpoint URL ${url}` };
  }
  const policy: UrlPolicy = request.selfHosted
    ? { allowPrivateNetwork: true, hostnameAllowlist: [host] }
    : { allowRfc2544BenchmarkRange: true, allowIpv6UniqueLocalRange: true, hostnameAllowlist: [host] };
  const fetched = await guardedFetch(url, {
    surface: 'service',
    policy,
    resolve: request.resolve,
    dial: request.dial,
    method: request.method ?? (request.body === undefined ? 'GET' : 'POST'),
    body: request.body,
    headers: { accept: 'application/json', ...request.headers },
    maxRedirects: 2,
    timeoutMs: request.timeoutMs,
    maxResponseBytes: request.maxResponseBytes ?? 4_000_000,
    signal: request.signal,
  });
  if (!fetched.ok) return { ok: false, blocked: fetched.blocked, error: fetched.error };
  return { ok: true, status: fetched.status, body: fetched.body, contentType: fetched.contentType };
}
