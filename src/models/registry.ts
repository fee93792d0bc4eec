import type { WardenConfig } from '../config/index.js';
import { createAnthropicProvider } from './anthropic.js';
import { createGeminiProvider } from './gemini.js';
import { createOpenAIProvider } from './openai.js';
import { modelSettings, type ModelSettings } from './settings.js';
import type { ModelProvider } from './types.js';

export type ResolvedModel = { ok: true; provider: ModelProvider; settings: ModelSettings } | { ok: false; message: string };

/**
 * Builds adapters on demand and keeps one per provider name. Keys come from the environment
 * only; an OpenAI-compatible server with a `baseUrl` may run without one.
 */
export function createModelRegistry(config: WardenConfig, env: NodeJS.ProcessEnv = process.env): (ref: string) => ResolvedModel {
  const cache = new Map<string, ModelProvider>();
  return (ref) => {
    const resolved = modelSettings(config, ref);
    if (!resolved.ok) return resolved;
    const settings = resolved.value;
    const apiKey = env[settings.apiKeyEnv] || undefined;
    const keyOptional = settings.api === 'openai' && settings.baseUrl !== undefined;
    if (!apiKey && !keyOptional) {
      return { ok: false, message: `no API key for ${settings.provider}: set ${settings.apiKeyEnv} in the environment` };
    }
    let provider = cache.get(settings.provider);
    if (!provider) {
      const options = { name: settings.provider, apiKey, baseUrl: settings.baseUrl, timeoutMs: settings.timeoutMs };
      provider =
        settings.api === 'anthropic'
          ? createAnthropicProvider(options)
          : settings.api === 'openai'
            ? createOpenAIProvider(options)
            : createGeminiProvider(options);
      cache.set(settings.provider, provider);
    }
    return { ok: true, provider, settings };
  };
}
