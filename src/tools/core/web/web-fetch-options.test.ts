import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeSearchServer, type FakeSearchServer } from '../../../../test/fakes/search/search-fake.js';
import { loadConfig, parseConfig } from '../../../config/index.js';
import { TtlCache } from '../../../util/ttl-cache.js';
import type { ToolCallContext, ToolResult } from '../../types.js';
import { webFetchAvailability } from './availability.js';
import { createWebFetchTool } from './web-fetch.js';
import { withoutNonces } from '../../untrusted-testing.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** `tools.web.fetch` as OpenClaw documents it, against loopback pages under fake public names. */
const PUBLIC = '93.184.215.14';
const OTHER = '93.184.215.15';
let server: Server;
let port: number;
let hits = 0;
let firecrawl: FakeSearchServer;

const ARTICLE = `<html><head><title>Article</title></head><body><article><h1>Heading</h1>${'<p>Plenty of readable words in this paragraph about governed tools. </p>'.repeat(40)}</article></body></html>`;

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = req.url ?? '/';
    if (url === '/headers') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(req.headers));
    if (url === '/to-other') return void res.writeHead(302, { location: `http://other.test:${port}/headers` }).end();
    if (url.startsWith('/hop/')) {
      const n = Number(url.slice(5));
      return void (n > 0 ? res.writeHead(302, { location: `/hop/${n - 1}` }).end() : res.writeHead(200, { 'content-type': 'text/plain' }).end('arrived'));
    }
    if (url === '/big') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(100_000));
    if (url === '/article') return void res.writeHead(200, { 'content-type': 'text/html' }).end(ARTICLE);
    if (url === '/count') {
      hits++;
      return void res.writeHead(200, { 'content-type': 'text/plain' }).end(`visit ${hits}`);
    }
    if (url === '/slow') return void setTimeout(() => res.writeHead(200).end('late'), 30_000).unref();
    if (url === '/empty-app') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body><div id="root"></div><script>app()</script></body></html>');
    if (url === '/blocked-by-bot-wall') return void res.writeHead(403, { 'content-type': 'text/html' }).end('<html><body>checking your browser</body></html>');
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
  firecrawl = await startFakeSearchServer();
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
  await firecrawl.close();
});
beforeEach(() => void firecrawl.requests.splice(0));

const resolve = async (host: string) => {
  if (host === 'pages.test' || host === 'api.firecrawl.test') return [{ address: PUBLIC, family: 4 as const }];
  if (host === 'other.test') return [{ address: OTHER, family: 4 as const }];
  if (host === 'intranet.test') return [{ address: '10.1.2.3', family: 4 as const }];
  throw Object.assign(new Error('nx'), { code: 'ENOTFOUND' });
};
const dial = (a: string) => (a === PUBLIC || a === OTHER ? '127.0.0.1' : a);

const page = (p: string) => `http://pages.test:${port}${p}`;
const ctx = { signal: new AbortController().signal, log: pino({ level: 'silent' }) } as unknown as ToolCallContext;
const textOf = (r: ToolResult) => (r.content[0] as { text: string }).text;

function toolWith(fetch: Record<string, unknown>, options: { env?: Record<string, string>; dial?: (a: string) => string } = {}) {
  const r = parseConfig({ tools: { web: { fetch } } });
  if (!r.ok) throw r.error;
  return createWebFetchTool({ config: r.value.config, resolve, dial: options.dial ?? dial, env: options.env ?? {}, cache: new TtlCache<ToolResult>() });
}
const call = (tool: ReturnType<typeof toolWith>, args: Parameters<ReturnType<typeof toolWith>['execute']>[0]) => tool.execute(args, ctx) as Promise<ToolResult>;

