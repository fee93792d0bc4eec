import { createServer, request as httpRequest, Agent, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { log } from '../log/log.js';
import { checkUrlWithPolicy, registerServer, systemResolver, type Resolver, type UrlPolicy, type UrlVerdict } from '../net/index.js';

/**
 * The browser's network guard: a forward proxy on 127.0.0.1 that every request of the profile's
 * Chromium goes through (plain HTTP requests and CONNECT tunnels for HTTPS and WebSockets,
 * loopback included). Each request's host is checked under `browser.ssrfPolicy` before
 * anything is sent, and the connection is made here, to the checked address — so DNS is
 * pinned, which an in-browser request hook cannot do (Chromium would resolve the name again).
 *
 * What it covers that a main-frame request hook would not: every redirect hop (each hop is a
 * new request to the proxy), subresources, child frames, fetch/XHR, WebSockets, pages opened
 * by the page, and Chromium's own background traffic.
 */
export interface GuardProxyOptions {
  policy: UrlPolicy;
  resolve?: Resolver;
  /**
   * Test seam, as in guardedFetch: maps a checked address to the address dialled, so tests can
   * serve "public" answers from a loopback server. Production code never sets it.
   */
  dial?: (checkedAddress: string) => string;
  /** Told about each refused request (the tool reports them with the action that caused them). */
  onBlocked?: (event: BlockedRequest) => void;
  /** How long a host's verdict (and its pinned address) is reused. */
  verdictTtlMs?: number;
  connectTimeoutMs?: number;
}

export interface BlockedRequest {
  /** The URL as requested (for CONNECT: `https://host:port/`). */
  url: string;
  reason: string;
  at: number;
}

export interface GuardProxy {
  /** `http://127.0.0.1:PORT`, for Chromium's proxy setting. */
  server: string;
  close(): Promise<void>;
}

/** Headers that describe one connection, never forwarded (RFC 9110 §7.6.1), plus proxy credentials. */
const HOP_BY_HOP = new Set(['connection', 'proxy-connection', 'keep-alive', 'proxy-authorization', 'proxy-authenticate', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

function forwardable(raw: string[]): Record<string, string | string[]> {
  const named = new Set<string>();
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() === 'connection') for (const token of raw[i + 1]!.split(',')) named.add(token.trim().toLowerCase());
  }
  const out: Record<string, string | string[]> = {};
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || named.has(lower)) continue;
    const prev = out[name];
    out[name] = prev === undefined ? raw[i + 1]! : ([] as string[]).concat(prev, raw[i + 1]!);
  }
  return out;
}

/** `host:port` of a CONNECT request (`[v6]:port` for IPv6). */
function parseAuthority(authority: string): { host: string; port: number } | undefined {
  const m = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(authority);
  if (!m) return undefined;
  const port = Number(m[2]);
  return port > 0 && port < 65_536 ? { host: m[1]!, port } : undefined;
}

const originOf = (url: string) => {
  try {
    return new URL(url).origin;
  } catch {
    return '(invalid URL)';
  }
};

