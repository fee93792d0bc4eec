// Files the web chat serves from replies (/files/<id>), attacked as a page of the same origin
// would be: a generated SVG or HTML file must never render as a document that can run script
// here; only raster images and audio show inline; ids are unguessable and need the token.
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

async function served(name: string, mimeType: string) {
  const before = frames.length;
  await adapter.send({ provider: 'web', channelId: 'web' }, { text: '', files: [{ name, mimeType, data: Buffer.from(`<svg onload="alert(1)"/>${name}`) }] });
  while (!frames.slice(before).some((f) => f.type === 'message')) await new Promise((r) => setTimeout(r, 10));
  const file = frames.slice(before).find((f) => f.type === 'message').message.files[0];
  const res = await fetch(new URL(file.url, adapter.url), { headers: { authorization: `Bearer ${TOKEN}` } });
  return { file, res };
}

describe('files of web chat replies', () => {
  it.each([
    ['a PNG shows inline', 'a.png', 'image/png', 'image/png', 'inline'],
    ['audio shows inline', 'speech.mp3', 'audio/mpeg', 'audio/mpeg', 'inline'],
    ['an SVG is a download of opaque bytes', 'x.svg', 'image/svg+xml', 'application/octet-stream', 'attachment'],
    ['HTML is a download', 'x.html', 'text/html', 'application/octet-stream', 'attachment'],
    ['a type that claims to be an image but is not raster', 'x.png', 'image/svg+xml; charset=utf-8', 'application/octet-stream', 'attachment'],
    ['a header-splitting name is neutralised', 'a"\r\nset-cookie: x=1.png', 'image/png', 'image/png', 'inline'],
  ])('%s', async (_name, name, mime, type, disposition) => {
    const { file, res } = await served(name, mime);
    expect(file.url).toMatch(/^\/files\/[0-9a-f]{24}$/);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(type);
    expect(res.headers.get('content-disposition')).toMatch(new RegExp(`^${disposition}; filename="[\\w.-]+"$`));
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
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
