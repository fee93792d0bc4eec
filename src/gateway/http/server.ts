import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { WardenConfig } from '../../config/index.js';
import { log } from '../../log/log.js';
import { closeServer, listenOwn, serverUrl } from '../../net/listen.js';
import { HTTP_PROVIDER } from '../../policy/http-surface.js';
import { knownAgentIds, defaultAgentId } from '../../policy/steps.js';
import type { AuditLog } from '../../store/audit.js';
import { normalizeToolName } from '../../policy/tool-names.js';
import { buildTurnContext } from '../../turn/turn-context.js';
import { bearerOf, httpTokens, matchToken, RateLimiter } from './tokens.js';
import { background } from '../../util/background.js';
import type { ToolExecutor } from '../../agent/index.js';
import type { TurnContext } from '../../policy/context.js';
import type { SurfaceResult } from '../../policy/surface.js';

/** What the API needs of the running tool executor (app/tool-executor.ts, handed in by startup). */
export interface HttpToolExecutor extends Pick<ToolExecutor, 'execute'> {
  /** The turn's surface with what was removed and why. */
  report(turn: TurnContext): SurfaceResult;
}

export interface HttpToolsApiDeps {
  /** The config and the governed call path new calls run under (a reload replaces both). */
  current: () => { config: WardenConfig; tools: HttpToolExecutor | undefined };
  audit: AuditLog;
}

const MAX_BODY = 1_000_000;

/**
 * The HTTP tools API (`gateway.http`): `GET /tools` lists the surface, `POST /tools/invoke`
 * runs one call. A request enters like a chat message: the one context builder makes its turn
 * context (`provider: http`, the token's label as sender, never an owner), the one surface
 * function decides (the agent's policy for provider `http`, minus the default HTTP deny list
 * unless `gateway.http.tools.allow` re-enables a tool), and the call runs through the whole
 * wrapper chain. 401 without a valid token, 403 naming why a tool is off the surface, 429 past
 * the token's rate; every call audited with the token's label.
 */
export class HttpToolsApi {
  private server: Server | undefined;
  private limiter: RateLimiter;
  /** Failed logins per remote address, so a guesser can neither try fast nor flood the audit log. */
  private readonly failures: RateLimiter;

  constructor(
    private readonly http: NonNullable<NonNullable<WardenConfig['gateway']>['http']>,
    private readonly deps: HttpToolsApiDeps,
  ) {
    this.limiter = new RateLimiter(http.rateLimit?.perMinute ?? 60);
    this.failures = new RateLimiter(20);
  }

