import type { WardenConfig } from '../../../config/index.js';
import { checkUrlWithPolicy, guardedFetch, systemResolver, urlPolicyFor, type Resolver } from '../../../net/index.js';
import { TtlCache } from '../../../util/ttl-cache.js';
import type { ToolImplementation, ToolResult } from '../../types.js';
import { wrapUntrusted } from '../../untrusted.js';
import { webFetchAvailability, webFetchSettings } from './availability.js';
import { extractHtml, markdownToText } from './extract.js';
import { firecrawlScrape } from './firecrawl-scrape.js';
import { WEB_FETCH_LIMITS, webFetchDefaultMaxChars, webFetchParameters } from './web-fetch-schema.js';

export interface WebFetchArgs {
  url: string;
  extractMode?: 'markdown' | 'text';
  maxChars?: number;
}

export { WEB_FETCH_LIMITS };

export interface WebFetchDeps {
  config: WardenConfig;
  env?: Record<string, string | undefined>;
  /** Test seams (see guardedFetch): a fake DNS and a dialler. */
  resolve?: Resolver;
  dial?: (address: string) => string;
  cache?: TtlCache<ToolResult>;
}

const error = (text: string, details: Record<string, unknown>): ToolResult => ({ content: [{ type: 'text', text }], details: { status: 'error', ...details }, isError: true });

