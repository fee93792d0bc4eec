import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { OpsConfig } from '../config/index.js';
import { isLoopbackHost } from '../config/index.js';
import { log } from '../log/log.js';
import { closeServer, listenOwn, serverUrl } from '../net/listen.js';
import { describePortInUse, isPortInUse, OPS_PORT } from '../net/port-clash.js';
import type { WardenMetrics } from './metrics.js';
import type { Readiness } from './readiness.js';
import { background } from '../util/background.js';

export interface OpsServerDeps {
  readiness: () => Promise<Readiness>;
  metrics: WardenMetrics;
}

/** The name refusals and the start log use for this listener. */
export const OPS_LISTENER = 'ops listener';

/**
 * The operations listener: `GET /healthz` (the process answers), `GET /readyz` (store,
 * migrations, chat platforms; 503 with the failing checks otherwise) and `GET /metrics`
 * (Prometheus text). Registered as one of Warden's own listeners, so web_fetch and the
 * browser cannot reach it. Bound to loopback, it answers only requests addressed to a
 * loopback name, so a page that rebinds its own host name to 127.0.0.1 reads nothing.
 *
 * The bot does not depend on it: a port already in use is logged and Warden runs without it.
 */
export class OpsServer {
  private server: Server | undefined;

  constructor(
    private readonly ops: OpsConfig,
    private readonly deps: OpsServerDeps,
  ) {}

  get url(): string | undefined {
    return serverUrl(this.server, 'http');
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => background(this.handle(req, res), 'ops request failed', { level: 'error' }));
    try {
      await listenOwn(server, OPS_LISTENER, this.ops.port, this.ops.host);
    } catch (err) {
      // A taken port is an operator's everyday clash, not a crash: one warn line saying how to move it.
      if (isPortInUse(err)) log.warn({ host: this.ops.host, port: this.ops.port }, `${await describePortInUse(OPS_PORT, this.ops)} Warden runs without /healthz, /readyz and /metrics.`);
      else log.error({ err, host: this.ops.host, port: this.ops.port }, 'ops listener cannot listen; Warden runs without /healthz, /readyz and /metrics');
      return;
    }
    this.server = server;
    log.info({ url: this.url }, 'ops listener listening');
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    await closeServer(server);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : JSON.stringify(body));
    };
    try {
      if (isLoopbackHost(this.ops.host) && !loopbackHostHeader(req.headers.host)) {
        return json(421, { error: 'misdirected', why: 'the ops listener answers requests to localhost, 127.0.0.1 or [::1] only' });
      }
      const path = new URL(req.url ?? '/', 'http://ops').pathname;
      if (req.method !== 'GET' && req.method !== 'HEAD') return json(405, { error: 'method_not_allowed', why: 'GET only' });
      if (path === '/healthz') return json(200, { status: 'ok' });
      if (path === '/readyz') {
        const r = await this.deps.readiness();
        if (r.ready) return json(200, { status: 'ready', checks: r.checks });
        const reason = Object.entries(r.checks)
          .flatMap(([name, c]) => (c.ok ? [] : [`${name}: ${c.reason}`]))
          .join('; ');
        return json(503, { status: 'not ready', reason, checks: r.checks });
      }
      if (path === '/metrics') {
        const text = await this.deps.metrics.registry.metrics();
        res.writeHead(200, { 'content-type': this.deps.metrics.registry.contentType, 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : text);
        return;
      }
      return json(404, { error: 'not_found', why: 'GET /healthz, /readyz or /metrics' });
    } catch (err) {
      log.error({ err, url: req.url }, 'ops request failed');
      if (!res.headersSent) json(500, { error: 'internal', why: (err as Error).message });
      else res.end();
    }
  }
}

/** `localhost`, `127.x.y.z` or `[::1]`, with or without a port. */
function loopbackHostHeader(host: string | undefined): boolean {
  if (!host) return false;
  const name = host.startsWith('[') ? host.slice(1, host.indexOf(']')) : host.replace(/:\d+$/, '');
  return isLoopbackHost(name);
}
