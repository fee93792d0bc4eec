import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resolver, UrlPolicy } from '../net/index.js';
import { startGuardProxy, type BlockedRequest, type GuardProxy } from './guard-proxy.js';

const PUBLIC = '93.184.215.14';
let origin: Server;
let port: number;
let seen: IncomingHttpHeaders[] = [];

beforeAll(async () => {
  origin = createServer((req, res) => {
    seen.push(req.headers);
    if (req.url === '/redirect') return void res.writeHead(302, { location: 'http://10.0.0.1/' }).end();
    const body = `hello from ${req.headers.host}${req.url}`;
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body) }).end(body);
  });
  await new Promise<void>((r) => origin.listen(0, '127.0.0.1', r));
  port = (origin.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((r) => origin.close(() => r())));

const DNS: Record<string, string> = { 'site.test': PUBLIC, 'intranet.test': '10.0.0.5', 'meta.test': '169.254.169.254' };

async function withProxy(policy: UrlPolicy, run: (proxy: GuardProxy, blocked: BlockedRequest[], lookups: string[]) => Promise<void>) {
  const blocked: BlockedRequest[] = [];
  const lookups: string[] = [];
  const resolve: Resolver = async (host) => {
    lookups.push(host);
    const address = DNS[host];
    if (!address) throw Object.assign(new Error('nx'), { code: 'ENOTFOUND' });
    return [{ address, family: 4 }];
  };
  const proxy = await startGuardProxy({ policy, resolve, dial: (a) => (a === PUBLIC ? '127.0.0.1' : a), onBlocked: (e) => blocked.push(e) });
  try {
    await run(proxy, blocked, lookups);
  } finally {
    await proxy.close();
  }
}

