import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FAKE_KEYS, startFakeSearchServer, type FakeSearchServer } from '../../../../test/fakes/search/search-fake.js';
import { parseConfig } from '../../../config/index.js';
import { TtlCache } from '../../../util/ttl-cache.js';
import type { ToolCallContext, ToolResult } from '../../types.js';
import type { ProviderFinding, WebSearchOutput } from './search/types.js';
import { createWebSearchTool, webSearchAvailability } from './web-search.js';
import { withoutNonces } from '../../untrusted-testing.js';

/**
 * Every provider against a loopback fake of its documented API. Hosted providers are reached
 * under a fake public name (resolved to a public address, dialled to loopback) so the SSRF
 * guard runs as in production; self-hosted ones (SearXNG, a local Ollama) at 127.0.0.1.
 */
let fake: FakeSearchServer;
let port: number;
const PUBLIC = '93.184.215.14';
const net = {
  resolve: async (host: string) => (host.endsWith('.test') ? [{ address: PUBLIC, family: 4 as const }] : Promise.reject(Object.assign(new Error('nx'), { code: 'ENOTFOUND' }))),
  dial: (a: string) => (a === PUBLIC ? '127.0.0.1' : a),
};
const hosted = (name: string, path = '') => `http://${name}.test:PORT${path}`;
const local = (path = '') => `http://127.0.0.1:PORT${path}`;

beforeAll(async () => {
  fake = await startFakeSearchServer();
  port = fake.port;
});
afterAll(() => fake.close());
beforeEach(() => void fake.requests.splice(0));

const configOf = (search: unknown) => {
  const r = parseConfig({ tools: { web: { search } } });
  if (!r.ok) throw r.error;
  return r.value.config;
};
const ctx = { signal: new AbortController().signal, log: pino({ level: 'silent' }) } as unknown as ToolCallContext;
const run = async (search: unknown, env: Record<string, string>, args: { query: string; count?: number } = { query: 'warden docs' }, cache = new TtlCache<ProviderFinding>()) => {
  const config = configOf(JSON.parse(JSON.stringify(search).replaceAll(':PORT', `:${port}`)));
  const result = (await createWebSearchTool(config, env, { ...net, cache }).execute(args, ctx)) as ToolResult;
  return { result, text: (result.content[0] as { text: string }).text, output: result.details as WebSearchOutput };
};

