// Tool Search recall on real MCP servers' tool lists: top-1/3/5 of tool_search's ranking for
// labelled requests written by someone who never saw the ranker, on the tuning set and on the
// held-out sets (target: top-3 ≥ 90 % held out), over the whole catalog next to Warden's own
// deferred tools; and what one search costs (the index built once per surface, then cached).
import { runMetaTool } from '../src/agent/tool-search/meta-tools.js';
import { rankTools } from '../src/agent/tool-search/rank.js';
import { CATALOG_FILE, HELDOUT3_FILE, HELDOUT_FILE, TUNE_FILE, available, coreDeferred, loadCatalog, loadRequests, recall, type Catalog } from './tool-search-data.js';
import { fmtMs, summarize, type Bench, type BenchRow } from './harness.js';

const pct = (x: number) => `${(x * 100).toFixed(1)} %`;

function half(report: (row: BenchRow) => void, label: string, file: string, catalog: Catalog, surface: Parameters<typeof recall>[1]): number | undefined {
  if (!available(file)) {
    report({ name: `${label}: not present`, value: '—', note: file.slice(file.lastIndexOf('bench/')) });
    return undefined;
  }
  const requests = loadRequests(file, catalog);
  const r = recall(requests, surface);
  report({ name: `tool_search ${label}, ${r.n} requests: top-1`, value: pct(r.top1) });
  report({ name: `tool_search ${label}, ${r.n} requests: top-3`, value: pct(r.top3), note: `${Math.round(r.top3 * r.n)}/${r.n}` });
  report({ name: `tool_search ${label}, ${r.n} requests: top-5`, value: pct(r.top5) });
  return r.top3;
}

const bench: Bench = async (report) => {
  if (!available(CATALOG_FILE)) {
    report({ name: 'tool search catalog not present', value: '—', note: 'bench/data/tool-search/catalog.json' });
    return;
  }
  const catalog = loadCatalog();
  const surface = [...(await coreDeferred()), ...catalog.tools];
  report({ name: `surface: ${catalog.tools.length} MCP tools of ${catalog.servers} servers + Warden's deferred`, value: `${surface.length} tools` });

  // In-sample: the shipped translations and re-ranker were learned from this set
  // (bench/tool-search-cv.ts and bench/tool-search-rerank-cv.ts give the cross-validated figures).
  half(report, 'tuning set (in-sample)', TUNE_FILE, catalog, surface);
  const held = half(report, 'second held-out set', HELDOUT_FILE, catalog, surface);
  const third = half(report, 'third held-out set', HELDOUT3_FILE, catalog, surface);
  for (const [label, top3] of [['second', held], ['third', third]] as const) {
    if (top3 !== undefined) report({ name: `${label} held-out set top-3 (target ≥ 90 %)`, value: pct(top3), note: top3 >= 0.9 ? 'met' : 'NOT met' });
  }

  // Cost of one search: the first on a new surface builds its index; later ones reuse it.
  const queries = available(TUNE_FILE) ? loadRequests(TUNE_FILE, catalog).map((r) => r.request) : catalog.tools.slice(0, 200).map((t) => t.description.slice(0, 60));
  const fresh = surface.map((t) => ({ ...t, parameters: { ...t.parameters } }));
  let t = performance.now();
  const cpu = process.cpuUsage();
  rankTools(queries[0]!, fresh, 8);
  report({ name: `tool_search, first search on a new ${surface.length}-tool surface`, value: fmtMs(performance.now() - t), note: `builds the index; ${fmtMs(process.cpuUsage(cpu).user / 1000)} CPU` });
  const settings = { mode: 'tools' as const, defaultLimit: 8, maxLimit: 20 };
  const samples: number[] = [];
  for (let round = 0; round < 3; round++) {
    for (const query of queries) {
      t = performance.now();
      runMetaTool('tool_search', { query }, surface, settings);
      samples.push(performance.now() - t);
    }
  }
  const s = summarize(samples);
  report({ name: `tool_search over ${surface.length} tools, one search (meta tool) p50`, value: fmtMs(s.p50), note: `p99 ${fmtMs(s.p99)}` });
};
export default bench;
