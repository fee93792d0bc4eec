import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import type { ExecNetworkConfig } from '../../config/schema/exec.js';
import { log } from '../../log/log.js';
import { checkUrlWithPolicy, normalizeHost, systemResolver, type OwnListener, type Resolver } from '../../net/index.js';
import { grantKey, judgeName } from './decide.js';
import { background } from '../../util/background.js';

/**
 * The egress proxy of one sandboxed command: an HTTP proxy (CONNECT, and plain HTTP in
 * absolute form) on a Unix socket only Warden can open, reached by that command's sandbox through its egress channel. Every connection
 * is decided by name (allowlist, grants, card) and by address (the URL guard), then dialled to
 * the checked address only, so a second DNS answer cannot move it. Anything it cannot parse,
 * decide or dial is refused: the command sees a 403 (or a refused CONNECT) naming why.
 */

/** What a card answered for one `host:port` (ask: on-miss). */
export type AskAnswer = 'allow-command' | 'add-to-allowlist' | 'deny';

export type EgressDecision = 'allowed' | 'asked-allowed' | 'asked-denied' | 'refused';

/** One host the command reached or tried to reach, with the bytes each way. */
export interface EgressHostRecord {
  host: string;
  port: number;
  decision: EgressDecision;
  reason: string;
  connections: number;
  bytesUp: number;
  bytesDown: number;
}

export interface EgressProxyOptions {
  network: ExecNetworkConfig;
  /** Warden's own listeners as the config declares them (the running ones are always added). */
  ownListeners?: readonly OwnListener[] | undefined;
  resolve?: Resolver | undefined;
  /** ask: on-miss: shows the card and resolves with the answer (deny on expiry or error). */
  ask?: ((host: string, port: number) => Promise<AskAnswer>) | undefined;
  /** Each decision, for metrics. */
  onDecision?: ((decision: EgressDecision) => void) | undefined;
  /** Longest request head accepted (bytes). */
  maxHeaderBytes?: number | undefined;
  /** How long a client may take to send a request head (slowloris). */
  headersTimeoutMs?: number | undefined;
  /** Connections open at once through this proxy. */
  maxConnections?: number | undefined;
}

const REFUSED_HEADER = 'x-warden-egress';
/** Hop-by-hop headers (RFC 9110 7.6.1) and the proxy's own: never forwarded. */
const HOP_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate', 'te', 'trailer', 'transfer-encoding', 'upgrade']);
/** A CONNECT or absolute-form authority: a name or IPv4 literal, or a bracketed IPv6 literal, and a port. */
const AUTHORITY = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9._-]+):([0-9]{1,5})$/;

export class EgressProxy {
  readonly socketPath: string;
  private readonly dir: string;
  private readonly server: http.Server;
  private readonly records = new Map<string, EgressHostRecord>();
  private readonly granted = new Set<string>();
  private readonly denied = new Set<string>();
  private readonly asking = new Map<string, Promise<AskAnswer>>();
  private readonly sockets = new Set<Duplex>();
  private closed = false;

