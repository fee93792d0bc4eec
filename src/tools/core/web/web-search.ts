import type { WardenConfig, WebSearchConfig } from '../../../config/schema/index.js';
import type { Availability, ToolImplementation, ToolResult } from '../../types.js';
import { wrapUntrusted } from '../../untrusted.js';

export interface WebSearchArgs {
  query: string;
  count?: number;
}

export interface SearchHit {
  title: string;
  url: string;
  snippet: string;
}

type ProviderResult = { ok: true; hits: SearchHit[] } | { ok: false; error: string };

const parameters = {
  type: 'object',
  properties: {
    query: { type: 'string', minLength: 1, maxLength: 400, description: 'What to search the web for.' },
    count: { type: 'integer', minimum: 1, maximum: 20, description: 'How many results (default from the config, usually 5).' },
  },
  required: ['query'],
  additionalProperties: false,
} as const;

const BRAVE_DEFAULT = 'https://api.search.brave.com';

function apiKeyEnv(search: WebSearchConfig): string | undefined {
  return search.apiKeyEnv ?? (search.provider === 'brave' ? 'BRAVE_API_KEY' : undefined);
}

/** web_search is offered only when a provider is configured and its key is present. */
export function webSearchAvailability(config: WardenConfig, env: NodeJS.ProcessEnv = process.env): Availability {
  const search = config.tools.web?.search;
  if (!search) return { ok: false, why: 'no search provider configured (tools.web.search)' };
  if (search.provider === 'searxng' && !search.baseUrl) return { ok: false, why: 'tools.web.search.baseUrl is required for searxng' };
  const keyEnv = apiKeyEnv(search);
  if (search.provider === 'brave' && keyEnv && !env[keyEnv]) return { ok: false, why: `${keyEnv} is not set` };
  return { ok: true };
}

const strip = (html: string) => html.replace(/<[^>]+>/g, '').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&').trim();

async function getJson(url: URL, headers: Record<string, string>, timeoutMs: number, signal: AbortSignal): Promise<{ ok: true; body: unknown } | { ok: false; error: string }> {
  try {
    const response = await fetch(url, { headers: { accept: 'application/json', ...headers }, signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) });
    if (response.status === 429) return { ok: false, error: 'the search provider is rate-limiting requests (HTTP 429); try again later' };
    if (!response.ok) return { ok: false, error: `the search provider answered HTTP ${response.status}` };
    return { ok: true, body: await response.json() };
  } catch (err) {
    if (signal.aborted) throw err;
    return { ok: false, error: `search request failed: ${(err as Error).message}` };
  }
}

async function brave(search: WebSearchConfig, query: string, count: number, env: NodeJS.ProcessEnv, signal: AbortSignal): Promise<ProviderResult> {
  const url = new URL('/res/v1/web/search', search.baseUrl ?? BRAVE_DEFAULT);
  url.searchParams.set('q', query);
  url.searchParams.set('count', String(count));
  const key = env[apiKeyEnv(search)!] ?? '';
  const got = await getJson(url, { 'x-subscription-token': key }, search.timeoutSec * 1000, signal);
  if (!got.ok) return got;
  const results = (got.body as { web?: { results?: Array<{ title?: string; url?: string; description?: string }> } }).web?.results ?? [];
  return { ok: true, hits: results.filter((r) => r.url).map((r) => ({ title: strip(r.title ?? r.url!), url: r.url!, snippet: strip(r.description ?? '') })) };
}

async function searxng(search: WebSearchConfig, query: string, env: NodeJS.ProcessEnv, signal: AbortSignal): Promise<ProviderResult> {
  const url = new URL('/search', search.baseUrl);
  url.searchParams.set('q', query);
  url.searchParams.set('format', 'json');
  const keyEnv = apiKeyEnv(search);
  const headers: Record<string, string> = keyEnv && env[keyEnv] ? { authorization: `Bearer ${env[keyEnv]}` } : {};
  const got = await getJson(url, headers, search.timeoutSec * 1000, signal);
  if (!got.ok) return got;
  const results = (got.body as { results?: Array<{ title?: string; url?: string; content?: string }> }).results ?? [];
  return { ok: true, hits: results.filter((r) => r.url).map((r) => ({ title: strip(r.title ?? r.url!), url: r.url!, snippet: strip(r.content ?? '') })) };
}

/**
 * web_search: asks the configured provider (Brave Search API or a SearXNG instance) and returns
 * titles, URLs and snippets, wrapped as untrusted data. The endpoint comes from the operator's
 * config, never from the model; the model supplies only the query.
 */
export function createWebSearchTool(config: WardenConfig, env: NodeJS.ProcessEnv = process.env): ToolImplementation<WebSearchArgs> {
  return {
    id: 'web_search',
    parameters,
    async execute(args, ctx) {
      const search = config.tools.web?.search;
      const available = webSearchAvailability(config, env);
      if (!search || !available.ok) return { content: [{ type: 'text', text: `web_search is unavailable: ${available.ok ? 'not configured' : available.why}` }], isError: true };
      const count = Math.min(args.count ?? search.maxResults, 20);
      const result = search.provider === 'brave' ? await brave(search, args.query, count, env, ctx.signal) : await searxng(search, args.query, env, ctx.signal);
      if (!result.ok) return { content: [{ type: 'text', text: result.error }], details: { status: 'error', provider: search.provider }, isError: true } satisfies ToolResult;
      const hits = result.hits.slice(0, count);
      const body = hits.length === 0 ? 'No results.' : hits.map((h, i) => `${i + 1}. ${h.title}\n   ${h.url}${h.snippet ? `\n   ${h.snippet}` : ''}`).join('\n');
      return {
        content: [{ type: 'text', text: wrapUntrusted(`web_search:${search.provider}`, `Results for "${args.query}":\n${body}`) }],
        details: { status: 'ok', provider: search.provider, query: args.query, hits },
      };
    },
  };
}
