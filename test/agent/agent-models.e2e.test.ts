// The turn loop end to end through the real SDKs against loopback fakes of each model API.
import { afterEach, describe, expect, it } from 'vitest';
import { createAgentRuntime } from '../../src/agent/index.js';
import { channelTurn, createHarness, FunctionToolExecutor, text, type Harness } from '../../src/app/agent-testing.js';
import { createModelRegistry } from '../../src/models/registry.js';
import { startFakeAnthropic } from '../fakes/models/anthropic-fake.js';
import { startFakeGemini } from '../fakes/models/gemini-fake.js';
import { startFakeOpenAI } from '../fakes/models/openai-fake.js';
import type { FakeModelOptions, FakeModelServer, FakeRequest } from '../fakes/models/server.js';

const KEY = 'agent:main:slack:channel:C1';

const apis: Array<{ api: 'anthropic' | 'openai' | 'gemini'; provider: string; start: (o?: FakeModelOptions) => Promise<FakeModelServer>; system: (r: FakeRequest) => string }> = [
  { api: 'anthropic', provider: 'anthropic', start: startFakeAnthropic, system: (r) => String(r.body.system) },
  // An OpenAI-compatible local server (Ollama, vLLM, …): its own provider name, no key.
  { api: 'openai', provider: 'ollama', start: startFakeOpenAI, system: (r) => String(r.body.messages[0].content) },
  { api: 'gemini', provider: 'gemini', start: startFakeGemini, system: (r) => JSON.stringify(r.body.systemInstruction ?? '') },
];

let server: FakeModelServer | undefined;
let h: Harness | undefined;
afterEach(async () => {
  await server?.close();
  await h?.cleanup();
  server = undefined;
  h = undefined;
});

async function setup(api: (typeof apis)[number], fake: FakeModelServer, models: Record<string, unknown> = {}) {
  const harness = await createHarness({
    models: {
      default: `${api.provider}/model-x`,
      providers: { [api.provider]: { api: api.api, baseUrl: fake.url } },
      retry: { baseDelayMs: 5, maxDelayMs: 20 },
      ...models,
    },
  });
  h = harness;
  const registry = createModelRegistry(harness.config, { ANTHROPIC_API_KEY: 'test-key', GEMINI_API_KEY: 'test-key' });
  return { harness, models: registry };
}