describe('tools.web.fetch options', () => {
  it('enabled: false makes web_fetch unavailable', () => {
    const r = parseConfig({ tools: { web: { fetch: { enabled: false } } } });
    expect(r.ok && webFetchAvailability(r.value.config)).toEqual({ ok: false, why: 'tools.web.fetch.enabled is false' });
  });

  it('maxChars is the default length and maxCharsCap the most a call may ask', async () => {
    const tool = toolWith({ maxChars: 1_000, maxCharsCap: 5_000 });
    expect(textOf(await call(tool, { url: page('/big') }))).toMatch(/\[\.\.\. 99000 more characters truncated/);
    expect(textOf(await call(tool, { url: page('/big'), maxChars: 50_000 }))).toMatch(/\[\.\.\. 95000 more characters truncated/);
    expect((tool.parameters.properties as { maxChars: { maximum: number } }).maxChars.maximum).toBe(5_000);
  });

  it('maxChars above maxCharsCap is clamped, as OpenClaw does', async () => {
    const tool = toolWith({ maxChars: 9_000, maxCharsCap: 2_000 });
    expect(textOf(await call(tool, { url: page('/big') }))).toMatch(/\[\.\.\. 98000 more characters truncated/);
  });

  it('maxResponseBytes cuts the body (clamped to at least 32,000 bytes)', async () => {
    const result = await call(toolWith({ maxResponseBytes: 1_000, maxCharsCap: 100_000, maxChars: 100_000 }), { url: page('/big') });
    expect(result.details).toMatchObject({ rawBytes: 32_000, truncated: true });
    expect(textOf(result)).toContain('(response cut at 32000 bytes)');
  });

  it('timeoutSeconds bounds the request', async () => {
    // /slow answers after 30 s; a 1 s timeout returns long before, however loaded the machine.
    const started = Date.now();
    const result = await call(toolWith({ timeoutSeconds: 1 }), { url: page('/slow') });
    expect(result.isError).toBe(true);
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it('maxRedirects limits the hops', async () => {
    expect(textOf(await call(toolWith({ maxRedirects: 2 }), { url: page('/hop/2') }))).toContain('arrived');
    expect(textOf(await call(toolWith({ maxRedirects: 1 }), { url: page('/hop/2') }))).toBe('Too many redirects (limit: 1)');
  });

  it('cacheTtlMinutes answers a repeated fetch from memory; 0 fetches every time', async () => {
    const cached = toolWith({ cacheTtlMinutes: 5 });
    const first = textOf(await call(cached, { url: page('/count') }));
    const second = await call(cached, { url: page('/count') });
    expect(textOf(second)).toBe(first);
    expect(second.details).toMatchObject({ cached: true });
    const uncached = toolWith({ cacheTtlMinutes: 0 });
    expect(textOf(await call(uncached, { url: page('/count') }))).not.toBe(textOf(await call(uncached, { url: page('/count') })));
  });

  it('userAgent and headers are sent; headers never follow a redirect to another site', async () => {
    const tool = toolWith({ userAgent: 'custom-ua', headers: { 'X-Routing-Target': 'staging' } });
    const same = JSON.parse(textOf(await call(tool, { url: page('/headers') })).match(/\{.*\}/s)![0]);
    expect(same).toMatchObject({ 'user-agent': 'custom-ua', 'x-routing-target': 'staging' });
    const other = JSON.parse(textOf(await call(tool, { url: page('/to-other') })).match(/\{.*\}/s)![0]);
    expect(other['user-agent']).toBe('custom-ua');
    expect(other['x-routing-target']).toBeUndefined();
  });

  it('headers take ${VAR} from the environment at load time, and reserved names are refused', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-fetch-'));
    writeFileSync(path.join(dir, 'c.json5'), '{ tools: { web: { fetch: { headers: { "X-Routing-Target": "${WEB_FETCH_ROUTING_TARGET}" } } } } }');
    const loaded = loadConfig({ cwd: dir, file: 'c.json5', env: { WEB_FETCH_ROUTING_TARGET: 'blue' } });
    expect(loaded.ok && loaded.value.config.tools.web?.fetch?.headers).toEqual({ 'X-Routing-Target': 'blue' });
    const bad = parseConfig({ tools: { web: { fetch: { headers: { Host: 'x', 'Bad Name': 'y' } } } } });
    expect(bad.ok ? [] : bad.error.problems.map((p) => p.path)).toEqual(['tools.web.fetch.headers.Host', 'tools.web.fetch.headers["Bad Name"]']);
  });

  it('readability: false converts the whole page', async () => {
    const result = await call(toolWith({ readability: false }), { url: page('/article') });
    expect(result.details).toMatchObject({ extractor: 'page' });
    expect((await call(toolWith({}), { url: page('/article') })).details).toMatchObject({ extractor: 'readability' });
  });

  it('ssrfPolicy.blockedHostnames refuses a host before DNS and on redirects', async () => {
    const tool = toolWith({ ssrfPolicy: { blockedHostnames: ['other.test'] } });
    expect(textOf(await call(tool, { url: `http://other.test:${port}/headers` }))).toBe('Blocked: other.test is in blockedHostnames ("other.test")');
    expect(textOf(await call(tool, { url: page('/to-other') }))).toBe('Blocked: other.test is in blockedHostnames ("other.test")');
  });
});

describe('provider: firecrawl', () => {
  // The page server and Firecrawl's fake both answer on loopback, on their own ports.
  const viaFirecrawl = (extra: Record<string, unknown> = {}) => toolWith({ provider: 'firecrawl', firecrawl: { baseUrl: `http://api.firecrawl.test:${firecrawl.port}/firecrawl` }, ...extra });

  it('is asked only when the local extractor finds no readable text or the site refuses', async () => {
    const tool = viaFirecrawl();
    expect((await call(tool, { url: page('/article') })).details).toMatchObject({ extractor: 'readability' });
    expect(firecrawl.requests).toHaveLength(0);
    const app = await call(tool, { url: page('/empty-app') });
    expect(app.details).toMatchObject({ extractor: 'firecrawl', title: 'Scraped page' });
    expect(withoutNonces(textOf(app)).match(/<\/untrusted>/g)).toHaveLength(1);
    expect((await call(tool, { url: page('/blocked-by-bot-wall') })).details).toMatchObject({ extractor: 'firecrawl' });
    expect(firecrawl.seen('/firecrawl/v2/scrape')).toHaveLength(2);
  });

  it('readability: false goes straight to Firecrawl, after the target passes the SSRF check', async () => {
    const tool = viaFirecrawl({ readability: false });
    const result = await call(tool, { url: 'http://pages.test/some/page' });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(result.details).toMatchObject({ extractor: 'firecrawl', title: 'Scraped page' });
    expect(firecrawl.requests.at(-1)!.body).toMatchObject({ url: 'http://pages.test/some/page', formats: ['markdown'], onlyMainContent: true });
  });

  it('is never asked to fetch a private address: web_fetch refuses first', async () => {
    const result = await call(viaFirecrawl({ readability: false }), { url: 'http://intranet.test/admin' });
    expect(textOf(result)).toMatch(/^Blocked: intranet.test resolves to blocked address 10\.1\.2\.3/);
    expect(firecrawl.requests).toHaveLength(0);
  });
});
