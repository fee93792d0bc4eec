import { chownSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_EXEC_NETWORK, type ExecNetworkConfig } from '../../src/config/schema/exec.js';
import { EgressProxy } from '../../src/exec/egress/proxy.js';
import { startCommand } from '../../src/exec/run.js';
import { bwrapAvailable, defaultSandboxId, sandboxNode } from '../../src/exec/sandbox.js';
import type { Resolver } from '../../src/net/index.js';
import { startUpstreams, type Upstreams } from '../fakes/egress/upstreams.js';
import { runUid } from '../sandbox-id-lease.js';

/**
 * Attacks on the sandbox's egress proxy, as a command inside the sandbox would make them: each
 * row is what it writes on the proxy socket and what must come back. The proxy is the real one,
 * the upstreams are real servers on a loopback alias named by allowCidrs, and "Warden's own
 * listener" is a real server on 127.0.0.1 (inside a range allowCidrs opens, to show that no
 * range opens it).
 */
const up = await startUpstreams().catch((err: unknown) => ({ skip: `upstreams did not start: ${(err as Error).message}` }));
const skip = 'skip' in up ? up.skip : undefined;
const upstreams = up as Upstreams;
const own = http.createServer((_req, res) => res.end('warden internals\n'));
let ownPort = 0;
let rebindCalls = 0;

/** The test names, and two that attack the resolution itself. */
const resolver = (): Resolver => async (host) => {
  if (host === 'mixed.test') return [{ address: upstreams.address, family: 4 }, { address: '10.0.0.1', family: 4 }];
  if (host === 'rebind.test') {
    rebindCalls += 1;
    return [{ address: rebindCalls === 1 ? upstreams.address : '169.254.169.254', family: 4 }];
  }
  if (host === 'meta6.test') return [{ address: '::ffff:169.254.169.254', family: 6 }];
  return upstreams.resolve(host);
};

let open: EgressProxy;
let listed: EgressProxy;
beforeAll(async () => {
  await new Promise<void>((r) => own.listen(0, '127.0.0.1', () => r()));
  ownPort = (own.address() as net.AddressInfo).port;
  if (skip) return;
  const base = { ...DEFAULT_EXEC_NETWORK, resolve: resolver() };
  open = await EgressProxy.start({ network: { ...DEFAULT_EXEC_NETWORK, mode: 'open', allowCidrs: [upstreams.cidr, '127.0.0.0/8'] }, resolve: base.resolve, ownListeners: [{ name: 'web chat', host: '127.0.0.1', port: ownPort }], headersTimeoutMs: 800 });
  listed = await EgressProxy.start({ network: { ...DEFAULT_EXEC_NETWORK, mode: 'allowlist', allow: ['other.test', 'rebind.test', `${'git.test'}:8080`], allowCidrs: [upstreams.cidr] }, resolve: base.resolve });
});
afterAll(async () => {
  own.close();
  if (skip) return;
  await open.close();
  await listed.close();
  await upstreams.close();
});

/** Writes `raw` on the proxy socket; what came back before the proxy closed (or `waitMs` passed). */
function exchange(proxy: EgressProxy, raw: string | Buffer, waitMs = 3000): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = net.connect(proxy.socketPath);
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text, closed: false });
    }, waitMs);
    socket.on('data', (d) => (text += d.toString('latin1')));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text, closed: true });
    });
    socket.on('error', () => {});
    socket.write(raw);
  });
}

const connect = (target: string) => `CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`;

