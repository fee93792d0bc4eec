import { randomUUID } from 'node:crypto';
import OpenAI from 'openai';
import type { ChatCompletionChunk, ChatCompletionContentPart, ChatCompletionMessageParam } from 'openai/resources/chat/completions/completions';
import { finished, type Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type { Dispatcher } from 'undici';
import type { Stream } from 'openai/core/streaming';
import type { ClientOptions } from './anthropic.js';
import { parseToolArgs } from './errors.js';
import type { AssistantMessage, Message, ModelProvider, ModelRequest, ModelResponse, ModelTool, StopReason, ToolCallPart, Usage } from './types.js';
import { SseDecoder } from './sse.js';
import { collectStream, type EventFeed } from './stream.js';
import { decodedBody, leanFetch, leanRequest } from '../net/lean-fetch.js';
import { usageFromOpenAI } from './usage.js';

/**
 * OpenAI Chat Completions, and every server that speaks it (Ollama, vLLM, llama.cpp, LM Studio)
 * through `baseUrl`. A local server may need no key; the SDK still wants a string.
 *
 * The request body is encoded once per call by `chatBody`, with each tool's part (most of the
 * request: the catalog is about 18 KiB) encoded once per projected schema and reused every
 * turn. OpenAI itself (no `baseUrl`) is called through the SDK with that body as is. A
 * compatible server is called directly (`streamChat`; `route` 'sdk' sends it through the SDK too, for
 * the tests that hold the two to the same request and errors): one undici request, the answer's event
 * stream read from the Node stream. That leaves out the SDK's request building and its web
 * streams, which cost about as much CPU per message as the rest of the model call; the errors
 * are the SDK's own classes, built as the SDK builds them, so classification and retries stay.
 */
export function createOpenAIProvider(options: ClientOptions, route: 'sdk' | 'direct' = options.baseUrl === undefined ? 'sdk' : 'direct'): ModelProvider {
  // Compatible servers know the older `max_tokens`; OpenAI's reasoning models only `max_completion_tokens`.
  const official = options.baseUrl === undefined;
  let client: OpenAI | undefined;
  const sdk = () =>
    (client ??= new OpenAI({
      apiKey: options.apiKey ?? 'none',
      baseURL: options.baseUrl ?? null,
      timeout: options.timeoutMs,
      maxRetries: 0,
      // undici's request under a web Response: the same exchange for less CPU (see lean-fetch.ts).
      fetch: leanFetch(),
    }));
  return {
    name: options.name,
    api: 'openai',
    async complete(request, signal) {
      let send: () => Promise<AsyncIterable<ChatCompletionChunk> | EventFeed<ChatCompletionChunk>>;
      if (route === 'sdk' || options.baseUrl === undefined) {
        const body = chatBody(request, official);
        send = () =>
          sdk().post<Stream<ChatCompletionChunk>>('/chat/completions', {
            body,
            // A string body with its content type is sent verbatim (no second encoding).
            headers: { 'content-type': 'application/json' },
            stream: true,
            signal,
          });
      } else {
        const body = chatBodyBytes(request, official);
        send = () => streamChat(chatUrl(options.baseUrl!), options, body, signal);
      }
      return collectStream(
        send,
        new ChunkAccumulator(),
        request,
        signal,
      );
    },
  };
}

/** The SDK's join of base URL and path. */
export const chatUrl = (baseUrl: string): string => baseUrl + (baseUrl.endsWith('/') ? 'chat/completions' : '/chat/completions');

const toolParts = new WeakMap<object, { name: string; description: string; json: string }>();

/**
 * One tool as the request carries it, encoded once per projected schema (projectTools hands the
 * same schema object every turn and nothing changes it after projection); the name and
 * description are compared, so a schema shared by two tools is still encoded right.
 */
function toolPart(tool: ModelTool): string {
  const cached = toolParts.get(tool.parameters);
  if (cached && cached.name === tool.name && cached.description === tool.description) return cached.json;
  const json = JSON.stringify({ type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.parameters } });
  toolParts.set(tool.parameters, { name: tool.name, description: tool.description, json });
  return json;
}

