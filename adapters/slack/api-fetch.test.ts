import { gzipSync } from 'node:zlib';
import { webApi } from '@slack/bolt';
import { afterEach, describe, expect, it } from 'vitest';
import { closeTestServers, serve } from '../../src/net/recording-server-testing.js';
import { slackApiFetch } from './api-fetch.js';

afterEach(closeTestServers);

const apiFetch = slackApiFetch();

describe('slackApiFetch', () => {
  it('sends method, headers and body, and answers with what a web Response shows of them', async () => {
    const s = await serve((_req, _body, res) => {
      res.setHeader('x-twice', ['one', 'two']);
      res.writeHead(201, 'Made', { 'content-type': 'application/json; charset=utf-8', 'X-OAuth-Scopes': 'chat:write' });
      res.end('\uFEFF{"ok":true}');
    });
    const answer = await apiFetch(`${s.url}/api/chat.postMessage`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: 'Bearer xoxb-1' }, body: 'channel=C1&text=hi' });
    expect(s.seen[0]).toMatchObject({ method: 'POST', url: '/api/chat.postMessage', body: 'channel=C1&text=hi', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: 'Bearer xoxb-1' } });
    const web = new Response('\uFEFF{"ok":true}', { status: 201, statusText: 'Made', headers: { 'content-type': 'application/json; charset=utf-8', 'x-oauth-scopes': 'chat:write', 'x-twice': 'one, two' } });
    expect({ ok: answer.ok, status: answer.status, statusText: answer.statusText }).toEqual({ ok: web.ok, status: web.status, statusText: web.statusText });
    expect(answer.url).toBe(`${s.url}/api/chat.postMessage`);
    for (const name of ['Content-Type', 'x-oauth-scopes', 'X-Twice', 'retry-after']) expect(answer.headers.get(name)).toBe(web.headers.get(name));
    expect(Object.fromEntries(answer.headers.entries())).toMatchObject(Object.fromEntries((web.headers as unknown as { entries(): Iterable<[string, string]> }).entries()));
    expect(await answer.text()).toBe(await web.text());
  });

  it('reads a body once, as a Response does', async () => {
    const s = await serve((_req, _body, res) => res.end('{"ok":true}'));
    const answer = await apiFetch(s.url, { method: 'POST', body: '' });
    expect(await answer.json()).toEqual({ ok: true });
    await expect(answer.text()).rejects.toThrow(/already been read/);
  });

  it('decodes a gzip answer, as fetch does', async () => {
    const s = await serve((_req, _body, res) => {
      res.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'application/json' });
      res.end(gzipSync('{"ok":true,"ts":"1.2"}'));
    });
    const answer = await apiFetch(s.url, { method: 'POST', body: 'a=1' });
    expect(await answer.json()).toEqual({ ok: true, ts: '1.2' });
    const again = await apiFetch(s.url, { method: 'POST', body: 'a=1' });
    expect(new TextDecoder().decode(await again.arrayBuffer())).toBe('{"ok":true,"ts":"1.2"}');
  });

  it('answers a bodiless status with an empty body', async () => {
    const s = await serve((_req, _body, res) => res.writeHead(204).end());
    const answer = await apiFetch(s.url, { method: 'POST', body: '' });
    expect(answer.status).toBe(204);
    expect(await answer.text()).toBe('');
  });

  it("refuses a redirect when asked to (the web client's redirect: 'error')", async () => {
    const s = await serve((_req, _body, res) => res.writeHead(307, { location: '/elsewhere' }).end());
    await expect(apiFetch(s.url, { method: 'POST', body: '', redirect: 'error' })).rejects.toThrow(/redirect/);
    expect(s.seen).toHaveLength(1);
  });

  it('stops at its signal', async () => {
    const s = await serve(() => undefined);
    await expect(apiFetch(s.url, { method: 'POST', body: '', signal: AbortSignal.timeout(50) })).rejects.toThrow();
  });

  it('sends form data (a file upload) through the global fetch', async () => {
    const s = await serve((_req, _body, res) => res.end('{"ok":true}'));
    const form = new FormData();
    form.append('file', new Blob(['hello']), 'a.txt');
    const answer = await apiFetch(s.url, { method: 'POST', body: form });
    expect(await answer.json()).toEqual({ ok: true });
    expect(s.seen[0]!.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(s.seen[0]!.body).toContain('hello');
  });

  it("carries Slack's web client: results, platform errors and rate limits as the client reads them", async () => {
    let calls = 0;
    const s = await serve((req, body, res) => {
      calls++;
      if (req.url === '/api/chat.postMessage' && calls === 1) return void res.writeHead(429, { 'retry-after': '0' }).end();
      const ok = new URLSearchParams(body).get('channel') !== 'nowhere';
      res.writeHead(200, { 'content-type': 'application/json', 'x-oauth-scopes': 'chat:write, im:write' });
      res.end(JSON.stringify(ok ? { ok: true, ts: '1.5', channel: 'C1' } : { ok: false, error: 'channel_not_found' }));
    });
    const client = new webApi.WebClient('xoxb-1', { slackApiUrl: `${s.url}/api/`, fetch: apiFetch, logLevel: webApi.LogLevel.ERROR, retryConfig: { retries: 1, minTimeout: 0, maxTimeout: 0 } });
    const posted = await client.chat.postMessage({ channel: 'C1', text: 'hi' });
    expect(posted).toMatchObject({ ok: true, ts: '1.5', response_metadata: { scopes: ['chat:write', 'im:write'] } });
    expect(calls).toBe(2);
    await expect(client.chat.postMessage({ channel: 'nowhere', text: 'hi' })).rejects.toMatchObject({ code: webApi.ErrorCode.PlatformError, data: { error: 'channel_not_found' } });
  });
});