  private constructor(private readonly options: EgressProxyOptions) {
    this.dir = mkdtempSync(path.join(tmpdir(), 'warden-egress-'));
    this.socketPath = path.join(this.dir, 'proxy.sock');
    this.server = http.createServer({
      maxHeaderSize: options.maxHeaderBytes ?? 16 * 1024,
      headersTimeout: options.headersTimeoutMs ?? 10_000,
      requestTimeout: 0,
      connectionsCheckingInterval: 500,
      keepAliveTimeout: 5_000,
    });
    this.server.maxConnections = options.maxConnections ?? 128;
    this.server.on('connection', (socket: Duplex) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    this.server.on('request', (req, res) => void this.plain(req, res).catch((err: unknown) => this.fail(res, 502, `proxy error: ${(err as Error).message}`)));
    this.server.on('connect', (req, socket: Duplex, head: Buffer) => void this.tunnel(req, socket, head).catch((err: unknown) => refuseConnect(socket, 502, `proxy error: ${(err as Error).message}`)));
    this.server.on('clientError', (err, socket: Duplex) => {
      const code = (err as NodeJS.ErrnoException).code;
      const status = code === 'HPE_HEADER_OVERFLOW' ? 431 : code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
      refuseConnect(socket, status, `malformed request (${code ?? err.message})`);
    });
  }

  /**
   * Listening, with the socket reachable by Warden's own uid only (0600 in a 0700 directory of
   * Warden's): never chowned to the sandbox uid, which other host processes may share. The
   * sandbox reaches it only through the channel Warden relays (channel.ts).
   */
  static async start(options: EgressProxyOptions): Promise<EgressProxy> {
    const proxy = new EgressProxy(options);
    await new Promise<void>((resolve, reject) => {
      proxy.server.once('error', reject);
      proxy.server.listen(proxy.socketPath, () => resolve());
    });
    chmodSync(proxy.socketPath, 0o600);
    chmodSync(proxy.dir, 0o700);
    return proxy;
  }

  /** Hosts reached or refused so far, in first-seen order. */
  record(): EgressHostRecord[] {
    return [...this.records.values()].map((r) => ({ ...r }));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** The decision for `host:port`: where to dial, or why not. */
  private async decide(rawHost: string, port: number): Promise<{ ok: true; host: string; addresses: string[] } | { ok: false; host: string; reason: string }> {
    // The WHATWG parser is what the URL guard reads too: `0x7f.1` becomes 127.0.0.1 before any check.
    let host: string;
    try {
      host = normalizeHost(new URL(`http://${rawHost}:${port}/`).hostname);
    } catch {
      return { ok: false, host: rawHost, reason: 'invalid host' };
    }
    const { network } = this.options;
    const key = grantKey(host, port);
    if (this.denied.has(key)) return { ok: false, host, reason: `${key} was denied for this command` };
    const name = judgeName(host, port, network, this.granted);
    if (name.kind === 'refuse') return this.refused(host, port, name.reason);
    const target = host.includes(':') ? `[${host}]` : host;
    const verdict = await checkUrlWithPolicy(`http://${target}:${port}/`, 'sandbox', { allowCidrs: network.allowCidrs, ownListeners: this.options.ownListeners ?? [] }, this.options.resolve ?? systemResolver);
    if (!verdict.allowed || !verdict.addresses || verdict.addresses.length === 0) return this.refused(host, port, verdict.reason);
    if (name.kind !== 'ask') {
      this.note(host, port, 'allowed', name.kind === 'listed' ? `on the allowlist (${name.entry})` : name.kind === 'granted' ? 'allowed for this command on a card' : 'mode open');
      return { ok: true, host, addresses: verdict.addresses };
    }
    const answer = await this.askOnce(host, port);
    if (answer === 'deny') {
      this.denied.add(key);
      this.note(host, port, 'asked-denied', 'denied on the approval card');
      return { ok: false, host, reason: `${key} was denied on the approval card` };
    }
    this.granted.add(key);
    this.note(host, port, 'asked-allowed', answer === 'add-to-allowlist' ? 'allowed on the card and added to the allowlist' : 'allowed for this command on the card');
    return { ok: true, host, addresses: verdict.addresses };
  }

  /** One card per host:port, however many connections wait on it. */
  private askOnce(host: string, port: number): Promise<AskAnswer> {
    const key = grantKey(host, port);
    let pending = this.asking.get(key);
    if (!pending) {
      const ask = this.options.ask;
      pending = ask ? ask(host, port).catch(() => 'deny' as const) : Promise.resolve('deny' as const);
      this.asking.set(key, pending);
      background(pending.finally(() => this.asking.delete(key)), 'egress ask not cleared');
    }
    return pending;
  }

  private refused(host: string, port: number, reason: string): { ok: false; host: string; reason: string } {
    this.note(host, port, 'refused', reason);
    return { ok: false, host, reason };
  }

  private note(host: string, port: number, decision: EgressDecision, reason: string): void {
    const key = grantKey(host, port);
    const existing = this.records.get(key);
    // A later connection on the card's grant keeps the record saying the card allowed it.
    if (existing && !(existing.decision === 'asked-allowed' && decision === 'allowed')) {
      existing.decision = decision;
      existing.reason = reason;
    } else if (!existing) this.records.set(key, { host, port, decision, reason, connections: 0, bytesUp: 0, bytesDown: 0 });
    this.options.onDecision?.(decision);
    // Allowed connections are many (a clone makes several); the command's record keeps them.
    if (decision === 'allowed') log.debug({ egress: key, decision, reason }, 'sandbox egress');
    else log.info({ egress: key, decision, reason }, 'sandbox egress');
  }

  private count(host: string, port: number, up: number, down: number, connection = false): void {
    const r = this.records.get(grantKey(host, port));
    if (!r) return;
    r.bytesUp += up;
    r.bytesDown += down;
    if (connection) r.connections += 1;
  }

  /** CONNECT host:port: a tunnel to the checked address, or a refusal naming why. */
  private async tunnel(req: http.IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    const target = parseAuthority(req.url ?? '');
    if (!target) return refuseConnect(client, 400, `CONNECT target must be host:port, got ${JSON.stringify((req.url ?? '').slice(0, 100))}`);
    const decided = await this.decide(target.host, target.port);
    if (!decided.ok) return refuseConnect(client, 403, `Warden sandbox egress refused ${decided.host}:${target.port}: ${decided.reason}`);
    if (client.destroyed) return;
    const upstream = await dial(decided.addresses, target.port);
    if (!upstream.ok) return refuseConnect(client, 502, `Warden sandbox egress could not reach ${decided.host}:${target.port}: ${upstream.error}`);
    const socket = upstream.socket;
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    this.count(decided.host, target.port, head.length, 0, true);
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) socket.write(head);
    socket.on('data', (chunk: Buffer) => this.count(decided.host, target.port, 0, chunk.length));
    client.on('data', (chunk: Buffer) => this.count(decided.host, target.port, chunk.length, 0));
    socket.pipe(client);
    client.pipe(socket);
    const done = () => {
      socket.destroy();
      client.destroy();
    };
    socket.once('error', done);
    client.once('error', done);
    socket.once('close', done);
    client.once('close', done);
  }

  /**
   * A plain HTTP request in absolute form. Each request on a kept-alive connection is decided
   * on its own URI; the Host header sent is the URI's authority, whatever the client wrote.
   */
  private async plain(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const raw = req.url ?? '';
    if (!raw.toLowerCase().startsWith('http://')) {
      return this.fail(res, 400, raw.toLowerCase().startsWith('https://') ? 'https URLs go through CONNECT' : 'the proxy takes absolute-form http:// URLs only');
    }
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return this.fail(res, 400, 'invalid URL');
    }
    if (url.username || url.password) return this.fail(res, 403, 'URLs with credentials are refused');
    const port = url.port === '' ? 80 : Number(url.port);
    // WHATWG keeps an IPv6 hostname in brackets, as decide() parses it again.
    const decided = await this.decide(url.hostname, port);
    if (!decided.ok) return this.fail(res, 403, `Warden sandbox egress refused ${decided.host}:${port}: ${decided.reason}`);
    const headers: Record<string, string | string[]> = {};
    for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
      const name = req.rawHeaders[i]!;
      const lower = name.toLowerCase();
      if (HOP_HEADERS.has(lower) || lower === 'host') continue;
      const prev = headers[name];
      headers[name] = prev === undefined ? req.rawHeaders[i + 1]! : [...(Array.isArray(prev) ? prev : [prev]), req.rawHeaders[i + 1]!];
    }
    headers.Host = url.host;
    if (req.headers['transfer-encoding'] !== undefined) headers['Transfer-Encoding'] = 'chunked';
    const address = decided.addresses[0]!;
    this.count(decided.host, port, 0, 0, true);
    const upstream = http.request({ host: address, port, method: req.method, path: `${url.pathname}${url.search}`, headers, agent: false, setHost: false, timeout: 30_000 });
    upstream.on('timeout', () => upstream.destroy(new Error('upstream timed out')));
    upstream.on('error', (err) => this.fail(res, 502, `Warden sandbox egress could not reach ${decided.host}:${port}: ${err.message}`));
    upstream.on('response', (reply) => {
      const out: string[] = [];
      for (let i = 0; i + 1 < reply.rawHeaders.length; i += 2) {
        if (HOP_HEADERS.has(reply.rawHeaders[i]!.toLowerCase())) continue;
        out.push(reply.rawHeaders[i]!, reply.rawHeaders[i + 1]!);
      }
      res.writeHead(reply.statusCode ?? 502, reply.statusMessage, out);
      reply.on('data', (chunk: Buffer) => this.count(decided.host, port, 0, chunk.length));
      reply.pipe(res);
    });
    req.on('data', (chunk: Buffer) => this.count(decided.host, port, chunk.length, 0));
    req.pipe(upstream);
  }

  private fail(res: http.ServerResponse, status: number, message: string): void {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const body = `${message}\n`;
    res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body), [REFUSED_HEADER]: 'refused', connection: 'close' });
    res.end(body);
  }
}