/** A GET through the proxy, as Chromium sends it (absolute URL). */
function viaProxy(proxy: GuardProxy, url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string; headers: IncomingHttpHeaders }> {
  const p = new URL(proxy.server);
  return new Promise((ok, fail) => {
    const req = request({ host: p.hostname, port: p.port, path: url, headers: { host: new URL(url).host, ...headers }, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => ok({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on('error', fail);
    req.end();
  });
}

/** A CONNECT through the proxy; on success, a plain HTTP GET over the tunnel. */
function tunnel(proxy: GuardProxy, authority: string): Promise<{ status: number; body?: string }> {
  const p = new URL(proxy.server);
  return new Promise((ok, fail) => {
    const req = request({ host: p.hostname, port: p.port, method: 'CONNECT', path: authority, agent: false });
    req.on('connect', (res, socket: Socket) => {
      if (res.statusCode !== 200) {
        socket.destroy();
        return ok({ status: res.statusCode ?? 0 });
      }
      let data = '';
      socket.setEncoding('utf8');
      socket.on('data', (c: string) => (data += c));
      socket.on('end', () => ok({ status: 200, body: data.split('\r\n\r\n')[1] }));
      socket.write(`GET /tunnelled HTTP/1.1\r\nHost: ${authority}\r\nConnection: close\r\n\r\n`);
    });
    req.on('error', fail);
    req.end();
  });
}

describe('guard proxy', () => {
  it('forwards an allowed request to the checked (pinned) address with the original Host, minus hop-by-hop headers', async () => {
    await withProxy({}, async (proxy) => {
      seen = [];
      const res = await viaProxy(proxy, `http://site.test:${port}/page?q=1`, { 'proxy-authorization': 'Basic x', 'x-keep': 'yes' });
      expect(res).toMatchObject({ status: 200, body: `hello from site.test:${port}/page?q=1` });
      expect(seen[0]).toMatchObject({ host: `site.test:${port}`, 'x-keep': 'yes' });
      expect(seen[0]!['proxy-authorization']).toBeUndefined();
    });
  });

  it.each([
    ['loopback literal', (p: number) => `http://127.0.0.1:${p}/`, /blocked address 127\.0\.0\.1/],
    ['cloud metadata', () => 'http://169.254.169.254/latest/meta-data/', /metadata/],
    ['a name resolving to a private address', (p: number) => `http://intranet.test:${p}/`, /resolves to blocked address 10\.0\.0\.5/],
    ['localhost', (p: number) => `http://localhost:${p}/`, /blocked hostname localhost/],
    ['a name that does not resolve', () => 'http://nowhere.test/', /unable to resolve/],
  ])('refuses %s before anything is sent', async (_name, urlFor, reason) => {
    await withProxy({}, async (proxy, blocked) => {
      seen = [];
      const url = urlFor(port);
      const res = await viaProxy(proxy, url);
      expect(res.status).toBe(403);
      expect(res.headers['x-warden-blocked']).toBe('1');
      expect(seen).toHaveLength(0);
      expect(blocked).toHaveLength(1);
      expect(blocked[0]!.url).toBe(url);
      expect(blocked[0]!.reason).toMatch(reason);
    });
  });

  it('passes a redirect through unfollowed: the browser asks again for the next hop, and that hop is checked', async () => {
    await withProxy({}, async (proxy, blocked) => {
      const first = await viaProxy(proxy, `http://site.test:${port}/redirect`);
      expect(first.status).toBe(302);
      expect(first.headers.location).toBe('http://10.0.0.1/');
      expect((await viaProxy(proxy, 'http://10.0.0.1/')).status).toBe(403);
      expect(blocked.map((b) => b.url)).toEqual(['http://10.0.0.1/']);
    });
  });

  it('with allowPrivateNetwork reaches loopback but never cloud metadata', async () => {
    await withProxy({ allowPrivateNetwork: true }, async (proxy) => {
      expect(await viaProxy(proxy, `http://127.0.0.1:${port}/x`)).toMatchObject({ status: 200, body: `hello from 127.0.0.1:${port}/x` });
      expect((await viaProxy(proxy, 'http://169.254.169.254/')).status).toBe(403);
      expect((await viaProxy(proxy, 'http://meta.test/')).status).toBe(403);
    });
  });

  it('tunnels CONNECT to an allowed host and refuses a private one', async () => {
    await withProxy({}, async (proxy, blocked) => {
      expect(await tunnel(proxy, `site.test:${port}`)).toEqual({ status: 200, body: `hello from site.test:${port}/tunnelled` });
      expect(await tunnel(proxy, `127.0.0.1:${port}`)).toEqual({ status: 403 });
      expect(await tunnel(proxy, 'metadata.google.internal:443')).toEqual({ status: 403 });
      expect(await tunnel(proxy, 'not-an-authority')).toEqual({ status: 400 });
      expect(blocked.map((b) => b.url)).toEqual([`https://127.0.0.1:${port}/`, 'https://metadata.google.internal/']);
    });
  });

  it('checks a host once per verdict lifetime: one DNS answer serves its requests', async () => {
    await withProxy({}, async (proxy, _blocked, lookups) => {
      await viaProxy(proxy, `http://site.test:${port}/a`);
      await viaProxy(proxy, `http://site.test:${port}/b`);
      expect(lookups).toEqual(['site.test']);
    });
  });

  it('fails closed when checking a request fails: 502 for a request, a dropped tunnel for CONNECT, nothing forwarded', async () => {
    // The report of a blocked request throws (its consumer is gone): the proxy must neither forward nor crash.
    const proxy = await startGuardProxy({
      policy: {},
      resolve: async () => [{ address: '10.0.0.5', family: 4 }],
      onBlocked: () => {
        throw new Error('report consumer gone');
      },
    });
    try {
      seen = [];
      const res = await viaProxy(proxy, `http://intranet.test:${port}/`);
      expect(res).toMatchObject({ status: 502, body: 'The browser guard could not check this request.' });
      await expect(tunnel(proxy, `intranet.test:${port}`)).rejects.toThrow(/socket hang up|ECONNRESET/);
      expect(seen).toHaveLength(0);
    } finally {
      await proxy.close();
    }
  });

  it('answers 400 to requests that are not proxy requests', async () => {
    await withProxy({}, async (proxy) => {
      const p = new URL(proxy.server);
      const status = await new Promise<number>((ok) => request({ host: p.hostname, port: p.port, path: '/', agent: false }, (res) => ok(res.statusCode ?? 0)).end());
      expect(status).toBe(400);
    });
  });
});
