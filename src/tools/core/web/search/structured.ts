import { joinUrl, requestJson } from './http.js';
import { hits } from './clean.js';
import { isOllamaCloud } from './select.js';
import type { ProviderCall, ProviderOutcome } from './types.js';

/**
 * Providers that answer with ranked links. Each function speaks its API as documented by the
 * provider and maps the answer to SearchHit; errors are values.
 */
const bearer = (key: string | undefined): Record<string, string> => (key ? { authorization: `Bearer ${key}` } : {});
const results = (r: ReturnType<typeof hits>): ProviderOutcome => ({ ok: true, finding: { kind: 'results', results: r } });

type Item = Record<string, unknown>;

/** Brave Search API: GET /res/v1/web/search?q=&count=, X-Subscription-Token. */
export async function brave(c: ProviderCall): Promise<ProviderOutcome> {
  const url = new URL(joinUrl(c.provider.baseUrl, '/res/v1/web/search'));
  url.searchParams.set('q', c.query);
  url.searchParams.set('count', String(c.count));
  const got = await requestJson<{ web?: { results?: unknown } }>(c.provider, url.href, { headers: { 'x-subscription-token': c.provider.apiKey ?? '' }, timeoutMs: c.timeoutMs, signal: c.signal }, c.net);
  if (!got.ok) return got;
  return results(hits<Item>(got.body.web?.results, (r) => ({ title: r.title, url: r.url, snippet: r.description, published: r.page_age }), c.count));
}

/** SearXNG's JSON API: GET /search?q=&format=json. */
export async function searxng(c: ProviderCall): Promise<ProviderOutcome> {
  const url = new URL(joinUrl(c.provider.baseUrl, '/search'));
  url.searchParams.set('q', c.query);
  url.searchParams.set('format', 'json');
  const got = await requestJson<{ results?: unknown }>(c.provider, url.href, { headers: bearer(c.provider.apiKey), timeoutMs: c.timeoutMs, signal: c.signal }, c.net);
  if (!got.ok) return got;
  return results(hits<Item>(got.body.results, (r) => ({ title: r.title, url: r.url, snippet: r.content, published: r.publishedDate }), c.count));
}

/** Tavily: POST /search {query, max_results}, bearer key. */
export async function tavily(c: ProviderCall): Promise<ProviderOutcome> {
  const got = await requestJson<{ results?: unknown }>(
    c.provider,
    joinUrl(c.provider.baseUrl, '/search'),
    { headers: bearer(c.provider.apiKey), json: { query: c.query, max_results: c.count, search_depth: 'basic', topic: 'general' }, timeoutMs: c.timeoutMs, signal: c.signal },
    c.net,
  );
  if (!got.ok) return got;
  return results(hits<Item>(got.body.results, (r) => ({ title: r.title, url: r.url, snippet: r.content, published: r.published_date }), c.count));
}

/** Exa: POST /search {query, numResults, contents: {highlights}}, x-api-key; the snippet is the first highlight. */
export async function exa(c: ProviderCall): Promise<ProviderOutcome> {
  const endpoint = /\/search$/.test(c.provider.baseUrl) ? c.provider.baseUrl : joinUrl(c.provider.baseUrl, '/search');
  const got = await requestJson<{ results?: unknown }>(
    c.provider,
    endpoint,
    { headers: { 'x-api-key': c.provider.apiKey ?? '' }, json: { query: c.query, numResults: c.count, type: 'auto', contents: { highlights: true } }, timeoutMs: c.timeoutMs, signal: c.signal },
    c.net,
  );
  if (!got.ok) return got;
  return results(
    hits<Item>(
      got.body.results,
      (r) => ({ title: r.title, url: r.url, snippet: (Array.isArray(r.highlights) ? r.highlights[0] : undefined) ?? r.summary ?? r.text, published: r.publishedDate }),
      c.count,
    ),
  );
}