describe.each(apis)('agent through the $api API', (api) => {
  it('holds a tool-using conversation', async () => {
    server = await api.start({
      script: [
        { kind: 'reply', text: 'Checking the file.', toolCalls: [{ id: 'call-1', name: 'read', args: { path: 'notes.md' } }] },
        { kind: 'reply', text: 'The notes say: ship on Friday.' },
      ],
    });
    const { harness, models } = await setup(api, server);
    const tools = new FunctionToolExecutor({
      read: { parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }, run: () => text('ship on Friday') },
    });
    const deltas: string[] = [];
    const outcome = await createAgentRuntime({ ...harness.deps(undefined as never, tools), models }).runTurn({
      sessionKey: KEY,
      turn: channelTurn({ provider: 'slack' }),
      input: { text: 'what do the notes say?' },
      signal: new AbortController().signal,
      onTextDelta: (d) => deltas.push(d),
    });
    expect(outcome).toMatchObject({ status: 'completed', reply: 'The notes say: ship on Friday.', rounds: 2 });
    expect(deltas.join('')).toBe('Checking the file.The notes say: ship on Friday.');
    expect(tools.calls).toEqual([{ toolCallId: 'call-1', tool: 'read', args: { path: 'notes.md' } }]);
    expect(server.requests).toHaveLength(2);
    expect(JSON.stringify(server.requests[0]!.body)).toContain('"read"');
    expect(JSON.stringify(server.requests[1]!.body)).toContain('ship on Friday');
    const auth = server.requests[0]!.headers;
    if (api.api !== 'openai') expect(`${auth.authorization ?? ''} ${auth['x-api-key'] ?? ''} ${auth['x-goog-api-key'] ?? ''}`).toContain('test-key');
  });

  it('stops mid-turn when the signal aborts, while the model is still answering', async () => {
    // Held far longer than the test timeout: only an abort that really stops the call lets the test end.
    server = await api.start({ script: [{ kind: 'reply', text: 'too late', delayMs: 120_000 }] });
    const { harness, models } = await setup(api, server);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const outcome = await createAgentRuntime({ ...harness.deps(undefined as never, new FunctionToolExecutor({})), models }).runTurn({
      sessionKey: KEY,
      turn: channelTurn(),
      input: { text: 'hello' },
      signal: controller.signal,
    });
    expect(outcome).toMatchObject({ status: 'aborted', reply: '' });
  });

  it('retries 429 and 500 and then answers', async () => {
    server = await api.start({
      script: [
        { kind: 'error', status: 429, retryAfter: '0' },
        { kind: 'error', status: 500 },
        { kind: 'reply', text: 'Back again.' },
      ],
    });
    const { harness, models } = await setup(api, server);
    const outcome = await createAgentRuntime({ ...harness.deps(undefined as never, new FunctionToolExecutor({})), models }).runTurn({
      sessionKey: KEY,
      turn: channelTurn(),
      input: { text: 'hello' },
      signal: new AbortController().signal,
    });
    expect(outcome).toMatchObject({ status: 'completed', reply: 'Back again.' });
    expect(server.requests).toHaveLength(3);
  });

  it('posts a clear error after the last retry', async () => {
    server = await api.start({ respond: () => ({ kind: 'error', status: 503, message: 'upstream unavailable' }) });
    const { harness, models } = await setup(api, server, { retry: { attempts: 3, baseDelayMs: 1, maxDelayMs: 2 } });
    const outcome = await createAgentRuntime({ ...harness.deps(undefined as never, new FunctionToolExecutor({})), models }).runTurn({
      sessionKey: KEY,
      turn: channelTurn(),
      input: { text: 'hello' },
      signal: new AbortController().signal,
    });
    expect(outcome.status).toBe('failed');
    expect(outcome.reply).toMatch(new RegExp(`^⚠️ The model ${api.provider}/model-x returned a server error \\(HTTP 503\\) after 3 tries: .*upstream unavailable.*Please try again in a moment\\.$`));
    expect(server.requests).toHaveLength(3);
  });

  it('keeps a 200-message conversation inside a small context window', async () => {
    const WINDOW = 4_000;
    server = await api.start({
      contextWindowTokens: WINDOW,
      respond: (r) => (api.system(r).includes('running summary') ? { kind: 'reply', text: 'Summary: they discussed lorem ipsum at length.' } : { kind: 'reply', text: 'fresh answer' }),
    });
    const { harness, models } = await setup(api, server, { contextWindow: WINDOW, maxOutputTokens: 256 });
    for (let i = 0; i < 100; i++) {
      await harness.transcripts.append(KEY, [
        { kind: 'message', message: { role: 'user', content: [{ type: 'text', text: `question ${i}: ${'lorem ipsum '.repeat(12)}` }] } },
        { kind: 'message', message: { role: 'assistant', content: [{ type: 'text', text: `answer ${i}: ${'dolor sit '.repeat(14)}` }] } },
      ]);
    }
    const runtime = createAgentRuntime({ ...harness.deps(undefined as never, new FunctionToolExecutor({})), models });
    for (let turn = 0; turn < 3; turn++) {
      const outcome = await runtime.runTurn({ sessionKey: KEY, turn: channelTurn(), input: { text: `next ${turn}` }, signal: new AbortController().signal });
      expect(outcome).toMatchObject({ status: 'completed', reply: 'fresh answer' });
    }
    for (const r of server.requests) expect(r.tokens).toBeLessThanOrEqual(WINDOW);
    expect(server.requests.some((r) => api.system(r).includes('running summary'))).toBe(true);
    expect((await harness.transcripts.load(KEY))[0]?.kind).toBe('summary');
  });
});

describe.each(apis.filter((a) => a.api !== 'gemini'))('malformed tool arguments through the $api API', (api) => {
  it('become an error result the model recovers from', async () => {
    server = await api.start({
      script: [
        { kind: 'reply', toolCalls: [{ id: 'bad-1', name: 'read', args: '{"path": "notes.md"' }] },
        { kind: 'reply', toolCalls: [{ id: 'good-1', name: 'read', args: { path: 'notes.md' } }] },
        { kind: 'reply', text: 'Recovered.' },
      ],
    });
    const { harness, models } = await setup(api, server);
    const tools = new FunctionToolExecutor({ read: { parameters: { type: 'object', properties: { path: { type: 'string' } } }, run: () => text('content') } });
    const outcome = await createAgentRuntime({ ...harness.deps(undefined as never, tools), models }).runTurn({
      sessionKey: KEY,
      turn: channelTurn(),
      input: { text: 'read it' },
      signal: new AbortController().signal,
    });
    expect(outcome).toMatchObject({ status: 'completed', reply: 'Recovered.', rounds: 3 });
    expect(tools.calls.map((c) => c.toolCallId)).toEqual(['good-1']);
    expect(JSON.stringify(server.requests[1]!.body)).toContain('Invalid arguments for read: arguments are not valid JSON');
  });
});
