// Quick check of tool_search on the tuning half only: recall with the default knobs, and per
// fold of a fixed 4-way interleave (no knob tuning), for comparing ranker changes quickly.
// Run: npx tsx bench/tool-search-eval.ts
import { DEFAULT_RANK_OPTIONS, rankTools } from '../src/agent/tool-search/rank.js';
import { TUNE_FILE, coreDeferred, loadCatalog, loadRequests, recall } from './tool-search-data.js';

const catalog = loadCatalog();
const surface = [...(await coreDeferred()), ...catalog.tools];
const requests = loadRequests(TUNE_FILE, catalog);
const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
// The shipped translations were learned from these very requests: their line is in-sample (the
// honest figure is bench/tool-search-cv.ts's); the line without them is the lexical ranker alone.
recall(requests.slice(0, 20), surface); // builds and caches the surface's index
for (const [label, options] of [['without the learned translations', { ...DEFAULT_RANK_OPTIONS, learned: 0 }], ['with them (in-sample)', DEFAULT_RANK_OPTIONS]] as const) {
  const t = performance.now();
  const r = recall(requests, surface, options);
  process.stdout.write(`tuning set, ${r.n} requests, ${label}: top-1 ${pct(r.top1)}  top-3 ${pct(r.top3)}  top-5 ${pct(r.top5)}  (${((performance.now() - t) / r.n).toFixed(2)} ms/request)\n`);
}

// Search latency, the two rankings interleaved request by request so machine load hits both alike.
const times: Record<'off' | 'on', number[]> = { off: [], on: [] };
for (let round = 0; round < 3; round++) {
  for (const r of requests) {
    for (const key of ['off', 'on'] as const) {
      const t = performance.now();
      rankTools(r.request, surface, 5, key === 'off' ? { ...DEFAULT_RANK_OPTIONS, learned: 0 } : DEFAULT_RANK_OPTIONS);
      times[key].push(performance.now() - t);
    }
  }
}
const q = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!.toFixed(2);
for (const key of ['off', 'on'] as const) process.stdout.write(`ms a search over ${surface.length} tools, translations ${key}: p50 ${q(times[key], 0.5)}  p95 ${q(times[key], 0.95)}\n`);
