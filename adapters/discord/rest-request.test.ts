import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { discordRestRequest } from './rest-request.js';

// A loopback server that answers with what it received, so each strategy is judged by what
// actually reached the wire.
const received: { contentType: string | undefined; body: string }[] = [];
const server = createServer((req: IncomingMessage, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    received.push({ contentType: req.headers['content-type'], body: Buffer.concat(chunks).toString('utf8') });
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"id":"1"}');
  });
});
let url = '';
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v10/channels/1/messages`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
afterEach(() => {
  received.length = 0;
  vi.restoreAllMocks();
});

describe('discordRestRequest', () => {
  it('sends a JSON body through discord.js’s undici strategy, not through fetch', async () => {
    const fetchSpy = vi.spyOn(globalThis, 'fetch');
    const res = await discordRestRequest(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"content":"hi"}' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: '1' });
    expect(received).toEqual([{ contentType: 'application/json', body: '{"content":"hi"}' }]);
    expect(fetchSpy).not.toHaveBeenCalled();
  });

  it('sends a request without a body (typing) the same way', async () => {
    const fetchSpy = vi.spyOn(globalThis, 'fetch');
    const res = await discordRestRequest(url, { method: 'POST' });
    expect(res.ok).toBe(true);
    expect(received).toHaveLength(1);
    expect(fetchSpy).not.toHaveBeenCalled();
  });

  it('sends a file upload (the global FormData) through Node’s fetch, which accepts it', async () => {
    const fetchSpy = vi.spyOn(globalThis, 'fetch');
    const form = new FormData();
    form.append('payload_json', '{"content":"file"}');
    form.append('files[0]', new Blob([Buffer.from('step 1\n')]), 'build.log');
    const res = await discordRestRequest(url, { method: 'POST', body: form as never });
    expect(res.status).toBe(200);
    expect(fetchSpy).toHaveBeenCalledTimes(1);
    expect(received[0]!.contentType).toMatch(/^multipart\/form-data; boundary=/);
    expect(received[0]!.body).toContain('filename="build.log"');
    expect(received[0]!.body).toContain('step 1');
  });
});
