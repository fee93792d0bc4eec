import { afterEach, describe, expect, it } from 'vitest';
import { startFakeAnthropic } from '../../test/fakes/models/anthropic-fake.js';
import { startFakeGemini } from '../../test/fakes/models/gemini-fake.js';
import { startFakeOpenAI } from '../../test/fakes/models/openai-fake.js';
import type { FakeModelOptions, FakeModelServer } from '../../test/fakes/models/server.js';
import { createAnthropicProvider } from './anthropic.js';
import { createGeminiProvider } from './gemini.js';
import { createOpenAIProvider } from './openai.js';
import { ModelCallError, type Message, type ModelProvider, type ModelRequest } from './types.js';

const dialects: Array<{
  api: string;
  start: (o?: FakeModelOptions) => Promise<FakeModelServer>;
  make: (url: string) => ModelProvider;
}> = [
  { api: 'anthropic', start: startFakeAnthropic, make: (url) => createAnthropicProvider({ name: 'anthropic', apiKey: 'k', baseUrl: url, timeoutMs: 5000 }) },
  { api: 'openai', start: startFakeOpenAI, make: (url) => createOpenAIProvider({ name: 'local', apiKey: undefined, baseUrl: url, timeoutMs: 5000 }) },
  { api: 'gemini', start: startFakeGemini, make: (url) => createGeminiProvider({ name: 'gemini', apiKey: 'k', baseUrl: url, timeoutMs: 5000 }) },
];

const tool = { name: 'read', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } };
const request = (messages: Message[], extra: Partial<ModelRequest> = {}): ModelRequest => ({
  model: 'm-1',
  system: 'You are a test.',
  messages,
  tools: [tool],
  maxOutputTokens: 256,
  ...extra,
});

let server: FakeModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe.each(dialects)('$api adapter through the real SDK', ({ api, start, make }) => {
  it('streams text deltas and returns the assembled message', async () => {
    server = await start({ script: [{ kind: 'reply', text: 'Hello there, friend.' }] });
    const deltas: string[] = [];
    const res = await make(server.url).complete(
      request([{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], { onTextDelta: (d) => deltas.push(d) }),
      new AbortController().signal,
    );
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe('Hello there, friend.');
    expect(res.message.content).toEqual([{ type: 'text', text: 'Hello there, friend.' }]);
    expect(res.stopReason).toBe('end');
    expect(res.usage.inputTokens).toBeGreaterThan(0);
  });

  it('returns tool calls with parsed arguments and sends results back in the dialect', async () => {
    server = await start({ script: [{ kind: 'reply', toolCalls: [{ id: 'c1', name: 'read', args: { path: 'a.txt' } }] }] });
    const provider = make(server.url);
    const first = await provider.complete(request([{ role: 'user', content: [{ type: 'text', text: 'read a.txt' }] }]), new AbortController().signal);
    expect(first.stopReason).toBe('toolUse');
    expect(first.message.content).toEqual([{ type: 'toolCall', id: 'c1', name: 'read', args: { path: 'a.txt' } }]);

    server.push({ kind: 'reply', text: 'It says hi.' });
    await provider.complete(
      request([
        { role: 'user', content: [{ type: 'text', text: 'read a.txt' }] },
        first.message,
        { role: 'toolResult', toolCallId: 'c1', toolName: 'read', content: [{ type: 'text', text: 'hi' }], isError: false },
      ]),
      new AbortController().signal,
    );
    const sent = JSON.stringify(server.requests[1]?.body);
    expect(sent).toContain('c1');
    expect(sent).toContain('"hi"');
    expect(sent).toContain('read');
  });

  it('classifies a 429 with Retry-After as retryable and reads the hint', async () => {
    server = await start({ script: [{ kind: 'error', status: 429, retryAfter: '2', message: 'slow down' }] });
    const err = await make(server.url)
      .complete(request([{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]), new AbortController().signal)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelCallError);
    const e = err as ModelCallError;
    expect(e.kind).toBe('rateLimited');
    expect(e.retryable).toBe(true);
    // The Gemini SDK drops response headers from its errors, so only the others carry the hint.
    if (api !== 'gemini') expect(e.details.retryAfterMs).toBe(2000);
    expect(server.requests).toHaveLength(1);
  });

  it('classifies a 500 as a retryable server error and a 401 as not retryable', async () => {
    server = await start({ script: [{ kind: 'error', status: 500 }, { kind: 'error', status: 401 }] });
    const provider = make(server.url);
    const call = () =>
      provider.complete(request([{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]), new AbortController().signal).then(
        () => new ModelCallError('other', 'expected a failure'),
        (e: unknown) => e as ModelCallError,
      );
    const e500 = await call();
    expect([e500.kind, e500.retryable]).toEqual(['server', true]);
    const e401 = await call();
    expect([e401.kind, e401.retryable]).toEqual(['auth', false]);
  });

  it('stops waiting when the signal aborts', async () => {
    server = await start({ script: [{ kind: 'reply', text: 'late', delayMs: 5000 }] });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const err = await make(server.url)
      .complete(request([{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]), controller.signal)
      .catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(ModelCallError);
  });
});

describe.each(dialects.filter((d) => d.api !== 'gemini'))('$api malformed tool-call JSON', ({ start, make }) => {
  it('keeps the raw text and an argsError instead of throwing', async () => {
    server = await start({ script: [{ kind: 'reply', toolCalls: [{ id: 'c9', name: 'read', args: '{"path": "a.txt"' }] }] });
    const res = await make(server.url).complete(request([{ role: 'user', content: [{ type: 'text', text: 'x' }] }]), new AbortController().signal);
    const call = res.message.content[0];
    expect(call).toMatchObject({ type: 'toolCall', id: 'c9', name: 'read', rawArgs: '{"path": "a.txt"' });
    expect(call && 'argsError' in call && call.argsError).toMatch(/not valid JSON/);
  });
});
