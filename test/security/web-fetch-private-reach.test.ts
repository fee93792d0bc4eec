import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { createWebFetchTool } from '../../src/tools/core/web/web-fetch.js';
import type { ToolCallContext, ToolResult } from '../../src/tools/types.js';
import { TtlCache } from '../../src/util/ttl-cache.js';
import { startFakeSearchServer, type FakeSearchServer } from '../fakes/search/search-fake.js';

/**
 * Attack class: reaching a private network through web_fetch by configuration. An operator
 * pasting OpenClaw's ssrfPolicy keys, or a model steering web_fetch through the Firecrawl
 * extractor, redirects or header tricks, must never get web_fetch onto a private address.
 */
let fake: FakeSearchServer;
let pages: Server;
let port: number;
beforeAll(async () => {
  fake = await startFakeSearchServer();
  pages = createServer((req, res) => {
    if (req.url === '/to-metadata') return void res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
    if (req.url === '/to-lan') return void res.writeHead(307, { location: 'http://lan.test/admin' }).end();
    res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body><div id=app></div></body></html>');
  });
  await new Promise<void>((r) => pages.listen(0, '127.0.0.1', r));
  port = (pages.address() as AddressInfo).port;
});
afterAll(async () => {
  await fake.close();
  pages.closeAllConnections();
  await new Promise<void>((r) => pages.close(() => r()));
});

const PUBLIC = '93.184.215.14';
const resolve = async (host: string) => {
  if (host === 'pages.test' || host === 'api.firecrawl.test') return [{ address: PUBLIC, family: 4 as const }];
  if (host === 'lan.test') return [{ address: '192.168.1.10', family: 4 as const }];
  if (host === 'rebind.test') return [{ address: PUBLIC, family: 4 as const }, { address: '10.0.0.5', family: 4 as const }];
  throw Object.assign(new Error('nx'), { code: 'ENOTFOUND' });
};
const ctx = { signal: new AbortController().signal, log: pino({ level: 'silent' }) } as unknown as ToolCallContext;

describe('OpenClaw ssrfPolicy keys cannot open private networks to web_fetch', () => {
  it.each([
    { dangerouslyAllowPrivateNetwork: true },
    { allowedHostnames: ['lan.test'] },
    { allowedHostnames: ['*'] },
  ])('%j is refused at load time', (ssrfPolicy) => {
    const r = parseConfig({ tools: { web: { fetch: { ssrfPolicy } } } });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.problems[0]!.message).toMatch(/^OpenClaw's `tools\.web\.fetch\.ssrfPolicy\.\w+: .*` is not supported by Warden: .*never lets web_fetch reach private/);
  });

  it('useTrustedEnvProxy: true (no pinning) is refused', () => {
    const r = parseConfig({ tools: { web: { fetch: { useTrustedEnvProxy: true } } } });
    expect(r.ok).toBe(false);
  });
});

describe('the Firecrawl extractor is no way around the guard', () => {
  const tool = () => {
    const r = parseConfig({ tools: { web: { fetch: { provider: 'firecrawl', readability: false, firecrawl: { baseUrl: `http://api.firecrawl.test:${fake.port}/firecrawl` } } } } });
    if (!r.ok) throw r.error;
    return createWebFetchTool({ config: r.value.config, resolve, dial: (a) => (a === PUBLIC ? '127.0.0.1' : a), env: {}, cache: new TtlCache<ToolResult>() });
  };
  it.each([
    'http://lan.test/admin',
    'http://127.0.0.1:8080/',
    'http://[::ffff:10.0.0.1]/',
    'http://0x7f000001/',
    'http://169.254.169.254/latest/meta-data/',
    'http://metadata.google.internal/',
    'http://rebind.test/',
    'file:///etc/passwd',
  ])('%s is refused before Firecrawl is asked', async (url) => {
    fake.requests.splice(0);
    const result = (await tool().execute({ url }, ctx)) as ToolResult;
    expect(result.isError).toBe(true);
    expect((result.content[0] as { text: string }).text).toMatch(/^Blocked: /);
    expect(fake.requests).toHaveLength(0);
  });
});

describe('redirects out of the public internet are refused', () => {
  it.each(['/to-metadata', '/to-lan'])('%s', async (p) => {
    const r = parseConfig({ tools: { web: { fetch: { maxRedirects: 5 } } } });
    if (!r.ok) throw r.error;
    const tool = createWebFetchTool({ config: r.value.config, resolve, dial: (a) => (a === PUBLIC ? '127.0.0.1' : a), cache: new TtlCache<ToolResult>() });
    const result = (await tool.execute({ url: `http://pages.test:${port}${p}` }, ctx)) as ToolResult;
    expect((result.content[0] as { text: string }).text).toMatch(/^Blocked: /);
  });
});