describe('web_search providers, each against its documented API', () => {
  const structured: Array<[string, unknown, Record<string, string>, string]> = [
    ['brave', { provider: 'brave', baseUrl: hosted('api.search.brave') }, { BRAVE_API_KEY: FAKE_KEYS.brave }, '/res/v1/web/search'],
    ['searxng (self-hosted on loopback)', { provider: 'searxng', baseUrl: local() }, {}, '/search'],
    ['tavily', { provider: 'tavily', baseUrl: hosted('api.tavily', '/tavily') }, { TAVILY_API_KEY: FAKE_KEYS.tavily }, '/tavily/search'],
    ['exa', { provider: 'exa', baseUrl: hosted('api.exa', '/exa') }, { EXA_API_KEY: FAKE_KEYS.exa }, '/exa/search'],
    ['perplexity (Search API)', { provider: 'perplexity', baseUrl: hosted('api.perplexity', '/perplexity') }, { PERPLEXITY_API_KEY: FAKE_KEYS.perplexity }, '/perplexity/search'],
    ['firecrawl', { provider: 'firecrawl', baseUrl: hosted('api.firecrawl', '/firecrawl') }, { FIRECRAWL_API_KEY: FAKE_KEYS.firecrawl }, '/firecrawl/v2/search'],
    ['minimax', { provider: 'minimax', baseUrl: hosted('api.minimax') }, { MINIMAX_CODE_PLAN_KEY: FAKE_KEYS.minimax }, '/v1/coding_plan/search'],
    ['parallel', { provider: 'parallel', baseUrl: hosted('api.parallel') }, { PARALLEL_API_KEY: FAKE_KEYS.parallel }, '/v1/search'],
    ['ollama (hosted)', { provider: 'ollama', baseUrl: 'http://ollama.com.test:PORT' }, { OLLAMA_API_KEY: FAKE_KEYS.ollama }, '/api/'],
    ['ollama (local daemon, no key)', { provider: 'ollama', baseUrl: local() }, {}, '/api/experimental/web_search'],
    ['duckduckgo (HTML, no key)', { provider: 'duckduckgo', baseUrl: hosted('html.duckduckgo') }, {}, '/html/'],
  ];

  it.each(structured)('%s returns the compact results shape', async (_name, search, env, path) => {
    const { result, text, output } = await run(search, env, { query: 'warden docs', count: 2 });
    expect(result.isError, text).toBeFalsy();
    expect(fake.seen(path)).toHaveLength(1);
    expect(output).toMatchObject({ kind: 'results', query: 'warden docs', count: 2 });
    if (output.kind !== 'results') return;
    // Tags and entities stripped, only http(s) URLs, vague dates dropped.
    expect(output.results[0]).toMatchObject({ title: 'Warden docs', url: 'https://example.com/docs' });
    expect(output.results[0]!.snippet).toMatch(/^Tool & policy/);
    expect(output.results.map((r) => r.url)).not.toContain('javascript:alert(1)');
    for (const hit of output.results) expect(hit.published ?? '2026-01-01').toMatch(/^\d{4}-\d{2}-\d{2}/);
    expect(withoutNonces(text).startsWith('<untrusted source="web_search:')).toBe(true);
    expect(withoutNonces(text).match(/<\/untrusted>/g)).toHaveLength(1);
  });

  it('asks each API the documented way', async () => {
    await run({ provider: 'tavily', baseUrl: hosted('api.tavily', '/tavily') }, { TAVILY_API_KEY: FAKE_KEYS.tavily }, { query: 'q', count: 3 });
    expect(fake.seen('/tavily/search')[0]!.body).toMatchObject({ query: 'q', max_results: 3 });
    await run({ provider: 'exa', baseUrl: hosted('api.exa', '/exa') }, { EXA_API_KEY: FAKE_KEYS.exa }, { query: 'q', count: 4 });
    expect(fake.seen('/exa/search')[0]!.body).toMatchObject({ query: 'q', numResults: 4, contents: { highlights: true } });
    await run({ provider: 'parallel', baseUrl: hosted('api.parallel') }, { PARALLEL_API_KEY: FAKE_KEYS.parallel }, { query: 'q', count: 2 });
    expect(fake.seen('/v1/search')[0]!.body).toMatchObject({ objective: 'q', search_queries: ['q'], advanced_settings: { max_results: 2 } });
    await run({ provider: 'minimax', baseUrl: hosted('api.minimax') }, { MINIMAX_CODE_PLAN_KEY: FAKE_KEYS.minimax });
    expect(fake.seen('/v1/coding_plan/search')[0]!.body).toEqual({ q: 'warden docs' });
  });

  it.each([
    ['gemini (Google Search grounding)', { provider: 'gemini', baseUrl: hosted('generativelanguage', '/gemini') }, { GEMINI_API_KEY: FAKE_KEYS.gemini }, 'Warden is a governed team assistant.', 'https://example.com/gemini-source'],
    ['grok (xAI Responses web_search)', { provider: 'grok', baseUrl: hosted('api.x', '/xai') }, { XAI_API_KEY: FAKE_KEYS.xai }, 'Grok found Warden.', 'https://example.com/grok'],
    ['kimi (Moonshot $web_search)', { provider: 'kimi', baseUrl: hosted('api.moonshot', '/kimi') }, { MOONSHOT_API_KEY: FAKE_KEYS.kimi }, 'Kimi: see [Warden](https://example.com/kimi).', 'https://example.com/kimi'],
    ['perplexity (Sonar through OpenRouter)', { provider: 'perplexity', baseUrl: hosted('openrouter', '/openrouter') }, { OPENROUTER_API_KEY: FAKE_KEYS.openrouter }, 'Sonar says Warden governs tools [1].', 'https://example.com/sonar'],
  ])('%s returns an answer with its sources', async (_name, search, env, content, source) => {
    const { result, text, output } = await run(search, env);
    expect(result.isError, text).toBeFalsy();
    expect(output).toMatchObject({ kind: 'answer', content, citations: [{ url: source }] });
    expect(text).toContain(`Sources:\n1. `);
  });

  it('gemini asks for google_search with the default model; kimi hands the search call back unchanged', async () => {
    await run({ provider: 'gemini', baseUrl: hosted('generativelanguage', '/gemini') }, { GEMINI_API_KEY: FAKE_KEYS.gemini });
    const gem = fake.seen('/gemini/models/')[0]!;
    expect(gem.path).toBe('/gemini/models/gemini-3.6-flash:generateContent');
    expect(gem.body).toMatchObject({ tools: [{ google_search: {} }] });
    await run({ provider: 'kimi', baseUrl: hosted('api.moonshot', '/kimi') }, { KIMI_API_KEY: FAKE_KEYS.kimi });
    expect(fake.seen('/kimi/')).toHaveLength(2);
  });

  it.each([
    ['a rejected key names the variable, not the key', { provider: 'tavily', baseUrl: hosted('api.tavily', '/tavily') }, { TAVILY_API_KEY: 'wrong' }, 'the tavily API refused the credentials (HTTP 401): check TAVILY_API_KEY'],
    ['gemini refuses a wrong key', { provider: 'gemini', baseUrl: hosted('generativelanguage', '/gemini') }, { GEMINI_API_KEY: 'wrong' }, 'the gemini API refused the credentials (HTTP 403): check GEMINI_API_KEY'],
    ['minimax reports its status code', { provider: 'minimax', baseUrl: hosted('api.minimax') }, { MINIMAX_API_KEY: 'wrong' }, 'minimax answered status 1004'],
    ['duckduckgo bot challenge', { provider: 'duckduckgo', baseUrl: hosted('html.duckduckgo') }, {}, 'DuckDuckGo answered with a bot challenge instead of results; try again later or use another provider'],
  ])('%s', async (_name, search, env, message) => {
    const { result, output } = await run(search, env, { query: _name.includes('duckduckgo') ? 'robot' : 'q' });
    expect(result.isError).toBe(true);
    expect(output).toMatchObject({ kind: 'error', message });
  });

  it('reports a rate limit as an error the model can read', async () => {
    fake.failNext(429);
    const { output } = await run({ provider: 'brave', baseUrl: hosted('api.search.brave') }, { BRAVE_API_KEY: FAKE_KEYS.brave });
    expect(output).toMatchObject({ kind: 'error', message: 'brave is rate-limiting requests (HTTP 429); try again later' });
  });
});

