import type { TranscriptStore } from '../agent/types.js';
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

/** A transcript store whose reads and writes are timed as store operations. */
export function timedTranscripts(store: TranscriptStore, metrics: WardenMetrics = processMetrics): TranscriptStore {
  return {
    load: (key) => metrics.timeStore('transcript_load', () => store.load(key)),
    append: (key, entries) => metrics.timeStore('transcript_append', () => store.append(key, entries)),
    history: (key, options) => metrics.timeStore('transcript_history', () => store.history(key, options)),
    sessions: () => metrics.timeStore('transcript_sessions', () => store.sessions()),
  };
}
