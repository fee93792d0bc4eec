// Each API's own usage fields, read into one meaning: table-driven over the providers' documented
// shapes, and over what the fake servers answer to a non-streamed request (the streamed path is
// covered end to end in test/agent/usage-budgets.e2e.test.ts).
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeAnthropic } from '../../test/fakes/models/anthropic-fake.js';
import { startFakeGemini } from '../../test/fakes/models/gemini-fake.js';
import { startFakeOpenAI } from '../../test/fakes/models/openai-fake.js';
import type { FakeModelServer } from '../../test/fakes/models/server.js';
import type { Usage } from './types.js';
import { usageFromAnthropic, usageFromGemini, usageFromOpenAI } from './usage.js';

const cases: Array<[string, (u: unknown) => Usage, unknown, Usage]> = [
  ['openai: plain', usageFromOpenAI, { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }, { inputTokens: 10, outputTokens: 5 }],
  [
    'openai: cached and reasoning are subsets of the totals',
    usageFromOpenAI,
    { prompt_tokens: 100, completion_tokens: 40, prompt_tokens_details: { cached_tokens: 64 }, completion_tokens_details: { reasoning_tokens: 30 } },
    { inputTokens: 100, outputTokens: 40, cachedInputTokens: 64, reasoningTokens: 30 },
  ],
  ['openai: zero details are left out', usageFromOpenAI, { prompt_tokens: 3, completion_tokens: 1, prompt_tokens_details: { cached_tokens: 0 } }, { inputTokens: 3, outputTokens: 1 }],
  ['openai: nothing reported', usageFromOpenAI, undefined, { inputTokens: 0, outputTokens: 0 }],
  ['openai: nonsense is not a count', usageFromOpenAI, { prompt_tokens: '12', completion_tokens: -4 }, { inputTokens: 0, outputTokens: 0 }],
  ['anthropic: plain', usageFromAnthropic, { input_tokens: 10, output_tokens: 5 }, { inputTokens: 10, outputTokens: 5 }],
  [
    'anthropic: cache reads and writes are added to input_tokens (which excludes them)',
    usageFromAnthropic,
    { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 200, cache_creation_input_tokens: 50 },
    { inputTokens: 260, outputTokens: 5, cachedInputTokens: 200, cacheWriteTokens: 50 },
  ],
  ['anthropic: null cache fields (a message_delta)', usageFromAnthropic, { input_tokens: 7, output_tokens: 2, cache_read_input_tokens: null }, { inputTokens: 7, outputTokens: 2 }],
  ['gemini: plain', usageFromGemini, { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 }, { inputTokens: 10, outputTokens: 5 }],
  [
    'gemini: thoughts are added to the candidates; cached content is inside the prompt count',
    usageFromGemini,
    { promptTokenCount: 100, candidatesTokenCount: 5, thoughtsTokenCount: 20, cachedContentTokenCount: 60 },
    { inputTokens: 100, outputTokens: 25, cachedInputTokens: 60, reasoningTokens: 20 },
  ],
];

describe('usage fields', () => {
  it.each(cases)('%s', (_name, parse, raw, expected) => {
    expect(parse(raw)).toEqual(expected);
  });
});

let server: FakeModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const EXTRAS = { cachedInputTokens: 9, reasoningTokens: 4, cacheWriteTokens: 2 };
const normal = (r: NonNullable<FakeModelServer['requests'][number]['reported']>): Usage => {
  const u: Usage = { inputTokens: r.inputTokens, outputTokens: r.outputTokens };
  if (r.cachedInputTokens) u.cachedInputTokens = r.cachedInputTokens;
  if (r.cacheWriteTokens) u.cacheWriteTokens = r.cacheWriteTokens;
  if (r.reasoningTokens) u.reasoningTokens = r.reasoningTokens;
  return u;
};

describe('non-streamed answers of the fake APIs', () => {
  it('openai', async () => {
    server = await startFakeOpenAI({ script: [{ kind: 'reply', text: 'hello there', usage: EXTRAS }] });
    const res = await fetch(`${server.url}/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }) });
    expect(usageFromOpenAI((await res.json()).usage)).toEqual(normal(server.requests[0]!.reported!));
    expect(server.requests[0]!.reported).toMatchObject({ cachedInputTokens: 9, reasoningTokens: 4 });
  });

  it('anthropic', async () => {
    server = await startFakeAnthropic({ script: [{ kind: 'reply', text: 'hello there', usage: EXTRAS }] });
    const res = await fetch(`${server.url}/v1/messages`, { method: 'POST', body: JSON.stringify({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }) });
    expect(usageFromAnthropic((await res.json()).usage)).toEqual(normal(server.requests[0]!.reported!));
    expect(server.requests[0]!.reported).toMatchObject({ cachedInputTokens: 9, cacheWriteTokens: 2 });
  });

  it('gemini', async () => {
    server = await startFakeGemini({ script: [{ kind: 'reply', text: 'hello there', usage: EXTRAS }] });
    const res = await fetch(`${server.url}/v1beta/models/m:generateContent`, { method: 'POST', body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }) });
    expect(usageFromGemini((await res.json()).usageMetadata)).toEqual(normal(server.requests[0]!.reported!));
    expect(server.requests[0]!.reported).toMatchObject({ cachedInputTokens: 9, reasoningTokens: 4 });
  });
});
