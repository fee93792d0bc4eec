import { ModelCallError, isAbortError, type ModelProvider } from './types.js';
import { metrics as processMetrics, type WardenMetrics } from '../ops/metrics.js';

/** A provider whose every request (each retry attempt) is timed and counted by outcome. */
export function timedModelProvider(provider: ModelProvider, metrics: WardenMetrics = processMetrics): ModelProvider {
  return {
    name: provider.name,
    api: provider.api,
    async complete(request, signal) {
      const started = performance.now();
      const seconds = () => (performance.now() - started) / 1000;
      try {
        const response = await provider.complete(request, signal);
        metrics.modelRequest(provider.name, request.model, 'ok', seconds());
        return response;
      } catch (err) {
        const outcome = isAbortError(err) || signal.aborted ? 'aborted' : err instanceof ModelCallError ? err.kind : 'other';
        metrics.modelRequest(provider.name, request.model, outcome, seconds());
        throw err;
      }
    },
  };
}
