import { createServer, type IncomingMessage } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { ProxyAgent, getGlobalDispatcher, setGlobalDispatcher } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { closeTestServers, closedAfterTest, serve } from './recording-server-testing.js';
import { startFakeOpenAI } from '../../test/fakes/models/openai-fake.js';
import { createAnthropicProvider } from '../models/anthropic.js';
import { createGeminiProvider } from '../models/gemini.js';
import { createOpenAIProvider } from '../models/openai.js';
import { withRetry } from '../models/retry.js';
import { ModelCallError, type ModelRequest } from '../models/types.js';
import { leanFetch, MAX_REDIRECTS } from './lean-fetch.js';

afterEach(closeTestServers);

const fetchLean = leanFetch();

describe('leanFetch: the exchange', () => {
  it('sends method, headers and body, and answers with status, headers and body as fetch does', async () => {
    const s = await serve((_req, _body, res) => {
      res.setHeader('set-cookie', ['a=1', 'b=2']);
      res.setHeader('x-request-id', 'req_1');
      res.writeHead(201, 'Made', { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
    const headers = new Headers({ Authorization: 'Bearer k', 'Content-Type': 'application/json' });
    headers.append('X-Twice', 'one');
    headers.append('X-Twice', 'two');
    const res = await fetchLean(`${s.url}/v1/x?q=1`, { method: 'post', headers, body: '{"a":1}' });
    expect([res.status, res.statusText, res.ok]).toEqual([201, 'Made', true]);
    expect(res.headers.get('x-request-id')).toBe('req_1');
    expect(res.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(await res.json()).toEqual({ ok: true });
    expect(s.seen[0]).toMatchObject({ method: 'POST', url: '/v1/x?q=1', body: '{"a":1}' });
    expect(s.seen[0]!.headers).toMatchObject({ authorization: 'Bearer k', 'content-type': 'application/json', 'x-twice': 'one, two' });
  });

  it.each([
    ['gzip', (b: string) => gzipSync(b)],
    ['deflate', (b: string) => deflateSync(b)],
    ['br', (b: string) => brotliCompressSync(b)],
  ])('decodes a %s answer, as fetch does', async (coding, encode) => {
    const s = await serve((_req, _body, res) => {
      res.writeHead(200, { 'content-encoding': coding, 'content-type': 'text/plain' });
      res.end(encode('compressed answer'));
    });
    expect(await (await fetchLean(s.url)).text()).toBe('compressed answer');
  });

  it('answers an error status with its body (the SDK reads it for the error)', async () => {
    const s = await serve((_req, _body, res) => {
      res.writeHead(429, { 'retry-after': '2', 'content-type': 'application/json' });
      res.end('{"error":{"message":"slow down"}}');
    });
    const res = await fetchLean(s.url, { method: 'POST', body: '{}' });
    expect([res.status, res.ok, res.headers.get('retry-after')]).toEqual([429, false, '2']);
    expect(await res.text()).toContain('slow down');
  });

  it('hands a body it does not send as is (form data) to the global fetch', async () => {
    const s = await serve((_req, _body, res) => res.end('ok'));
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array([1, 2, 3])]), 'a.bin');
    expect(await (await fetchLean(s.url, { method: 'POST', body: form })).text()).toBe('ok');
    expect(s.seen[0]!.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(s.seen[0]!.body).toContain('filename="a.bin"');
  });
});

describe('leanFetch: abort', () => {
  it('an abort before the answer rejects with an AbortError and closes the request', async () => {
    const s = await serve(() => {}); // never answers
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const err = (await fetchLean(s.url, { method: 'POST', body: '{}', signal: controller.signal }).catch((e: unknown) => e)) as Error;
    expect(err.name).toBe('AbortError');
    await expect.poll(() => s.closed()).toBe(1);
  });

  it('an already aborted signal sends nothing', async () => {
    const s = await serve((_req, _body, res) => res.end('ok'));
    const err = (await fetchLean(s.url, { signal: AbortSignal.abort() }).catch((e: unknown) => e)) as Error;
    expect(err.name).toBe('AbortError');
    expect(s.seen).toHaveLength(0);
  });

  it('an abort while the body streams ends the stream with an error and closes the connection', async () => {
    const s = await serve((_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: first\n\n'); // and nothing more
    });
    const controller = new AbortController();
    const res = await fetchLean(s.url, { signal: controller.signal });
    const reader = res.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: first\n\n');
    controller.abort();
    const err = (await reader.read().catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe('AbortError');
    await expect.poll(() => s.closed()).toBe(1);
  });
});

describe('leanFetch: redirects never leave the origin', () => {
  it.each([307, 308])('follows a %i within the origin with method and body kept', async (status) => {
    const s = await serve((req, _body, res) => {
      if (req.url === '/old') res.writeHead(status, { location: '/new' }).end();
      else res.end(`${req.method} ${req.url}`);
    });
    const res = await fetchLean(`${s.url}/old`, { method: 'POST', body: 'payload', headers: { authorization: 'Bearer k' } });
    expect(await res.text()).toBe('POST /new');
    expect(s.seen.map((x) => [x.url, x.body, x.headers.authorization])).toEqual([
      ['/old', 'payload', 'Bearer k'],
      ['/new', 'payload', 'Bearer k'],
    ]);
  });

  it.each([
    ['a 307 to another origin', 307, 'other'],
    ['a 302 within the origin', 302, 'same'],
    ['a 301 within the origin', 301, 'same'],
    ['a 303 within the origin', 303, 'same'],
  ])('hands back %s unfollowed, and the other host sees nothing', async (_name, status, where) => {
    const other = await serve((_req, _body, res) => res.end('stolen'));
    const s = await serve((req, _body, res) => {
      if (req.url === '/old') res.writeHead(status, { location: where === 'other' ? `${other.url}/new` : '/new' }).end();
      else res.end('moved');
    });
    const res = await fetchLean(`${s.url}/old`, { method: 'POST', body: 'secret prompt', headers: { authorization: 'Bearer k' } });
    expect(res.status).toBe(status);
    expect(other.seen).toHaveLength(0);
    expect(s.seen).toHaveLength(1);
  });

  it('a port or scheme change is another origin', async () => {
    const s = await serve((req, _body, res) => {
      const port = Number(new URL(`http://${req.headers.host}`).port);
      res.writeHead(307, { location: req.url === '/a' ? `http://127.0.0.1:${port + 1}/b` : 'https://127.0.0.1/b' }).end();
    });
    expect((await fetchLean(`${s.url}/a`, { method: 'POST', body: 'x' })).status).toBe(307);
    expect((await fetchLean(`${s.url}/c`, { method: 'POST', body: 'x' })).status).toBe(307);
    expect(s.seen).toHaveLength(2);
  });

  it(`stops after ${MAX_REDIRECTS} redirects and hands back the last one`, async () => {
    const s = await serve((req, _body, res) => res.writeHead(307, { location: `${req.url}x` }).end());
    const res = await fetchLean(`${s.url}/r`, { method: 'POST', body: 'x' });
    expect(res.status).toBe(307);
    expect(s.seen).toHaveLength(MAX_REDIRECTS + 1);
  });

  it("redirect: 'error' (as Slack's web client asks) fails on any redirect; 'manual' hands it back", async () => {
    const s = await serve((_req, _body, res) => res.writeHead(307, { location: '/new' }).end());
    await expect(fetchLean(`${s.url}/old`, { method: 'POST', body: 'x', redirect: 'error' })).rejects.toThrow(TypeError);
    expect((await fetchLean(`${s.url}/old`, { method: 'POST', body: 'x', redirect: 'manual' })).status).toBe(307);
    expect(s.seen).toHaveLength(2);
  });
});

describe('leanFetch: the process-wide proxy', () => {
  it('goes through the global dispatcher, so a proxy set for the process carries the call', async () => {
    const target = await serve((_req, body, res) => res.end(`got ${body}`));
    const tunnels: string[] = [];
    // A CONNECT proxy, as undici's ProxyAgent speaks to.
    const proxy = createServer();
    proxy.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
      tunnels.push(req.url!);
      const [host, port] = req.url!.split(':');
      const upstream = connect(Number(port), host!, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
    });
    closedAfterTest(proxy);
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const previous = getGlobalDispatcher();
    const agent = new ProxyAgent(`http://127.0.0.1:${(proxy.address() as AddressInfo).port}`);
    setGlobalDispatcher(agent);
    try {
      const res = await fetchLean(target.url, { method: 'POST', body: 'through' });
      expect(await res.text()).toBe('got through');
    } finally {
      setGlobalDispatcher(previous);
      await agent.close();
    }
    expect(tunnels).toEqual([new URL(target.url).host]);
    // And without it, straight to the server again.
    expect(await (await fetchLean(target.url, { method: 'POST', body: 'direct' })).text()).toBe('got direct');
    expect(tunnels).toHaveLength(1);
  });
});

describe('leanFetch under the OpenAI SDK: timeouts and retries keep working', () => {
  const request: ModelRequest = { model: 'm-1', system: 's', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], tools: [], maxOutputTokens: 64 };

  it('a server that does not answer within the timeout is a retryable timeout', async () => {
    const s = await serve(() => {}); // never answers
    const provider = createOpenAIProvider({ name: 'local', apiKey: 'k', baseUrl: s.url, timeoutMs: 200 });
    const started = Date.now();
    const err = (await provider.complete(request, new AbortController().signal).catch((e: unknown) => e)) as ModelCallError;
    expect(err).toBeInstanceOf(ModelCallError);
    expect([err.kind, err.retryable]).toEqual(['timeout', true]);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('retries with backoff around the call until the server answers', async () => {
    const server = await startFakeOpenAI({ script: [{ kind: 'error', status: 503 }, { kind: 'error', status: 500 }, { kind: 'reply', text: 'third time' }] });
    try {
      const provider = createOpenAIProvider({ name: 'local', apiKey: 'k', baseUrl: server.url, timeoutMs: 5000 });
      const waits: number[] = [];
      const res = await withRetry(
        { attempts: 4, baseDelayMs: 100, maxDelayMs: 1000 },
        new AbortController().signal,
        () => provider.complete(request, new AbortController().signal),
        { random: () => 1, sleep: async (ms) => void waits.push(ms) },
      );
      expect(res.message.content).toEqual([{ type: 'text', text: 'third time' }]);
      expect(waits).toEqual([100, 200]);
      expect(server.requests).toHaveLength(3);
    } finally {
      await server.close();
    }
  });
});

describe.each([
  { api: 'anthropic', make: (url: string) => createAnthropicProvider({ name: 'anthropic', apiKey: 'k', baseUrl: url, timeoutMs: 5000 }) },
  { api: 'openai (compatible server, called directly)', make: (url: string) => createOpenAIProvider({ name: 'local', apiKey: 'k', baseUrl: url, timeoutMs: 5000 }) },
  { api: 'openai (through the SDK)', make: (url: string) => createOpenAIProvider({ name: 'local', apiKey: 'k', baseUrl: url, timeoutMs: 5000 }, 'sdk') },
  { api: 'gemini', make: (url: string) => createGeminiProvider({ name: 'gemini', apiKey: 'k', baseUrl: url, timeoutMs: 5000 }) },
])('$api: model calls go through leanFetch', ({ make }) => {
  const request: ModelRequest = { model: 'm-1', system: 's', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], tools: [], maxOutputTokens: 64 };
  // The global fetch would follow these to the other host, with the prompt and the key.
  it.each([302, 307])('a %i to another host is not followed: the other host sees nothing, the call fails with that status', async (status) => {
    const elsewhere = await serve((_req, _body, res) => res.end('{}'));
    const s = await serve((req, _body, res) => res.writeHead(status, { location: `${elsewhere.url}${req.url}` }).end());
    const err = (await make(s.url)
      .complete(request, new AbortController().signal)
      .catch((e: unknown) => e)) as ModelCallError;
    expect(err).toBeInstanceOf(ModelCallError);
    // The Gemini SDK gives a status only to 4xx and 5xx errors; else its message carries the code.
    expect(err.details.status ?? (JSON.parse(err.message) as { error: { code: number } }).error.code).toBe(status);
    expect(s.seen).toHaveLength(1);
    expect(elsewhere.seen).toHaveLength(0);
  });
});
