import type { WardenConfig } from '../config/index.js';
import type { RetryPolicy } from './retry.js';
import type { ProviderApi } from './types.js';

export const DEFAULT_CONTEXT_WINDOW = 128_000;
export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;
export const DEFAULT_TIMEOUT_MS = 120_000;

const DEFAULT_KEY_ENV: Record<ProviderApi, string> = {
  anthropic: 'ANTHROPIC_API_KEY',
  openai: 'OPENAI_API_KEY',
  gemini: 'GEMINI_API_KEY',
};

/** Everything known about one `provider/model` after config defaults are applied. */
export interface ModelSettings {
  ref: string;
  provider: string;
  model: string;
  api: ProviderApi;
  baseUrl: string | undefined;
  apiKeyEnv: string;
  contextWindow: number;
  maxOutputTokens: number;
  timeoutMs: number;
  retry: RetryPolicy;
  unsupportedSchemaKeywords: string[];
}

export type ParsedModelRef = { provider: string; model: string };

/** `provider/model`; the model id may itself contain slashes (`openrouter/meta/llama`). */
export function parseModelRef(ref: string): ParsedModelRef | undefined {
  const slash = ref.indexOf('/');
  if (slash <= 0 || slash === ref.length - 1) return undefined;
  return { provider: ref.slice(0, slash).toLowerCase(), model: ref.slice(slash + 1) };
}

const isApi = (name: string): name is ProviderApi => name === 'anthropic' || name === 'openai' || name === 'gemini' || false;

/** Resolves a model ref against `models.*`; errors name the config key to fix. */
export function modelSettings(config: WardenConfig, ref: string): { ok: true; value: ModelSettings } | { ok: false; message: string } {
  const parsed = parseModelRef(ref);
  if (!parsed) return { ok: false, message: `model "${ref}" is not "provider/model"` };
  const models = config.models;
  const entry = models.providers?.[parsed.provider];
  const api = entry?.api ?? (parsed.provider === 'google' ? 'gemini' : isApi(parsed.provider) ? parsed.provider : undefined);
  if (!api) {
    return {
      ok: false,
      message: `unknown model provider "${parsed.provider}" in "${ref}": add models.providers.${parsed.provider} with api (anthropic, openai or gemini) and baseUrl`,
    };
  }
  return {
    ok: true,
    value: {
      ref,
      provider: parsed.provider,
      model: parsed.model,
      api,
      baseUrl: entry?.baseUrl,
      apiKeyEnv: entry?.apiKeyEnv ?? DEFAULT_KEY_ENV[api],
      contextWindow: entry?.contextWindow ?? models.contextWindow ?? DEFAULT_CONTEXT_WINDOW,
      maxOutputTokens: entry?.maxOutputTokens ?? models.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS,
      timeoutMs: models.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      retry: {
        attempts: models.retry?.attempts ?? 4,
        baseDelayMs: models.retry?.baseDelayMs ?? 1000,
        maxDelayMs: models.retry?.maxDelayMs ?? 30_000,
      },
      unsupportedSchemaKeywords: entry?.unsupportedSchemaKeywords ?? [],
    },
  };
}

/**
 * The key for a provider, from the environment only. An OpenAI-compatible server with a
 * `baseUrl` (Ollama, vLLM) may run without one.
 */
export function apiKeyFor(settings: ModelSettings, env: NodeJS.ProcessEnv): { ok: true; apiKey: string | undefined } | { ok: false; message: string } {
  const apiKey = env[settings.apiKeyEnv] || undefined;
  if (!apiKey && !(settings.api === 'openai' && settings.baseUrl !== undefined)) {
    return { ok: false, message: `no API key for ${settings.provider}: set ${settings.apiKeyEnv} in the environment` };
  }
  return { ok: true, apiKey };
}

/** The model of a turn: the agent's `model`, else `models.default`. */
export function modelRefForAgent(config: WardenConfig, agentId: string): string | undefined {
  return config.agents.list.find((a) => a.id === agentId)?.model ?? config.models.default;
}