export async function startGuardProxy(options: GuardProxyOptions): Promise<GuardProxy> {
  const resolve = options.resolve ?? systemResolver;
  const dial = options.dial ?? ((a: string) => a);
  const ttl = options.verdictTtlMs ?? 30_000;
  const connectTimeout = options.connectTimeoutMs ?? 30_000;
  const verdicts = new Map<string, { at: number; verdict: Promise<UrlVerdict> }>();
  const sockets = new Set<Duplex>();
  const agent = new Agent({ keepAlive: true, maxSockets: 16 });

  /** The verdict for a URL's host, shared by requests within the TTL (one DNS answer, one pin). */
  const check = (url: URL): Promise<UrlVerdict> => {
    const key = `${url.protocol}//${url.host}`;
    const now = Date.now();
    const hit = verdicts.get(key);
    if (hit && now - hit.at < ttl) return hit.verdict;
    const verdict = checkUrlWithPolicy(url.href, 'browser', options.policy, resolve);
    verdicts.set(key, { at: now, verdict });
    if (verdicts.size > 1000) verdicts.delete(verdicts.keys().next().value!);
    return verdict;
  };

  const refuse = (url: string, reason: string) => {
    log.info({ origin: originOf(url), reason }, 'browser request blocked');
    options.onBlocked?.({ url, reason, at: Date.now() });
  };

  const onRequest = async (req: IncomingMessage, res: ServerResponse) => {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      return void res.writeHead(400, { 'content-type': 'text/plain' }).end('This is a forward proxy: absolute http URLs only.');
    }
    if (url.protocol !== 'http:') return void res.writeHead(400, { 'content-type': 'text/plain' }).end(`Scheme ${url.protocol} is not proxied.`);
    const verdict = await check(url);
    if (!verdict.allowed || !verdict.address) {
      refuse(url.href, verdict.reason);
      return void res
        .writeHead(403, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', 'x-warden-blocked': '1' })
        .end(`Blocked by Warden's browser guard: ${verdict.reason}`);
    }
    const headers = forwardable(req.rawHeaders);
    const upstream = httpRequest(
      { host: dial(verdict.address), port: url.port || 80, method: req.method, path: `${url.pathname}${url.search}`, headers, setHost: false, agent, timeout: connectTimeout },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, forwardable(answer.rawHeaders));
        answer.pipe(res);
        answer.on('error', () => res.destroy());
      },
    );
    upstream.on('timeout', () => upstream.destroy(new Error('upstream timed out')));
    upstream.on('error', (err) => {
      if (res.headersSent) return void res.destroy();
      res.writeHead(502, { 'content-type': 'text/plain' }).end(`Upstream failed: ${err.message}`);
    });
    req.pipe(upstream);
  };

  const onConnect = async (req: IncomingMessage, client: Duplex, head: Buffer) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    const target = parseAuthority(req.url ?? '');
    let url: URL | undefined;
    try {
      url = target ? new URL(`https://${req.url}/`) : undefined;
    } catch {
      // An authority the URL parser refuses (an IPv6 zone, stray characters) is no host to check.
    }
    if (!target || !url) return void client.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n');
    const verdict = await check(url);
    if (!verdict.allowed || !verdict.address) {
      refuse(url.href, verdict.reason);
      return void client.end('HTTP/1.1 403 Forbidden\r\nX-Warden-Blocked: 1\r\nContent-Length: 0\r\n\r\n');
    }
    const upstream: Socket = connect({ host: dial(verdict.address), port: target.port, timeout: connectTimeout });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.once('timeout', () => upstream.destroy(new Error('connect timed out')));
    let connected = false;
    upstream.once('error', () => {
      if (!connected && client.writable) client.end('HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n');
      else client.destroy();
    });
    upstream.once('connect', () => {
      connected = true;
      upstream.setTimeout(0);
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
  };

  // A check that fails (the resolver, the policy) forwards nothing: the page gets a 502.
  const server = createServer((req, res) =>
    onRequest(req, res).catch((err: unknown) => {
      log.warn({ err, url: req.url }, 'browser guard proxy could not check a request; refused');
      if (res.headersSent) res.destroy();
      else res.writeHead(502, { 'content-type': 'text/plain' }).end('The browser guard could not check this request.');
    }),
  );
  // The proxy is one of Warden's own listeners: no page may use it as a target.
  registerServer(server, 'browser guard proxy');
  server.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) =>
    onConnect(req, socket, head).catch((err: unknown) => {
      log.warn({ err, target: req.url }, 'browser guard proxy could not check a tunnel; refused');
      socket.destroy();
    }),
  );
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => ok());
  });
  const { port } = server.address() as AddressInfo;

  return {
    server: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((done) => {
        for (const s of sockets) s.destroy();
        agent.destroy();
        server.close(() => done());
      }),
  };
}
