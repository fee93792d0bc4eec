// The browser tool end to end: real Chromium per profile, the guard proxy, pages served on
// 127.0.0.1. "Public" names resolve (fake DNS) to a public address the proxy dials as loopback;
// everything else on loopback, private or metadata addresses must be refused — and the server's
// request log proves the refused requests were never sent.
import { mkdtempSync, existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserManager } from '../../src/browser/manager.js';
import { closeAllBrowsers } from '../../src/browser/shutdown.js';
import { parseConfig, type WardenConfigInput } from '../../src/config/index.js';
import type { Resolver } from '../../src/net/index.js';
import { createBrowserTool } from '../../src/tools/core/browser/browser.js';
import { withoutNonces } from '../../src/tools/untrusted-testing.js';
import type { BrowserArgs } from '../../src/tools/core/browser/browser-schema.js';
import type { ToolCallContext, ToolResult } from '../../src/tools/types.js';

const PUBLIC = '93.184.215.14';
const DNS: Record<string, string> = { 'site.test': PUBLIC, 'other.test': PUBLIC, 'intranet.test': '10.0.0.7', 'meta.test': '169.254.169.254' };

let server: Server;
let port: number;
let requests: string[] = [];

const PAGES: Record<string, string> = {
  '/': '<title>Home</title><h1>Welcome</h1><a href="/form">Form</a> <a href="/second">Second</a>',
  '/second': '<title>Second</title><p>second page</p>',
  '/form':
    '<title>Form</title><form action="/submitted"><label>Query <input name="q"></label><select name="size" aria-label="Size"><option>S</option><option>M</option><option>L</option></select><button>Send</button></form>',
  '/img-private': () => `<title>Images</title><img src="http://127.0.0.1:${port}/secret-img"><img src="http://intranet.test:${port}/intranet-img"><p>text</p>`,
  '/fetch-private': () =>
    `<title>Fetch</title><script>fetch('http://127.0.0.1:${port}/secret-fetch').catch(() => {}); try { new WebSocket('ws://127.0.0.1:${port}/secret-ws') } catch {}</script><p>done</p>`,
  '/link-private': () => `<title>Links</title><a href="http://127.0.0.1:${port}/secret">Internal</a>`,
  '/popup': '<title>Popup</title><a href="/second" target="_blank">New window</a>',
  '/cookie': '<title>Cookie</title><script>document.cookie = "who=" + (document.cookie.includes("who=") ? "again" : "first") + "; max-age=3600"</script><p>cookie</p>',
} as unknown as Record<string, string>;

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = req.url ?? '/';
    requests.push(`${req.headers.host}${url}`);
    const redirects: Record<string, string> = {
      '/to-loopback': `http://127.0.0.1:${port}/secret`,
      '/to-intranet': `http://intranet.test:${port}/secret`,
      '/to-metadata': 'http://169.254.169.254/latest/meta-data/',
      '/to-second': `http://other.test:${port}/second`,
      '/to-file': 'file:///etc/passwd',
    };
    if (redirects[url]) return void res.writeHead(302, { location: redirects[url] }).end();
    const page = (PAGES as Record<string, string | (() => string)>)[url.split('?')[0]!];
    if (url.startsWith('/submitted')) return void res.writeHead(200, { 'content-type': 'text/html' }).end(`<title>Sent</title><p>got ${new URL(url, 'http://x').search}</p>`);
    if (!page) return void res.writeHead(404, { 'content-type': 'text/html' }).end('<title>Missing</title>');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(typeof page === 'function' ? page() : page);
  });
  server.on('upgrade', (req, socket) => {
    requests.push(`${req.headers.host}${req.url}`);
    socket.destroy();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await closeAllBrowsers();
  await new Promise<void>((r) => server.close(() => r()));
});

const resolve: Resolver = async (host) => {
  const address = DNS[host];
  if (!address) throw Object.assign(new Error('nx'), { code: 'ENOTFOUND' });
  return [{ address, family: 4 }];
};

function toolWith(input: WardenConfigInput) {
  const parsed = parseConfig(input);
  if (!parsed.ok) throw parsed.error;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'warden-browser-'));
  const manager = new BrowserManager({ config: parsed.value.config, dataDir, resolve, dial: (a) => (a === PUBLIC ? '127.0.0.1' : a) });
  const tool = createBrowserTool({ manager });
  const ctx = { signal: new AbortController().signal, log: pino({ level: 'silent' }) } as unknown as ToolCallContext;
  const call = (args: BrowserArgs) => tool.execute(args, ctx) as Promise<ToolResult>;
  return { manager, call, dataDir };
}

