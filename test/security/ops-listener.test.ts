// The ops listener attacked through Warden's own web tools and through the browser a person
// uses: a model steering web_fetch or the browser at /metrics (tool names, approval counts,
// queue depths) or /readyz, any spelling of an address of this machine, a redirect from a
// site the policy allows; and a web page that rebinds its own name to 127.0.0.1 to read the
// listener from the person's browser. Every way is refused, whatever the SSRF policy allows.
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli.js';
import { parseConfig } from '../../src/config/index.js';
import { startWarden, type RunningWarden } from '../../src/app/startup.js';
import { checkUrlWithPolicy, guardedFetch, interfaceAddresses, runningListeners, type UrlSurface } from '../../src/net/index.js';

const OWN_OPS = /is Warden's own ops listener \(listening on /;

let warden: RunningWarden;
let opsPort: number;
/** A private site the browser policy allows, redirecting to the ops listener. */
let site: Server;
let sitePort: number;

beforeAll(async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-ops-ssrf-'));
  const parsed = parseConfig({ dataDir: path.join(dir, 'data'), channels: { web: { port: 0 } }, ops: { port: 0 } });
  if (!parsed.ok) throw parsed.error;
  const started = await startWarden({ ...parsed.value, baseDir: dir }, { env: {} });
  if (!started.ok) throw started.error;
  warden = started.warden;
  opsPort = Number(new URL(warden.opsUrl!).port);
  site = createServer((req, res) => res.writeHead(302, { location: `http://127.0.0.1:${opsPort}${req.url}` }).end());
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  sitePort = (site.address() as AddressInfo).port;
});
afterAll(async () => {
  site?.close();
  await warden?.stop();
});

/** Every address of this machine as a URL host, and names meaning this machine. */
const thisHost = () => {
  const interfaces = interfaceAddresses().filter((a) => !/^fe80:/i.test(a));
  return [
    '127.0.0.1', '127.0.0.2', '127.1', '2130706433', '0x7f000001', '0177.0.0.1', '0.0.0.0', '0',
    'localhost', 'LOCALHOST', 'localhost.', 'metrics.localhost', hostname(),
    '[::1]', '[::]', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]', '[64:ff9b::7f00:1]', '[2002:7f00:1::]',
    ...interfaces.map((a) => (a.includes(':') ? `[${a}]` : a)),
  ];
};

describe('web_fetch and the browser never reach the ops listener', () => {
  it('is registered as one of Warden\'s own listeners while it listens', () => {
    expect(runningListeners()).toContainEqual({ name: 'ops listener', host: '127.0.0.1', port: opsPort });
  });

  it.each<UrlSurface>(['web_fetch', 'browser'])('%s: every spelling of this machine on the ops port is refused, private network allowed or not', async (surface) => {
    for (const host of thisHost()) {
      for (const p of ['/metrics', '/readyz', '/healthz']) {
        for (const policy of [{}, { allowPrivateNetwork: true }, { allowPrivateNetwork: true, allowedHostnames: ['localhost'] }]) {
          const verdict = await checkUrlWithPolicy(`http://${host}:${opsPort}${p}`, surface, policy);
          expect(verdict.allowed, `${surface} ${host}${p} ${JSON.stringify(policy)}`).toBe(false);
          expect(verdict.reason, host).toMatch(OWN_OPS);
        }
      }
    }
  });

  it('a fetch straight at it and a redirect to it from an allowed site are refused before connecting', async () => {
    const direct = await guardedFetch(`http://localhost:${opsPort}/metrics`, { surface: 'browser', policy: { allowPrivateNetwork: true } });
    expect(direct).toMatchObject({ ok: false, blocked: true, error: expect.stringMatching(OWN_OPS) });
    const redirected = await guardedFetch(`http://127.0.0.1:${sitePort}/metrics`, { surface: 'browser', policy: { allowPrivateNetwork: true } });
    expect(redirected).toMatchObject({ ok: false, blocked: true, error: expect.stringMatching(OWN_OPS) });
  });

  it('warden url-check (another process) refuses the ops port the config opens, on every address', async () => {
    const cwd = mkdtempSync(path.join(tmpdir(), 'warden-ops-url-'));
    writeFileSync(path.join(cwd, 'warden.config.yaml'), 'browser:\n  ssrfPolicy:\n    allowPrivateNetwork: true\nops:\n  host: 0.0.0.0\n  port: 19464\n  exposeBeyondLoopback: true\n');
    for (const url of ['http://127.0.0.1:19464/metrics', 'http://[::ffff:127.0.0.1]:19464/', 'http://localhost:19464/readyz']) {
      let stdout = '';
      const code = await main(['url-check', url, '--tool', 'browser', '--json'], { cwd, env: {}, stdout: (t) => (stdout += t), stderr: () => undefined });
      expect(code, url).toBe(5);
      const verdict = JSON.parse(stdout) as { allowed: boolean; reason: string };
      expect(verdict.allowed, url).toBe(false);
      expect(verdict.reason, url).toMatch(/Warden's own ops listener \(listening on 0\.0\.0\.0:19464\)/);
    }
  });
});

describe('a page that rebinds its name to 127.0.0.1 reads nothing', () => {
  /** A request to the ops listener carrying `host` as the Host header, as a browser sends it. */
  const withHost = (host: string, p = '/metrics') =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: opsPort, path: p, headers: { host } }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });

  it.each([
    ['a rebound public name', 'evil.example'],
    ['a rebound name with the port', `evil.example:${0}`],
    ['a name ending in a loopback-looking label', 'localhost.evil.example'],
    ['an IPv4-mapped address', '[::ffff:127.0.0.1]'],
    ['a LAN address', '192.168.1.20'],
  ])('%s (%s) gets 421 and no metrics', async (_name, host) => {
    const h = host.endsWith(':0') ? host.replace(/:0$/, `:${opsPort}`) : host;
    for (const p of ['/metrics', '/readyz', '/healthz']) {
      const res = await withHost(h, p);
      expect(res.status, `${h}${p}`).toBe(421);
      expect(res.body).not.toContain('warden_');
    }
  });

  it('a request without a Host header (HTTP/1.0) gets 421', async () => {
    const { connect } = await import('node:net');
    const got = await new Promise<string>((resolve, reject) => {
      const socket = connect(opsPort, '127.0.0.1', () => socket.write('GET /metrics HTTP/1.0\r\n\r\n'));
      let text = '';
      socket.on('data', (d) => (text += d.toString()));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
    });
    expect(got).toMatch(/^HTTP\/1\.[01] 421/);
    expect(got).not.toContain('warden_');
  });

  it.each(['localhost', `localhost:${0}`, '127.0.0.1', '127.0.0.1:0', '[::1]', '[::1]:0'])('the operator\'s own %s is answered', async (host) => {
    const res = await withHost(host.replace(/:0$/, `:${'x'}`).replace(':x', `:${opsPort}`));
    expect(res.status).toBe(200);
    expect(res.body).toContain('# TYPE warden_turns_total counter');
  });
});
