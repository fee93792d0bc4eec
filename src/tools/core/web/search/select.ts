import { WEB_SEARCH_PROVIDERS, type WardenConfig, type WebSearchConfig, type WebSearchProviderId } from '../../../../config/schema/index.js';
import { OPENROUTER_BASE_URL, PROVIDER_SPECS, SONAR_DEFAULT_MODEL } from './catalog.js';
import type { ResolvedProvider } from './types.js';
import { withoutTrailingSlashes } from '../../../../util/trailing-slashes.js';

/**
 * Which providers a search goes to (OpenClaw's selection): the configured provider alone, with
 * no fallback; else every provider whose key is in the environment, in OpenClaw's order, each
 * tried when the one before fails; SearXNG joins last when a base URL is known. Keyless
 * providers (duckduckgo, ollama) are used only when named.
 */
export type ProviderSelection =
  | { ok: true; explicit: boolean; chain: ResolvedProvider[] }
  | { ok: false; why: string };

type Env = Record<string, string | undefined>;

function settingsOf(search: WebSearchConfig, id: WebSearchProviderId) {
  const own = search.providers?.[id] ?? {};
  const top = search.provider === id ? { baseUrl: search.baseUrl, apiKeyEnv: search.apiKeyEnv, model: search.model } : {};
  return { baseUrl: top.baseUrl ?? own.baseUrl, apiKeyEnv: top.apiKeyEnv ?? own.apiKeyEnv, model: top.model ?? own.model };
}

/** A provider with its key, base URL and model, or why it cannot be used. */
export function resolveProvider(search: WebSearchConfig, id: WebSearchProviderId, env: Env): { ok: true; value: ResolvedProvider } | { ok: false; why: string } {
  const spec = PROVIDER_SPECS[id];
  const settings = settingsOf(search, id);
  const keyEnvs = settings.apiKeyEnv ? [settings.apiKeyEnv] : spec.keyEnvs;
  const keyEnv = keyEnvs.find((name) => (env[name] ?? '') !== '');
  const configuredBase = settings.baseUrl ?? (spec.baseUrlEnv ? env[spec.baseUrlEnv] || undefined : undefined) ?? regionalBase(id, env);
  const baseUrl = withoutTrailingSlashes(configuredBase ?? spec.defaultBaseUrl);

  if (spec.needsBaseUrl && !baseUrl) return { ok: false, why: `${id} needs its address: set tools.web.search.${search.provider === id ? 'baseUrl' : `providers.${id}.baseUrl`} or ${spec.baseUrlEnv}` };
  if (!spec.keyless && !keyEnv) return { ok: false, why: `${keyEnvs.join(' or ')} is not set` };
  if (id === 'ollama' && !keyEnv && isOllamaCloud(baseUrl)) return { ok: false, why: 'hosted Ollama web search needs OLLAMA_API_KEY' };

  const value: ResolvedProvider = {
    id,
    baseUrl,
    apiKey: keyEnv ? env[keyEnv] : undefined,
    keyEnv,
    model: settings.model ?? spec.defaultModel,
    // A base URL the operator set for a self-hostable service points at their own server.
    selfHosted: spec.selfHostedByDefault === true ? !(id === 'ollama' && isOllamaCloud(baseUrl)) : id === 'firecrawl' && configuredBase !== undefined,
  };
  if (id === 'perplexity') {
    // An OpenRouter key or a model means Sonar answers (OpenClaw also switches on a base URL;
    // Warden keeps a base URL for a Search API proxy and switches on the key or model only).
    const sonar = keyEnv === 'OPENROUTER_API_KEY' || settings.model !== undefined;
    value.variant = sonar ? 'sonar' : 'search';
    if (sonar) {
      value.baseUrl = withoutTrailingSlashes(settings.baseUrl ?? OPENROUTER_BASE_URL);
      value.model = settings.model ?? SONAR_DEFAULT_MODEL;
    }
  }
  return { ok: true, value };
}

/** MiniMax keeps Chinese accounts on its CN host, which MINIMAX_API_HOST names (OpenClaw's hint). */
function regionalBase(id: WebSearchProviderId, env: Env): string | undefined {
  return id === 'minimax' && /minimaxi\.com/i.test(env.MINIMAX_API_HOST ?? '') ? 'https://api.minimaxi.com' : undefined;
}

export function isOllamaCloud(baseUrl: string): boolean {
  try {
    const host = new URL(baseUrl).hostname.toLowerCase();
    return host === 'ollama.com' || host.endsWith('.ollama.com');
  } catch {
    return false;
  }
}

export function selectProviders(config: WardenConfig, env: Env): ProviderSelection {
  const search = config.tools.web?.search;
  if (!search) return { ok: false, why: 'no search provider configured (tools.web.search)' };
  if (!search.enabled) return { ok: false, why: 'tools.web.search.enabled is false' };
  if (search.provider) {
    const one = resolveProvider(search, search.provider, env);
    return one.ok ? { ok: true, explicit: true, chain: [one.value] } : { ok: false, why: `${search.provider}: ${one.why}` };
  }
  const chain = WEB_SEARCH_PROVIDERS.filter((id) => !PROVIDER_SPECS[id].keyless || PROVIDER_SPECS[id].needsBaseUrl)
    .map((id) => resolveProvider(search, id, env))
    .flatMap((r) => (r.ok ? [r.value] : []));
  if (chain.length === 0) {
    const keys = WEB_SEARCH_PROVIDERS.flatMap((id) => PROVIDER_SPECS[id].keyEnvs.slice(0, 1));
    return { ok: false, why: `no search provider has a key: set one of ${keys.join(', ')}, or name a keyless provider (duckduckgo, ollama, searxng) in tools.web.search.provider` };
  }
  return { ok: true, explicit: false, chain };
}
