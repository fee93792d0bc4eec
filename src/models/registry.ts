import { scrubDeep, scrubSecrets, skipImages } from '../redact/scrub.js';
import type { WardenConfig } from '../config/index.js';
import type { ClientOptions } from './anthropic.js';
import { apiKeyFor, modelSettings, type ModelSettings } from './settings.js';
import type { ModelProvider, ProviderApi } from './types.js';
import { timedModelProvider } from './timed.js';

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
      provider = lazyProvider(settings.api, options);
      cache.set(settings.provider, provider);
    }
    return { ok: true, provider, settings };
  };
}

/** Each API's SDK (tens of megabytes once loaded) comes in with the first call that needs it. */
const SDK_CLIENTS: Record<ProviderApi, () => Promise<(options: ClientOptions) => ModelProvider>> = {
  anthropic: async () => (await import('./anthropic.js')).createAnthropicProvider,
  openai: async () => (await import('./openai.js')).createOpenAIProvider,
  gemini: async () => (await import('./gemini.js')).createGeminiProvider,
};

function lazyProvider(api: ProviderApi, options: ClientOptions): ModelProvider {
  let client: Promise<ModelProvider> | undefined;
  return {
    name: options.name,
    api,
    async complete(request, signal) {
      client ??= SDK_CLIENTS[api]().then(
        // Every request is timed for /metrics (latency, errors by kind); loading the SDK is not.
        (create) => timedModelProvider(create(options)),
        (err: unknown) => {
          client = undefined;
          throw err;
        },
      );
      // The last gate before a provider: whatever path a secret took into the prompt (a
      // workspace file in the system prompt, a history row written before it was known), the
      // model never receives a known secret or a credential shape. Images are not text.
      const scrubbed = { ...request, system: scrubSecrets(request.system), messages: scrubDeep(request.messages, { skip: skipImages }) };
      return (await client).complete(scrubbed, signal);
    },
  };
}
