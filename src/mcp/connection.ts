import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import * as z from 'zod';
import type { Logger } from 'pino';
import type { OwnListener } from '../net/own-listeners.js';
import { buildCatalog, type McpTool } from './catalog.js';
import { configSecrets, redactKnown } from '../redact/redact.js';
import { describeLaunch, type ServerSettings } from './settings.js';
import { asMcpError, loadMcpSdk } from './sdk.js';
import type { TransportSeams } from './transport.js';
import { background } from '../util/background.js';

/**
 * One MCP server, kept connected in the background: `start` returns at once; the first
 * connection and every reconnection run on their own, so a slow or broken server never holds
 * up Warden's start or a turn. A lost connection (the child exited, the HTTP server went away,
 * its session expired) is reconnected with backoff (1 s doubling to 60 s, ±20 %); the tools
 * last listed stay known meanwhile (unavailable, with why). `notifications/tools/list_changed`
 * lists the tools again; the surface of the next turn has them. Calls run one at a time unless
 * the server says it takes parallel calls; each is bounded by `timeoutSec` and cancelled on the
 * server (`notifications/cancelled`) when it times out or the caller's signal aborts.
 */

export type ConnectionState = 'disabled' | 'connecting' | 'connected' | 'reconnecting' | 'failed' | 'stopped';

export interface ServerStatus {
  name: string;
  safeName: string;
  transport: string;
  state: ConnectionState;
  /** Tools known (listed at the last connection, kept while reconnecting). */
  tools: number;
  /** Why the last attempt or the connection failed. */
  lastError?: string | undefined;
  /** Tools left out of the last list, and why. */
  diagnostics: string[];
  /** The server's name and version from its initialize answer. */
  serverInfo?: string | undefined;
  connectedAt?: number | undefined;
  /** When the next connection attempt runs, while failing. */
  retryAt?: number | undefined;
  /** Failed attempts in a row. */
  failures: number;
}

export interface ConnectionDeps {
  log: Logger;
  ownListeners: () => readonly OwnListener[];
  onChange: () => void;
  seams?: TransportSeams | undefined;
  /** Backoff base and cap (tests make them short). */
  backoff?: { baseMs: number; maxMs: number } | undefined;
  /** Stored secrets granted to this server (`secrets.grants` to `mcp:<server>`): added to a stdio child's environment at each launch. */
  secretEnv?: ((server: string) => Promise<Record<string, string>>) | undefined;
}

const MAX_PAGES = 100;
const STREAM_LOST = /SSE stream disconnected|Maximum reconnection attempts|Failed to reconnect/;
const LIST_CHANGED_DEBOUNCE_MS = 150;

/** What Warden reads of a list page and a call result: lenient, so one odd entry is one diagnostic, not a failed list. */
const ListPage = z.looseObject({ tools: z.array(z.unknown()).default([]), nextCursor: z.string().optional() });
const CallResult = z.looseObject({ content: z.array(z.unknown()).optional(), structuredContent: z.unknown().optional(), isError: z.boolean().optional() });
export type RawCallResult = z.infer<typeof CallResult>;

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

export class McpConnection {
  state: ConnectionState = 'connecting';
  /** The tools of the last successful listing; undefined until one succeeded. */
  tools: McpTool[] | undefined;
  private client: Client | undefined;
  private connecting: Client | undefined;
  private stopped = false;
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  private refreshTimer: NodeJS.Timeout | undefined;
  private lastError: string | undefined;
  private diagnostics: string[] = [];
  private serverInfo: string | undefined;
  private connectedAt: number | undefined;
  private retryAt: number | undefined;
  private queue: Promise<void> = Promise.resolve();
  private firstSettled!: () => void;
  /** Settles when the first attempt has connected or failed. */
  readonly settled: Promise<void> = new Promise((r) => (this.firstSettled = r));
  private waiters = new Set<() => void>();
  readonly transport: string;
  /** The credentials of this server's launch (URL userinfo, header and env values, secret args): never in an error shown. */
  private readonly secrets: string[];