/** Perplexity Search API: POST /search {query, max_results}, bearer key. */
export async function perplexitySearch(c: ProviderCall): Promise<ProviderOutcome> {
  const got = await requestJson<{ results?: unknown }>(c.provider, joinUrl(c.provider.baseUrl, '/search'), { headers: bearer(c.provider.apiKey), json: { query: c.query, max_results: c.count }, timeoutMs: c.timeoutMs, signal: c.signal }, c.net);
  if (!got.ok) return got;
  return results(hits<Item>(got.body.results, (r) => ({ title: r.title, url: r.url, snippet: r.snippet, published: r.date }), c.count));
}

/** Firecrawl: POST /v2/search {query, limit}, bearer key; web hits under data.web. */
export async function firecrawl(c: ProviderCall): Promise<ProviderOutcome> {
  const got = await requestJson<{ success?: boolean; data?: { web?: unknown } | unknown[]; error?: string }>(
    c.provider,
    joinUrl(c.provider.baseUrl, '/v2/search'),
    { headers: bearer(c.provider.apiKey), json: { query: c.query, limit: c.count }, timeoutMs: c.timeoutMs, signal: c.signal },
    c.net,
  );
  if (!got.ok) return got;
  if (got.body.success === false) return { ok: false, error: 'firecrawl reported the search as failed' };
  const web = Array.isArray(got.body.data) ? got.body.data : (got.body.data as { web?: unknown } | undefined)?.web;
  return results(hits<Item>(web, (r) => ({ title: r.title, url: r.url, snippet: r.description ?? r.snippet }), c.count));
}

/** MiniMax Token Plan search: POST /v1/coding_plan/search {q}, bearer key; hits under organic. */
export async function minimax(c: ProviderCall): Promise<ProviderOutcome> {
  const got = await requestJson<{ organic?: unknown; base_resp?: { status_code?: number; status_msg?: string } }>(
    c.provider,
    joinUrl(c.provider.baseUrl, '/v1/coding_plan/search'),
    { headers: bearer(c.provider.apiKey), json: { q: c.query }, timeoutMs: c.timeoutMs, signal: c.signal },
    c.net,
  );
  if (!got.ok) return got;
  const code = got.body.base_resp?.status_code;
  if (code !== undefined && code !== 0) return { ok: false, error: `minimax answered status ${code}` };
  return results(hits<Item>(got.body.organic, (r) => ({ title: r.title, url: r.link, snippet: r.snippet, published: r.date }), c.count));
}

/** Parallel Search: POST /v1/search {objective, search_queries, advanced_settings.max_results}, x-api-key. */
export async function parallel(c: ProviderCall): Promise<ProviderOutcome> {
  const endpoint = /\/v1\/search$/.test(c.provider.baseUrl) ? c.provider.baseUrl : joinUrl(c.provider.baseUrl, '/v1/search');
  const got = await requestJson<{ results?: unknown }>(
    c.provider,
    endpoint,
    { headers: { 'x-api-key': c.provider.apiKey ?? '' }, json: { objective: c.query, search_queries: [c.query], advanced_settings: { max_results: c.count } }, timeoutMs: c.timeoutMs, signal: c.signal },
    c.net,
  );
  if (!got.ok) return got;
  return results(
    hits<Item>(got.body.results, (r) => ({ title: r.title, url: r.url, snippet: Array.isArray(r.excerpts) ? r.excerpts.join(' ') : undefined, published: r.publish_date }), c.count),
  );
}

/**
 * Ollama web search: the hosted API at ollama.com (POST /api/web_search, bearer key), or a
 * signed-in local daemon's proxy (POST /api/experimental/web_search, no key).
 */
export async function ollama(c: ProviderCall): Promise<ProviderOutcome> {
  const path = isOllamaCloud(c.provider.baseUrl) ? '/api/web_search' : '/api/experimental/web_search';
  const got = await requestJson<{ results?: unknown }>(c.provider, joinUrl(c.provider.baseUrl, path), { headers: bearer(c.provider.apiKey), json: { query: c.query, max_results: c.count }, timeoutMs: c.timeoutMs, signal: c.signal }, c.net);
  if (!got.ok) return got;
  return results(hits<Item>(got.body.results, (r) => ({ title: r.title, url: r.url, snippet: r.content }), c.count));
}