/** [attack, CONNECT target, status line start, reason the body names] — mode open, allowCidrs: the alias and 127/8. */
const CONNECT_ATTACKS: Array<[string, string | (() => string), string, string | RegExp]> = [
  ['metadata IPv4 literal', '169.254.169.254:80', 'HTTP/1.1 403', 'cloud metadata endpoint 169.254.169.254'],
  ['metadata as a decimal integer', '2852039166:80', 'HTTP/1.1 403', 'cloud metadata endpoint 169.254.169.254'],
  ['metadata in hex', '0xa9fea9fe:80', 'HTTP/1.1 403', 'cloud metadata endpoint 169.254.169.254'],
  ['metadata in octal parts', '0251.0376.0251.0376:80', 'HTTP/1.1 403', 'cloud metadata endpoint 169.254.169.254'],
  ['metadata IPv6-mapped', '[::ffff:169.254.169.254]:80', 'HTTP/1.1 403', 'cloud metadata'],
  ['metadata IPv6-mapped in hex', '[::ffff:a9fe:a9fe]:80', 'HTTP/1.1 403', 'cloud metadata'],
  ['a name whose only answer is metadata (IPv6-mapped)', 'meta6.test:80', 'HTTP/1.1 403', 'cloud metadata address'],
  ["Warden's own listener, inside an allowCidrs range", () => `127.0.0.1:${ownPort}`, 'HTTP/1.1 403', "Warden's own web chat"],
  ["Warden's own listener by a short form", () => `127.1:${ownPort}`, 'HTTP/1.1 403', "Warden's own web chat"],
  ["Warden's own listener by name", () => `localhost:${ownPort}`, 'HTTP/1.1 403', "Warden's own web chat"],
  ['a private address outside allowCidrs', '10.0.0.1:80', 'HTTP/1.1 403', 'blocked address 10.0.0.1'],
  ['IPv6 loopback', '[::1]:80', 'HTTP/1.1 403', 'blocked address ::1'],
  ['a name resolving to a private address', 'private.test:80', 'HTTP/1.1 403', 'private.test resolves to blocked address 10.255.0.7'],
  ['a name resolving to an allowed and a private address', 'mixed.test:80', 'HTTP/1.1 403', 'mixed.test resolves to blocked address 10.0.0.1'],
  ['a name that does not resolve', 'nowhere.test:80', 'HTTP/1.1 403', 'unable to resolve nowhere.test'],
  ['no port', 'git.test', 'HTTP/1.1 400', 'CONNECT target must be host:port'],
  ['port 0', 'git.test:0', 'HTTP/1.1 400', 'CONNECT target must be host:port'],
  ['port out of range', 'git.test:70000', 'HTTP/1.1 400', 'CONNECT target must be host:port'],
  ['credentials in the target', 'user:pw@git.test:80', 'HTTP/1.1 400', 'CONNECT target must be host:port'],
  ['a NUL smuggled into the name', 'git.test%00.evil:80', 'HTTP/1.1 400', 'CONNECT target must be host:port'],
  ['a URL as the target', 'http://git.test:80/', 'HTTP/1.1 400', 'CONNECT target must be host:port'],
];

describe.skipIf(skip !== undefined)('CONNECT attacks (mode open): refused with the reason, nothing dialled', () => {
  it.each(CONNECT_ATTACKS)('%s', async (_attack, target, status, reason) => {
    const t = typeof target === 'function' ? target() : target;
    const { text } = await exchange(open, connect(t));
    expect(text.startsWith(status)).toBe(true);
    if (typeof reason === 'string') expect(text).toContain(reason);
    else expect(text).toMatch(reason);
    expect(text).not.toContain('warden internals');
  });

  it('an allowed target is tunnelled to the checked address', async () => {
    const { text } = await exchange(open, `${connect('git.test:80')}GET /hello HTTP/1.1\r\nHost: other.test\r\nConnection: close\r\n\r\n`);
    expect(text).toContain('HTTP/1.1 200 Connection Established');
    expect(text).toContain('hello from other.test');
  });
});

describe.skipIf(skip !== undefined)('the allowlist (names before resolution, then the address)', () => {
  const rows: Array<[string, string, string, string]> = [
    ['a listed name on a web port', 'other.test:80', 'HTTP/1.1 200', ''],
    ['a listed name on a port it does not name', 'other.test:22', 'HTTP/1.1 403', 'other.test:22 is not on tools.exec.sandbox.network.allow'],
    ['host:port entry on its port', 'git.test:8080', 'HTTP/1.1 502', 'could not reach git.test:8080'],
    ['host:port entry on another port', 'git.test:80', 'HTTP/1.1 403', 'git.test:80 is not on tools.exec.sandbox.network.allow'],
    ['a subdomain of a listed name', 'x.other.test:80', 'HTTP/1.1 403', 'x.other.test:80 is not on'],
    ['the IP literal behind a listed name', `${'127.64.0.2'}:80`, 'HTTP/1.1 403', 'is not on tools.exec.sandbox.network.allow'],
  ];
  it.each(rows)('%s', async (_what, target, status, reason) => {
    const { text } = await exchange(listed, connect(target), 1500);
    expect(text.startsWith(status)).toBe(true);
    expect(text).toContain(reason);
  });

  it('DNS rebinding: the name is resolved once per connection and the connection is pinned to that answer', async () => {
    rebindCalls = 0;
    const before = upstreams.seen.length;
    const { text } = await exchange(listed, `GET http://rebind.test/pinned HTTP/1.1\r\nHost: rebind.test\r\nConnection: close\r\n\r\n`);
    expect(text).toContain('hello from rebind.test');
    expect(rebindCalls).toBe(1);
    expect(upstreams.seen.slice(before)).toEqual([{ host: 'rebind.test', url: '/pinned' }]);
    // The next connection resolves again, gets the metadata address, and is refused.
    const second = await exchange(listed, connect('rebind.test:80'));
    expect(second.text).toContain('rebind.test resolves to cloud metadata address 169.254.169.254');
  });
});

