import type { WebSearchProviderId } from '../../../../config/schema/index.js';
import type { Resolver } from '../../../../net/index.js';

/** One structured hit, the same for every provider. */
export interface SearchHit {
  title: string;
  url: string;
  snippet?: string | undefined;
  /** ISO date (`2026-05-01` or a full timestamp) when the provider gave one. */
  published?: string | undefined;
}

/** What a provider call found: ranked hits, or a synthesized answer with its sources. */
export type ProviderFinding =
  | { kind: 'results'; results: SearchHit[] }
  | { kind: 'answer'; content: string; citations: Array<{ url: string; title?: string | undefined }> };

export type ProviderOutcome = { ok: true; finding: ProviderFinding } | { ok: false; error: string };

/**
 * The compact shape web_search returns (its `details`), whatever the provider: OpenClaw's
 * `results` / `answer` / `error` branches.
 */
export type WebSearchOutput =
  | { kind: 'results'; provider: WebSearchProviderId; query: string; count: number; results: SearchHit[]; cached?: true }
  | { kind: 'answer'; provider: WebSearchProviderId; query: string; content: string; citations: Array<{ url: string; title?: string | undefined }>; cached?: true }
  | { kind: 'error'; provider: WebSearchProviderId | undefined; message: string };

/** A provider ready to call: where, with which key and model. */
export interface ResolvedProvider {
  id: WebSearchProviderId;
  /** API base without a trailing slash. */
  baseUrl: string;
  apiKey?: string | undefined;
  /** The environment variable the key came from (named in errors, never the key). */
  keyEnv?: string | undefined;
  model?: string | undefined;
  /**
   * The operator pointed it at their own server (SearXNG, a local Ollama, a self-hosted
   * Firecrawl): that one host may be on a private network.
   */
  selfHosted: boolean;
  /** Perplexity: the Search API, or Sonar answers through an OpenAI-compatible chat API. */
  variant?: 'search' | 'sonar';
}

/** Test seams for the guarded requests (a fake DNS and a dialler, as in web_fetch). */
export interface NetworkSeams {
  resolve?: Resolver | undefined;
  dial?: ((address: string) => string) | undefined;
}

export interface ProviderCall {
  provider: ResolvedProvider;
  query: string;
  count: number;
  timeoutMs: number;
  signal: AbortSignal;
  net: NetworkSeams;
}
