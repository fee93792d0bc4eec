// Quick check of tool_search on the tuning half only: recall with the default knobs, and per
// fold of a fixed 4-way interleave (no knob tuning), for comparing ranker changes quickly.
// Run: npx tsx bench/tool-search-eval.ts
import { TUNE_FILE, coreDeferred, loadCatalog, loadRequests, recall } from './tool-search-data.js';

const catalog = loadCatalog();
const surface = [...(await coreDeferred()), ...catalog.tools];
const requests = loadRequests(TUNE_FILE, catalog);
const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
const t = performance.now();
const r = recall(requests, surface);
process.stdout.write(`tuning half, ${r.n} requests: top-1 ${pct(r.top1)}  top-3 ${pct(r.top3)}  top-5 ${pct(r.top5)}  (${((performance.now() - t) / r.n).toFixed(2)} ms/request)\n`);
