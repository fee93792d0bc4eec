import type { WardenConfig } from '../config/index.js';
import { createAnthropicProvider } from './anthropic.js';
import { createGeminiProvider } from './gemini.js';
import { createOpenAIProvider } from './openai.js';
import { apiKeyFor, modelSettings, type ModelSettings } from './settings.js';
import type { ModelProvider } from './types.js';
import { timedModelProvider } from '../ops/hooks.js';

export type ResolvedModel = { ok: true; provider: ModelProvider; settings: ModelSettings } | { ok: false; message: string };

/**
 * Builds adapters on demand and keeps one per provider name. Keys come from the environment
 * only (`apiKeyFor`).
 */
export function createModelRegistry(config: WardenConfig, env: NodeJS.ProcessEnv = process.env): (ref: string) => ResolvedModel {
  const cache = new Map<string, ModelProvider>();
  return (ref) => {
    const resolved = modelSettings(config, ref);
    if (!resolved.ok) return resolved;
    const settings = resolved.value;
    const key = apiKeyFor(settings, env);
    if (!key.ok) return key;
    const apiKey = key.apiKey;
    let provider = cache.get(settings.provider);
    if (!provider) {
      const options = { name: settings.provider, apiKey, baseUrl: settings.baseUrl, timeoutMs: settings.timeoutMs };
      // Every request is timed for /metrics (latency, errors by kind).
      provider = timedModelProvider(
        settings.api === 'anthropic'
          ? createAnthropicProvider(options)
          : settings.api === 'openai'
            ? createOpenAIProvider(options)
            : createGeminiProvider(options),
      );
      cache.set(settings.provider, provider);
    }
    return { ok: true, provider, settings };
  };
}