describe('web_search options', () => {
  const brave = (extra: Record<string, unknown> = {}) => ({ provider: 'brave', baseUrl: hosted('api.search.brave'), ...extra });
  const env = { BRAVE_API_KEY: FAKE_KEYS.brave };

  it('maxResults is the default count; a call may ask for fewer or more (up to the provider cap)', async () => {
    await run(brave({ maxResults: 3 }), env, { query: 'a' });
    expect(fake.seen('/res/')[0]!.query.get('count')).toBe('3');
    await run(brave({ maxResults: 3 }), env, { query: 'b', count: 1 });
    expect(fake.seen('/res/')[1]!.query.get('count')).toBe('1');
  });

  it('timeoutSeconds bounds every request', async () => {
    // The fake answers after 30 s; a 1 s timeout returns long before, however loaded the machine.
    fake.delayNext(30_000);
    const started = Date.now();
    const { output } = await run(brave({ timeoutSeconds: 1 }), env, { query: 'slow' });
    expect(output.kind).toBe('error');
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it('cacheTtlMinutes answers a repeated search from memory, and 0 turns the cache off', async () => {
    const cache = new TtlCache<ProviderFinding>();
    await run(brave({ cacheTtlMinutes: 5 }), env, { query: 'Same' }, cache);
    const second = await run(brave({ cacheTtlMinutes: 5 }), env, { query: 'same ' }, cache);
    expect(fake.seen('/res/')).toHaveLength(1);
    expect(second.output).toMatchObject({ kind: 'results', cached: true });
    const off = new TtlCache<ProviderFinding>();
    await run(brave({ cacheTtlMinutes: 0 }), env, { query: 'x' }, off);
    await run(brave({ cacheTtlMinutes: 0 }), env, { query: 'x' }, off);
    expect(fake.seen('/res/')).toHaveLength(3);
  });

  it('enabled: false makes web_search unavailable', () => {
    expect(webSearchAvailability(configOf({ enabled: false, provider: 'brave' }), env)).toEqual({ ok: false, why: 'tools.web.search.enabled is false' });
  });
});

describe('which provider a search goes to (OpenClaw order)', () => {
  it.each([
    ['the configured provider', { provider: 'exa' }, { BRAVE_API_KEY: 'b', EXA_API_KEY: 'e' }, { ok: true }],
    ['the configured provider without its key', { provider: 'exa' }, { BRAVE_API_KEY: 'b' }, { ok: false, why: 'exa: EXA_API_KEY is not set' }],
    ['no key anywhere', {}, {}, { ok: false }],
    ['an empty block auto-detects from the environment', {}, { GEMINI_API_KEY: 'g' }, { ok: true }],
    ['no block at all: off, whatever the environment holds', undefined, { GEMINI_API_KEY: 'g' }, { ok: false, why: 'no search provider configured (tools.web.search)' }],
    ['a keyless provider is never auto-detected', {}, {}, { ok: false }],
    ['searxng joins when SEARXNG_BASE_URL is set', {}, { SEARXNG_BASE_URL: 'http://searx.lan:8080' }, { ok: true }],
    ['hosted ollama needs its key', { provider: 'ollama', baseUrl: 'https://ollama.com' }, {}, { ok: false, why: 'ollama: hosted Ollama web search needs OLLAMA_API_KEY' }],
    ['searxng without an address', { provider: 'searxng' }, {}, { ok: false, why: 'searxng: searxng needs its address: set tools.web.search.baseUrl or SEARXNG_BASE_URL' }],
  ])('%s', (_name, search, env, expected) => {
    expect(webSearchAvailability(configOf(search), env)).toMatchObject(expected);
  });

  it('auto-detection tries the keyed providers in order and hands over on failure', async () => {
    const search = { providers: { brave: { baseUrl: hosted('api.search.brave') }, tavily: { baseUrl: hosted('api.tavily', '/tavily') } } };
    fake.failNext(500);
    const { output } = await run(search, { BRAVE_API_KEY: FAKE_KEYS.brave, TAVILY_API_KEY: FAKE_KEYS.tavily });
    expect(fake.requests.map((r) => r.path)).toEqual(['/res/v1/web/search', '/tavily/search']);
    expect(output).toMatchObject({ kind: 'results', provider: 'tavily' });
  });

  it('a configured provider has no fallback, and when all fail the first error is reported', async () => {
    fake.failNext(500);
    const explicit = await run({ provider: 'brave', baseUrl: hosted('api.search.brave') }, { BRAVE_API_KEY: FAKE_KEYS.brave, TAVILY_API_KEY: FAKE_KEYS.tavily });
    expect(fake.requests).toHaveLength(1);
    expect(explicit.output).toMatchObject({ kind: 'error', provider: 'brave', message: 'the brave API answered HTTP 500' });
  });
});

describe('provider requests stay behind the SSRF guard', () => {
  it('a hosted provider pointed at a private address is refused', async () => {
    const { output } = await run({ provider: 'tavily', baseUrl: local('/tavily') }, { TAVILY_API_KEY: FAKE_KEYS.tavily });
    expect(output).toMatchObject({ kind: 'error' });
    expect((output as { message: string }).message).toMatch(/not reachable under the network policy .*blocked address 127\.0\.0\.1/);
    expect(fake.requests).toHaveLength(0);
  });

  it('a self-hosted provider may not be redirected to another host', async () => {
    const { output } = await run({ provider: 'searxng', baseUrl: local('/elsewhere?') }, {});
    expect(output.kind).toBe('error');
  });

  it('cloud metadata is refused even for a self-hosted provider', async () => {
    const { output } = await run({ provider: 'searxng', baseUrl: 'http://169.254.169.254' }, {});
    expect((output as { message: string }).message).toMatch(/cloud metadata/);
  });
});
