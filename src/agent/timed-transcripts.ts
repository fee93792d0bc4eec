import { metrics as processMetrics, type WardenMetrics } from '../ops/metrics.js';
import type { TranscriptStore } from './types.js';

/** A transcript store whose reads and writes are timed as store operations. */
export function timedTranscripts(store: TranscriptStore, metrics: WardenMetrics = processMetrics): TranscriptStore {
  return {
    load: (key) => metrics.timeStore('transcript_load', () => store.load(key)),
    append: (key, entries, options) => metrics.timeStore('transcript_append', () => store.append(key, entries, options)),
    history: (key, options) => metrics.timeStore('transcript_history', () => store.history(key, options)),
    sessions: () => metrics.timeStore('transcript_sessions', () => store.sessions()),
    // Carried by another write (the lease's place), which is timed as that write.
    ...(store.loadSteps ? { loadSteps: (key) => store.loadSteps!(key) } : {}),
    ...(store.guardedAppend ? { guardedAppend: (key, entry) => store.guardedAppend!(key, entry) } : {}),
    ...(store.search ? { search: (options) => metrics.timeStore('transcript_search', () => store.search!(options)) } : {}),
  };
}
