import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resolver } from './check.js';
import { guardedFetch, type GuardedFetchOptions } from './fetch.js';

const PUBLIC = '93.184.215.14';
let server: Server;
let port: number;

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = req.url ?? '/';
    if (url === '/page') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<p>hello</p>');
    if (url === '/to-page') return void res.writeHead(302, { location: '/page' }).end();
    if (url === '/to-private') return void res.writeHead(301, { location: `http://intranet.test:${port}/page` }).end();
    if (url === '/to-loopback') return void res.writeHead(307, { location: `http://127.0.0.1:${port}/page` }).end();
    if (url === '/to-metadata') return void res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
    if (url === '/loop') return void res.writeHead(302, { location: '/loop' }).end();
    if (url.startsWith('/chain/')) {
      const n = Number(url.split('/')[2]);
      return void res.writeHead(302, { location: n > 0 ? `/chain/${n - 1}` : '/page' }).end();
    }
    if (url === '/no-location') return void res.writeHead(302).end();
    if (url === '/big') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(100_000));
    res.writeHead(404).end('not found');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

function setup(table: Record<string, string[]>) {
  const calls: string[] = [];
  const resolve: Resolver = async (host) => {
    calls.push(host);
    const answers = table[host];
    if (!answers) throw Object.assign(new Error('nx'), { code: 'ENOTFOUND' });
    return answers.map((address) => ({ address, family: 4 as const }));
  };
  // Every "public" answer is served by the loopback test server.
  const options: GuardedFetchOptions = { surface: 'web_fetch', policy: {}, resolve, dial: (a) => (a === PUBLIC ? '127.0.0.1' : a) };
  return { calls, options };
}

const site = { 'site.test': [PUBLIC], 'intranet.test': ['10.0.0.7'] };

describe('guardedFetch', () => {
  it('fetches a public page through the pinned address', async () => {
    const { options, calls } = setup(site);
    const result = await guardedFetch(`http://site.test:${port}/page`, options);
    expect(result).toMatchObject({ ok: true, status: 200, contentType: 'text/html', address: PUBLIC });
    expect(result.ok && result.body.toString()).toBe('<p>hello</p>');
    expect(calls).toEqual(['site.test']);
  });

  it('follows a same-site redirect and checks the new hop', async () => {
    const { options, calls } = setup(site);
    const result = await guardedFetch(`http://site.test:${port}/to-page`, options);
    expect(result).toMatchObject({ ok: true, url: `http://site.test:${port}/page`, redirects: [`http://site.test:${port}/page`] });
    expect(calls).toEqual(['site.test', 'site.test']);
  });

  it.each([
    ['/to-private', 'intranet.test resolves to blocked address 10.0.0.7'],
    ['/to-loopback', 'blocked address 127.0.0.1'],
    ['/to-metadata', 'cloud metadata endpoint 169.254.169.254'],
  ])('blocks a redirect %s into a private network', async (path, reason) => {
    const { options } = setup(site);
    const result = await guardedFetch(`http://site.test:${port}${path}`, options);
    expect(result).toMatchObject({ ok: false, blocked: true });
    expect(!result.ok && result.error).toContain(reason);
  });

  it('stops redirect loops, long chains and redirects without Location', async () => {
    const { options } = setup(site);
    expect(await guardedFetch(`http://site.test:${port}/loop`, options)).toMatchObject({ ok: false, error: 'Redirect loop detected' });
    expect(await guardedFetch(`http://site.test:${port}/chain/5`, options)).toMatchObject({ ok: false, error: 'Too many redirects (limit: 3)' });
    expect((await guardedFetch(`http://site.test:${port}/chain/1`, options)).ok).toBe(true);
    expect(await guardedFetch(`http://site.test:${port}/no-location`, options)).toMatchObject({ ok: false, blocked: false });
  });

  it('connects only to the checked answer even if DNS changes afterwards (rebinding)', async () => {
    let first = true;
    const resolve: Resolver = async () => {
      const address = first ? PUBLIC : '127.0.0.1';
      first = false;
      return [{ address, family: 4 }];
    };
    const dialled: string[] = [];
    const result = await guardedFetch(`http://rebind.test:${port}/page`, {
      surface: 'web_fetch',
      policy: {},
      resolve,
      dial: (a) => (dialled.push(a), a === PUBLIC ? '127.0.0.1' : a),
    });
    expect(result.ok).toBe(true);
    expect(dialled).toEqual([PUBLIC]);
  });

  it('cuts the body at maxResponseBytes and says so', async () => {
    const { options } = setup(site);
    const result = await guardedFetch(`http://site.test:${port}/big`, { ...options, maxResponseBytes: 1000 });
    expect(result).toMatchObject({ ok: true, truncated: true });
    expect(result.ok && result.body.length).toBe(1000);
  });

  it('reports an unreachable server as a failure, not a block', async () => {
    const { options } = setup({ 'down.test': [PUBLIC] });
    const result = await guardedFetch('http://down.test:1/page', options);
    expect(result).toMatchObject({ ok: false, blocked: false });
  });
});
