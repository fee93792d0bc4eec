// The web chat's listener before the chat is attached: what it answers at once (the page and
// health, behind the same access checks), what waits for the chat, and what a failed start answers.
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { openWebFront, RETRY_AFTER_SEC, type WebChatHandlers, type WebFront } from './front.js';
import { FAVICON_SVG, markdownItJs, PAGE_CSS, PAGE_JS } from './page.js';

const TOKEN = 'front-token-0123456789abcdef0123456789abcdef';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const opened: WebFront[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((f) => f.close()));
});

async function front(waitMs?: number): Promise<WebFront> {
  const f = await openWebFront({ host: '127.0.0.1', port: 0 }, TOKEN, waitMs === undefined ? {} : { waitMs });
  opened.push(f);
  return f;
}

/** A chat that answers every request with 200 "chat" and completes every upgrade as a WebSocket echo. */
function echoChat(): WebChatHandlers & { requests: string[] } {
  const requests: string[] = [];
  return {
    requests,
    request: (_req, _res, url, reply) => {
      requests.push(url.pathname);
      reply(200, 'text/plain', `chat ${url.pathname}`);
    },
    upgrade: (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
      const wss = new WebSocketServer({ noServer: true });
      wss.handleUpgrade(req, socket, head, (ws) => ws.on('message', (raw) => ws.send(`echo ${raw.toString()}`)));
    },
  };
}

const status = async (url: string, headers: Record<string, string> = AUTH) => {
  const res = await fetch(url, { headers, redirect: 'manual' });
  return { status: res.status, body: await res.text(), retryAfter: res.headers.get('retry-after') };
};

describe('the web chat listener, before the chat is attached', () => {
  it('answers the page, its assets and health at once, with the same access checks as after', async () => {
    const f = await front();
    expect(f.ready).toBe(false);
    const page = await status(f.url);
    expect(page.status).toBe(200);
    expect(page.body).toContain('<form id="composer"');
    // Each asset is the page module's text (loaded at the first request for one).
    const served = { 'app.js': PAGE_JS, 'app.css': PAGE_CSS, 'markdown-it.js': markdownItJs(), 'favicon.svg': FAVICON_SVG };
    for (const [asset, text] of Object.entries(served)) expect(await status(`${f.url}${asset}`), asset).toMatchObject({ status: 200, body: text });
    expect(JSON.parse((await status(`${f.url}healthz`)).body)).toEqual({ ok: true, ready: false });
    // The token is checked before anything, the stack or not.
    for (const route of ['', 'healthz', 'files/0123456789abcdef01234567', 'ws']) expect((await status(`${f.url}${route}`, {})).status, route).toBe(401);
    expect((await status(f.url, { ...AUTH, origin: 'https://evil.example' })).status).toBe(403);
    const opened = await fetch(f.openUrl, { redirect: 'manual' });
    expect(opened.status).toBe(303);
    expect(opened.headers.get('set-cookie')).toMatch(/^warden_token=/);
  });

  it('refuses a WebSocket without the token or from another origin at once, without waiting for the chat', async () => {
    const f = await front();
    const refused = (headers: Record<string, string>) =>
      new Promise<string>((resolve) => {
        const ws = new WebSocket(`${f.url.replace('http', 'ws')}ws`, { headers });
        ws.on('unexpected-response', (_req, res) => resolve(String(res.statusCode)));
        ws.on('error', (err) => resolve(err.message));
      });
    expect(await refused({})).toMatch(/403/);
    expect(await refused({ ...AUTH, origin: 'https://evil.example' })).toMatch(/403/);
  });

  it('holds what needs the chat (a WebSocket, a file, an upload) and hands it on in order once attached', async () => {
    const f = await front();
    const ws = new WebSocket(`${f.url.replace('http', 'ws')}ws`, { headers: AUTH });
    let openedAt = 0;
    const echoed = new Promise<string>((resolve, reject) => {
      ws.on('open', () => {
        openedAt = Date.now();
        ws.send('hello');
      });
      ws.on('message', (raw) => resolve(raw.toString()));
      ws.on('error', reject);
    });
    const file = status(`${f.url}files/0123456789abcdef01234567`);
    const upload = fetch(`${f.url}upload?name=a.txt`, { method: 'POST', headers: { ...AUTH, 'content-type': 'text/plain' }, body: 'abc' }).then((r) => r.text());
    await new Promise((r) => setTimeout(r, 200));
    expect(openedAt).toBe(0);
    const chat = echoChat();
    const attachedAt = Date.now();
    f.attach(chat);
    expect(f.ready).toBe(true);
    expect(await echoed).toBe('echo hello');
    expect(openedAt).toBeGreaterThanOrEqual(attachedAt);
    expect((await file).body).toBe('chat /files/0123456789abcdef01234567');
    expect(await upload).toBe('chat /upload');
    expect(JSON.parse((await status(`${f.url}healthz`)).body)).toEqual({ ok: true, ready: true });
    ws.close();
  });

  it('answers 503 with Retry-After to what waited, and to what comes after, when the chat does not start', async () => {
    const f = await front();
    const file = status(`${f.url}files/0123456789abcdef01234567`);
    const upgrade = new Promise<number>((resolve) => {
      const ws = new WebSocket(`${f.url.replace('http', 'ws')}ws`, { headers: AUTH });
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('error', () => resolve(-1));
    });
    await new Promise((r) => setTimeout(r, 100));
    f.fail();
    expect(await file).toEqual({ status: 503, body: 'Warden did not start; see its log.', retryAfter: String(RETRY_AFTER_SEC) });
    expect(await upgrade).toBe(503);
    expect((await status(`${f.url}files/0123456789abcdef01234567`)).status).toBe(503);
    // The page itself still answers until the listener closes; then nothing listens.
    expect((await status(f.url)).status).toBe(200);
    await f.close();
    await expect(fetch(f.url)).rejects.toThrow();
    expect(() => f.attach(echoChat())).toThrow(/closed/);
  });

  it('bounds the wait: a request the chat does not take in time is answered 503', async () => {
    const f = await front(150);
    const started = Date.now();
    const r = await status(`${f.url}files/0123456789abcdef01234567`);
    expect(r.status).toBe(503);
    expect(r.body).toBe('Warden is still starting; try again shortly.');
    expect(r.retryAfter).toBe(String(RETRY_AFTER_SEC));
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('names the key, the flag and the holder when the port is taken', async () => {
    const f = await front();
    await expect(openWebFront({ host: '127.0.0.1', port: Number(new URL(f.url).port) }, TOKEN)).rejects.toThrow(/channels\.web\.port/);
  });
});
