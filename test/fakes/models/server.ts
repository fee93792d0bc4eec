import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** One scripted answer of a fake model server. */
export type FakeReply =
  | {
      kind: 'reply';
      text?: string;
      /** `args` as an object is serialised; as a string it is sent verbatim (malformed JSON tests). */
      toolCalls?: Array<{ id?: string; name: string; args: Record<string, unknown> | string }>;
      /** Held back before the response starts (abort tests). */
      delayMs?: number;
      /** Pause between two stream events, so a client sees the text arrive over time (streaming tests). */
      pieceDelayMs?: number;
      /** Extra usage the reply reports in its API's own fields: cache reads/writes, reasoning tokens. */
      usage?: FakeUsageExtras;
    }
  | { kind: 'error'; status: number; message?: string; retryAfter?: string };

export interface FakeUsageExtras {
  cachedInputTokens?: number;
  cacheWriteTokens?: number;
  reasoningTokens?: number;
}

/**
 * The usage a reply reported, in Warden's one meaning (every prompt token in `inputTokens`,
 * every generated one in `outputTokens`): what a test sums to check the accounting.
 */
export interface ReportedUsage {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
}

/** What a test learns about one request the fake received. */
export interface FakeRequest {
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
  /** Rough token count of the request (chars / 4), what the fake context window checks. */
  tokens: number;
  /** `Date.now()` as each stream event was written (streamed replies of dialects that pace them). */
  eventTimes?: number[];
  /** The usage the reply reported (set by dialects that report usage). */
  reported?: ReportedUsage;
}

export interface FakeModelOptions {
  /** Answers taken in order; when empty, `respond` decides, else a plain "ok" reply. */
  script?: FakeReply[];
  respond?: (request: FakeRequest) => FakeReply;
  /** Requests estimated above this many tokens get the provider's context-length error. */
  contextWindowTokens?: number;
  /**
   * `false`: a request's parsed body is dropped from `requests` once it is answered (its path,
   * headers and token count stay), for long benchmark runs whose requests each carry tens of
   * KiB. Default true: every body kept for the test to read.
   */
  keepBodies?: boolean;
}

export interface FakeModelServer {
  /** Base URL to give the SDK (already including any version prefix the SDK expects). */
  url: string;
  requests: FakeRequest[];
  push(...replies: FakeReply[]): void;
  close(): Promise<void>;
}

export interface Dialect {
  /** Paths this dialect answers, e.g. `/v1/messages`. */
  matches(path: string): boolean;
  /** URL suffix appended to the server origin for the SDK's base URL. */
  basePath: string;
  writeReply(res: ServerResponse, reply: Extract<FakeReply, { kind: 'reply' }>, request: FakeRequest, stream: boolean): Promise<void>;
  writeError(res: ServerResponse, status: number, message: string, headers: Record<string, string>): void;
  contextError(tokens: number, limit: number): string;
}

/** Starts a loopback HTTP server speaking `dialect`; every request is recorded. */
export async function startFakeModelServer(dialect: Dialect, options: FakeModelOptions = {}): Promise<FakeModelServer> {
  const script = [...(options.script ?? [])];
  const requests: FakeRequest[] = [];
  const sockets = new Set<import('node:net').Socket>();

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const raw = await readText(req);
    if (!dialect.matches(path)) {
      dialect.writeError(res, 404, `no route ${req.method} ${path}`, {});
      return;
    }
    const body = raw ? JSON.parse(raw) : {};
    const request: FakeRequest = { path, headers: req.headers, body, tokens: Math.ceil(raw.length / 4) };
    requests.push(request);
    if (options.contextWindowTokens !== undefined && request.tokens > options.contextWindowTokens) {
      dialect.writeError(res, 400, dialect.contextError(request.tokens, options.contextWindowTokens), {});
      return;
    }
    const reply = script.shift() ?? options.respond?.(request) ?? { kind: 'reply', text: 'ok' };
    if (reply.kind === 'error') {
      dialect.writeError(res, reply.status, reply.message ?? `scripted ${reply.status}`, reply.retryAfter ? { 'retry-after': reply.retryAfter } : {});
      return;
    }
    if (reply.delayMs) {
      // The client may give up meanwhile (abort): stop waiting as soon as it does.
      const gone = new Promise<void>((resolve) => res.on('close', () => resolve()));
      await Promise.race([sleep(reply.delayMs), gone]);
      if (res.destroyed || res.writableEnded) return;
    }
    await dialect.writeReply(res, reply, request, body.stream === true);
    if (options.keepBodies === false) request.body = undefined;
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: Error) => {
      if (!res.headersSent) dialect.writeError(res, 500, `fake failed: ${err.message}`, {});
      else res.end();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${dialect.basePath}`,
    requests,
    push: (...replies) => script.push(...replies),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A request's body as text, gathered from its chunks (a body of one chunk is not copied). */
function readText(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let ended = false;
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      ended = true;
      resolve(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8'));
    });
    req.on('error', reject);
    // A client gone before its body ended: no request to answer.
    req.on('close', () => ended || reject(new Error('request closed before its body ended')));
  });
}

const sseEvent = (e: { event?: string; data: unknown }): string => `${e.event ? `event: ${e.event}\n` : ''}data: ${typeof e.data === 'string' ? e.data : JSON.stringify(e.data)}\n\n`;

/** Every event at once: one write of the whole stream (a client parses it event by event all the same). */
export function writeSse(res: ServerResponse, events: Array<{ event?: string; data: unknown }>): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  res.end(events.map(sseEvent).join(''));
}

/** As `writeSse`, one event every `delayMs`, each write's time recorded on the request. */
export async function writePacedSse(res: ServerResponse, events: Array<{ event?: string; data: unknown }>, delayMs: number, request: FakeRequest): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  request.eventTimes = [];
  for (const [i, e] of events.entries()) {
    if (i > 0) await sleep(delayMs);
    if (res.destroyed) return;
    res.write(sseEvent(e));
    request.eventTimes.push(Date.now());
  }
  res.end();
}

/** Splits a string into a few pieces, so clients see real incremental deltas. */
export function pieces(text: string, size = 7): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

export const argsText = (args: Record<string, unknown> | string): string => (typeof args === 'string' ? args : JSON.stringify(args));

/** The text of the last user message a request carries (parts as JSON). */
export const lastUserText = (r: FakeRequest): string => {
  const users = (r.body.messages as Array<{ role: string; content: unknown }>).filter((m) => m.role === 'user');
  const content = users.at(-1)?.content;
  return typeof content === 'string' ? content : JSON.stringify(content);
};

/** The names of the tools a request offers the model (OpenAI's chat shape). */
export const toolNames = (r: FakeRequest): string[] => ((r.body.tools ?? []) as Array<{ function: { name: string } }>).map((t) => t.function.name);
