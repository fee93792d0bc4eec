import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.js';
import { createWebFetchTool } from '../../src/tools/core/web/web-fetch.js';
import type { ToolCallContext, ToolResult } from '../../src/tools/types.js';
import { TtlCache } from '../../src/util/ttl-cache.js';

/**
 * Attack class: stealing the operator's tools.web.fetch.headers (a routing token, a gateway
 * credential). The model picks the URL; a page it picks can redirect anywhere. The headers go
 * to the origin asked for and never follow a redirect to another origin (host, port or scheme).
 */
const PUBLIC = '93.184.215.14';
let a: Server;
let b: Server;
let portA: number;
let portB: number;
const leaked: string[] = [];
beforeAll(async () => {
  const handler = () => (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => {
    if (req.headers['x-gateway-token']) leaked.push(`${req.headers.host}${req.url}`);
    const m = /^\/redirect\/(.+)$/.exec(req.url ?? '');
    if (m) return void res.writeHead(302, { location: decodeURIComponent(m[1]!) }).end();
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  };
  a = createServer(handler());
  b = createServer(handler());
  await new Promise<void>((r) => a.listen(0, '127.0.0.1', r));
  await new Promise<void>((r) => b.listen(0, '127.0.0.1', r));
  portA = (a.address() as AddressInfo).port;
  portB = (b.address() as AddressInfo).port;
});
afterAll(async () => {
  for (const s of [a, b]) {
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
});

const tool = () => {
  const r = parseConfig({ tools: { web: { fetch: { headers: { 'X-Gateway-Token': 'secret' }, maxRedirects: 3 } } } });
  if (!r.ok) throw r.error;
  return createWebFetchTool({ config: r.value.config, resolve: async () => [{ address: PUBLIC, family: 4 }], dial: () => '127.0.0.1', cache: new TtlCache<ToolResult>() });
};
const ctx = { signal: new AbortController().signal, log: pino({ level: 'silent' }) } as unknown as ToolCallContext;

describe('configured fetch headers as an attacker would try to get them', () => {
  it('reach the origin that was asked for', async () => {
    leaked.splice(0);
    await tool().execute({ url: `http://site.test:${portA}/page` }, ctx);
    expect(leaked).toEqual([`site.test:${portA}/page`]);
  });

  it.each([
    ['another host', () => `http://evil.test:${portA}/steal`],
    ['the same host on another port', () => `http://site.test:${portB}/steal`],
    ['a chain that comes back to the first origin', () => `http://evil.test:${portB}/redirect/${encodeURIComponent(`http://site.test:${portA}/back`)}`],
  ])('do not follow a redirect to %s', async (_name, target) => {
    leaked.splice(0);
    await tool().execute({ url: `http://site.test:${portA}/redirect/${encodeURIComponent(target())}` }, ctx);
    // Only the origin asked for ever sees the token.
    expect(leaked.length).toBeGreaterThan(0);
    expect(leaked.every((l) => l.startsWith(`site.test:${portA}/`))).toBe(true);
  });
});