/** `host:port` of a CONNECT line or an absolute URI's authority; undefined when it is anything else. */
export function parseAuthority(text: string): { host: string; port: number } | undefined {
  const m = AUTHORITY.exec(text);
  if (!m) return undefined;
  const port = Number(m[2]);
  if (port < 1 || port > 65535) return undefined;
  return { host: m[1]!, port };
}

function refuseConnect(socket: Duplex, status: number, message: string): void {
  if (socket.destroyed) return;
  const phrase = status === 403 ? 'Forbidden' : status === 400 ? 'Bad Request' : status === 431 ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Gateway';
  const body = `${message}\n`;
  socket.end(`HTTP/1.1 ${status} ${phrase}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${REFUSED_HEADER}: refused\r\nConnection: close\r\n\r\n${body}`);
}

/** Dials the checked addresses in order; the first that answers carries the connection. */
async function dial(addresses: readonly string[], port: number): Promise<{ ok: true; socket: net.Socket } | { ok: false; error: string }> {
  let last = 'no address';
  for (const address of addresses) {
    const result = await new Promise<{ ok: true; socket: net.Socket } | { ok: false; error: string }>((resolve) => {
      const socket = net.connect({ host: address, port, timeout: 10_000 });
      socket.once('connect', () => {
        socket.setTimeout(0);
        resolve({ ok: true, socket });
      });
      socket.once('timeout', () => {
        socket.destroy();
        resolve({ ok: false, error: `${address}: connect timed out` });
      });
      socket.once('error', (err) => resolve({ ok: false, error: `${address}: ${(err as NodeJS.ErrnoException).code ?? err.message}` }));
    });
    if (result.ok) return result;
    last = result.error;
  }
  return { ok: false, error: last };
}
