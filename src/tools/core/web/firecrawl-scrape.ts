import { requestJson } from './search/http.js';
import type { NetworkSeams, ResolvedProvider } from './search/types.js';
import { withoutTrailingSlashes } from '../../../util/trailing-slashes.js';

/** What Firecrawl's scrape API extracted from a page. */
export interface Scraped {
  markdown: string;
  title: string | undefined;
  finalUrl: string;
  status: number | undefined;
}

export interface FirecrawlSettings {
  baseUrl?: string | undefined;
  apiKeyEnv?: string | undefined;
  onlyMainContent: boolean;
  maxAgeMs: number;
}

const DEFAULT_BASE = 'https://api.firecrawl.dev';

/**
 * Firecrawl as web_fetch's extractor: POST /v2/scrape {url, formats: [markdown]}. The key is
 * optional (Firecrawl's keyless tier); a base URL the operator set is their own server and may be
 * private. The caller checks the target URL under web_fetch's policy first: Firecrawl is never
 * asked to fetch what web_fetch itself may not reach.
 */
export async function firecrawlScrape(
  url: string,
  settings: FirecrawlSettings,
  env: Record<string, string | undefined>,
  init: { timeoutMs: number; signal: AbortSignal; net: NetworkSeams },
): Promise<{ ok: true; value: Scraped } | { ok: false; error: string }> {
  const keyEnv = settings.apiKeyEnv ?? 'FIRECRAWL_API_KEY';
  const key = env[keyEnv] || undefined;
  const base = withoutTrailingSlashes(settings.baseUrl ?? env.FIRECRAWL_BASE_URL ?? DEFAULT_BASE);
  const provider: ResolvedProvider = { id: 'firecrawl', baseUrl: base, apiKey: key, keyEnv: key ? keyEnv : undefined, selfHosted: base !== DEFAULT_BASE };
  type Body = { success?: boolean; data?: { markdown?: unknown; metadata?: { title?: unknown; sourceURL?: unknown; url?: unknown; statusCode?: unknown } }; error?: unknown };
  const got = await requestJson<Body>(
    provider,
    `${base}/v2/scrape`,
    {
      headers: key ? { authorization: `Bearer ${key}` } : {},
      json: { url, formats: ['markdown'], onlyMainContent: settings.onlyMainContent, maxAge: settings.maxAgeMs },
      timeoutMs: init.timeoutMs,
      signal: init.signal,
    },
    init.net,
  );
  if (!got.ok) return got;
  const data = got.body.data;
  if (got.body.success === false || typeof data?.markdown !== 'string') return { ok: false, error: 'firecrawl could not extract the page' };
  const meta = data.metadata ?? {};
  const finalUrl = typeof meta.sourceURL === 'string' ? meta.sourceURL : typeof meta.url === 'string' ? meta.url : url;
  return { ok: true, value: { markdown: data.markdown, title: typeof meta.title === 'string' ? meta.title : undefined, finalUrl, status: typeof meta.statusCode === 'number' ? meta.statusCode : undefined } };
}
