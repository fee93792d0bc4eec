// Warden's own listeners attacked through its own web tools: a page or a model steering
// web_fetch or the browser at the web chat (where the page's user is the owner and approves
// exec), the Slack receiver or the browser's guard proxy. Whatever the SSRF policy allows, no
// spelling of an address of this machine, no name, redirect, subresource, WebSocket or
// prefetch may reach them — proved by the listener's own count of TCP connections.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrowserManager } from '../../src/browser/manager.js';
import { startGuardProxy } from '../../src/browser/guard-proxy.js';
import { closeAllBrowsers } from '../../src/browser/shutdown.js';
import { main } from '../../src/cli.js';
import { parseConfig, type WardenConfigInput } from '../../src/config/index.js';
import { startWarden } from '../../src/app/startup.js';
import { checkUrlWithPolicy, guardedFetch, interfaceAddresses, registerOwnListener, registerServer, runningListeners, type Resolver, type UrlPolicy, type UrlSurface } from '../../src/net/index.js';
import { createBrowserTool } from '../../src/tools/core/browser/browser.js';
import type { BrowserArgs } from '../../src/tools/core/browser/browser-schema.js';
import type { ToolCallContext, ToolResult } from '../../src/tools/types.js';

const PUBLIC = '93.184.215.14';
const OWN = /Warden's own (web chat|test listener|Slack HTTP receiver|browser guard proxy)/;

/** Stands in for the web chat: bound on every address, counting every TCP connection it gets. */
let own: Server;
let ownPort: number;
let ownConnections: string[] = [];
/** A "public" site (fake DNS → PUBLIC, dialled on loopback) that attacks the own listener. */
let site: Server;
let sitePort: number;

/** Every address of this machine as a URL host, and names meaning this machine. */
const THIS_HOST_URL_HOSTS = () => {
  const interfaces = interfaceAddresses().filter((a) => !/^fe80:/i.test(a)); // link-local needs a zone, which URLs cannot carry
  return [
    '127.0.0.1', '127.0.0.2', '127.255.255.254', '127.1', '2130706433', '0x7f000001', '0177.0.0.1', '0.0.0.0', '0',
    'localhost', 'LOCALHOST', 'localhost.', 'app.localhost', 'localhost.localdomain', hostname(),
    '[::1]', '[0:0:0:0:0:0:0:1]', '[::]', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]', '[::127.0.0.1]', '[64:ff9b::7f00:1]', '[2002:7f00:1::]',
    ...interfaces.map((a) => (a.includes(':') ? `[${a}]` : a)),
    ...interfaces.filter((a) => !a.includes(':')).map((a) => `[::ffff:${a}]`),
  ];
};

/** Names whose DNS answers are this machine (a rebinding or a plain A record). */
const DNS: Record<string, string[]> = {
  'site.test': [PUBLIC],
  'rebind.test': [PUBLIC, '127.0.0.1'],
  'loop.test': ['127.0.0.1'],
  'loop6.test': ['::1'],
  'mapped.test': ['::ffff:127.0.0.1'],
  'any.test': ['0.0.0.0'],
};
/** This machine's own link-local address (or ::1) with a zone, as a resolver may answer it. */
const zoned = () => `${interfaceAddresses().find((a) => /^fe80:/i.test(a)) ?? '::1'}%1`;
const resolve: Resolver = async (host) => {
  const answers = host === 'zone.test' ? [zoned()] : DNS[host] ?? (host === 'lan.test' ? interfaceAddresses().filter((a) => !a.startsWith('127.') && a !== '0:0:0:0:0:0:0:1') : undefined);
  if (!answers || answers.length === 0) throw Object.assign(new Error('nx'), { code: 'ENOTFOUND' });
  return answers.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};
const dial = (a: string) => (a === PUBLIC ? '127.0.0.1' : a);

