import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeOpenAI } from '../../test/fakes/models/openai-fake.js';
import type { FakeModelServer } from '../../test/fakes/models/server.js';
import { chatBody, chatBodyBytes, createOpenAIProvider, toOpenAIMessages } from './openai.js';
import { ModelCallError, type Message, type ModelRequest, type ModelTool } from './types.js';

// A compatible server (a `baseUrl`) is called directly; `route: 'sdk'` sends the same call
// through the OpenAI SDK. These tests hold the two to the same request, answer and errors.

const schema = { type: 'object', properties: { path: { type: 'string', description: 'a path' } }, required: ['path'] };
const tools: ModelTool[] = [
  { name: 'read', description: 'Read a file', parameters: schema },
  { name: 'list', description: 'List a folder — "quoted", ü', parameters: { type: 'object', properties: {} } },
];
const request = (extra: Partial<ModelRequest> = {}): ModelRequest => ({
  model: 'm-1',
  system: 'You are a test.',
  messages: [
    { role: 'user', content: [{ type: 'text', text: 'read a.txt' }] },
    { role: 'assistant', content: [{ type: 'toolCall', id: 'c1', name: 'read', args: { path: 'a.txt' } }] },
    { role: 'toolResult', toolCallId: 'c1', toolName: 'read', content: [{ type: 'text', text: 'hi' }], isError: false },
  ],
  tools,
  maxOutputTokens: 256,
  ...extra,
});

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0)) await c();
});
async function fake(...script: Parameters<typeof startFakeOpenAI>): Promise<FakeModelServer> {
  const server = await startFakeOpenAI(...script);
  cleanup.push(() => server.close());
  return server;
}
async function raw(handler: (res: ServerResponse) => void): Promise<{ url: string; closed: () => boolean }> {
  let closed = false;
  const server: Server = createServer((req, res) => {
    req.resume();
    res.on('close', () => (closed = true));
    handler(res);
  });
  cleanup.push(() => {
    server.closeAllConnections();
    return new Promise((r) => server.close(r));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, closed: () => closed };
}
const options = (url: string) => ({ name: 'local', apiKey: 'k', baseUrl: url, timeoutMs: 5000 });
const outcome = (p: Promise<unknown>) =>
  p.then(
    () => 'no error',
    (e: unknown) => (e instanceof ModelCallError ? { kind: e.kind, message: e.message, status: e.details.status, retryAfterMs: e.details.retryAfterMs } : e),
  );

describe('the request body', () => {
  it('is, field for field and in order, what the SDK encoded from the request object', async () => {
    const server = await fake();
    for (const official of [false, true]) {
      const r = request();
      // What the adapter sent before: the SDK's own encoding of the object.
      await new OpenAI({ apiKey: 'k', baseURL: server.url, maxRetries: 0 }).chat.completions.create({
        model: r.model,
        messages: toOpenAIMessages(r.system, r.messages),
        ...(official ? { max_completion_tokens: r.maxOutputTokens } : { max_tokens: r.maxOutputTokens }),
        tools: r.tools.map((t) => ({ type: 'function' as const, function: { name: t.name, description: t.description, parameters: t.parameters } })),
        stream: true,
        stream_options: { include_usage: true },
      });
      const sdk = server.requests.at(-1)!.body;
      expect(chatBody(r, official)).toBe(JSON.stringify(sdk));
    }
    // Without tools there is no `tools` field.
    expect(JSON.parse(chatBody(request({ tools: [] }), false))).not.toHaveProperty('tools');
  });

  it('as bytes is the string encoded, whichever tool list came before (a list encoded once is reused only for the same parts)', () => {
    const other = { ...tools[0]!, name: 'read2', description: 'Other' };
    const lists = [tools, [tools[0]!], [tools[0]!, other], [], tools, [other, tools[0]!], [tools[0]!]];
    for (const official of [false, true])
      for (const list of lists) {
        const r = request({ tools: list });
        expect(chatBodyBytes(r, official).toString('utf8')).toBe(chatBody(r, official));
      }
  });

  it('reuses a tool part only for the same schema, name and description', () => {
    const first = JSON.parse(chatBody(request(), false)).tools;
    expect(JSON.parse(chatBody(request(), false)).tools).toEqual(first);
    // Two tools sharing one schema object keep their own names and descriptions.
    const shared = JSON.parse(chatBody(request({ tools: [tools[0]!, { ...tools[0]!, name: 'read2', description: 'Other' }] }), false)).tools;
    expect(shared.map((t: { function: { name: string; description: string } }) => [t.function.name, t.function.description])).toEqual([
      ['read', 'Read a file'],
      ['read2', 'Other'],
    ]);
  });

  const text = (t: string) => ({ type: 'text' as const, text: t });
  const image = { type: 'image' as const, data: 'iVBORw0KGgo=', mimeType: 'image/png' };
  it.each<[string, Message[]]>([
    ['no messages', []],
    ['a user message of several texts, escapes and non-ASCII', [{ role: 'user', content: [text('a "quoted"\n\tline'), text('größe 日本 🙂 \u2028'), text('')] }]],
    ['an empty user message', [{ role: 'user', content: [] }]],
    ['an answer of text only, of calls only, of both, and empty', [
      { role: 'assistant', content: [text('part one, '), text('part two')] },
      { role: 'assistant', content: [{ type: 'toolCall', id: 'c1', name: 'read', args: { path: 'a "b"' } }, { type: 'toolCall', id: 'c2', name: 'list' }] },
      { role: 'assistant', content: [text('let me look'), { type: 'toolCall', id: 'c3', name: 'read', rawArgs: '{"path": broken', argsError: 'bad JSON' }] },
      { role: 'assistant', content: [] },
    ]],
    ['tool results: several texts, an empty error, an empty success', [
      { role: 'toolResult', toolCallId: 'c1', toolName: 'read', content: [text('line 1'), text('line 2')], isError: false },
      { role: 'toolResult', toolCallId: 'c2', toolName: 'list', content: [], isError: true },
      { role: 'toolResult', toolCallId: 'c3', toolName: 'read', content: [text('')], isError: false },
    ]],
    ['images from a person and from a tool', [
      { role: 'user', content: [text('look'), image] },
      { role: 'toolResult', toolCallId: 'c1', toolName: 'shot', content: [image], isError: false },
    ]],
  ])('as bytes is the string encoded, whatever the conversation holds: %s', (_name, messages) => {
    // Each system prompt twice: the second time its encoding is the one kept from the first.
    for (const system of ['You are a test.', 'You are a test.', 'Rules:\n- "be" brief — ü', 'Rules:\n- "be" brief — ü', 'You are a test.'])
      for (const extra of [{}, { model: 'modèle/ü' }, { maxOutputTokens: undefined as unknown as number }, { tools: [] }])
        for (const official of [false, true]) {
          const r = request({ system, messages, ...extra });
          expect(chatBodyBytes(r, official).toString('utf8')).toBe(chatBody(r, official));
        }
  });

  it('direct and through the SDK, the server receives the same body, key and content type', async () => {
    const server = await fake();
    await createOpenAIProvider(options(server.url), 'direct').complete(request(), new AbortController().signal);
    await createOpenAIProvider(options(server.url), 'sdk').complete(request(), new AbortController().signal);
    const [direct, sdk] = server.requests;
    expect(direct!.path).toBe('/v1/chat/completions');
    expect(JSON.stringify(direct!.body)).toBe(JSON.stringify(sdk!.body));
    for (const h of ['authorization', 'content-type']) expect(direct!.headers[h]).toBe(sdk!.headers[h]);
  });
});

describe('direct and through the SDK, the same answers', () => {
  const replies = [
    { kind: 'reply' as const, text: 'Hello there, friend.' },
    { kind: 'reply' as const, toolCalls: [{ id: 'c2', name: 'read', args: { path: 'b.txt' } }] },
    { kind: 'reply' as const, text: 'Let me look.', toolCalls: [{ id: 'c3', name: 'list', args: '{"bad json' }] },
  ];
  it.each(replies)('reply %#', async (reply) => {
    const server = await fake({ script: [reply, reply] });
    const run = async (route: 'direct' | 'sdk') => {
      const deltas: string[] = [];
      const res = await createOpenAIProvider(options(server.url), route).complete(request({ onTextDelta: (d) => deltas.push(d) }), new AbortController().signal);
      return { res, deltas };
    };
    const direct = await run('direct');
    expect(direct).toEqual(await run('sdk'));
    if (reply.text) expect(direct.deltas.join('')).toBe(reply.text);
  });

  it('text split between two writes inside a character arrives whole', async () => {
    const text = 'héllo ✓ 🎉';
    const s = await raw((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const event = Buffer.from(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: text }, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`);
      const cut = event.indexOf(Buffer.from('🎉')) + 2;
      res.write(event.subarray(0, cut));
      setTimeout(() => res.end(event.subarray(cut)), 20);
    });
    const res = await createOpenAIProvider(options(s.url), 'direct').complete(request(), new AbortController().signal);
    expect(res.message.content).toEqual([{ type: 'text', text }]);
  });
});

describe('direct and through the SDK, the same errors', () => {
  const statuses: Array<[string, number, string | undefined]> = [
    ['400', 400, undefined],
    ['401', 401, undefined],
    ['404', 404, undefined],
    ['429 with Retry-After', 429, '3'],
    ['500', 500, undefined],
    ['503', 503, undefined],
  ];
  it.each(statuses)('%s', async (_name, status, retryAfter) => {
    const server = await fake({ script: [0, 1].map(() => ({ kind: 'error' as const, status, message: `scripted ${status}`, ...(retryAfter ? { retryAfter } : {}) })) });
    const direct = await outcome(createOpenAIProvider(options(server.url), 'direct').complete(request(), new AbortController().signal));
    expect(direct).toEqual(await outcome(createOpenAIProvider(options(server.url), 'sdk').complete(request(), new AbortController().signal)));
    expect(direct).toMatchObject({ status });
  });

  const answers: Array<[string, (res: ServerResponse) => void]> = [
    ['an error status with a body that is not JSON', (res) => res.writeHead(502, { 'content-type': 'text/plain' }).end('Bad gateway\nupstream down')],
    ['an error event inside the stream', (res) => res.writeHead(200, { 'content-type': 'text/event-stream' }).end('data: {"error":{"message":"overloaded mid-stream","type":"server_error"}}\n\n')],
    ['an event that is not JSON', (res) => res.writeHead(200, { 'content-type': 'text/event-stream' }).end('data: {not json\n\n')],
    ['a redirect to another host', (res) => res.writeHead(302, { location: 'http://203.0.113.1/v1/chat/completions' }).end()],
  ];
  it.each(answers)('%s', async (_name, handler) => {
    const s = await raw(handler);
    const direct = await outcome(createOpenAIProvider(options(s.url), 'direct').complete(request(), new AbortController().signal));
    expect(direct).toEqual(await outcome(createOpenAIProvider(options(s.url), 'sdk').complete(request(), new AbortController().signal)));
    expect(direct).toMatchObject({ kind: expect.any(String) });
  });

  it('a refused connection is a network error both ways', async () => {
    const s = await raw(() => {});
    const url = s.url;
    await cleanup.pop()!();
    const direct = await outcome(createOpenAIProvider(options(url), 'direct').complete(request(), new AbortController().signal));
    expect(direct).toEqual(await outcome(createOpenAIProvider(options(url), 'sdk').complete(request(), new AbortController().signal)));
    expect(direct).toMatchObject({ kind: 'network' });
  });

  it('a server that sends no headers within the timeout is a timeout both ways', async () => {
    const s = await raw(() => {});
    const opts = { ...options(s.url), timeoutMs: 150 };
    const direct = await outcome(createOpenAIProvider(opts, 'direct').complete(request(), new AbortController().signal));
    expect(direct).toEqual(await outcome(createOpenAIProvider(opts, 'sdk').complete(request(), new AbortController().signal)));
    expect(direct).toMatchObject({ kind: 'timeout' });
  });
});

describe('direct: abort', () => {
  it('an abort while the answer streams ends the call as an AbortError and closes the connection', async () => {
    const s = await raw((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'partial' }, finish_reason: null }] })}\n\n`);
    });
    const controller = new AbortController();
    const err = await createOpenAIProvider(options(s.url), 'direct')
      .complete(request({ onTextDelta: () => controller.abort() }), controller.signal)
      .catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(DOMException);
    expect((err as DOMException).name).toBe('AbortError');
    await expect.poll(() => s.closed()).toBe(true);
  });

  it('a delta the caller fails on ends the call with its failure, not retryable, and closes the connection', async () => {
    const s = await raw((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'partial' }, finish_reason: null }] })}\n\n`);
    });
    const err = await createOpenAIProvider(options(s.url), 'direct')
      .complete(request({ onTextDelta: () => { throw new Error('the chat refused the edit'); } }), new AbortController().signal)
      .catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(ModelCallError);
    expect((err as ModelCallError).retryable).toBe(false);
    await expect.poll(() => s.closed()).toBe(true);
  });

  it('an already aborted signal sends nothing', async () => {
    const server = await fake();
    const controller = new AbortController();
    controller.abort();
    const err = await createOpenAIProvider(options(server.url), 'direct')
      .complete(request(), controller.signal)
      .catch((e: unknown) => e as Error);
    expect((err as DOMException).name).toBe('AbortError');
    expect(server.requests).toHaveLength(0);
  });

  it('leaves no listener on the caller signal after the call', async () => {
    const server = await fake({ script: [{ kind: 'reply', text: 'a' }, { kind: 'error', status: 500 }] });
    const controller = new AbortController();
    let added = 0;
    let removed = 0;
    const add = controller.signal.addEventListener.bind(controller.signal);
    const remove = controller.signal.removeEventListener.bind(controller.signal);
    controller.signal.addEventListener = ((...a: Parameters<typeof add>) => (added++, add(...a))) as typeof add;
    controller.signal.removeEventListener = ((...a: Parameters<typeof remove>) => (removed++, remove(...a))) as typeof remove;
    const provider = createOpenAIProvider(options(server.url), 'direct');
    await provider.complete(request(), controller.signal);
    await provider.complete(request(), controller.signal).catch(() => {});
    expect(added).toBe(2);
    expect(removed).toBe(added);
  });
});
