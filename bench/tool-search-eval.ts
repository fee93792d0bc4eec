// Quick check of tool_search on the tuning half only: recall with the default knobs, and per
// fold of a fixed 4-way interleave (no knob tuning), for comparing ranker changes quickly.
// Run: npx tsx bench/tool-search-eval.ts
import { DEFAULT_RANK_OPTIONS, rankTools } from '../src/agent/tool-search/rank.js';
import { coreDeferred, loadCatalog, loadTuning, recall } from './tool-search-data.js';

const catalog = loadCatalog();
const surface = [...(await coreDeferred()), ...catalog.tools];
const requests = loadTuning(catalog);
const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
// The shipped translations were learned from these very requests: their line is in-sample (the
// honest figure is bench/tool-search-cv.ts's), and so was the re-ranker (bench/tool-search-rerank-cv.ts);
// the line without them is the lexical ranker alone.
recall(requests.slice(0, 20), surface); // builds and caches the surface's index
const FIRST = { ...DEFAULT_RANK_OPTIONS, rerank: undefined };
for (const [label, options] of [['without the learned translations or re-ranker', { ...FIRST, learned: 0 }], ['with the translations (in-sample)', FIRST], ['with both (in-sample)', DEFAULT_RANK_OPTIONS]] as const) {
  const t = performance.now();
  const r = recall(requests, surface, options);
  process.stdout.write(`tuning set, ${r.n} requests, ${label}: top-1 ${pct(r.top1)}  top-3 ${pct(r.top3)}  top-5 ${pct(r.top5)}  (${((performance.now() - t) / r.n).toFixed(2)} ms/request)\n`);
}

// Search latency, the rankings interleaved request by request so machine load hits them alike.
const RUNS = { 'no translations, no re-ranker': { ...FIRST, learned: 0 }, 'translations, no re-ranker': FIRST, 'translations and re-ranker (shipped)': DEFAULT_RANK_OPTIONS } as const;
const times = new Map<string, number[]>(Object.keys(RUNS).map((k) => [k, []]));
for (let round = 0; round < 3; round++) {
  for (const r of requests) {
    for (const [key, options] of Object.entries(RUNS)) {
      const t = performance.now();
      rankTools(r.request, surface, 5, options);
      times.get(key)!.push(performance.now() - t);
    }
  }
}
const q = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!.toFixed(2);
for (const [key, xs] of times) process.stdout.write(`ms a search over ${surface.length} tools, ${key}: p50 ${q(xs, 0.5)}  p95 ${q(xs, 0.95)}\n`);