beforeAll(async () => {
  own = createServer((req, res) => res.end(`own listener: ${req.url}`));
  own.on('connection', (socket: Socket) => ownConnections.push(`${socket.remoteAddress}:${socket.remotePort}`));
  registerServer(own, 'test listener');
  await new Promise<void>((r) => own.listen(0, '::', r));
  ownPort = (own.address() as AddressInfo).port;

  site = createServer((req, res) => {
    const url = req.url ?? '/';
    if (url === '/to-own') return void res.writeHead(302, { location: `http://127.0.0.1:${ownPort}/approve` }).end();
    if (url === '/to-own-name') return void res.writeHead(302, { location: `http://loop.test:${ownPort}/approve` }).end();
    if (url === '/attack') return void res.writeHead(200, { 'content-type': 'text/html' }).end(attackPage());
    if (url === '/post') {
      const form = `<form id="f" method="post" action="http://127.0.0.1:${ownPort}/approve"><input name="decision" value="allow-once"></form><script>document.getElementById('f').submit()</script>`;
      return void res.writeHead(200, { 'content-type': 'text/html' }).end(`<title>Post</title>${form}`);
    }
    res.writeHead(200, { 'content-type': 'text/html' }).end('<title>Public</title><p>public page</p>');
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  sitePort = (site.address() as AddressInfo).port;
});
afterAll(async () => {
  await closeAllBrowsers();
  await new Promise<void>((r) => own.close(() => r()));
  await new Promise<void>((r) => site.close(() => r()));
});

/** For the decision tables (built before any server listens): a registered listener on every address. */
const TABLE_PORT = 47_301;
const releaseTableListener = registerOwnListener({ name: 'test listener', host: '::', port: TABLE_PORT });
afterAll(() => releaseTableListener());

const PERMISSIVE_BROWSER: UrlPolicy[] = [
  {},
  { allowPrivateNetwork: true },
  { allowPrivateNetwork: true, allowIpv6UniqueLocalRange: true, allowRfc2544BenchmarkRange: true },
  { allowedHostnames: ['localhost', 'loop.test', 'rebind.test', 'lan.test', hostname()] },
];
const PERMISSIVE_FETCH: UrlPolicy[] = [{}, { allowIpv6UniqueLocalRange: true, allowRfc2544BenchmarkRange: true }];

describe('the URL check never lets web_fetch or the browser reach an own listener', () => {
  const cases = (surface: UrlSurface, policies: UrlPolicy[]) =>
    policies.flatMap((policy) => [
      ...THIS_HOST_URL_HOSTS().flatMap((host) => [`http://${host}:${TABLE_PORT}/`, `https://${host}:${TABLE_PORT}/approve`]),
      ...Object.keys(DNS).filter((n) => n !== 'site.test').map((name) => `http://${name}:${TABLE_PORT}/`),
      `http://lan.test:${TABLE_PORT}/`,
      `http://zone.test:${TABLE_PORT}/`,
    ].map((url) => [surface, JSON.stringify(policy), url] as const));

  it.each([...cases('browser', PERMISSIVE_BROWSER), ...cases('web_fetch', PERMISSIVE_FETCH)])('%s %s %s', async (surface, policy, url) => {
    const verdict = await checkUrlWithPolicy(url, surface, JSON.parse(policy) as UrlPolicy, resolve);
    expect(verdict.allowed).toBe(false);
    expect(verdict.reason).toMatch(OWN);
  });

  it('refuses the default ports when a listener is on 80 or 443', async () => {
    for (const port of [80, 443]) {
      const policy: UrlPolicy = { allowPrivateNetwork: true, ownListeners: [{ name: 'web chat', host: '0.0.0.0', port }] };
      for (const url of [`${port === 443 ? 'https' : 'http'}://127.0.0.1/`, `${port === 443 ? 'https' : 'http'}://localhost/`, `http://[::1]:${port}/`]) {
        const verdict = await checkUrlWithPolicy(url, 'browser', policy, resolve);
        expect(verdict.reason, url).toMatch(OWN);
      }
      // The other scheme's default port is another port.
      expect((await checkUrlWithPolicy(`${port === 443 ? 'http' : 'https'}://127.0.0.1/`, 'browser', policy, resolve)).allowed).toBe(true);
    }
  });

  it('still lets the browser reach the rest of this machine when private networks are allowed', async () => {
    expect((await checkUrlWithPolicy(`http://127.0.0.1:${TABLE_PORT + 1}/`, 'browser', { allowPrivateNetwork: true }, resolve)).allowed).toBe(true);
  });
});

describe('web_fetch against an own listener: redirects and pinned connections', () => {
  it.each([
    ['a redirect to it by address', '/to-own'],
    ['a redirect to it by a name that resolves to it', '/to-own-name'],
  ])('%s is refused before anything is sent', async (_name, route) => {
    const before = ownConnections.length;
    const fetched = await guardedFetch(`http://site.test:${sitePort}${route}`, { surface: 'web_fetch', policy: { allowIpv6UniqueLocalRange: true }, resolve, dial });
    expect(fetched).toMatchObject({ ok: false, blocked: true });
    expect(fetched.ok ? '' : fetched.error).toMatch(OWN);
    expect(ownConnections.length).toBe(before);
  });

  it('a DNS answer list with one own address among public ones is refused whole', async () => {
    const fetched = await guardedFetch(`http://rebind.test:${ownPort}/`, { surface: 'web_fetch', policy: {}, resolve, dial });
    expect(fetched.ok ? '' : fetched.error).toMatch(/resolving to 127\.0\.0\.1.*Warden's own/);
  });
});

describe('the guard proxy against an own listener', () => {
  it('refuses plain requests and CONNECT tunnels (HTTPS, WebSocket) to it, and to itself', async () => {
    const blocked: string[] = [];
    const proxy = await startGuardProxy({ policy: { allowPrivateNetwork: true }, resolve, dial, onBlocked: (e) => blocked.push(e.reason) });
    const proxyPort = Number(new URL(proxy.server).port);
    const before = ownConnections.length;
    try {
      const raw = (text: string) =>
        new Promise<string>((ok, fail) => {
          import('node:net').then(({ connect }) => {
            const socket = connect(proxyPort, '127.0.0.1', () => socket.write(text));
            let got = '';
            socket.on('data', (d) => (got += d.toString()));
            socket.on('end', () => ok(got));
            socket.on('close', () => ok(got));
            socket.on('error', fail);
            setTimeout(() => socket.destroy(), 2_000);
          }, fail);
        });
      for (const host of ['127.0.0.1', 'localhost', '[::1]', '[::ffff:127.0.0.1]', '0.0.0.0', 'loop.test']) {
        expect(await raw(`GET http://${host}:${ownPort}/ HTTP/1.1\r\nHost: ${host}:${ownPort}\r\nConnection: close\r\n\r\n`), host).toMatch(/^HTTP\/1\.1 403/);
        expect(await raw(`CONNECT ${host}:${ownPort} HTTP/1.1\r\nHost: ${host}:${ownPort}\r\n\r\n`), host).toMatch(/^HTTP\/1\.1 403/);
      }
      expect(await raw(`CONNECT [fe80::1%25lo]:${ownPort} HTTP/1.1\r\n\r\n`)).toMatch(/^HTTP\/1\.1 40[03]/);
      expect(await raw(`GET http://127.0.0.1:${proxyPort}/ HTTP/1.1\r\nHost: 127.0.0.1:${proxyPort}\r\nConnection: close\r\n\r\n`)).toMatch(/^HTTP\/1\.1 403/);
      expect(blocked.every((r) => OWN.test(r))).toBe(true);
      expect(ownConnections.length).toBe(before);
    } finally {
      await proxy.close();
    }
  });
});

describe('warden url-check reports the refusal and its reason', () => {
  async function urlCheck(url: string, config: string, tool: UrlSurface = 'browser') {
    const cwd = mkdtempSync(path.join(tmpdir(), 'warden-own-'));
    writeFileSync(path.join(cwd, 'warden.config.yaml'), config);
    let stdout = '';
    const code = await main(['url-check', url, '--tool', tool, '--json'], { cwd, env: {}, stdout: (t) => (stdout += t), stderr: () => undefined });
    return { code, verdict: JSON.parse(stdout) as { allowed: boolean; reason: string } };
  }
  const PRIVATE_OK = 'browser:\n  ssrfPolicy:\n    allowPrivateNetwork: true\n';
  const lan = interfaceAddresses().find((a) => !a.includes(':') && !a.startsWith('127.'));

  it.each<readonly [string, string, string, RegExp]>([
    ['the default web chat', 'http://127.0.0.1:3000/', PRIVATE_OK, /Warden's own web chat \(listening on 127\.0\.0\.1:3000\)/],
    ['the default web chat by name', 'http://localhost:3000/?token=x', PRIVATE_OK, /localhost:3000 is Warden's own web chat/],
    ['the web chat on every address, through IPv6', 'http://[::ffff:127.0.0.1]:8080/', `${PRIVATE_OK}channels:\n  web:\n    host: 0.0.0.0\n    port: 8080\n    token: t\n`, /own web chat \(listening on 0\.0\.0\.0:8080\)/],
    ...(lan ? [['the web chat on every address, through the LAN address', `http://${lan}:8080/`, `${PRIVATE_OK}channels:\n  web:\n    host: 0.0.0.0\n    port: 8080\n    token: t\n`, /own web chat/] as const] : []),
    ['the Slack receiver', 'http://127.0.0.1:3001/slack/events', `${PRIVATE_OK}channels:\n  slack:\n    botToken: xoxb-1\n    signingSecret: s\n`, /Warden's own Slack HTTP receiver \(listening on 127\.0\.0\.1:3001\)/],
  ])('%s', async (_name, url, config, reason) => {
    const { code, verdict } = await urlCheck(url, config);
    expect(code).toBe(5);
    expect(verdict.allowed).toBe(false);
    expect(verdict.reason).toMatch(reason);
    expect(verdict.reason).toContain('whatever the SSRF policy allows');
  });

  it('web_fetch gets the same reason', async () => {
    const { verdict } = await urlCheck('http://127.0.0.1:3000/', '', 'web_fetch');
    expect(verdict.reason).toMatch(/Warden's own web chat/);
  });
});

/** A page that tries every way a page has to reach the own listener. */
function attackPage(): string {
  const targets = THIS_HOST_URL_HOSTS()
    .filter((h) => !/^(0|2130706433|0x7f000001|0177\.0\.0\.1|127\.1|localhost\.)$/.test(h))
    .map((h) => `${h}:${ownPort}`);
  const tags = targets
    .map(
      (t) =>
        `<img src="http://${t}/img"><script src="http://${t}/s.js"></script><iframe src="http://${t}/frame"></iframe>` +
        `<link rel="stylesheet" href="http://${t}/css"><link rel="prefetch" href="http://${t}/prefetch"><link rel="preconnect" href="http://${t}">` +
        `<link rel="dns-prefetch" href="http://${t}"><link rel="preload" as="fetch" href="http://${t}/preload" crossorigin>`,
    )
    .join('');
  return `<title>Attack</title>${tags}
<script type="speculationrules">${JSON.stringify({ prefetch: [{ source: 'list', urls: targets.map((t) => `http://${t}/speculative`) }], prerender: [{ source: 'list', urls: [`http://127.0.0.1:${ownPort}/prerender`] }] })}</script>
<script>
for (const t of ${JSON.stringify(targets)}) {
  fetch('http://' + t + '/fetch', { mode: 'no-cors' }).catch(() => {});
  try { new WebSocket('ws://' + t + '/ws'); } catch {}
  try { new WebSocket('wss://' + t + '/ws'); } catch {}
  try { new EventSource('http://' + t + '/sse'); } catch {}
  try { navigator.sendBeacon('http://' + t + '/beacon', 'x'); } catch {}
  try { const x = new XMLHttpRequest(); x.open('GET', 'http://' + t + '/xhr'); x.send(); } catch {}
}
try { navigator.serviceWorker.register('/sw.js').catch(() => {}); } catch {}
</script><p>attack page</p>`;
}

describe('the browser in real Chromium, private networks allowed, never reaches an own listener', () => {
  const parsed = parseConfig({ browser: { ssrfPolicy: { allowPrivateNetwork: true } } } satisfies WardenConfigInput);
  if (!parsed.ok) throw parsed.error;
  const manager = new BrowserManager({ config: parsed.value.config, dataDir: mkdtempSync(path.join(tmpdir(), 'warden-own-browser-')), resolve, dial });
  const tool = createBrowserTool({ manager });
  const ctx = { signal: new AbortController().signal, log: pino({ level: 'silent' }) } as unknown as ToolCallContext;
  const call = (args: BrowserArgs) => tool.execute(args, ctx) as Promise<ToolResult>;
  const textOf = (r: ToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
  afterAll(() => manager.dispose());

  it('refuses every spelling the model may navigate to, and the schemes around the proxy', async () => {
    ownConnections = [];
    const urls = [
      ...THIS_HOST_URL_HOSTS().map((h) => `http://${h}:${ownPort}/`),
      `http://loop.test:${ownPort}/`,
      `http://rebind.test:${ownPort}/`,
      `view-source:http://127.0.0.1:${ownPort}/`,
      'chrome://version/',
      'file:///etc/passwd',
      `ws://127.0.0.1:${ownPort}/ws`,
      `blob:http://127.0.0.1:${ownPort}/x`,
      `filesystem:http://127.0.0.1:${ownPort}/temporary/x`,
    ];
    for (const url of urls) {
      const result = await call({ action: 'navigate', url });
      expect(result.isError, url).toBe(true);
      expect(textOf(result), url).toMatch(/blocked|not allowed|invalid/i);
    }
    expect(ownConnections).toEqual([]);
  });

  it('refuses a redirect from a public page to it', async () => {
    for (const route of ['/to-own', '/to-own-name']) {
      const result = await call({ action: 'navigate', url: `http://site.test:${sitePort}${route}` });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(OWN);
    }
    expect(ownConnections).toEqual([]);
  });

  it('a public page cannot reach it by subresource, fetch, WebSocket, prefetch, beacon or form', async () => {
    const opened = await call({ action: 'navigate', url: `http://site.test:${sitePort}/attack` });
    expect(opened.isError).toBeFalsy();
    expect(textOf(opened)).toMatch(/The browser guard refused \d+ request/);
    // A page that posts a form to it at once (where it lands depends on timing; it must not be there).
    await call({ action: 'navigate', url: `http://site.test:${sitePort}/post` });
    // Give the pages time for their prefetches, sockets and the form post.
    await new Promise((r) => setTimeout(r, 2_500));
    await call({ action: 'snapshot' });
    expect(ownConnections).toEqual([]);
  });
});

describe('the reported attack: the browser opening the web chat to approve its own exec', () => {
  it('is refused even with the ready-to-open address and its token', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-own-chat-'));
    const input = { dataDir: path.join(dir, 'data'), tools: { profile: 'full' }, browser: { enabled: true, ssrfPolicy: { allowPrivateNetwork: true } }, channels: { web: { port: 0 } } } satisfies WardenConfigInput;
    const parsed = parseConfig(input);
    if (!parsed.ok) throw parsed.error;
    const started = await startWarden({ ...parsed.value, baseDir: dir }, { env: {} });
    if (!started.ok) throw started.error;
    const { warden } = started;
    const manager = new BrowserManager({ config: parsed.value.config, dataDir: path.join(dir, 'data') });
    try {
      const port = Number(new URL(warden.webUrl!).port);
      expect(runningListeners()).toContainEqual({ name: 'web chat', host: '127.0.0.1', port });
      const tool = createBrowserTool({ manager });
      const ctx = { signal: new AbortController().signal, log: pino({ level: 'silent' }) } as unknown as ToolCallContext;
      for (const url of [warden.webOpenUrl!, warden.webUrl!, `http://localhost:${port}/`, `http://[::ffff:127.0.0.1]:${port}/ws`]) {
        const result = (await tool.execute({ action: 'navigate', url }, ctx)) as ToolResult;
        expect(result.isError, url).toBe(true);
        expect(result.content.map((c) => (c.type === 'text' ? c.text : '')).join(''), url).toMatch(/Warden's own web chat/);
      }
    } finally {
      await manager.dispose();
      await warden.stop();
    }
    // Stopped, it is released: the port may be another program's again.
    expect(runningListeners().some((l) => l.name === 'web chat')).toBe(false);
  });
});
