import type { WebSearchProviderId } from '../../../../config/schema/index.js';
import { duckduckgo } from './duckduckgo.js';
import { gemini, grok, kimi, sonar } from './grounded.js';
import { brave, exa, firecrawl, minimax, ollama, parallel, perplexitySearch, searxng, tavily } from './structured.js';
import type { ProviderCall, ProviderOutcome } from './types.js';

const CALLS: Readonly<Record<WebSearchProviderId, (c: ProviderCall) => Promise<ProviderOutcome>>> = {
  brave,
  minimax,
  gemini,
  grok,
  kimi,
  perplexity: (c) => (c.provider.variant === 'sonar' ? sonar(c) : perplexitySearch(c)),
  firecrawl,
  exa,
  tavily,
  parallel,
  searxng,
  duckduckgo,
  ollama,
};

/** Asks one provider. An abort of the turn propagates; every other failure is a value. */
export async function callProvider(call: ProviderCall): Promise<ProviderOutcome> {
  try {
    return await CALLS[call.provider.id](call);
  } catch (err) {
    if (call.signal.aborted) throw err;
    return { ok: false, error: `${call.provider.id} search failed: ${(err as Error).message}` };
  }
}
