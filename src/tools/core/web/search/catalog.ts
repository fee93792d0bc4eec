import type { WebSearchProviderId } from '../../../../config/schema/index.js';

/** What Warden knows about each provider: where it lives, how it is keyed, whether it is self-hosted. */
export interface ProviderSpec {
  /** Environment variables that may hold the key, in the order they are read. */
  keyEnvs: readonly string[];
  /** Works without a key; never picked by auto-detection (OpenClaw's rule), only when named. */
  keyless?: boolean;
  defaultBaseUrl: string;
  /** Environment variable that may hold the base URL. */
  baseUrlEnv?: string;
  /** The default endpoint is the operator's own server (SearXNG, a local Ollama). */
  selfHostedByDefault?: boolean;
  /** Unusable without a base URL (SearXNG). */
  needsBaseUrl?: boolean;
  defaultModel?: string;
  /** Provider-side cap on results per call. */
  maxCount: number;
}

export const PROVIDER_SPECS: Readonly<Record<WebSearchProviderId, ProviderSpec>> = {
  brave: { keyEnvs: ['BRAVE_API_KEY'], defaultBaseUrl: 'https://api.search.brave.com', maxCount: 20 },
  minimax: { keyEnvs: ['MINIMAX_CODE_PLAN_KEY', 'MINIMAX_CODING_API_KEY', 'MINIMAX_OAUTH_TOKEN', 'MINIMAX_API_KEY'], defaultBaseUrl: 'https://api.minimax.io', maxCount: 10 },
  gemini: { keyEnvs: ['GEMINI_API_KEY'], defaultBaseUrl: 'https://generativelanguage.googleapis.com/v1beta', defaultModel: 'gemini-3.6-flash', maxCount: 20 },
  grok: { keyEnvs: ['XAI_API_KEY'], defaultBaseUrl: 'https://api.x.ai/v1', defaultModel: 'grok-4.7', maxCount: 20 },
  kimi: { keyEnvs: ['KIMI_API_KEY', 'MOONSHOT_API_KEY'], defaultBaseUrl: 'https://api.moonshot.ai/v1', defaultModel: 'kimi-k2.6', maxCount: 20 },
  perplexity: { keyEnvs: ['PERPLEXITY_API_KEY', 'OPENROUTER_API_KEY'], defaultBaseUrl: 'https://api.perplexity.ai', maxCount: 10 },
  firecrawl: { keyEnvs: ['FIRECRAWL_API_KEY'], defaultBaseUrl: 'https://api.firecrawl.dev', baseUrlEnv: 'FIRECRAWL_BASE_URL', maxCount: 20 },
  exa: { keyEnvs: ['EXA_API_KEY'], defaultBaseUrl: 'https://api.exa.ai', maxCount: 20 },
  tavily: { keyEnvs: ['TAVILY_API_KEY'], defaultBaseUrl: 'https://api.tavily.com', baseUrlEnv: 'TAVILY_BASE_URL', maxCount: 20 },
  parallel: { keyEnvs: ['PARALLEL_API_KEY'], defaultBaseUrl: 'https://api.parallel.ai', maxCount: 20 },
  searxng: { keyEnvs: [], keyless: true, defaultBaseUrl: '', baseUrlEnv: 'SEARXNG_BASE_URL', selfHostedByDefault: true, needsBaseUrl: true, maxCount: 20 },
  duckduckgo: { keyEnvs: [], keyless: true, defaultBaseUrl: 'https://html.duckduckgo.com', maxCount: 10 },
  ollama: { keyEnvs: ['OLLAMA_API_KEY'], keyless: true, defaultBaseUrl: 'http://127.0.0.1:11434', selfHostedByDefault: true, maxCount: 10 },
};

/** Perplexity's Sonar answers through OpenRouter when only an OpenRouter key is there. */
export const OPENROUTER_BASE_URL = 'https://openrouter.ai/api/v1';
export const SONAR_DEFAULT_MODEL = 'perplexity/sonar-pro';
