import { describe, expect, it } from 'vitest';
import { checkUrlWithPolicy, type Resolver, type UrlPolicy } from './check.js';

/** A fake DNS: names map to answers; anything else does not resolve. */
const dns = (table: Record<string, string[]>): Resolver => async (host) => {
  const answers = table[host];
  if (!answers) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
  return answers.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

const world = dns({
  'example.com': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
  'rebind.example': ['93.184.215.14', '10.0.0.5'],
  'intranet.corp': ['10.1.1.1'],
  'meta.example': ['169.254.169.254'],
  'loop.example': ['127.0.0.1'],
  'docs.example.com': ['93.184.215.20'],
});

describe('checkUrl for web_fetch', () => {
  it.each([
    ['https://example.com/page', true, 'public address'],
    ['http://127.0.0.1:8080/', false, 'blocked address 127.0.0.1'],
    ['http://0177.0.0.1/', false, 'blocked address 127.0.0.1'],
    ['http://2130706433/', false, 'blocked address 127.0.0.1'],
    ['http://[::ffff:7f00:1]/', false, 'blocked address ::ffff:7f00:1'],
    ['http://[64:ff9b::a9fe:a9fe]/', false, 'cloud metadata endpoint'],
    ['http://169.254.169.254/latest/meta-data', false, 'cloud metadata endpoint'],
    ['http://metadata.google.internal/', false, 'cloud metadata endpoint'],
    ['http://localhost:3000/', false, 'blocked hostname localhost'],
    ['http://app.localhost/', false, 'blocked hostname app.localhost'],
    ['http://printer.local/', false, 'blocked hostname printer.local'],
    ['http://db.internal/', false, 'blocked hostname db.internal'],
    ['http://rebind.example/', false, 'resolves to blocked address 10.0.0.5'],
    ['http://intranet.corp/', false, 'resolves to blocked address 10.1.1.1'],
    ['http://meta.example/', false, 'resolves to cloud metadata address'],
    ['http://nowhere.example/', false, 'unable to resolve nowhere.example: ENOTFOUND'],
    ['file:///etc/passwd', false, 'scheme file: is not allowed'],
    ['javascript:alert(1)', false, 'scheme javascript: is not allowed'],
    ['ftp://example.com/', false, 'scheme ftp: is not allowed'],
    ['https://user:pw@example.com/', false, 'credentials'],
    ['not a url', false, 'invalid URL'],
    ['about:blank', false, 'scheme about:'],
  ])('%s → allowed=%s (%s)', async (url, allowed, reason) => {
    const verdict = await checkUrlWithPolicy(url, 'web_fetch', {}, world);
    expect(verdict.allowed).toBe(allowed);
    expect(verdict.reason).toContain(reason);
  });

  it('returns every checked answer, IPv4 first, for pinning', async () => {
    const verdict = await checkUrlWithPolicy('https://example.com/', 'web_fetch', {}, world);
    expect(verdict.addresses).toEqual(['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c']);
    expect(verdict.address).toBe('93.184.215.14');
  });

  it('ignores allowPrivateNetwork: web_fetch never reaches private networks', async () => {
    expect((await checkUrlWithPolicy('http://10.0.0.1/', 'web_fetch', { allowPrivateNetwork: true }, world)).allowed).toBe(false);
  });
});

describe('checkUrl for the browser', () => {
  it('allows about:blank and nothing else that is not http(s)', async () => {
    expect((await checkUrlWithPolicy('about:blank', 'browser', {}, world)).allowed).toBe(true);
    expect((await checkUrlWithPolicy('about:srcdoc', 'browser', {}, world)).allowed).toBe(false);
    expect((await checkUrlWithPolicy('chrome://settings', 'browser', {}, world)).allowed).toBe(false);
    expect((await checkUrlWithPolicy('data:text/html,hi', 'browser', {}, world)).allowed).toBe(false);
  });

  it('blocks private networks by default (unlike OpenClaw)', async () => {
    expect((await checkUrlWithPolicy('http://192.168.1.10/', 'browser', {}, world)).allowed).toBe(false);
    expect((await checkUrlWithPolicy('http://intranet.corp/', 'browser', {}, world)).allowed).toBe(false);
  });

  it('reaches private networks when the operator allows it, but never cloud metadata', async () => {
    const policy = { allowPrivateNetwork: true };
    expect((await checkUrlWithPolicy('http://192.168.1.10/', 'browser', policy, world)).allowed).toBe(true);
    expect((await checkUrlWithPolicy('http://localhost:8080/', 'browser', policy, world)).allowed).toBe(false); // does not resolve in the fake DNS
    expect((await checkUrlWithPolicy('http://intranet.corp/', 'browser', policy, world)).allowed).toBe(true);
    expect((await checkUrlWithPolicy('http://169.254.169.254/', 'browser', policy, world)).allowed).toBe(false);
    expect((await checkUrlWithPolicy('http://metadata.google.internal/', 'browser', policy, world)).allowed).toBe(false);
    expect((await checkUrlWithPolicy('http://meta.example/', 'browser', policy, world)).allowed).toBe(false);
  });

  it('applies hostnameAllowlist: exact names and strict subdomains of *.suffix', async () => {
    const policy = { hostnameAllowlist: ['*.example.com', 'rebind.example', '*'] };
    expect((await checkUrlWithPolicy('https://docs.example.com/', 'browser', policy, world)).allowed).toBe(true);
    expect((await checkUrlWithPolicy('https://example.com/', 'browser', policy, world)).reason).toContain('not in hostnameAllowlist');
    expect((await checkUrlWithPolicy('https://rebind.example/', 'browser', policy, world)).allowed).toBe(false); // allowlisted, still private answer
  });

  it('lets allowedHostnames reach private answers but not loopback or metadata', async () => {
    const policy = { allowedHostnames: ['intranet.corp', 'loop.example', 'meta.example'] };
    expect((await checkUrlWithPolicy('http://intranet.corp/', 'browser', policy, world)).allowed).toBe(true);
    expect((await checkUrlWithPolicy('http://loop.example/', 'browser', policy, world)).allowed).toBe(false);
    expect((await checkUrlWithPolicy('http://meta.example/', 'browser', policy, world)).allowed).toBe(false);
  });
});

describe("Warden's own listeners", () => {
  const ownListeners = [{ name: 'web chat', host: '127.0.0.1', port: 3000 }];
  const names = dns({ 'loop.example': ['127.0.0.1'], 'mixed.example': ['93.184.215.14', '::1'] });
  it.each([
    ['http://127.0.0.1:3000/', 'browser', { allowPrivateNetwork: true }],
    ['http://127.9.9.9:3000/?token=x', 'browser', { allowPrivateNetwork: true }],
    ['http://[::1]:3000/ws', 'browser', { allowPrivateNetwork: true }],
    ['http://[::ffff:127.0.0.1]:3000/', 'browser', { allowPrivateNetwork: true }],
    ['http://0.0.0.0:3000/', 'browser', { allowPrivateNetwork: true }],
    ['http://localhost:3000/', 'browser', { allowPrivateNetwork: true }],
    ['http://chat.localhost:3000/', 'browser', { allowedHostnames: ['chat.localhost'] }],
    ['http://loop.example:3000/', 'browser', { allowPrivateNetwork: true, allowedHostnames: ['loop.example'] }],
    ['http://mixed.example:3000/', 'browser', { allowPrivateNetwork: true }],
    ['http://127.0.0.1:3000/', 'web_fetch', { allowIpv6UniqueLocalRange: true, allowRfc2544BenchmarkRange: true }],
  ] as Array<[string, 'browser' | 'web_fetch', UrlPolicy]>)('%s (%s, %j) is refused as an own listener', async (url, surface, policy) => {
    const verdict = await checkUrlWithPolicy(url, surface, { ...policy, ownListeners }, names);
    expect(verdict.allowed).toBe(false);
    expect(verdict.reason).toMatch(/is Warden's own web chat \(listening on 127\.0\.0\.1:3000\); web_fetch and the browser never reach/);
  });

  it('leaves other ports of this machine to the policy', async () => {
    expect((await checkUrlWithPolicy('http://127.0.0.1:3001/', 'browser', { allowPrivateNetwork: true, ownListeners }, names)).allowed).toBe(true);
    expect((await checkUrlWithPolicy('http://127.0.0.1:3001/', 'web_fetch', { ownListeners }, names)).reason).toContain('blocked address 127.0.0.1');
  });
});

describe('checkUrl for sandbox egress: allowCidrs opens named private ranges only', () => {
  const policy: UrlPolicy = { allowCidrs: ['10.1.0.0/16', '127.64.0.0/16'] };
  it.each([
    ['http://intranet.corp/', true, 'public address'],
    ['http://10.1.2.3/', true, 'address in allowCidrs'],
    ['http://[::ffff:10.1.2.3]/', true, 'address in allowCidrs'],
    ['http://10.2.0.1/', false, 'blocked address 10.2.0.1'],
    ['http://127.64.0.2/', true, 'address in allowCidrs'],
    ['http://127.0.0.1/', false, 'blocked address 127.0.0.1'],
    ['http://rebind.example/', false, 'resolves to blocked address 10.0.0.5'],
    ['http://169.254.169.254/', false, 'cloud metadata endpoint'],
    ['http://meta.example/', false, 'cloud metadata address'],
    ['http://localhost/', false, 'blocked hostname localhost'],
  ])('%s → %s', async (url, allowed, reason) => {
    const verdict = await checkUrlWithPolicy(url, 'sandbox', policy, world);
    expect(verdict.allowed).toBe(allowed);
    expect(verdict.reason).toContain(reason);
  });
  it('metadata stays refused even when a range names it', async () => {
    const verdict = await checkUrlWithPolicy('http://169.254.169.254/', 'sandbox', { allowCidrs: ['169.254.0.0/16'] }, world);
    expect(verdict.allowed).toBe(false);
  });
  it('web_fetch ignores allowCidrs', async () => {
    expect((await checkUrlWithPolicy('http://10.1.2.3/', 'web_fetch', policy, world)).allowed).toBe(false);
  });
});