/** The Chat Completions request, in the fields and order the SDK sent them. */
export function chatBody(request: ModelRequest, official: boolean): string {
  const { head, parts } = bodyPieces(request, official);
  return `${head}${parts.length > 0 ? `,"tools":[${parts.join(',')}]` : ''}${BODY_TAIL}`;
}

/**
 * `chatBody` as the UTF-8 bytes sent (the same bytes), written into one buffer: the tool list,
 * most of the request, is encoded once for the same parts and the system message once for the
 * same prompt (both the same turn after turn); only the conversation is encoded anew. No
 * intermediate buffers: allocating one was a good part of the cost.
 */
export function chatBodyBytes(request: ModelRequest, official: boolean): Buffer {
  const { model, maxOutputTokens, system } = request;
  if (typeof model !== 'string' || typeof system !== 'string' || (maxOutputTokens !== undefined && typeof maxOutputTokens !== 'number')) {
    const { head, parts } = bodyPieces(request, official);
    return parts.length > 0 ? Buffer.concat([Buffer.from(head), toolsBytes(parts), BODY_TAIL_BYTES]) : Buffer.from(head + BODY_TAIL);
  }
  const parts: string[] = [];
  for (const t of request.tools) parts.push(toolPart(t));
  const tools = parts.length > 0 ? toolsBytes(parts) : undefined;
  // As JSON.stringify writes the object bodyPieces encodes: model, messages (the system message
  // first), then the limit, left out when undefined.
  const start = `{"model":${JSON.stringify(model)},"messages":[`;
  const conversation = JSON.stringify(openAIConversation(request.messages));
  const limit = maxOutputTokens === undefined ? '' : `,"${official ? 'max_completion_tokens' : 'max_tokens'}":${JSON.stringify(maxOutputTokens)}`;
  const rest = `${conversation.length > 2 ? `,${conversation.slice(1, -1)}` : ''}]${limit}`;
  const systemPart = systemBytes(system);
  const startBytes = Buffer.byteLength(start);
  const restBytes = Buffer.byteLength(rest);
  const out = Buffer.allocUnsafe(startBytes + systemPart.length + restBytes + (tools?.length ?? 0) + BODY_TAIL_BYTES.length);
  let at = out.write(start, 0);
  at += systemPart.copy(out, at);
  at += out.write(rest, at);
  if (tools) at += tools.copy(out, at);
  BODY_TAIL_BYTES.copy(out, at);
  return out;
}

/** The system message's bytes as encoded last time, for the same prompt (compared whole). */
let systemEncoded: { system: string; bytes: Buffer } | undefined;

function systemBytes(system: string): Buffer {
  if (systemEncoded?.system === system) return systemEncoded.bytes;
  const bytes = Buffer.from(JSON.stringify({ role: 'system', content: system }));
  systemEncoded = { system, bytes };
  return bytes;
}

const BODY_TAIL = ',"stream":true,"stream_options":{"include_usage":true}}';
const BODY_TAIL_BYTES = Buffer.from(BODY_TAIL);

/** The body up to its tools (its closing brace left off), and each tool's encoded part. */
function bodyPieces(request: ModelRequest, official: boolean): { head: string; parts: string[] } {
  const head = JSON.stringify({
    model: request.model,
    messages: toOpenAIMessages(request.system, request.messages),
    ...(official ? { max_completion_tokens: request.maxOutputTokens } : { max_tokens: request.maxOutputTokens }),
  });
  const parts: string[] = [];
  for (const t of request.tools) parts.push(toolPart(t));
  return { head: head.slice(0, -1), parts };
}

/** Tool lists encoded lately, each by its parts (the strings `toolPart` keeps: compared as they are). */
const toolLists: Array<{ parts: readonly string[]; bytes: Buffer }> = [];
const TOOL_LISTS = 16;

function toolsBytes(parts: readonly string[]): Buffer {
  const hit = toolLists.find((l) => l.parts.length === parts.length && l.parts.every((p, i) => p === parts[i]));
  if (hit) return hit.bytes;
  const bytes = Buffer.from(`,"tools":[${parts.join(',')}]`);
  if (toolLists.length >= TOOL_LISTS) toolLists.shift();
  toolLists.push({ parts, bytes });
  return bytes;
}

