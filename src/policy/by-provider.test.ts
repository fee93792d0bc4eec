import { describe, expect, it } from 'vitest';
import { matchByProvider } from './by-provider.js';

describe('byProvider key matching', () => {
  it.each([
    ['provider/model before provider', { openai: 1, 'openai/gpt-5': 2 }, 'openai/gpt-5', 'openai/gpt-5'],
    ['provider when no model key', { openai: 1, 'openai/gpt-4o': 2 }, 'openai/gpt-5', 'openai'],
    ['case-insensitive keys', { 'OpenAI/GPT-5': 1 }, 'openai/gpt-5', 'OpenAI/GPT-5'],
    ['exact spelling wins a tie', { OPENAI: 1, openai: 2 }, 'openai/gpt-5', 'openai'],
    ['a slash in the model id stays with its provider', { openai: 1 }, 'openrouter/openai/gpt-5', undefined],
    ['full ref with a nested slash', { 'openrouter/openai/gpt-5': 1 }, 'openrouter/openai/gpt-5', 'openrouter/openai/gpt-5'],
    ['no model, no match', { openai: 1 }, undefined, undefined],
  ] as const)('%s', (_name, map, model, expected) => {
    expect(matchByProvider(map, model, 'tools.byProvider')?.key).toBe(expected);
  });
});