function decode(body: Buffer, contentType: string): string {
  const charset = /charset=([^;]+)/i.exec(contentType)?.[1]?.trim().replace(/^"|"$/g, '');
  try {
    return new TextDecoder(charset || 'utf-8').decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}

const sharedCache = new TtlCache<ToolResult>(100);

interface Page {
  finalUrl: string;
  httpStatus: number;
  contentType: string;
  title: string | undefined;
  content: string;
  extractor: string;
  rawBytes: number;
  truncatedBody: boolean;
  address?: string | undefined;
}

/**
 * web_fetch: GET a public page under the SSRF guard and return its main content as Markdown,
 * wrapped as untrusted data. Private networks can never be enabled for it (only the fake-IP
 * ranges of `tools.web.fetch.ssrfPolicy`, and hosts can be blocked). With `provider: firecrawl`,
 * pages the local extractor cannot read (or every page, with `readability: false`) go to
 * Firecrawl's scrape API — after the same URL check.
 */
export function createWebFetchTool(deps: WebFetchDeps): ToolImplementation<WebFetchArgs> {
  const settings = webFetchSettings(deps.config);
  const cache = deps.cache ?? sharedCache;
  const env = deps.env ?? process.env;
  const defaultMaxChars = webFetchDefaultMaxChars(deps.config);
  const headers: Record<string, string> = settings.userAgent ? { 'user-agent': settings.userAgent } : {};
  const parameters = webFetchParameters(deps.config);

  return {
    id: 'web_fetch',
    parameters,
    availability: () => webFetchAvailability(deps.config),
    async execute(args, ctx) {
      if (!settings.enabled) return error('web_fetch is turned off (tools.web.fetch.enabled: false)', { url: args.url });
      const maxChars = Math.min(args.maxChars ?? defaultMaxChars, settings.maxCharsCap);
      const mode = args.extractMode ?? 'markdown';
      const ttlMs = settings.cacheTtlMinutes * 60_000;
      const key = JSON.stringify([args.url.trim(), mode, maxChars]);
      const cached = cache.get(key, ttlMs);
      if (cached) return { ...cached, details: { ...(cached.details as object), cached: true } };

      const policy = urlPolicyFor(deps.config, 'web_fetch');
      const timeoutMs = settings.timeoutSec * 1000;
      const useFirecrawlFirst = settings.provider === 'firecrawl' && !settings.readability;
      let page: Page | undefined;
      let direct: ToolResult | undefined;

      if (!useFirecrawlFirst) {
        const fetched = await guardedFetch(args.url, {
          surface: 'web_fetch',
          policy,
          resolve: deps.resolve,
          dial: deps.dial,
          maxRedirects: settings.maxRedirects,
          maxResponseBytes: settings.maxResponseBytes,
          timeoutMs,
          headers,
          originHeaders: settings.headers,
          signal: ctx.signal,
        });
        // A refusal of the policy is final: no provider is asked to fetch what web_fetch may not.
        if (!fetched.ok && fetched.blocked) return error(fetched.error, { url: args.url, blocked: true });
        if (!fetched.ok) direct = error(fetched.error, { url: args.url, blocked: false });
        else if (fetched.status >= 400) direct = error(`HTTP ${fetched.status} from ${fetched.url}`, { url: fetched.url, httpStatus: fetched.status });
        else {
          const type = fetched.contentType.toLowerCase();
          const text = decode(fetched.body, type);
          const common = { finalUrl: fetched.url, httpStatus: fetched.status, contentType: fetched.contentType, rawBytes: fetched.body.length, truncatedBody: fetched.truncated, address: fetched.address };
          if (type.includes('html') || (!type && /^\s*</.test(text))) {
            const extracted = extractHtml(text, fetched.url, mode, { readability: settings.readability });
            page = { ...common, title: extracted.title, content: extracted.content, extractor: extracted.extractor };
            // A page with no readable text is what the fallback extractor is for.
            if (settings.provider === 'firecrawl' && extracted.content.trim().length < 200) page = undefined;
          } else if (type.startsWith('text/') || type.includes('json') || type.includes('xml')) {
            page = { ...common, title: undefined, content: text, extractor: 'raw' };
          } else {
            direct = error(`Unsupported content type "${fetched.contentType}" at ${fetched.url}: web_fetch reads HTML, text, JSON and XML`, { url: fetched.url, contentType: fetched.contentType });
          }
        }
      }

      if (!page && settings.provider === 'firecrawl') {
        // The target passes web_fetch's own check before Firecrawl is asked to fetch it.
        const verdict = await checkUrlWithPolicy(args.url, 'web_fetch', policy, deps.resolve ?? systemResolver);
        if (!verdict.allowed) return error(`Blocked: ${verdict.reason}`, { url: args.url, blocked: true });
        const scraped = await firecrawlScrape(args.url, settings.firecrawl ?? { onlyMainContent: true, maxAgeMs: 172_800_000 }, env, { timeoutMs, signal: ctx.signal, net: deps });
        if (!scraped.ok) return direct ? error(`${(direct.content[0] as { text: string }).text}; firecrawl: ${scraped.error}`, (direct.details ?? {}) as Record<string, unknown>) : error(scraped.error, { url: args.url });
        const markdown = scraped.value.markdown;
        page = {
          finalUrl: scraped.value.finalUrl,
          httpStatus: scraped.value.status ?? 200,
          contentType: 'text/markdown',
          title: scraped.value.title,
          content: mode === 'text' ? markdownToText(markdown) : markdown,
          extractor: 'firecrawl',
          rawBytes: Buffer.byteLength(markdown),
          truncatedBody: false,
        };
      }
      if (!page) return direct ?? error('web_fetch could not read the page', { url: args.url });

      const cut = page.content.length > maxChars;
      const body = cut ? `${page.content.slice(0, maxChars)}\n\n[... ${page.content.length - maxChars} more characters truncated; fetch with a larger maxChars or a narrower page]` : page.content;
      const header = [page.title ? `# ${page.title}` : undefined, `Source: ${page.finalUrl}`, page.truncatedBody ? `(response cut at ${settings.maxResponseBytes} bytes)` : undefined].filter(Boolean).join('\n');
      const result: ToolResult = {
        content: [{ type: 'text', text: wrapUntrusted(`web:${page.finalUrl}`, `${header}\n\n${body}`) }],
        details: {
          status: 'ok',
          url: args.url,
          finalUrl: page.finalUrl,
          httpStatus: page.httpStatus,
          contentType: page.contentType,
          title: page.title,
          extractor: page.extractor,
          rawBytes: page.rawBytes,
          chars: page.content.length,
          truncated: cut || page.truncatedBody,
          address: page.address,
        },
      };
      cache.set(key, result, ttlMs);
      return result;
    },
  };
}