const textOf = (r: ToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : `[image ${c.mimeType}]`)).join('\n');
const site = (p: string) => `http://site.test:${port}${p}`;
/** The ref of the first snapshot line matching `pattern`. */
const refIn = (snapshot: string, pattern: RegExp) => {
  const line = snapshot.split('\n').find((l) => pattern.test(l));
  return /\[ref=(e\d+)\]/.exec(line ?? '')?.[1];
};

describe('browser tool (default policy: private networks blocked)', () => {
  const { call, manager, dataDir } = toolWith({ browser: { profiles: { second: {} } } });

  it('opens a public page and reads it as a role snapshot wrapped as untrusted', async () => {
    const opened = await call({ action: 'open', url: site('/') });
    expect(opened.isError).toBeFalsy();
    expect(textOf(opened)).toContain(`Home — ${site('/')}`);
    const snap = await call({ action: 'snapshot' });
    const text = textOf(snap);
    expect(withoutNonces(text)).toContain(`<untrusted source="browser:${site('/')}">`);
    expect(text).toContain('- heading "Welcome" [ref=e1] [level=1]');
    expect(text).toMatch(/- link "Form" \[ref=e2\]/);
    expect(snap.details).toMatchObject({ status: 'ok', refs: 3, interactive: 2 });
    const efficient = await call({ action: 'snapshot', mode: 'efficient' });
    expect(textOf(efficient)).not.toContain('heading');
    expect(textOf(efficient)).toContain('- link "Form" [ref=e1]\n- link "Second" [ref=e2]');
  });

  it.each([
    ['the loopback server itself', () => `http://127.0.0.1:${port}/secret`, /blocked address 127\.0\.0\.1/],
    ['localhost', () => `http://localhost:${port}/secret`, /blocked hostname localhost/],
    ['cloud metadata', () => 'http://169.254.169.254/latest/meta-data/', /metadata/],
    ['a name resolving to a private address', () => `http://intranet.test:${port}/secret`, /10\.0\.0\.7/],
    ['a file URL', () => 'file:///etc/passwd', /scheme file: is not allowed/],
    ['a javascript URL', () => 'javascript:alert(1)', /scheme javascript: is not allowed/],
    ['a data URL', () => 'data:text/html,<h1>x</h1>', /scheme data: is not allowed/],
    ['a chrome URL', () => 'chrome://settings', /scheme chrome: is not allowed/],
  ])('refuses to open %s', async (_name, urlFor, reason) => {
    requests = [];
    const result = await call({ action: 'open', url: urlFor() });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(reason);
    expect(result.details).toMatchObject({ status: 'blocked' });
    expect(requests).toEqual([]);
  });

  it.each([
    ['loopback', '/to-loopback'],
    ['a private name', '/to-intranet'],
    ['cloud metadata', '/to-metadata'],
  ])('refuses a redirect from an allowed page to %s, before the hop is sent', async (_name, from) => {
    requests = [];
    const result = await call({ action: 'navigate', url: site(from) });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/blocked/i);
    expect(requests).toEqual([`site.test:${port}${from}`]);
    const tabs = await call({ action: 'tabs' });
    expect(textOf(tabs)).toContain('about:blank');
  });

  it('follows an allowed redirect and reports the hops', async () => {
    const result = await call({ action: 'navigate', url: site('/to-second') });
    expect(result.isError).toBeFalsy();
    expect(result.details).toMatchObject({ url: `http://other.test:${port}/second`, redirects: [`http://other.test:${port}/second`] });
  });

  it('blocks subresources and fetches to private addresses and says so', async () => {
    requests = [];
    const images = await call({ action: 'navigate', url: site('/img-private') });
    expect(images.isError).toBeFalsy();
    const since = Date.now();
    await call({ action: 'navigate', url: site('/fetch-private') });
    await call({ action: 'act', kind: 'wait', timeMs: 300 });
    expect(requests.filter((r) => /secret|intranet/.test(r))).toEqual([]);
    // The fetch went to the guard as a plain request, the WebSocket as a CONNECT tunnel.
    const refused = await manager.withSession(undefined, async (s) => s.blockedSince(since).map((b) => b.url), { start: false });
    expect(refused.ok && refused.value).toEqual(expect.arrayContaining([`http://127.0.0.1:${port}/secret-fetch`, `https://127.0.0.1:${port}/`]));
    // Chromium's own calls home (when it makes any) are refused too; the page's two must be named.
    expect(textOf(images)).toMatch(/The browser guard refused \d+ request\(s\)/);
    expect(textOf(images)).toContain(`http://127.0.0.1:${port}/secret-img: blocked address 127.0.0.1`);
    expect(textOf(images)).toContain(`http://intranet.test:${port}/intranet-img: intranet.test resolves to blocked address 10.0.0.7`);
  });

  it('a click on a link to a private address is refused and the tab reset', async () => {
    requests = [];
    await call({ action: 'navigate', url: site('/link-private') });
    const snap = textOf(await call({ action: 'snapshot', interactive: true }));
    const clicked = await call({ action: 'act', kind: 'click', ref: refIn(snap, /link "Internal"/)! });
    expect(clicked.isError).toBe(true);
    expect(textOf(clicked)).toMatch(/Navigation blocked after click/);
    expect(requests.some((r) => r.includes('/secret'))).toBe(false);
  });

  it('types, selects and clicks by ref; the form is submitted', async () => {
    await call({ action: 'navigate', url: site('/form') });
    const snap = textOf(await call({ action: 'snapshot', interactive: true }));
    expect(snap).toMatch(/- textbox "Query" \[ref=e1\]\n- combobox "Size" \[ref=e2\]/);
    expect((await call({ action: 'act', kind: 'type', ref: 'e1', text: 'warden rules' })).isError).toBeFalsy();
    const selected = await call({ action: 'act', kind: 'select', ref: 'e2', values: ['L'] });
    expect(textOf(selected)).toContain('Selected L');
    const clicked = await call({ action: 'act', kind: 'click', ref: refIn(snap, /button "Send"/)! });
    expect(clicked.isError).toBeFalsy();
    expect(textOf(clicked)).toContain('Sent');
    expect(textOf(await call({ action: 'snapshot' }))).toContain('got ?q=warden+rules&size=L');
  });

  it('type with submit presses Enter; press sends a key', async () => {
    await call({ action: 'navigate', url: site('/form') });
    await call({ action: 'snapshot', interactive: true });
    const typed = await call({ action: 'act', kind: 'type', ref: 'e1', text: 'enter', submit: true });
    expect(textOf(typed)).toContain('pressed Enter');
    expect(textOf(await call({ action: 'snapshot' }))).toContain('got ?q=enter');
    expect((await call({ action: 'act', kind: 'press', key: 'Tab' })).isError).toBeFalsy();
  });

  it('runs concurrent calls on one profile one after the other', async () => {
    const [loaded, snap] = await Promise.all([call({ action: 'navigate', url: site('/second') }), call({ action: 'snapshot' })]);
    expect(loaded.isError).toBeFalsy();
    expect(textOf(snap)).toContain('second page');
  });

  it('back at the start of a tab says there is no earlier page', async () => {
    const opened = await call({ action: 'open', url: site('/second') });
    const fresh = (opened.details as { targetId: string }).targetId;
    expect((await call({ action: 'back', targetId: fresh })).details).toMatchObject({ status: 'ok', url: 'about:blank' });
    expect(textOf(await call({ action: 'back', targetId: fresh }))).toMatch(/no earlier page/);
    await call({ action: 'close', targetId: fresh });
  });

  it('refuses unknown and stale refs with a hint to snapshot again', async () => {
    await call({ action: 'navigate', url: site('/second') });
    await call({ action: 'snapshot' });
    const unknown = await call({ action: 'act', kind: 'click', ref: 'e42' });
    expect(textOf(unknown)).toMatch(/Unknown ref e42.*new snapshot/);
    const missing = await call({ action: 'act', kind: 'click' });
    expect(textOf(missing)).toMatch(/needs a ref/);
  });

  it('goes back, lists tabs, adopts a popup, focuses and closes tabs', async () => {
    await call({ action: 'navigate', url: site('/') });
    await call({ action: 'navigate', url: site('/second') });
    const back = await call({ action: 'back' });
    expect(back.details).toMatchObject({ status: 'ok', url: site('/') });

    await call({ action: 'navigate', url: site('/popup') });
    const snap = textOf(await call({ action: 'snapshot', interactive: true }));
    await call({ action: 'act', kind: 'click', ref: refIn(snap, /New window/)! });
    await expect.poll(async () => ((await call({ action: 'tabs' })).details as { tabs: unknown[] }).tabs.length).toBe(2);
    const tabs = (await call({ action: 'tabs' })).details as { tabs: Array<{ targetId: string; url: string; current: boolean }> };
    const popup = tabs.tabs.find((t) => t.current)!;
    expect(popup.url).toBe(site('/second'));
    const first = tabs.tabs.find((t) => !t.current)!;
    expect((await call({ action: 'focus', targetId: first.targetId })).isError).toBeFalsy();
    expect((await call({ action: 'close', targetId: popup.targetId })).isError).toBeFalsy();
    expect(((await call({ action: 'tabs' })).details as { tabs: unknown[] }).tabs).toHaveLength(1);
    expect((await call({ action: 'focus', targetId: 't99' })).isError).toBe(true);
  });

  it('takes screenshots as image content, of the page and of an element', async () => {
    await call({ action: 'navigate', url: site('/form') });
    const shot = await call({ action: 'screenshot' });
    const image = shot.content.find((c) => c.type === 'image');
    expect(image).toMatchObject({ mimeType: 'image/png' });
    expect(Buffer.from((image as { data: string }).data, 'base64').subarray(1, 4).toString()).toBe('PNG');
    await call({ action: 'snapshot', interactive: true });
    const element = await call({ action: 'screenshot', ref: 'e1', type: 'jpeg' });
    expect(element.content.find((c) => c.type === 'image')).toMatchObject({ mimeType: 'image/jpeg' });
  });

  it('keeps profiles apart: own Chromium, own user-data dir, own cookies', async () => {
    await call({ action: 'navigate', url: site('/cookie') });
    await call({ action: 'navigate', url: site('/cookie') });
    expect(await cookieOf(undefined)).toBe('who=again');
    await call({ action: 'open', profile: 'second', url: site('/cookie') });
    expect(await cookieOf('second')).toBe('who=first');
    expect(existsSync(path.join(dataDir, 'browser', 'warden', 'user-data'))).toBe(true);
    expect(existsSync(path.join(dataDir, 'browser', 'second', 'user-data'))).toBe(true);
    expect(textOf(await call({ action: 'status' }))).toMatch(/warden \(default\): running.*\nsecond: running/);
    expect(textOf(await call({ action: 'open', profile: 'nope', url: site('/') }))).toMatch(/Unknown browser profile "nope"/);
  });

  async function cookieOf(profile: string | undefined): Promise<string> {
    const r = await manager.withSession(profile, async (s) => (await s.context.cookies()).map((c) => `${c.name}=${c.value}`).join(';'), { start: false });
    return r.ok ? r.value : r.error;
  }

  it('stops a profile; actions on a stopped profile say so', async () => {
    expect(textOf(await call({ action: 'stop', profile: 'second' }))).toContain('stopped');
    expect(textOf(await call({ action: 'snapshot', profile: 'second' }))).toMatch(/not running/);
    expect(textOf(await call({ action: 'stop', profile: 'second' }))).toContain('was not running');
  });
});

