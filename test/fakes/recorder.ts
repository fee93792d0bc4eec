import { EventEmitter } from 'node:events';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';

/** One request a fake received, as tests assert on it. */
export interface RecordedRequest {
  method: string;
  /** Path without the query string (and, for Discord, without the `/api/v10` prefix). */
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** Raw body as received. */
  raw: Buffer;
  /** Parsed body: JSON, form fields (with JSON-valued fields decoded) or multipart parts. */
  body: any;
  /** Files of a multipart body, by field name. */
  files: Array<{ field: string; name: string; content: string }>;
  at: number;
}

/** Lets a test answer one request itself: return true when it has written the response. */
export type RouteOverride = (record: RecordedRequest, res: ServerResponse) => boolean | Promise<boolean>;

/**
 * Keeps every request and lets a test wait for one: `waitFor` checks what is already recorded
 * before listening, so it cannot miss a request that arrived first.
 */
export class RequestLog<T extends { at: number } = RecordedRequest> {
  readonly records: T[] = [];
  private readonly events = new EventEmitter();

  constructor() {
    this.events.setMaxListeners(0);
  }

  add(record: T): void {
    this.records.push(record);
    this.events.emit('record', record);
  }

  /** Calls `listener` for every new record until the returned function is called. */
  subscribe(listener: (r: T) => void): () => void {
    this.events.on('record', listener);
    return () => this.events.off('record', listener);
  }

  /** Forgets what was recorded (long benchmark runs). */
  clear(): void {
    this.records.length = 0;
  }

  filter(predicate: (r: T) => boolean): T[] {
    return this.records.filter(predicate);
  }

  waitFor(predicate: (r: T) => boolean, ms = 5_000, what = 'request'): Promise<T> {
    const found = this.records.find(predicate);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const onRecord = (r: T) => {
        if (!predicate(r)) return;
        clearTimeout(timer);
        this.events.off('record', onRecord);
        resolve(r);
      };
      const timer = setTimeout(() => {
        this.events.off('record', onRecord);
        reject(new Error(`timed out after ${ms} ms waiting for ${what}`));
      }, ms);
      this.events.on('record', onRecord);
    });
  }
}

export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

const tryJson = (s: string): unknown => {
  try {
    return JSON.parse(s);
  } catch {
    return s;
  }
};

/** Parses JSON, form-encoded (Slack sends object arguments as JSON strings) and multipart bodies. */
export async function parseBody(raw: Buffer, contentType: string | undefined): Promise<Pick<RecordedRequest, 'body' | 'files'>> {
  const type = contentType ?? '';
  if (raw.length === 0) return { body: undefined, files: [] };
  if (type.startsWith('application/json')) return { body: tryJson(raw.toString('utf8')), files: [] };
  if (type.startsWith('application/x-www-form-urlencoded')) {
    const body: Record<string, unknown> = {};
    for (const [k, v] of new URLSearchParams(raw.toString('utf8'))) body[k] = /^[[{]/.test(v) ? tryJson(v) : v;
    return { body, files: [] };
  }
  if (type.startsWith('multipart/form-data')) {
    const form = await new Response(new Uint8Array(raw), { headers: { 'content-type': type } }).formData();
    const body: Record<string, unknown> = {};
    const blobs: Array<{ field: string; file: File }> = [];
    form.forEach((value, field) => {
      if (typeof value === 'string') body[field] = field === 'payload_json' ? tryJson(value) : value;
      else blobs.push({ field, file: value });
    });
    const files: RecordedRequest['files'] = [];
    for (const { field, file } of blobs) files.push({ field, name: file.name, content: await file.text() });
    // Discord sends the message itself as `payload_json`; flatten it so assertions read alike.
    const payload = body.payload_json;
    return { body: payload && typeof payload === 'object' ? { ...(payload as object), ...body } : body, files };
  }
  return { body: raw.toString('utf8'), files: [] };
}

export function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  if (value === undefined) {
    res.writeHead(status, headers).end();
    return;
  }
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(text);
}

/** Numeric string ids from one counter per fake (discord.js reads timestamps out of snowflakes). */
export function snowflakes(start: bigint): () => string {
  let next = start;
  return () => (next++).toString();
}
