import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { WebConfig } from '../../src/config/schema/channels.js';
import { describePortInUse, isPortInUse, WEB_CHAT_PORT } from '../../src/net/port-clash.js';
import { registerServer } from '../../src/net/own-listeners.js';
import { checkRequestOrigin, isLoopbackHost, TOKEN_COOKIE, tokenFromRequest, tokensMatch } from './access.js';

/**
 * The web chat's listener and the part of it that needs nothing but the token: the access checks
 * (Host and Origin, the token on every request), the page, its script and style, `/healthz` and
 * the `?token=` → cookie redirect. Everything else — the WebSocket that carries messages and
 * clicks, uploads, the files of replies, an unknown path — is the running chat's, handed over by
 * `attach`. `warden start` opens this before the rest of Warden loads (this module imports
 * little), so the page answers at once; a request that needs the chat waits for it, at most
 * `waitMs`, and is answered 503 with Retry-After when the chat did not come up in that time or
 * failed to start (`fail`).
 */
/**
 * The page's parts (some 60 KB of text, kept once loaded), loaded at the first request for one:
 * a bot nobody has opened the chat of does not hold them.
 */
let page: Promise<typeof import('./page.js')> | undefined;
const pageModule = () => (page ??= import('./page.js'));

/** What the listener serves itself, by path: the page, its script and style, the Markdown renderer, the icon. */
const PAGE_ASSETS: Readonly<Record<string, { type: string; body: (page: typeof import('./page.js')) => string }>> = {
  '/': { type: 'text/html; charset=utf-8', body: (p) => p.PAGE_HTML },
  '/app.js': { type: 'text/javascript; charset=utf-8', body: (p) => p.PAGE_JS },
  '/app.css': { type: 'text/css; charset=utf-8', body: (p) => p.PAGE_CSS },
  '/markdown-it.js': { type: 'text/javascript; charset=utf-8', body: (p) => p.markdownItJs() },
  '/favicon.svg': { type: 'image/svg+xml', body: (p) => p.FAVICON_SVG },
};

export interface WebFront {
  /** `http://host:port/`. */
  readonly url: string;
  /** The address with the token, `http://host:port/?token=…`. */
  readonly openUrl: string;
  /** Whether the chat is attached (what `/healthz` reports as `ready`). */
  readonly ready: boolean;
  /** Hands the requests that need the chat to it; those waiting are handed on now, in arrival order. */
  attach(chat: WebChatHandlers): void;
  /** The chat will not come: what waits, and what comes from now on, is answered 503. */
  fail(): void;
  /** Stops listening and drops every connection (idempotent). */
  close(): Promise<void>;
}

/** The running chat's side of the listener. Access was checked before either is called. */
export interface WebChatHandlers {
  request(req: http.IncomingMessage, res: http.ServerResponse, url: URL, reply: Reply): void;
  /** A WebSocket upgrade to `/ws`. */
  upgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void;
}

export type Reply = (status: number, type: string, body: string, extra?: Record<string, string>) => void;

/** How long a request that needs the chat waits for it before a 503 (start-up on a slow store included). */
export const CHAT_WAIT_MS = 30_000;
/** What a 503 tells the client: try again in this many seconds. */
export const RETRY_AFTER_SEC = 5;

/** Every answer's security headers: no sniffing, no referrer, a strict content security policy. */
export const WEB_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; media-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
};

const UNAUTHORISED =
  'This web chat needs its access token: open the address Warden printed when it started (it ends in /?token=…). ' +
  "The token is channels.web.token when set, else the web-token file in Warden's data dir.";

/** A request for the chat, as it arrived. */
type ForChat = { kind: 'request'; req: http.IncomingMessage; res: http.ServerResponse; url: URL; reply: Reply } | { kind: 'upgrade'; req: http.IncomingMessage; socket: Duplex; head: Buffer };
type Waiting = ForChat & { timer: NodeJS.Timeout | undefined; gone?: () => void };

/**
 * Binds `config.host:config.port` and answers what needs no chat. A taken port names the key,
 * the flag and the holder. The caller has checked the bind (`checkBind`) and holds the token.
 */