describe.skipIf(skip !== undefined)('plain HTTP attacks (allowlist: other.test)', () => {
  it('Host header vs absolute URI: the URI decides, and the Host sent upstream is the URI\'s', async () => {
    const before = upstreams.seen.length;
    const { text } = await exchange(listed, 'GET http://other.test/h HTTP/1.1\r\nHost: 169.254.169.254\r\nConnection: close\r\n\r\n');
    expect(text).toContain('hello from other.test');
    expect(upstreams.seen.slice(before)).toEqual([{ host: 'other.test', url: '/h' }]);
  });

  it('a second request on a kept-alive connection to another host is decided on its own (refused)', async () => {
    const before = upstreams.seen.length;
    const { text } = await exchange(listed, 'GET http://other.test/1 HTTP/1.1\r\nHost: other.test\r\n\r\nGET http://private.test/2 HTTP/1.1\r\nHost: other.test\r\nConnection: close\r\n\r\n');
    expect(text).toContain('hello from other.test');
    expect(text).toContain('refused private.test:80');
    expect(upstreams.seen.slice(before)).toEqual([{ host: 'other.test', url: '/1' }]);
  });

  it.each([
    ['origin-form (no absolute URI)', 'GET / HTTP/1.1\r\nHost: other.test\r\n\r\n', 'HTTP/1.1 400', 'absolute-form http:// URLs only'],
    ['https:// in absolute form', 'GET https://other.test/ HTTP/1.1\r\nHost: other.test\r\n\r\n', 'HTTP/1.1 400', 'https URLs go through CONNECT'],
    ['credentials in the URI', 'GET http://u:p@other.test/ HTTP/1.1\r\nHost: other.test\r\n\r\n', 'HTTP/1.1 403', 'credentials'],
    ['Content-Length with Transfer-Encoding (request smuggling)', 'POST http://other.test/ HTTP/1.1\r\nHost: other.test\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET http://private.test/ HTTP/1.1\r\n\r\n', 'HTTP/1.1 400', 'malformed request'],
    ['a header block over 16 KiB', `GET http://other.test/ HTTP/1.1\r\nHost: other.test\r\nX-Pad: ${'a'.repeat(20_000)}\r\n\r\n`, 'HTTP/1.1 431', 'HPE_HEADER_OVERFLOW'],
    ['a metadata URI', 'GET http://169.254.169.254/latest/ HTTP/1.1\r\nHost: other.test\r\n\r\n', 'HTTP/1.1 403', 'is not on tools.exec.sandbox.network.allow'],
  ])('%s', async (_what, raw, status, reason) => {
    const { text } = await exchange(listed, raw);
    expect(text.startsWith(status)).toBe(true);
    expect(text).toContain(reason);
    expect(text).not.toContain('hello from private.test');
  });

  it('a slowloris that never finishes its head is cut off after the headers timeout', async () => {
    const started = Date.now();
    const { closed } = await exchange(open, 'GET http://other.test/ HTTP/1.1\r\nHost: other.test\r\nX-Slow: ', 5000);
    expect(closed).toBe(true);
    expect(Date.now() - started).toBeLessThan(4000);
  });
});