  get url(): string | undefined {
    return serverUrl(this.server, 'http');
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => background(this.handle(req, res), 'HTTP tools API request failed', { level: 'error' }));
    await listenOwn(server, 'HTTP tools API', this.http.port, this.http.host);
    this.server = server;
    log.info({ url: this.url }, 'HTTP tools API listening');
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    await closeServer(server);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers });
      res.end(JSON.stringify(body));
    };
    try {
      const url = new URL(req.url ?? '/', 'http://api');
      const route = `${req.method} ${url.pathname}`;
      if (route !== 'GET /tools' && route !== 'POST /tools/invoke') return send(404, { error: 'not_found', message: 'GET /tools or POST /tools/invoke' });
      // A browser page may not use this API: it carries an Origin, a client never needs one.
      if (req.headers.origin !== undefined) return send(403, { error: 'forbidden', why: 'requests from web pages (with an Origin header) are refused' });
      const { config, tools } = this.deps.current();
      const label = matchToken(bearerOf(req.headers.authorization), httpTokens(config.gateway?.http ?? this.http));
      if (!label) {
        const slow = this.failures.take(`addr:${req.socket.remoteAddress ?? ''}`);
        if (!slow.ok) return send(429, { error: 'rate_limited', why: 'too many failed logins from this address', retryAfterSec: slow.retryAfterSec }, { 'retry-after': String(slow.retryAfterSec) });
        await this.deps.audit.recordOrLog({ type: 'http.auth.failed', data: { route, remote: req.socket.remoteAddress, presented: req.headers.authorization ? 'a wrong token' : 'no token' } });
        return send(401, { error: 'unauthorized', why: req.headers.authorization ? 'the bearer token is not valid' : 'Authorization: Bearer <token> is required' }, { 'www-authenticate': 'Bearer' });
      }
      const limited = this.limiter.take(label);
      if (!limited.ok) {
        await this.deps.audit.recordOrLog({ type: 'http.rate_limited', actor: `http:${label}`, data: { route } });
        return send(429, { error: 'rate_limited', why: `token "${label}" is over gateway.http.rateLimit.perMinute`, retryAfterSec: limited.retryAfterSec }, { 'retry-after': String(limited.retryAfterSec) });
      }
      if (!tools) return send(503, { error: 'unavailable', why: 'this Warden has no tool path' });

      let body: Record<string, unknown> = {};
      if (req.method === 'POST') {
        const parsed = await readJson(req);
        if (!parsed.ok) return send(400, { error: 'bad_request', why: parsed.error });
        body = parsed.value;
      }
      const agentId = typeof body.agentId === 'string' ? body.agentId : url.searchParams.get('agentId') ?? defaultAgentId(config);
      if (!knownAgentIds(config).includes(agentId)) return send(400, { error: 'bad_request', why: `unknown agent "${agentId}"` });
      // A caller's sessions live under its own key space: it cannot run calls in a chat's session.
      const own = `agent:${agentId}:http:${label}`;
      const sessionKey = typeof body.sessionKey === 'string' && body.sessionKey !== '' ? body.sessionKey : own;
      if (sessionKey !== own && !sessionKey.startsWith(`${own}:`)) {
        return send(403, { error: 'forbidden', why: `sessionKey must be "${own}" or start with "${own}:" (token "${label}")` });
      }
      const turn = buildTurnContext(config, {
        agentId,
        conversation: { provider: HTTP_PROVIDER, chat: 'channel', channelId: `http:${label}` },
        sender: { id: `token:${label}`, name: `HTTP token ${label}` },
        mayBeOwner: false,
      });
      const surface = tools.report(turn);
      if (route === 'GET /tools') {
        await this.deps.audit.recordOrLog({ type: 'http.tools.list', actor: `http:${label}`, sessionKey, data: {} });
        return send(200, { ok: true, agentId, tools: surface.tools, removed: surface.removed, unavailable: surface.unavailable });
      }

      const tool = normalizeToolName(body.tool);
      if (!tool) return send(400, { error: 'bad_request', why: 'body needs "tool": a tool name' });
      const args = body.args ?? {};
      if (args === null || typeof args !== 'object' || Array.isArray(args)) return send(400, { error: 'bad_request', why: '"args" must be an object' });
      if (surface.error) return send(403, { error: 'forbidden', tool, why: surface.error });
      if (!surface.tools.includes(tool)) {
        const removed = surface.removed.find((r) => r.tool === tool);
        const unavailable = surface.unavailable.find((u) => u.tool === tool);
        // A tool the surface does not know (owner-only tools do not exist for a token caller) is
        // named as sent, never by the id an alias resolves to.
        const asSent = removed || unavailable ? tool : String(body.tool).trim().toLowerCase();
        const why = removed
          ? `${tool} is not on the HTTP surface: removed by ${removed.by}${removed.by === 'gateway.http default deny' ? " (OpenClaw's DEFAULT_GATEWAY_HTTP_TOOL_DENY; re-enable with gateway.http.tools.allow)" : ''}`
          : unavailable
            ? `${tool} is unavailable here: ${unavailable.why}`
            : `unknown tool "${asSent}"`;
        await this.deps.audit.recordOrLog({ type: 'http.tools.invoke', actor: `http:${label}`, sessionKey, data: { tool, status: 403, why } });
        return send(unavailable || removed ? 403 : 404, { error: removed || unavailable ? 'forbidden' : 'not_found', tool: asSent, why });
      }
      const controller = new AbortController();
      res.on('close', () => {
        if (!res.writableEnded) controller.abort();
      });
      const result = await tools.execute(
        { toolCallId: `http-${randomUUID()}`, tool, args: args as Record<string, unknown> },
        { sessionKey, turn, signal: controller.signal, surface: surface.tools },
      );
      const ok = result.isError !== true;
      await this.deps.audit.recordOrLog({ type: 'http.tools.invoke', actor: `http:${label}`, sessionKey, data: { tool, status: 200, ok } });
      return send(200, { ok, tool, result: { content: result.content, details: result.details ?? null, isError: result.isError === true } });
    } catch (err) {
      log.error({ err }, 'HTTP tools API request failed');
      if (!res.headersSent) send(500, { error: 'internal', why: 'the request failed inside Warden' });
    }
  }
}

function readJson(req: IncomingMessage): Promise<{ ok: true; value: Record<string, unknown> } | { ok: false; error: string }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        resolve({ ok: false, error: `body over ${MAX_BODY} bytes` });
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => {
      try {
        const value = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as unknown;
        if (!value || typeof value !== 'object' || Array.isArray(value)) resolve({ ok: false, error: 'the body must be a JSON object' });
        else resolve({ ok: true, value: value as Record<string, unknown> });
      } catch {
        resolve({ ok: false, error: 'the body is not JSON' });
      }
    });
    req.on('error', () => resolve({ ok: false, error: 'the request was cut off' }));
  });
}
