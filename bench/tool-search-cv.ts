// Cross-validates the learned translations (learn.ts) on the tuning set only: each fold's table
// is learned from the other folds' labels and scored on the fold left out, next to the ranker
// without it. Also scores each test fold with its near copies of training requests removed (the
// rule the held-out sets were built with: a request sharing a right tool with a training request
// and a word-set Jaccard of 0.5 or more), since the held-out sets hold none.
// Run: npx tsx bench/tool-search-cv.ts [folds] [weights,…]   (the first stage; the re-ranker's own: tool-search-rerank-cv.ts)
import { DEFAULT_RANK_OPTIONS, learningTerms, type RankOptions } from '../src/agent/tool-search/rank.js';
import { learnTranslations, trainingPairs, SHIPPED_LEARN_OPTIONS, type LearnOptions } from '../src/agent/tool-search/learn.js';
import { coreDeferred, loadCatalog, loadTuning, recall, type LabelledRequest } from './tool-search-data.js';

const catalog = loadCatalog();
const surface = [...(await coreDeferred()), ...catalog.tools];
const requests = loadTuning(catalog);
const byId = new Map(surface.map((t) => [t.id, t]));
const termCache = new Map<string, string[]>();
const toolTerms = (id: string) => {
  let t = termCache.get(id);
  if (!t) termCache.set(id, (t = learningTerms(byId.get(id)!)));
  return t;
};
const K = Number(process.argv[2] ?? 2);
const WEIGHTS = (process.argv[3] ?? '0,0.2,0.4,0.6').split(',').map(Number);
const learnOpts: LearnOptions = { ...SHIPPED_LEARN_OPTIONS, ...JSON.parse(process.env.LEARN ?? '{}') };
// The first stage alone (the shipped re-ranker was trained on every tuning request; its own
// cross-validation is bench/tool-search-rerank-cv.ts).
const rankOpts: Partial<RankOptions> = { rerank: undefined, ...JSON.parse(process.env.RANK ?? '{}') };

const wordSet = (s: string) => new Set(s.toLowerCase().split(/[^a-z0-9]+/).filter(Boolean));
const jaccard = (a: Set<string>, b: Set<string>) => {
  let inter = 0;
  for (const w of a) if (b.has(w)) inter++;
  return inter / (a.size + b.size - inter || 1);
};
const nearCopy = (r: LabelledRequest, train: LabelledRequest[]) =>
  train.some((t) => t.expected.some((e) => r.expected.includes(e)) && jaccard(wordSet(r.request), wordSet(t.request)) >= 0.5);

const pct = (x: number) => `${(x * 100).toFixed(1)}`;
const sums = new Map<number, { all: number; far: number }>();
let nestedSum = 0;
for (let k = 0; k < K; k++) {
  const test = requests.filter((_, i) => i % K === k);
  const train = requests.filter((_, i) => i % K !== k);
  const far = test.filter((r) => !nearCopy(r, train));
  const table = learnTranslations(trainingPairs(train, toolTerms), learnOpts);
  const cells: string[] = [];
  for (const w of WEIGHTS) {
    const opts = { ...DEFAULT_RANK_OPTIONS, ...rankOpts, learned: w, translations: table };
    const a = recall(test, surface, opts);
    const f = recall(far, surface, opts);
    const s = sums.get(w) ?? { all: 0, far: 0 };
    sums.set(w, { all: s.all + a.top3 / K, far: s.far + f.top3 / K });
    cells.push(`w=${w}: ${pct(a.top3)} (top1 ${pct(a.top1)}) far ${pct(f.top3)}`);
  }
  // The weight this fold would pick on its own: an inner two-fold over its training requests.
  const inner = WEIGHTS.map((w) => {
    let hit = 0;
    for (let j = 0; j < 2; j++) {
      const innerTest = train.filter((_, i) => i % 2 === j);
      const innerTable = learnTranslations(trainingPairs(train.filter((_, i) => i % 2 !== j), toolTerms), learnOpts);
      hit += recall(innerTest, surface, { ...DEFAULT_RANK_OPTIONS, ...rankOpts, learned: w, translations: innerTable }).top3;
    }
    return hit;
  });
  const picked = WEIGHTS[inner.indexOf(Math.max(...inner))]!;
  const nested = recall(test, surface, { ...DEFAULT_RANK_OPTIONS, ...rankOpts, learned: picked, translations: table });
  nestedSum += nested.top3 / K;
  cells.push(`nested (w=${picked}): ${pct(nested.top3)}`);
  process.stdout.write(`fold ${k + 1}/${K} (${test.length} test, ${far.length} far, ${table.size} words): ${cells.join(' | ')}\n`);
}
process.stdout.write(`mean top-3: ${[...sums].map(([w, s]) => `w=${w}: ${pct(s.all)} far ${pct(s.far)}`).join(' | ')} | nested: ${pct(nestedSum)}\n`);