/**
 * Another host process running as the sandbox uid (as when it is "nobody", shared with other
 * services), started after the sandboxed command (so the start's check did not see it), outside
 * the sandbox, hunting for a way into the sandbox's egress: the proxy's socket by its path;
 * every socket under /run, /tmp and /var/tmp of each sandbox-uid process's
 * root (/proc/PID/root, which reaches into the sandbox's mount namespace); reopening each of
 * their socket descriptors through /proc/PID/fd; the forwarder's port from the host's network.
 * Prints [outcome, target, detail] rows as JSON; anything but "refused" is a way in.
 */
const HOSTILE_SAME_UID = String.raw`
import os, socket, sys, json
rows = []
def unix(p):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.settimeout(2)
    try:
        s.connect(p)
        s.sendall(b'CONNECT other.test:80 HTTP/1.1' + bytes([13, 10]) + b'Host: other.test:80' + bytes([13, 10, 13, 10]))
        rows.append(['CONNECTED', p, s.recv(200)[:40].decode('latin1')])
    except Exception as e:
        rows.append(['refused', p, type(e).__name__])
    finally:
        s.close()
targets = [sys.argv[1]]
for pid in [p for p in os.listdir('/proc') if p.isdigit() and int(p) != os.getpid()]:
    try:
        if os.stat('/proc/' + pid).st_uid != int(sys.argv[2]): continue
    except Exception:
        continue
    targets.append('/proc/%s/root/run/warden-egress.sock' % pid)
    for d in ['/run', '/tmp', '/var/tmp']:
        base = '/proc/%s/root%s' % (pid, d)
        try:
            for n in os.listdir(base):
                full = os.path.join(base, n)
                try:
                    import stat
                    if stat.S_ISSOCK(os.stat(full).st_mode): targets.append(full)
                except Exception:
                    pass
        except Exception:
            pass
    try:
        fds = os.listdir('/proc/%s/fd' % pid)
    except Exception:
        fds = []
    for fd in fds:
        link = '/proc/%s/fd/%s' % (pid, fd)
        try:
            if not os.readlink(link).startswith('socket:'): continue
            os.open(link, os.O_RDWR)
            rows.append(['OPENED', link, ''])
        except Exception as e:
            rows.append(['refused', link, type(e).__name__])
for t in targets:
    unix(t)
try:
    socket.create_connection(('127.0.0.1', 3128), timeout=2)
    rows.append(['CONNECTED', 'tcp 127.0.0.1:3128', ''])
except Exception as e:
    rows.append(['refused', 'tcp 127.0.0.1:3128', type(e).__name__])
print(json.dumps(rows))
`;