describe('browser tool with browser.ssrfPolicy.allowPrivateNetwork', () => {
  const { call, manager } = toolWith({ browser: { ssrfPolicy: { allowPrivateNetwork: true }, idleTimeoutSec: 2 } });

  it('opens loopback pages', async () => {
    const result = await call({ action: 'open', url: `http://127.0.0.1:${port}/second` });
    expect(result.isError).toBeFalsy();
    expect(textOf(await call({ action: 'snapshot' }))).toContain('second page');
  });

  it('never cloud metadata, directly or by redirect', async () => {
    requests = [];
    expect((await call({ action: 'navigate', url: 'http://169.254.169.254/latest/meta-data/' })).isError).toBe(true);
    expect((await call({ action: 'navigate', url: 'http://metadata.google.internal/' })).isError).toBe(true);
    expect((await call({ action: 'navigate', url: `http://meta.test:${port}/` })).isError).toBe(true);
    const redirected = await call({ action: 'navigate', url: `http://127.0.0.1:${port}/to-metadata` });
    expect(redirected.isError).toBe(true);
    expect(textOf(redirected)).toMatch(/metadata/);
    expect(requests).toEqual([`127.0.0.1:${port}/to-metadata`]);
  });

  it('closes Chromium after browser.idleTimeoutSec without calls', async () => {
    expect(await manager.running('warden')).toBeDefined();
    await expect.poll(() => manager.running('warden'), { timeout: 10_000, interval: 250 }).toBeUndefined();
  });

  it('closeAllBrowsers (Warden shutdown) closes every running profile', async () => {
    await call({ action: 'start' });
    expect(await manager.running('warden')).toBeDefined();
    await closeAllBrowsers();
    expect(await manager.running('warden')).toBeUndefined();
  });
});

describe('browser tool when disabled', () => {
  it('refuses every action without launching anything', async () => {
    const { call, manager } = toolWith({ browser: { enabled: false } });
    const result = await call({ action: 'open', url: site('/') });
    expect(result).toMatchObject({ isError: true, details: { status: 'disabled' } });
    expect(await manager.running('warden')).toBeUndefined();
  });
});