  constructor(
    readonly settings: ServerSettings,
    private readonly deps: ConnectionDeps,
  ) {
    this.transport = describeLaunch(settings.launch);
    this.secrets = configSecrets(settings.launch);
  }

  start(): void {
    if (!this.settings.enabled) {
      this.state = 'disabled';
      this.firstSettled();
      return;
    }
    this.attempt();
  }

  status(): ServerStatus {
    return {
      name: this.settings.name,
      safeName: this.settings.safeName,
      transport: this.transport,
      state: this.state,
      tools: this.tools?.length ?? 0,
      ...(this.lastError !== undefined ? { lastError: this.lastError } : {}),
      diagnostics: [...this.diagnostics],
      ...(this.serverInfo ? { serverInfo: this.serverInfo } : {}),
      ...(this.connectedAt !== undefined ? { connectedAt: this.connectedAt } : {}),
      ...(this.retryAt !== undefined && this.state !== 'connected' ? { retryAt: this.retryAt } : {}),
      failures: this.failures,
    };
  }

  /** Resolves when connected, or after `timeoutMs` (whatever the state then). */
  whenConnected(timeoutMs: number): Promise<void> {
    if (this.state === 'connected' || this.state === 'disabled' || this.state === 'stopped') return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(t);
        this.waiters.delete(done);
        resolve();
      };
      const t = setTimeout(done, timeoutMs);
      t.unref?.();
      this.waiters.add(done);
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.state = 'stopped';
    clearTimeout(this.timer);
    clearTimeout(this.refreshTimer);
    for (const w of [...this.waiters]) w();
    this.firstSettled();
    const clients = [this.client, this.connecting].filter((c): c is Client => c !== undefined);
    this.client = undefined;
    this.connecting = undefined;
    await Promise.allSettled(clients.map((c) => c.close()));
  }

  private changed(): void {
    if (this.state === 'connected') for (const w of [...this.waiters]) w();
    this.deps.onChange();
  }

  /** One connection attempt; a failure outside the attempt's own handling (loading the SDK, opening the transport) is a failure like any other: retried. */
  private attempt(): void {
    background(
      this.connect().catch((err: unknown) => this.failed(describeError(err))),
      'MCP connection attempt failed',
      { log: this.deps.log, level: 'error', fields: { mcpServer: this.settings.name } },
    );
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    this.state = this.tools === undefined && this.failures === 0 ? 'connecting' : this.tools === undefined ? 'failed' : 'reconnecting';
    const { Client, openTransport, ToolListChangedNotificationSchema } = await loadMcpSdk();
    if (this.stopped) return;
    let settings = this.settings;
    if (settings.launch.kind === 'stdio' && this.deps.secretEnv) {
      let granted: Record<string, string> = {};
      try {
        granted = await this.deps.secretEnv(settings.name);
      } catch (err) {
        return this.failed(`its granted secrets could not be read: ${message(err)}`);
      }
      if (this.stopped) return;
      if (Object.keys(granted).length > 0) settings = { ...settings, launch: { ...settings.launch, env: { ...settings.launch.env, ...granted } } };
    }
    const opened = openTransport(settings, { ownListeners: this.deps.ownListeners(), seams: this.deps.seams });
    if (!opened.ok) return this.failed(opened.error);
    const client = new Client({ name: 'warden', version: '0.1.0' }, { capabilities: {} });
    this.connecting = client;
    client.onerror = (err) => {
      this.deps.log.debug({ mcpServer: this.settings.name, err: message(err) }, 'MCP transport error');
      // The HTTP transport reports a cut stream here and leaves the requests on it waiting; the SDK
      // does not resume it (maxRetries 0), so the session is treated as lost and started over.
      if (this.settings.launch.kind === 'http' && STREAM_LOST.test(message(err))) this.lost(client, err);
    };
    client.onclose = () => this.closed(client, opened.stderrTail());
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.scheduleRefresh(client));
    const deadline = Date.now() + this.settings.connectTimeoutMs;
    try {
      await client.connect(opened.transport, { timeout: this.settings.connectTimeoutMs });
      const listed = await this.list(client, deadline);
      if (this.stopped || this.connecting !== client) {
        await client.close().catch(() => {});
        return;
      }
      this.connecting = undefined;
      this.client = client;
      this.apply(listed);
      const info = client.getServerVersion();
      this.serverInfo = info ? `${info.name} ${info.version}` : undefined;
      this.state = 'connected';
      this.connectedAt = Date.now();
      this.failures = 0;
      this.lastError = undefined;
      this.retryAt = undefined;
      this.deps.log.info({ mcpServer: this.settings.name, transport: this.transport, tools: this.tools?.length ?? 0, diagnostics: this.diagnostics.length || undefined }, 'MCP server connected');
      this.firstSettled();
      this.changed();
    } catch (err) {
      if (this.connecting === client) this.connecting = undefined;
      await client.close().catch(() => {});
      if (this.stopped) return;
      const tail = opened.stderrTail();
      this.failed(`${describeError(err)}${tail ? ` (stderr: ${lastLine(tail)})` : ''}`);
    }
  }

  private failed(raw: string): void {
    if (this.stopped) return;
    // An error may quote the URL or a child's stderr may echo its arguments: shown and logged redacted.
    const error = redactKnown(raw, this.secrets);
    this.lastError = error;
    this.failures++;
    this.state = this.tools === undefined ? 'failed' : 'reconnecting';
    const { baseMs, maxMs } = this.deps.backoff ?? { baseMs: 1000, maxMs: 60_000 };
    const delay = Math.min(maxMs, baseMs * 2 ** Math.min(this.failures - 1, 16)) * (0.8 + Math.random() * 0.4);
    this.retryAt = Date.now() + delay;
    this.deps.log.warn({ mcpServer: this.settings.name, transport: this.transport, error, failures: this.failures, retryInMs: Math.round(delay) }, 'MCP server unavailable; retrying');
    this.timer = setTimeout(() => this.attempt(), delay);
    this.timer.unref?.();
    this.firstSettled();
    this.changed();
  }

  /** The connection went away (the child exited, the transport closed): reconnect. */
  private closed(client: Client, stderr: string): void {
    if (this.stopped || client !== this.client) return;
    this.client = undefined;
    this.failed(`the connection closed${stderr ? ` (stderr: ${lastLine(stderr)})` : ''}`);
  }

  /** A call failed below the protocol (a network error, an expired HTTP session): start over. */
  private lost(client: Client, err: unknown): void {
    if (this.stopped || client !== this.client) return;
    this.client = undefined;
    void client.close().catch(() => {});
    this.failed(`the connection was lost: ${describeError(err)}`);
  }

  private async list(client: Client, deadline: number): Promise<{ tools: McpTool[]; diagnostics: string[] }> {
    const raw: unknown[] = [];
    let cursor: string | undefined;
    let pages = 0;
    const cap = this.settings.maxTools * 4 + 100;
    do {
      const timeout = Math.max(1, deadline - Date.now());
      const page = await client.request({ method: 'tools/list', params: cursor === undefined ? {} : { cursor } }, ListPage, { timeout });
      raw.push(...page.tools);
      cursor = page.nextCursor;
      pages++;
    } while (cursor && pages < MAX_PAGES && raw.length < cap);
    const catalog = buildCatalog(raw, { server: this.settings.name, toolsAllow: this.settings.toolsAllow, toolsDeny: this.settings.toolsDeny, maxTools: this.settings.maxTools });
    if (cursor) catalog.diagnostics.push(`MCP server ${this.settings.name} has more tools than Warden reads (${raw.length} listed in ${pages} pages); the rest are left out`);
    return catalog;
  }

  private apply(listed: { tools: McpTool[]; diagnostics: string[] }): void {
    this.tools = listed.tools;
    this.diagnostics = listed.diagnostics;
    for (const d of listed.diagnostics) this.deps.log.warn({ mcpServer: this.settings.name }, d);
  }

  private scheduleRefresh(client: Client): void {
    clearTimeout(this.refreshTimer);
    this.refreshTimer = setTimeout(() => background(this.refresh(client), 'MCP tool list not refreshed', { log: this.deps.log, fields: { mcpServer: this.settings.name } }), LIST_CHANGED_DEBOUNCE_MS);
    this.refreshTimer.unref?.();
  }

  private async refresh(client: Client): Promise<void> {
    if (this.stopped || client !== this.client) return;
    try {
      const listed = await this.list(client, Date.now() + this.settings.connectTimeoutMs);
      if (client !== this.client) return;
      this.apply(listed);
      this.deps.log.info({ mcpServer: this.settings.name, tools: this.tools?.length ?? 0 }, 'MCP server tools changed');
      this.changed();
    } catch (err) {
      this.deps.log.warn({ mcpServer: this.settings.name, err: describeError(err) }, 'MCP tool list refresh failed; the previous list stays');
    }
  }

  /** One `tools/call`: bounded by `timeoutSec`, cancelled on the server when `signal` aborts. */
  async call(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<RawCallResult> {
    if (this.settings.parallel) return this.send(tool, args, signal);
    const previous = this.queue;
    let release!: () => void;
    this.queue = new Promise((r) => (release = r));
    // The caller's signal may serve many calls (a whole run): its listener goes with this call.
    let onAbort: (() => void) | undefined;
    try {
      await Promise.race([
        previous,
        new Promise<never>((_, reject) => {
          if (signal.aborted) return reject(signal.reason);
          onAbort = () => reject(signal.reason);
          signal.addEventListener('abort', onAbort, { once: true });
        }),
      ]);
      return await this.send(tool, args, signal);
    } finally {
      if (onAbort) signal.removeEventListener('abort', onAbort);
      release();
    }
  }

  private async send(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<RawCallResult> {
    const client = this.client;
    if (!client) throw new Error(`MCP server ${this.settings.name} is not connected (${this.state}${this.lastError ? `: ${this.lastError}` : ''})`);
    // The SDK never removes the listener it adds to a request's signal: it gets one per call,
    // tied to the caller's by a listener removed when the call ends.
    const own = new AbortController();
    const forward = () => own.abort(signal.reason);
    if (signal.aborted) own.abort(signal.reason);
    else signal.addEventListener('abort', forward, { once: true });
    try {
      return await client.request({ method: 'tools/call', params: { name: tool, arguments: args } }, CallResult, { signal: own.signal, timeout: this.settings.timeoutMs });
    } catch (err) {
      if (signal.aborted) throw err;
      if (asMcpError(err)?.code === -32001) throw new Error(`MCP server ${this.settings.name} did not answer within ${this.settings.timeoutMs / 1000} s; the call was cancelled`);
      if (err instanceof z.ZodError) throw new Error(`MCP server ${this.settings.name} answered with a malformed result: ${err.issues[0]?.message ?? 'unexpected shape'}`);
      // A protocol answer (an error the server sent) leaves the connection as it is; anything below it does not.
      if (asMcpError(err) === undefined || asMcpError(err)!.code === -32000) {
        this.lost(client, err);
        throw new Error(`MCP server ${this.settings.name}: the connection was lost during the call (${describeError(err)}); it is reconnecting`);
      }
      throw err;
    } finally {
      signal.removeEventListener('abort', forward);
    }
  }
}

function describeError(err: unknown): string {
  const rpc = asMcpError(err);
  if (rpc) return rpc.message.replace(/^MCP error -?\d+: /, '');
  const e = err as NodeJS.ErrnoException & { cause?: unknown };
  const cause = e?.cause instanceof Error ? `: ${e.cause.message}` : '';
  return `${message(err)}${cause}`;
}

function lastLine(text: string): string {
  const lines = text.split('\n').map((l) => l.trim()).filter(Boolean);
  return (lines.at(-1) ?? '').slice(0, 300);
}