describe.skipIf(skip !== undefined)('who can reach the proxy socket', () => {
  it("the socket is mode 0600 in a 0700 directory of Warden's own, never the sandbox uid's", async () => {
    const proxy = await EgressProxy.start({ network: { ...DEFAULT_EXEC_NETWORK, mode: 'allowlist' } as ExecNetworkConfig });
    try {
      expect(statSync(proxy.socketPath).mode & 0o777).toBe(0o600);
      expect(statSync(path.dirname(proxy.socketPath)).mode & 0o777).toBe(0o700);
      expect(statSync(proxy.socketPath).uid).toBe(process.getuid!());
      expect(statSync(path.dirname(proxy.socketPath)).uid).toBe(process.getuid!());
    } finally {
      await proxy.close();
    }
  });

  it.skipIf(!bwrapAvailable() || !sandboxNode() || !existsSync('/usr/bin/python3') || !existsSync('/usr/bin/setpriv'))(
    'a host process running as the sandbox uid, outside the sandbox, reaches neither the proxy nor the forwarder while a sandboxed command uses them',
    async () => {
      const proxy = await EgressProxy.start({ network: { ...DEFAULT_EXEC_NETWORK, mode: 'allowlist', allow: ['other.test'], allowCidrs: [upstreams.cidr] }, resolve: resolver() });
      const ws = mkdtempSync(path.join(tmpdir(), 'warden-egress-hostile-'));
      // A uid of this test's own: the attacker, started after the command, would otherwise stop
      // other tests' sandboxed starts of the same uid (the check before each start).
      const uid = runUid(13);
      chownSync(ws, uid, uid);
      try {
        // Root start (staged) as that uid; the marker file says when the first request is done.
        const job = startCommand({
          script: 'curl -sS http://other.test/; : > ready; sleep 4; curl -sS http://other.test/',
          label: 'sandboxed',
          host: 'sandbox',
          workspace: ws,
          cwd: ws,
          env: { PATH: '/usr/bin:/bin' },
          maxOutputChars: 10_000,
          identity: { uid, gid: uid, staged: true },
          egress: { socket: proxy.socketPath, node: sandboxNode()! },
        });
        const deadline = Date.now() + 15_000;
        while (!existsSync(path.join(ws, 'ready')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
        expect(existsSync(path.join(ws, 'ready'))).toBe(true);
        const attacker = await execa('/usr/bin/setpriv', ['--reuid', String(uid), '--regid', String(uid), '--clear-groups', '/usr/bin/python3', '-c', HOSTILE_SAME_UID, proxy.socketPath, String(uid)], { reject: false, timeout: 20_000 });
        await job.done;
        expect(attacker.stderr).toBe('');
        const rows = JSON.parse(attacker.stdout) as Array<[string, string, string]>;
        // It did find the sandbox's processes and tried them all.
        expect(rows.some(([, target]) => target.includes('/root/run/'))).toBe(true);
        expect(rows.some(([, target]) => target === 'tcp 127.0.0.1:3128')).toBe(true);
        expect(rows.filter(([outcome]) => outcome !== 'refused')).toEqual([]);
        // The sandboxed command reached the allowed host before and after, and only it did.
        expect(job.outputText().match(/hello from other\.test/g)).toHaveLength(2);
        expect(proxy.record()).toMatchObject([{ host: 'other.test', decision: 'allowed', connections: 2 }]);
      } finally {
        await proxy.close();
        rmSync(ws, { recursive: true, force: true });
      }
    },
    60_000,
  );

  it.skipIf(!bwrapAvailable() || !sandboxNode())('another sandbox sees neither the socket nor its directory, and has no route', async () => {
    const proxy = await EgressProxy.start({ network: { ...DEFAULT_EXEC_NETWORK, mode: 'open', allowCidrs: [upstreams.cidr] }, resolve: resolver() });
    const ws = mkdtempSync(path.join(tmpdir(), 'warden-egress-other-'));
    chownSync(ws, defaultSandboxId(), defaultSandboxId());
    try {
      const job = startCommand({
        script: `ls -la /run/warden-egress.sock 2>&1; ls ${path.dirname(proxy.socketPath)} 2>&1; curl -sS --max-time 3 --unix-socket ${proxy.socketPath} http://other.test/ 2>&1; echo rc=$?`,
        label: 'other',
        host: 'sandbox',
        workspace: ws,
        cwd: ws,
        env: { PATH: '/usr/bin:/bin' },
        maxOutputChars: 10_000,
      });
      await job.done;
      const out = job.outputText();
      expect(out).toContain('No such file or directory');
      expect(out).not.toContain('hello from');
      expect(out).toMatch(/rc=7/);
      expect(proxy.record()).toEqual([]);
    } finally {
      await proxy.close();
      rmSync(ws, { recursive: true, force: true });
    }
  }, 30_000);

  it.skipIf(!bwrapAvailable() || !sandboxNode())('non-root start (bubblewrap run directly as the sandbox uid): the proxy works the same', async () => {
    const proxy = await EgressProxy.start({ network: { ...DEFAULT_EXEC_NETWORK, mode: 'allowlist', allow: ['other.test'], allowCidrs: [upstreams.cidr] }, resolve: resolver() });
    const ws = mkdtempSync(path.join(tmpdir(), 'warden-egress-nonroot-'));
    chownSync(ws, defaultSandboxId(), defaultSandboxId());
    try {
      const job = startCommand({
        script: 'curl -sS http://other.test/; curl -sS http://private.test/',
        label: 'nonroot',
        host: 'sandbox',
        workspace: ws,
        cwd: ws,
        env: { PATH: '/usr/bin:/bin' },
        maxOutputChars: 10_000,
        identity: { uid: defaultSandboxId(), gid: defaultSandboxId(), staged: false, spawnAs: { uid: defaultSandboxId(), gid: defaultSandboxId() } },
        egress: { socket: proxy.socketPath, node: sandboxNode()! },
      });
      await job.done;
      expect(job.outputText()).toContain('hello from other.test');
      expect(job.outputText()).toContain('refused private.test:80');
    } finally {
      await proxy.close();
      rmSync(ws, { recursive: true, force: true });
    }
  }, 30_000);
});
