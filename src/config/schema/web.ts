import * as z from 'zod';
import { lazySchema, once } from './lazy.js';

/** Web search providers, in OpenClaw's auto-detection order for the ones that need a key. */
export const WEB_SEARCH_PROVIDERS = ['brave', 'minimax', 'gemini', 'grok', 'kimi', 'perplexity', 'firecrawl', 'exa', 'tavily', 'parallel', 'searxng', 'duckduckgo', 'ollama'] as const;
export type WebSearchProviderId = (typeof WEB_SEARCH_PROVIDERS)[number];

const envName = once(() => z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name'));

/** Where one provider is reached; every field falls back to the provider's documented default. */
export const webSearchProviderSettings = lazySchema(() => z.strictObject({
  /** API base (proxy, self-hosted instance, regional host). */
  baseUrl: z.url().optional(),
  /** Environment variable holding the key, instead of the provider's usual ones. */
  apiKeyEnv: envName().optional(),
  /** Model of the grounded-answer providers (gemini, grok, kimi, perplexity through OpenRouter). */
  model: z.string().min(1).optional(),
}));
export type WebSearchProviderSettings = z.infer<typeof webSearchProviderSettings>;

/**
 * `tools.web.search`. Without `provider` the first provider whose key is in the environment is
 * used (OpenClaw's order); keyless providers (duckduckgo, ollama) only when named.
 */
export const webSearchConfig = lazySchema(() => z
  .strictObject({
    /** false: web_search is unavailable. */
    enabled: z.boolean().default(true),
    provider: z.enum(WEB_SEARCH_PROVIDERS).optional(),
    /** For the configured provider: API base (required for searxng unless SEARXNG_BASE_URL is set). */
    baseUrl: z.url().optional(),
    /** For the configured provider: the environment variable holding its key. */
    apiKeyEnv: envName().optional(),
    /** For the configured provider: the model of a grounded-answer provider. */
    model: z.string().min(1).optional(),
    /** Per provider, for auto-detection across several: baseUrl, apiKeyEnv, model. */
    providers: z.partialRecord(z.enum(WEB_SEARCH_PROVIDERS), webSearchProviderSettings).optional(),
    maxResults: z.number().int().min(1).max(20).default(5),
    timeoutSec: z.number().int().positive().max(120).default(30),
    /** Identical queries are answered from memory for this long; 0 turns the cache off. */
    cacheTtlMinutes: z.number().min(0).max(1440).default(15),
  })
  .superRefine((search, ctx) => {
    if (search.provider === undefined) {
      for (const key of ['baseUrl', 'apiKeyEnv', 'model'] as const) {
        if (search[key] !== undefined) ctx.addIssue({ code: 'custom', path: [key], message: `${key} applies to the configured provider: set provider, or use providers.<id>.${key}` });
      }
    }
  }));
export type WebSearchConfig = z.infer<typeof webSearchConfig>;

/** Header names web_fetch owns or a request cannot carry (OpenClaw drops the same ones). */
const RESERVED_HEADERS = new Set(['accept', 'accept-language', 'user-agent', 'host', 'content-length', 'transfer-encoding', 'connection', 'upgrade', 'keep-alive', 'te', 'trailer', 'proxy-connection', 'proxy-authorization']);
const headerName = once(() => z
  .string()
  .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'not a valid HTTP header name')
  .refine((name) => !RESERVED_HEADERS.has(name.toLowerCase()), { message: 'web_fetch sets this header itself (use userAgent for the user agent)' }));
const headerValue = once(() => z.string().regex(/^[\t\x20-\x7e\x80-\xff]*$/, 'header values cannot carry control characters or characters above U+00FF'));

/**
 * `tools.web.fetch`. Private networks stay out of reach whatever is set here: only the fake-IP
 * ranges can be opened, and hosts can be blocked.
 */
/** `tools.web.fetch.enabled` when unset (read by the availability check without building this schema). */
export const WEB_FETCH_ENABLED_BY_DEFAULT = true;

export const webFetchConfig = lazySchema(() => z.strictObject({
  /** false: web_fetch is unavailable. */
  enabled: z.boolean().default(WEB_FETCH_ENABLED_BY_DEFAULT),
  /** `firecrawl`: Firecrawl's scrape API extracts pages the local extractor cannot read. */
  provider: z.enum(['firecrawl']).optional(),
  /** Characters returned when a call names none (clamped to maxCharsCap, as OpenClaw does). */
  maxChars: z.number().int().min(100).optional(),
  /** The most a call may ask for. */
  maxCharsCap: z.number().int().min(100).max(1_000_000).default(20_000),
  /** The body is cut at this many bytes (clamped to 32,000–10,000,000, as OpenClaw does). */
  maxResponseBytes: z.number().int().positive().default(750_000).transform((n) => Math.min(10_000_000, Math.max(32_000, n))),
  timeoutSec: z.number().int().positive().max(300).default(30),
  maxRedirects: z.number().int().min(0).max(10).default(3),
  /** Fetched pages are answered from memory for this long; 0 turns the cache off. */
  cacheTtlMinutes: z.number().min(0).max(1440).default(15),
  userAgent: z.string().min(1).max(512).optional(),
  /** Sent with every direct fetch (not to Firecrawl); `${VAR}` is substituted at load time. */
  headers: z.record(headerName(), headerValue()).optional(),
  /** false: no Readability; HTML is converted whole (or handed to the provider when one is set). */
  readability: z.boolean().default(true),
  ssrfPolicy: z
    .strictObject({
      /** Un-blocks 198.18.0.0/15, used by fake-IP proxies. */
      allowRfc2544BenchmarkRange: z.boolean().optional(),
      /** Un-blocks fc00::/7 (never the metadata address fd00:ec2::254). */
      allowIpv6UniqueLocalRange: z.boolean().optional(),
      /** Hosts refused before DNS and on every redirect: exact names or `*.example.com`. */
      blockedHostnames: z.array(z.string().min(1)).optional(),
    })
    .optional(),
  /** Firecrawl's endpoint and key variable (defaults: https://api.firecrawl.dev, FIRECRAWL_API_KEY). */
  firecrawl: z
    .strictObject({
      baseUrl: z.url().optional(),
      apiKeyEnv: envName().optional(),
      onlyMainContent: z.boolean().default(true),
      /** How old a page Firecrawl may answer from its cache (default 2 days). */
      maxAgeMs: z.number().int().min(0).default(172_800_000),
    })
    .optional(),
}));
export type WebFetchConfig = z.infer<typeof webFetchConfig>;

export const webToolsConfig = lazySchema(() => z.strictObject({
  fetch: webFetchConfig.optional(),
  search: webSearchConfig.optional(),
}));