export async function openWebFront(config: Pick<WebConfig, 'host' | 'port'>, token: string, options: { waitMs?: number } = {}): Promise<WebFront> {
  if (!token) throw new Error('the web chat needs an access token');
  const loopback = isLoopbackHost(config.host);
  const waitMs = options.waitMs ?? CHAT_WAIT_MS;
  let chat: WebChatHandlers | undefined;
  let failed = false;
  const waiting = new Set<Waiting>();

  const authorised = (req: http.IncomingMessage, url: URL) => tokensMatch(tokenFromRequest(url, { cookie: req.headers.cookie, authorization: req.headers.authorization }), token);
  const allowed = (req: http.IncomingMessage) => checkRequestOrigin({ host: req.headers.host, origin: req.headers.origin }, loopback);

  /** No longer waiting: its timer and its close listener go (a keep-alive socket carries many requests). */
  const settle = (w: Waiting) => {
    clearTimeout(w.timer);
    waiting.delete(w);
    if (w.gone) (w.kind === 'request' ? w.req.socket : w.socket).off('close', w.gone);
  };
  const unavailable = (w: Waiting) => {
    settle(w);
    const why = failed ? 'Warden did not start; see its log.' : 'Warden is still starting; try again shortly.';
    if (w.kind === 'request') w.reply(503, 'text/plain; charset=utf-8', why, { 'retry-after': String(RETRY_AFTER_SEC) });
    else w.socket.end(`HTTP/1.1 503 Service Unavailable\r\nretry-after: ${RETRY_AFTER_SEC}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
  };
  const handOn = (w: Waiting) => {
    settle(w);
    if (w.kind === 'request') chat!.request(w.req, w.res, w.url, w.reply);
    else chat!.upgrade(w.req, w.socket, w.head);
  };
  /** Now if the chat is there, else once it is (or a 503). A client that leaves meanwhile is forgotten. */
  const toChat = (w: ForChat) => {
    const entry: Waiting = { ...w, timer: undefined };
    if (chat) return handOn(entry);
    if (failed) return unavailable(entry);
    entry.timer = setTimeout(() => unavailable(entry), waitMs);
    entry.timer.unref();
    waiting.add(entry);
    entry.gone = () => settle(entry);
    (entry.kind === 'request' ? entry.req.socket : entry.socket).once('close', entry.gone);
  };

  function handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://web.invalid');
    const reply: Reply = (status, type, body, extra = {}) => {
      if (res.headersSent) return;
      res.writeHead(status, { ...WEB_HEADERS, 'content-type': type, 'cache-control': 'no-store', ...extra });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (!allowed(req)) return reply(403, 'text/plain; charset=utf-8', 'forbidden: unexpected Host or Origin');
    if (!authorised(req, url)) return reply(401, 'text/plain; charset=utf-8', UNAUTHORISED, { 'www-authenticate': 'Bearer realm="warden"' });
    if (req.method === 'POST' && url.pathname === '/upload') return toChat({ kind: 'request', req, res, url, reply });
    if (req.method !== 'GET' && req.method !== 'HEAD') return reply(405, 'text/plain; charset=utf-8', 'method not allowed', { allow: 'GET, HEAD' });
    // Liveness: this listener answers. `ready` says whether the chat behind it is up yet.
    if (url.pathname === '/healthz') return reply(200, 'application/json', JSON.stringify({ ok: true, ready: chat !== undefined }));
    const given = url.searchParams.get('token');
    if (given) {
      // Keep the token out of the address bar and history: a cookie carries it from here on.
      const cookie = `${TOKEN_COOKIE}=${encodeURIComponent(given)}; HttpOnly; SameSite=Strict; Path=/`;
      return reply(303, 'text/plain; charset=utf-8', '', { location: url.pathname, 'set-cookie': cookie });
    }
    // Own keys only: a path is never looked up on the object's prototype.
    const asset = Object.hasOwn(PAGE_ASSETS, url.pathname) ? PAGE_ASSETS[url.pathname] : undefined;
    // The files of replies and uploads, and the 404 of anything else, are the chat's.
    if (!asset) return toChat({ kind: 'request', req, res, url, reply });
    pageModule().then(
      (page) => reply(200, asset.type, asset.body(page)),
      () => {
        page = undefined;
        reply(500, 'text/plain; charset=utf-8', 'the page could not be loaded');
      },
    );
  }

  const server = http.createServer(handle);
  // Registered while it listens, so web_fetch and the browser refuse it whatever their policy.
  registerServer(server, 'web chat');
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://web.invalid');
    if (url.pathname !== '/ws' || !allowed(req) || !authorised(req, url)) {
      socket.end('HTTP/1.1 403 Forbidden\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    socket.on('error', () => {});
    toChat({ kind: 'upgrade', req, socket, head });
  });
  server.listen(config.port, config.host);
  try {
    await Promise.race([once(server, 'listening'), once(server, 'error').then(([err]) => Promise.reject(err as Error))]);
  } catch (err) {
    // A taken port names the key, the flag and the holder, and offers the next free port.
    if (isPortInUse(err)) throw new Error(await describePortInUse(WEB_CHAT_PORT, { host: config.host, port: config.port }), { cause: err });
    throw err;
  }
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}/`;
  let closing: Promise<void> | undefined;
  const fail = () => {
    if (chat) return;
    failed = true;
    for (const w of [...waiting]) unavailable(w);
  };
  return {
    url,
    openUrl: `${url}?token=${encodeURIComponent(token)}`,
    get ready() {
      return chat !== undefined;
    },
    attach(handlers) {
      if (chat) throw new Error('the web chat is already attached to its listener');
      if (failed || closing) throw new Error('the web chat listener is closed');
      chat = handlers;
      for (const w of [...waiting]) handOn(w);
    },
    fail,
    close() {
      closing ??= (async () => {
        fail();
        if (!server.listening) return;
        const closed = once(server, 'close');
        server.close();
        server.closeAllConnections();
        await closed;
      })();
      return closing;
    },
  };
}
