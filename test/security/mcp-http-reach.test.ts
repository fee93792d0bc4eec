// An MCP server over HTTP steering Warden's requests: every request of the SDK's transport goes
// through the guarded fetch, so neither the configured URL's DNS nor the server's answers can
// send it (and its configured headers) anywhere but the configured server — no redirect, no
// other origin, no cloud metadata, no private address unless the operator allowed it, no
// listener of Warden's own. Each case counts what the attacker's listener received.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardedMcpFetch, McpRequestBlocked } from '../../src/mcp/http-fetch.js';
import { namesPrivateHost } from '../../src/mcp/private-host.js';
import type { Resolver } from '../../src/net/check.js';

const PUBLIC = '93.184.215.14';
let victim: Server;
let victimPort: number;
const seen: IncomingMessage[] = [];

beforeAll(async () => {
  victim = createServer((req, res) => {
    seen.push(req);
    if (req.url === '/redirect') res.writeHead(307, { location: `http://127.0.0.1:${victimPort}/stolen` }).end();
    else res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((r) => victim.listen(0, '127.0.0.1', r));
  victimPort = (victim.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((r) => victim.close(() => r())));

const resolveTo =
  (...addresses: string[]): Resolver =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
// A "public" host is dialled on loopback, so the test can see what reached it.
const dialLoopback = () => '127.0.0.1';

async function attempt(fetch: typeof globalThis.fetch, url: string): Promise<string> {
  try {
    const r = await fetch(url, { method: 'POST', headers: { authorization: 'Bearer configured-secret' }, body: '{}' });
    await r.text();
    return `status ${r.status}`;
  } catch (err) {
    return err instanceof McpRequestBlocked ? `blocked: ${err.message}` : `error: ${(err as Error).message}`;
  }
}

describe('the guarded fetch of an MCP HTTP server', () => {
  it.each<[string, { url: string; allowPrivateNetwork: boolean; resolve: Resolver; dial?: (a: string) => string }, string, RegExp]>([
    ['a public name whose DNS answers a private address', { url: 'http://mcp.example.com/mcp', allowPrivateNetwork: false, resolve: resolveTo('10.0.0.5') }, 'http://mcp.example.com/mcp', /^blocked: Blocked: /],
    ['a public name whose DNS answers loopback', { url: 'http://mcp.example.com/mcp', allowPrivateNetwork: false, resolve: resolveTo('127.0.0.1') }, 'http://mcp.example.com/mcp', /^blocked: Blocked: /],
    ['cloud metadata, even with private addresses allowed', { url: 'http://169.254.169.254/mcp', allowPrivateNetwork: true, resolve: resolveTo('169.254.169.254') }, 'http://169.254.169.254/mcp', /^blocked: Blocked: /],
    ['a name answering metadata, private allowed', { url: 'http://mcp.internal/mcp', allowPrivateNetwork: true, resolve: resolveTo('169.254.169.254') }, 'http://mcp.internal/mcp', /^blocked: Blocked: /],
    ['another origin than the configured one', { url: 'http://mcp.example.com/mcp', allowPrivateNetwork: false, resolve: resolveTo(PUBLIC), dial: dialLoopback }, 'http://evil.example.com/mcp', /^blocked: Blocked: http:\/\/evil\.example\.com is not the configured MCP server/],
    ['another port of the same host', { url: 'http://mcp.example.com/mcp', allowPrivateNetwork: false, resolve: resolveTo(PUBLIC), dial: dialLoopback }, 'http://mcp.example.com:8443/mcp', /^blocked: Blocked: .* is not the configured MCP server/],
  ])('refuses %s; nothing reaches the listener', async (_what, settings, url, outcome) => {
    const before = seen.length;
    const fetch = guardedMcpFetch({ ...settings, ownListeners: [] });
    expect(await attempt(fetch, url.replace(/:\d+\//, (m) => m))).toMatch(outcome);
    expect(seen.length).toBe(before);
  });

  it('refuses to follow a redirect (it would carry the configured headers elsewhere)', async () => {
    const url = `http://127.0.0.1:${victimPort}/redirect`;
    const fetch = guardedMcpFetch({ url, allowPrivateNetwork: true, ownListeners: [] });
    const before = seen.length;
    expect(await attempt(fetch, url)).toMatch(/^blocked: Blocked: the MCP server answered 307 with a redirect/);
    expect(seen.slice(before).map((r) => r.url)).toEqual(['/redirect']);
  });

  it('refuses a listener of Warden\'s own, even on loopback with private addresses allowed', async () => {
    const url = `http://127.0.0.1:${victimPort}/mcp`;
    const fetch = guardedMcpFetch({ url, allowPrivateNetwork: true, ownListeners: [{ name: 'web chat', host: '127.0.0.1', port: victimPort }] });
    const before = seen.length;
    expect(await attempt(fetch, url)).toMatch(/^blocked: Blocked: .*own/);
    expect(seen.length).toBe(before);
  });

  it('reaches the configured server itself, with its headers', async () => {
    const url = `http://127.0.0.1:${victimPort}/mcp`;
    const fetch = guardedMcpFetch({ url, allowPrivateNetwork: true, ownListeners: [] });
    expect(await attempt(fetch, url)).toBe('status 200');
    expect(seen.at(-1)!.headers.authorization).toBe('Bearer configured-secret');
  });

  it.each<[string, boolean]>([
    ['http://127.0.0.1:9000/mcp', true],
    ['http://localhost/mcp', true],
    ['http://10.1.2.3/mcp', true],
    ['http://169.254.169.254/mcp', false],
    ['https://mcp.example.com/mcp', false],
  ])('%s names a private place by itself: %s (the default for allowPrivateNetwork)', (url, yes) => {
    expect(namesPrivateHost(url)).toBe(yes);
  });
});
