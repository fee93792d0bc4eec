import type { Readable } from 'node:stream';
import type { webApi } from '@slack/bolt';
import type { Dispatcher } from 'undici';
import { decodedBody, discard, leanRequest } from '../../src/net/lean-fetch.js';

type FetchResponse = Awaited<ReturnType<webApi.FetchFunction>>;

/** Statuses whose answer has no body, as the Fetch standard lists them. */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * The `fetch` Slack's web client (and Bolt's `respond`) is given: the exchange is leanFetch's
 * (`leanRequest`: the process's global dispatcher, its redirect rules, a signal that aborts), but
 * the answer is handed back as the narrow response the client declares (`webApi.FetchFunction`:
 * status, headers' get and entries, text, json, arrayBuffer) read straight from undici's body,
 * rather than as a web Response over a web stream made from that body — which cost more than
 * the rest of a chat.postMessage's answer handling together. A compressed answer is decoded as
 * fetch decodes it. A body that is not text (a file upload's form data) goes to the global fetch.
 */
export function slackApiFetch(): webApi.FetchFunction {
  return async (input, init) => {
    const body = init?.body;
    // A web Response has all the client reads (its Headers type in this lib only lacks `entries`).
    if (body !== undefined && typeof body !== 'string') return (await globalThis.fetch(input, init)) as unknown as FetchResponse;
    const url = typeof input === 'string' ? input : input.href;
    const method = (init?.method ?? 'GET').toUpperCase();
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(init?.headers ?? {})) {
      const key = name.toLowerCase();
      headers[key] = key in headers ? `${headers[key]}, ${value}` : value;
    }
    const answer = await leanRequest(url, { method, headers, body, signal: init?.signal, redirect: init?.redirect ?? 'follow' });
    return new SlackApiAnswer(answer, url, NULL_BODY.has(answer.statusCode) || method === 'HEAD');
  };
}

/** An answer's headers as fetch shows them: names lowered, a repeated header's values joined. */
class AnswerHeaders {
  constructor(private readonly raw: Dispatcher.ResponseData['headers']) {}

  get(name: string): string | null {
    const value = this.raw[name.toLowerCase()];
    if (value === undefined) return null;
    return Array.isArray(value) ? value.join(', ') : value;
  }

  *entries(): IterableIterator<[string, string]> {
    for (const name of Object.keys(this.raw).sort()) {
      const value = this.get(name);
      if (value !== null) yield [name, value];
    }
  }
}

class SlackApiAnswer implements FetchResponse {
  readonly ok: boolean;
  readonly status: number;
  readonly statusText: string;
  readonly headers: AnswerHeaders;
  private used = false;

  constructor(
    private readonly answer: Dispatcher.ResponseData,
    readonly url: string,
    private readonly empty: boolean,
  ) {
    this.status = answer.statusCode;
    this.ok = answer.statusCode >= 200 && answer.statusCode < 300;
    this.statusText = answer.statusText ?? '';
    this.headers = new AnswerHeaders(answer.headers);
    if (empty) discard(answer);
  }

  /** The body, decoded; once, as a Response's body is read once. */
  private take(): Readable | undefined {
    if (this.used) throw new TypeError('Body is unusable: Body has already been read');
    this.used = true;
    return this.empty ? undefined : decodedBody(this.answer);
  }

  async text(): Promise<string> {
    const body = this.take();
    if (body === undefined) return '';
    // Not encoded: undici reads it as fetch's text() does (UTF-8, a byte order mark dropped).
    if (body === this.answer.body) return this.answer.body.text();
    const text = (await collect(body)).toString('utf8');
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const body = this.take();
    if (body === undefined) return new ArrayBuffer(0);
    const bytes = await collect(body);
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  }
}

async function collect(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
