// Files the web chat serves (/files/<id>: replies' files and the person's uploads), attacked as
// a page of the same origin would be: a generated or uploaded SVG or HTML file must never render
// as a document that can run script here; only raster images (judged by their bytes) and audio
// show inline; ids are unguessable and need the token; uploads need the token and the page's
// origin, and keep to their size and type limits.
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { createWebAdapter, type WebAdapter } from '../../adapters/web/index.js';

const TOKEN = 'file-serving-token-0123456789abcdef';
let adapter: WebAdapter;
let socket: WebSocket;
const frames: any[] = [];

beforeAll(async () => {
  adapter = createWebAdapter({ host: '127.0.0.1', port: 0, token: undefined }, { token: TOKEN, onApprovalClick: async () => ({ kind: 'not-found' }) });
  await adapter.start(async () => undefined);
  socket = new WebSocket(`${adapter.url!.replace('http', 'ws')}ws`, { headers: { authorization: `Bearer ${TOKEN}` } });
  socket.on('message', (d) => frames.push(JSON.parse(d.toString())));
  await once(socket, 'open');
});
afterAll(async () => {
  socket?.close();
  await adapter?.stop();
});

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
const MP3 = Buffer.concat([Buffer.from([0xff, 0xfb, 0x90, 0x00]), Buffer.alloc(64)]);
const ACTIVE = (name: string) => Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/><script>alert(1)</script>${name}`);

async function served(name: string, mimeType: string, data: Buffer = ACTIVE(name)) {
  const before = frames.length;
  await adapter.send({ provider: 'web', channelId: 'web' }, { text: '', files: [{ name, mimeType, data }] });
  while (!frames.slice(before).some((f) => f.type === 'message')) await new Promise((r) => setTimeout(r, 10));
  const file = frames.slice(before).find((f) => f.type === 'message').message.files[0];
  const res = await fetch(new URL(file.url, adapter.url), { headers: { authorization: `Bearer ${TOKEN}` } });
  return { file, res };
}

describe('files of web chat replies', () => {
  it.each([
    ['a PNG shows inline', 'a.png', 'image/png', PNG, 'image/png', 'inline'],
    ['audio shows inline', 'speech.mp3', 'audio/mpeg', MP3, 'audio/mpeg', 'inline'],
    ['an SVG is a download of opaque bytes', 'x.svg', 'image/svg+xml', undefined, 'application/octet-stream', 'attachment'],
    ['HTML is a download', 'x.html', 'text/html', undefined, 'application/octet-stream', 'attachment'],
    ['a type that claims to be an image but is not raster', 'x.png', 'image/svg+xml; charset=utf-8', undefined, 'application/octet-stream', 'attachment'],
    ['HTML bytes declared as a PNG are a download', 'x.png', 'image/png', undefined, 'application/octet-stream', 'attachment'],
    ['HTML bytes declared as audio are a download', 'x.mp3', 'audio/mpeg', undefined, 'application/octet-stream', 'attachment'],
    ['a PNG declared as SVG is still a download', 'x.svg', 'image/svg+xml', PNG, 'application/octet-stream', 'attachment'],
    ['a header-splitting name is neutralised', 'a"\r\nset-cookie: x=1.png', 'image/png', PNG, 'image/png', 'inline'],
  ])('%s', async (_name, name, mime, data, type, disposition) => {
    const { file, res } = await served(name, mime, data);
    expect(file.url).toMatch(/^\/files\/[0-9a-f]{24}$/);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(type);
    expect(res.headers.get('content-disposition')).toMatch(new RegExp(`^${disposition}; filename="[\\w.-]+"$`));
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(res.headers.get('content-security-policy')).toMatch(/; sandbox$/);
    expect(res.headers.get('set-cookie')).toBeNull();
  });

  it('needs the token, and an unknown id is not found', async () => {
    const { file } = await served('b.png', 'image/png');
    expect((await fetch(new URL(file.url, adapter.url))).status).toBe(401);
    expect((await fetch(new URL('/files/000000000000000000000000', adapter.url), { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
  });

  it('a file over the limit is named in the text, not served', async () => {
    const before = frames.length;
    await adapter.send({ provider: 'web', channelId: 'web' }, { text: 'done', files: [{ name: 'big.png', mimeType: 'image/png', data: Buffer.alloc(11 * 1024 * 1024), path: 'generated/big.png' }] });
    while (!frames.slice(before).some((f) => f.type === 'message')) await new Promise((r) => setTimeout(r, 10));
    const message = frames.slice(before).find((f) => f.type === 'message').message;
    expect(message.files).toBeUndefined();
    expect(message.text).toMatch(/big\.png \(11 MB\) is over the 10 MB limit for files here; it is saved as generated\/big\.png/);
  });
});

describe('uploads from the page', () => {
  const upload = (name: string, type: string, body: Buffer, headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` }) =>
    fetch(new URL(`/upload?name=${encodeURIComponent(name)}`, adapter.url), { method: 'POST', headers: { 'content-type': type, ...headers }, body: new Uint8Array(body) });

  it.each([
    ['without the token', () => upload('a.txt', 'text/plain', Buffer.from('x'), {}), 401],
    ['from another origin', () => upload('a.txt', 'text/plain', Buffer.from('x'), { authorization: `Bearer ${TOKEN}`, origin: 'http://evil.test' }), 403],
    ['an executable type', () => upload('a.exe', 'application/x-msdownload', Buffer.from('MZ')), 415],
    ['a video', () => upload('a.mp4', 'video/mp4', Buffer.from('x')), 415],
    ['an empty file', () => upload('a.txt', 'text/plain', Buffer.alloc(0)), 400],
    ['more than the limit', () => upload('big.bin', 'application/octet-stream', Buffer.alloc(20 * 1024 * 1024 + 1)), 413],
  ])('is refused %s', async (_name, send, status) => {
    const res = await send();
    expect(res.status).toBe(status);
    if (status !== 401 && status !== 403) expect((await res.json()).error).toMatch(/\w/);
  });

  it('a GET cannot upload, and an uploaded HTML file is served as a download', async () => {
    expect((await fetch(new URL('/upload?name=a.txt', adapter.url), { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
    const res = await upload('page.html', 'text/html', ACTIVE('page.html'));
    expect(res.status).toBe(201);
    const { id } = await res.json();
    const got = await fetch(new URL(`/files/${id}`, adapter.url), { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(got.headers.get('content-type')).toBe('application/octet-stream');
    expect(got.headers.get('content-disposition')).toBe('attachment; filename="page.html"');
  });

  it("a message may name only uploads: a reply's file id or an unknown id is refused", async () => {
    const { file } = await served('reply.png', 'image/png', PNG);
    const id = file.url.slice('/files/'.length);
    for (const files of [[id], ['0'.repeat(24)], ['../../etc/passwd'], 'x', Array.from({ length: 9 }, () => id)]) {
      const before = frames.length;
      const mid = `m-${Math.random().toString(36).slice(2, 12)}`;
      socket.send(JSON.stringify({ type: 'message', id: mid, text: 'look', files }));
      while (!frames.slice(before).some((f) => f.type === 'ack' && f.id === mid)) await new Promise((r) => setTimeout(r, 10));
      expect(frames.slice(before).find((f) => f.type === 'ack' && f.id === mid)).toMatchObject({ status: 'refused' });
    }
  });
});