/**
 * POSTs `body` to a compatible server's chat endpoint and hands over the chunks of its event stream (`chunkFeed`).
 * As the SDK: the timeout runs until the answer's headers (then a `APIConnectionTimeoutError`);
 * a failed connection is an `APIConnectionError`; a status outside 2xx is the SDK's error for
 * that status (`APIError.generate`, with the answer's headers for Retry-After); an event whose
 * data carries `error` is an `APIError`; `[DONE]` ends the chunks.
 */
async function streamChat(url: string, options: ClientOptions, body: Uint8Array, signal: AbortSignal): Promise<EventFeed<ChatCompletionChunk>> {
  const controller = new AbortController();
  const forward = () => controller.abort(signal.reason);
  if (signal.aborted) forward();
  else signal.addEventListener('abort', forward, { once: true });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, options.timeoutMs);
  const release = () => signal.removeEventListener('abort', forward);
  let answer: Dispatcher.ResponseData;
  try {
    answer = await leanRequest(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${options.apiKey ?? 'none'}` },
      body,
      signal: controller.signal,
    });
  } catch (err) {
    release();
    if (signal.aborted) throw err;
    if (timedOut) throw new OpenAI.APIConnectionTimeoutError();
    throw new OpenAI.APIConnectionError({ cause: err as Error });
  } finally {
    clearTimeout(timer);
  }
  const status = answer.statusCode;
  if (status < 200 || status > 299) {
    try {
      const text = await readAll(decodedBody(answer));
      const json = safeJson(text);
      throw OpenAI.APIError.generate(status, json as object | undefined, json === undefined ? text : undefined, webHeaders(answer.headers));
    } finally {
      release();
    }
  }
  return chunkFeed(decodedBody(answer), answer.headers, release);
}

async function readAll(body: Readable): Promise<string> {
  const utf8 = new StringDecoder('utf8');
  let text = '';
  for await (const piece of body) text += utf8.write(piece as Buffer);
  return text + utf8.end();
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function webHeaders(raw: Dispatcher.ResponseData['headers']): Headers {
  const headers = new Headers();
  for (const name in raw) {
    const value = raw[name];
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else headers.append(name, value);
  }
  return headers;
}

/**
 * The chunks of a server-sent event stream, parsed as the SDK parses them (see sse.ts), handed
 * to the caller as each piece of the answer arrives: read from the stream's events, not its
 * async iterator, and with no async generator between (each cost promises per piece and chunk).
 */
function chunkFeed(body: Readable, headers: Dispatcher.ResponseData['headers'], release: () => void): EventFeed<ChatCompletionChunk> {
  return {
    each: (take) =>
      new Promise<void>((resolve, reject) => {
        const events = new SseDecoder();
        // Text across pieces: a character may be split between two of them.
        const utf8 = new StringDecoder('utf8');
        let done = false;
        let settled = false;
        const settle = (err?: unknown) => {
          if (settled) return;
          settled = true;
          body.off('data', onPiece);
          release();
          // Left early (an error, a consumer that failed): the connection is not read further.
          if (!body.readableEnded) body.destroy();
          if (err === undefined) resolve();
          else reject(err);
        };
        const onPiece = (piece: Buffer) => {
          try {
            for (const event of events.push(utf8.write(piece))) {
              if (done || settled) continue;
              if (event.data.startsWith('[DONE]')) {
                done = true;
                continue;
              }
              // The Assistants API's `thread.*` events never come from the chat endpoint.
              if (event.event !== null && event.event.startsWith('thread.')) continue;
              const data = JSON.parse(event.data) as ChatCompletionChunk & { error?: unknown };
              if (data && data.error) throw new OpenAI.APIError(undefined, data.error as object, undefined, webHeaders(headers));
              take(data);
            }
          } catch (err) {
            settle(err);
          }
        };
        body.on('data', onPiece);
        // The end, an error (an abort destroys the body with it) or a close before the end.
        finished(body, (err) => settle(err ?? undefined));
      }),
  };
}

class ChunkAccumulator {
  private text = '';
  private calls: Array<{ id: string; name: string; args: string }> = [];
  private finish_: string | null = null;
  private usage: Usage = { inputTokens: 0, outputTokens: 0 };

  add(chunk: ChatCompletionChunk): string | undefined {
    if (chunk.usage) this.usage = usageFromOpenAI(chunk.usage);
    const choice = chunk.choices[0];
    if (!choice) return undefined;
    if (choice.finish_reason) this.finish_ = choice.finish_reason;
    for (const tc of choice.delta.tool_calls ?? []) {
      const slot = (this.calls[tc.index] ??= { id: '', name: '', args: '' });
      if (tc.id) slot.id = tc.id;
      if (tc.function?.name) slot.name += tc.function.name;
      if (tc.function?.arguments) slot.args += tc.function.arguments;
    }
    const delta = choice.delta.content;
    if (delta) this.text += delta;
    return delta ?? undefined;
  }

  finish(): ModelResponse {
    const content: AssistantMessage['content'] = [];
    if (this.text) content.push({ type: 'text', text: this.text });
    this.calls.forEach((c, i) => {
      if (!c) return;
      const parsed = parseToolArgs(c.args);
      // Some compatible servers omit ids; the loop needs one to pair the result.
      const call: ToolCallPart = { type: 'toolCall', id: c.id || `call_${randomUUID().slice(0, 8)}_${i}`, name: c.name };
      if ('args' in parsed) call.args = parsed.args;
      else Object.assign(call, { argsError: parsed.error, rawArgs: c.args });
      content.push(call);
    });
    return { message: { role: 'assistant', content }, stopReason: stopReason(this.finish_, this.calls.length > 0), usage: this.usage };
  }
}

function stopReason(reason: string | null, hasCalls: boolean): StopReason {
  if (reason === 'tool_calls' || reason === 'function_call' || (hasCalls && reason === 'stop')) return 'toolUse';
  if (reason === 'stop') return 'end';
  if (reason === 'length') return 'maxTokens';
  return hasCalls ? 'toolUse' : 'other';
}

const imageUrl = (data: string, mimeType: string): ChatCompletionContentPart => ({
  type: 'image_url',
  image_url: { url: `data:${mimeType};base64,${data}` },
});

/** Tool messages carry text only: images a tool returned follow as a user message. */
export function toOpenAIMessages(system: string, messages: Message[]): ChatCompletionMessageParam[] {
  return [{ role: 'system', content: system }, ...openAIConversation(messages)];
}

/** `toOpenAIMessages` after its system message. */
function openAIConversation(messages: Message[]): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [];
  const pendingImages: ChatCompletionContentPart[] = [];
  const flushImages = () => {
    if (pendingImages.length === 0) return;
    out.push({ role: 'user', content: [{ type: 'text', text: 'Images returned by the tool calls above:' }, ...pendingImages.splice(0)] });
  };
  for (const message of messages) {
    if (message.role !== 'toolResult') flushImages();
    if (message.role === 'user') {
      const onlyText = message.content.every((p) => p.type === 'text');
      out.push({
        role: 'user',
        content: onlyText
          ? message.content.map((p) => (p.type === 'text' ? p.text : '')).join('\n')
          : message.content.map((p) => (p.type === 'text' ? { type: 'text' as const, text: p.text } : imageUrl(p.data, p.mimeType))),
      });
    } else if (message.role === 'assistant') {
      const text = message.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
      const calls = message.content.flatMap((p) => (p.type === 'toolCall' ? [p] : []));
      out.push({
        role: 'assistant',
        content: text || null,
        ...(calls.length > 0
          ? {
              tool_calls: calls.map((c) => ({
                id: c.id,
                type: 'function' as const,
                function: { name: c.name, arguments: c.rawArgs ?? JSON.stringify(c.args ?? {}) },
              })),
            }
          : {}),
      });
    } else {
      const text = message.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n');
      for (const p of message.content) if (p.type === 'image') pendingImages.push(imageUrl(p.data, p.mimeType));
      out.push({ role: 'tool', tool_call_id: message.toolCallId, content: text || (message.isError ? 'error' : 'ok') });
    }
  }
  flushImages();
  return out;
}
