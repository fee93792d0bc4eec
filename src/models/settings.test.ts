import { describe, expect, it } from 'vitest';
import { parseConfig, type WardenConfigInput } from '../config/index.js';
import { createModelRegistry } from './registry.js';
import { modelRefForAgent, modelSettings, parseModelRef } from './settings.js';

const config = (input: WardenConfigInput) => {
  const parsed = parseConfig(input);
  if (!parsed.ok) throw parsed.error;
  return parsed.value.config;
};

describe('parseModelRef', () => {
  it.each([
    ['anthropic/claude-sonnet-4-5', { provider: 'anthropic', model: 'claude-sonnet-4-5' }],
    ['OpenRouter/meta/llama-3', { provider: 'openrouter', model: 'meta/llama-3' }],
    ['noslash', undefined],
    ['/model', undefined],
    ['openai/', undefined],
  ])('%s', (ref, expected) => expect(parseModelRef(ref)).toEqual(expected));
});

describe('modelSettings', () => {
  it('applies the documented defaults for a built-in provider', () => {
    expect(modelSettings(config({}), 'anthropic/claude-x')).toEqual({
      ok: true,
      value: {
        ref: 'anthropic/claude-x',
        provider: 'anthropic',
        model: 'claude-x',
        api: 'anthropic',
        baseUrl: undefined,
        apiKeyEnv: 'ANTHROPIC_API_KEY',
        contextWindow: 128_000,
        maxOutputTokens: 4096,
        timeoutMs: 120_000,
        retry: { attempts: 4, baseDelayMs: 1000, maxDelayMs: 30_000 },
        unsupportedSchemaKeywords: [],
      },
    });
  });

  it('reads every models.* key, the provider entry before the global one', () => {
    const c = config({
      models: {
        contextWindow: 64_000,
        maxOutputTokens: 2048,
        timeoutMs: 30_000,
        retry: { attempts: 2, baseDelayMs: 10, maxDelayMs: 100 },
        providers: {
          ollama: { api: 'openai', baseUrl: 'http://127.0.0.1:11434/v1', contextWindow: 8192, unsupportedSchemaKeywords: ['pattern'] },
          gemini: { apiKeyEnv: 'GOOGLE_KEY', maxOutputTokens: 999 },
        },
      },
    });
    expect(modelSettings(c, 'ollama/qwen3')).toMatchObject({
      ok: true,
      value: { api: 'openai', baseUrl: 'http://127.0.0.1:11434/v1', apiKeyEnv: 'OPENAI_API_KEY', contextWindow: 8192, maxOutputTokens: 2048, timeoutMs: 30_000, retry: { attempts: 2, baseDelayMs: 10, maxDelayMs: 100 }, unsupportedSchemaKeywords: ['pattern'] },
    });
    expect(modelSettings(c, 'gemini/gemini-2.5-flash')).toMatchObject({ ok: true, value: { api: 'gemini', apiKeyEnv: 'GOOGLE_KEY', contextWindow: 64_000, maxOutputTokens: 999 } });
  });

  it('names the config key to add for an unknown provider', () => {
    expect(modelSettings(config({}), 'mystery/m1')).toEqual({
      ok: false,
      message: 'unknown model provider "mystery" in "mystery/m1": add models.providers.mystery with api (anthropic, openai or gemini) and baseUrl',
    });
  });

  it('rejects a custom provider without api in the config, at its key path', () => {
    const parsed = parseConfig({ models: { providers: { ollama: { baseUrl: 'http://127.0.0.1:11434/v1' } } } });
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.error.problems).toEqual([
      { path: 'models.providers.ollama.api', message: 'provider "ollama" needs api: one of anthropic, openai, gemini (e.g. api: openai with baseUrl for Ollama)' },
    ]);
  });

  it('uses the agent model before models.default', () => {
    const c = config({ models: { default: 'openai/gpt-5-mini' }, agents: { list: [{ id: 'ops', model: 'anthropic/claude-x' }] } });
    expect(modelRefForAgent(c, 'ops')).toBe('anthropic/claude-x');
    expect(modelRefForAgent(c, 'main')).toBe('openai/gpt-5-mini');
  });
});

describe('createModelRegistry', () => {
  it('needs the key from the environment, except for an OpenAI-compatible server with a baseUrl', () => {
    const c = config({ models: { providers: { local: { api: 'openai', baseUrl: 'http://127.0.0.1:8080/v1' } } } });
    const registry = createModelRegistry(c, {});
    expect(registry('anthropic/claude-x')).toEqual({ ok: false, message: 'no API key for anthropic: set ANTHROPIC_API_KEY in the environment' });
    expect(registry('local/llama')).toMatchObject({ ok: true, provider: { name: 'local', api: 'openai' } });
    const withKey = createModelRegistry(c, { GEMINI_API_KEY: 'k' })('gemini/gemini-2.5-pro');
    expect(withKey).toMatchObject({ ok: true, provider: { api: 'gemini' } });
  });
});
