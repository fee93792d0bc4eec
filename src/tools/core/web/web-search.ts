import type { WardenConfig } from '../../../config/schema/index.js';
import { TtlCache } from '../../../util/ttl-cache.js';
import type { ToolImplementation, ToolResult } from '../../types.js';
import { wrapUntrusted } from '../../untrusted.js';
import { PROVIDER_SPECS } from './search/catalog.js';
import { callProvider } from './search/providers.js';
import { selectProviders } from './search/select.js';
import type { NetworkSeams, ProviderFinding, WebSearchOutput } from './search/types.js';
import { webSearchParameters as parameters } from './web-search-schema.js';

export type { SearchHit, WebSearchOutput } from './search/types.js';

export interface WebSearchArgs {
  query: string;
  count?: number;
}

export { webSearchAvailability } from './availability.js';

export interface WebSearchDeps extends NetworkSeams {
  /** Shared between tool instances of one process; tests pass their own. */
  cache?: TtlCache<ProviderFinding>;
}

const sharedCache = new TtlCache<ProviderFinding>(200);

function render(output: Exclude<WebSearchOutput, { kind: 'error' }>): string {
  if (output.kind === 'results') {
    const body = output.results.length === 0 ? 'No results.' : output.results.map((h, i) => `${i + 1}. ${h.title}\n   ${h.url}${h.published ? ` (${h.published})` : ''}${h.snippet ? `\n   ${h.snippet}` : ''}`).join('\n');
    return `Results for "${output.query}" (${output.provider}):\n${body}`;
  }
  const sources = output.citations.map((c, i) => `${i + 1}. ${c.title ? `${c.title} — ` : ''}${c.url}`).join('\n');
  return `Answer from ${output.provider} for "${output.query}":\n${output.content}\n\nSources:\n${sources}`;
}

/**
 * web_search: asks the selected provider and returns one compact shape (ranked results, or an
 * answer with its sources), wrapped as untrusted data. Endpoints come from the operator's config;
 * the model supplies only the query. Every request goes through the SSRF guard, pinned to the
 * provider's host. Identical searches are answered from a small cache for cacheTtlMinutes.
 */
export function createWebSearchTool(config: WardenConfig, env: NodeJS.ProcessEnv = process.env, deps: WebSearchDeps = {}): ToolImplementation<WebSearchArgs> {
  const cache = deps.cache ?? sharedCache;
  return {
    id: 'web_search',
    parameters,
    async execute(args, ctx) {
      const search = config.tools.web?.search;
      const selection = selectProviders(config, env);
      if (!search || !selection.ok) return { content: [{ type: 'text', text: `web_search is unavailable: ${selection.ok ? 'not configured' : selection.why}` }], isError: true };
      const ttlMs = search.cacheTtlMinutes * 60_000;
      const errors: string[] = [];
      for (const provider of selection.chain) {
        const count = Math.min(args.count ?? search.maxResults, PROVIDER_SPECS[provider.id].maxCount);
        const key = JSON.stringify([provider.id, provider.variant, provider.baseUrl, provider.model, count, args.query.trim().toLowerCase()]);
        const hit = cache.get(key, ttlMs);
        let finding = hit;
        if (!finding) {
          const outcome = await callProvider({ provider, query: args.query, count, timeoutMs: search.timeoutSec * 1000, signal: ctx.signal, net: deps });
          if (!outcome.ok) {
            ctx.log?.warn?.({ tool: 'web_search', provider: provider.id, error: outcome.error }, 'search provider failed');
            errors.push(outcome.error);
            // A named provider has no fallback; auto-detected ones hand over to the next.
            if (selection.explicit) break;
            continue;
          }
          finding = outcome.finding;
          cache.set(key, finding, ttlMs);
        }
        const output: Exclude<WebSearchOutput, { kind: 'error' }> =
          finding.kind === 'results'
            ? { kind: 'results', provider: provider.id, query: args.query, count: finding.results.length, results: finding.results, ...(hit ? { cached: true as const } : {}) }
            : { kind: 'answer', provider: provider.id, query: args.query, content: finding.content, citations: finding.citations, ...(hit ? { cached: true as const } : {}) };
        return { content: [{ type: 'text', text: wrapUntrusted(`web_search:${provider.id}`, render(output)) }], details: output };
      }
      // Every attempt failed: the first provider's error explains the primary failure.
      const output: WebSearchOutput = { kind: 'error', provider: selection.chain[0]?.id, message: errors[0] ?? 'no provider answered' };
      return { content: [{ type: 'text', text: output.message }], details: output, isError: true } satisfies ToolResult;
    },
  };
}
