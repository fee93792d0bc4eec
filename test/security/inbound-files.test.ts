// Files people post, attacked as a sender would: an attachment URL pointing elsewhere (SSRF
// through the bot's fetch), a redirect off the file host, a name that climbs out of inbox/, an
// inbox/ symlink leading out of the workspace, a file larger than declared.
import { mkdirSync, mkdtempSync, readdirSync, symlinkSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchAttachment } from '../../adapters/common/attachment-fetch.js';
import { discordAttachment } from '../../adapters/discord/inbound.js';
import { attachmentsFrom, decodeForwarded } from '../../src/gateway/forwarded.js';
import { safeName, takeInFiles } from '../../src/gateway/inbound-files.js';
import type { InboundAttachment } from '../../src/gateway/types.js';

let server: Server;
let host = '';
beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/redirect') res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
    else if (req.url === '/big') res.end(Buffer.alloc(2048));
    else res.end('ok');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('fetchAttachment only reads the platform file host', () => {
  const cases: Array<[string, () => string, RegExp | 'ok']> = [
    ['the file host itself', () => `http://${host}/f`, 'ok'],
    ['cloud metadata', () => 'http://169.254.169.254/latest/meta-data/', /not the platform's file host/],
    ['another loopback port', () => 'http://127.0.0.1:1/f', /not the platform's file host/],
    ['a lookalike host', () => 'https://cdn.discordapp.com.attacker.test/f', /not the platform's file host/],
    ['userinfo trick', () => `https://cdn.discordapp.com@attacker.test/f`, /not the platform's file host/],
    ['plain http to the real CDN', () => 'http://cdn.discordapp.com/f', /not the platform's file host/],
    ['a redirect off the host', () => `http://${host}/redirect`, /fetch failed|redirect/i],
    ['more bytes than allowed', () => `http://${host}/big`, /larger than 1024 bytes/],
    ['not a URL', () => 'file:///etc/passwd', /not the platform's file host/],
  ];
  it.each(cases)('%s', async (_name, url, expected) => {
    const got = await fetchAttachment(url(), { allowedHosts: ['cdn.discordapp.com', host], maxBytes: 1024 });
    if (expected === 'ok') expect(got).toEqual({ ok: true, data: Buffer.from('ok') });
    else expect(got.ok ? 'fetched' : got.error).toMatch(expected);
  });

  /** A message's files as recorded on the shared store for another instance (or as someone wrote the row), read back there. */
  const recorded = (files: unknown[]) => {
    const decoded = decodeForwarded(
      JSON.stringify({ v: 1, route: { agentId: 'main', sessionKey: 'agent:main:discord:direct:1', text: '', context: {}, replyTo: { provider: 'discord', channelId: '1' }, files } }),
    );
    if (!decoded.ok) throw new Error(decoded.error);
    return attachmentsFrom(decoded.files, 'discord', { attachmentFrom: (ref) => discordAttachment(ref, ['cdn.discordapp.com', host]) });
  };

  // The instance running it fetches the recorded URL through the adapter's own path: the same hosts, limit and guard.
  it.each(cases)('recorded for another instance: %s', async (_name, url, expected) => {
    const got = await recorded([{ id: 'F1', name: 'f.txt', url: url() }])[0]!.download(1024);
    if (expected === 'ok') expect(got).toEqual({ ok: true, data: Buffer.from('ok') });
    else expect(got.ok ? 'fetched' : got.error).toMatch(expected);
  });

  it('recorded for another instance: a declared size over the limit is not fetched, and named', async () => {
    const taken = await takeInFiles(recorded([{ id: 'F2', name: 'big.bin', size: 50 * 1024 * 1024, url: `http://${host}/f` }]), {
      workspaceDir: mkdtempSync(path.join(tmpdir(), 'warden-inbox-')),
      vision: true,
    });
    expect(taken.notes).toEqual([`[file big.bin (${50 * 1024 * 1024} bytes) was not taken: over ${20 * 1024 * 1024} bytes]`]);
  });
});

describe('names and the inbox stay inside the workspace', () => {
  it.each([
    ['../../etc/passwd', 'passwd'],
    ['..\\..\\windows\\system.ini', 'system.ini'],
    ['.bashrc', 'bashrc'],
    ['a\u0000b.txt', 'ab.txt'],
    ['$(rm -rf ~).txt', '__rm_-rf___.txt'],
    ['', 'file'],
    ['..', 'file'],
  ])('safeName(%j) = %j', (input, expected) => {
    expect(safeName(input)).toBe(expected);
  });

  const file = (name: string, data = Buffer.from('x')): InboundAttachment => ({ id: name, name, download: async () => ({ ok: true, data }) });

  it('an inbox symlink leading out is refused, nothing is written outside', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'warden-inbox-'));
    const workspace = path.join(root, 'ws');
    const outside = path.join(root, 'outside');
    mkdirSync(workspace);
    mkdirSync(outside);
    symlinkSync(outside, path.join(workspace, 'inbox'));
    const taken = await takeInFiles([file('a.txt')], { workspaceDir: workspace, vision: true });
    expect(taken.notes[0]).toMatch(/not saved/);
    expect(readdirSync(outside)).toEqual([]);
  });

  it('a file larger than allowed is not fetched at all when declared so, and named', async () => {
    let fetched = false;
    const big: InboundAttachment = { id: 'b', name: 'big.bin', size: 50 * 1024 * 1024, download: async () => ((fetched = true), { ok: true, data: Buffer.alloc(1) }) };
    const taken = await takeInFiles([big], { workspaceDir: mkdtempSync(path.join(tmpdir(), 'warden-inbox-')), vision: true });
    expect(fetched).toBe(false);
    expect(taken.notes[0]).toMatch(/was not taken: over/);
  });

  it('a declared image type is not trusted: an HTML file named .png is a file, not an image part', async () => {
    const taken = await takeInFiles([{ ...file('x.png', Buffer.from('<script>alert(1)</script>')), mimeType: 'image/png' }], { workspaceDir: mkdtempSync(path.join(tmpdir(), 'warden-inbox-')), vision: true });
    expect(taken.images).toEqual([]);
    expect(taken.notes[0]).toMatch(/^\[file x\.png .* saved as inbox\//);
  });
});
