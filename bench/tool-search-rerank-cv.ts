// Cross-validates the re-ranker on the tuning set only: for each fold, the translation table and
// the re-ranker's weights are learned from the other folds alone (the weights from features
// cross-fitted inside them), and the fold left out is ranked without and with the re-ranker.
// Run: npx tsx bench/tool-search-rerank-cv.ts [folds] [depth]   (TRAIN='{"l2":…}' to try options)
import { DEFAULT_RANK_OPTIONS, type RankOptions } from '../src/agent/tool-search/rank.js';
import { SHIPPED_TRAIN_OPTIONS, type TrainOptions } from '../src/agent/tool-search/rerank.js';
import { coreDeferred, loadCatalog, loadTuning, recall } from './tool-search-data.js';
import { SHIPPED_DEPTH, tableFrom, termsOf, trainModel } from './tool-search-rerank-train.js';

const catalog = loadCatalog();
const surface = [...(await coreDeferred()), ...catalog.tools];
const requests = loadTuning(catalog);
const K = Number(process.argv[2] ?? 4);
const depth = Number(process.argv[3] ?? SHIPPED_DEPTH);
const train: TrainOptions = { ...SHIPPED_TRAIN_OPTIONS, ...JSON.parse(process.env.TRAIN ?? '{}') };
// First-stage options to try (RANK='{"wordnet":…}'); the defaults otherwise.
const rank: Partial<RankOptions> = JSON.parse(process.env.RANK ?? '{}');
const toolTerms = termsOf(surface);
const pct = (x: number) => (x * 100).toFixed(1);
let before = 0;
let after = 0;
let before1 = 0;
let after1 = 0;
for (let k = 0; k < K; k++) {
  const test = requests.filter((_, i) => i % K === k);
  const rest = requests.filter((_, i) => i % K !== k);
  const table = tableFrom(rest, toolTerms);
  const weights = trainModel(rest, surface, depth, train, rank);
  const off = recall(test, surface, { ...DEFAULT_RANK_OPTIONS, ...rank, translations: table, rerank: undefined });
  const on = recall(test, surface, { ...DEFAULT_RANK_OPTIONS, ...rank, translations: table, rerank: { depth, weights } });
  before += off.top3 / K;
  after += on.top3 / K;
  before1 += off.top1 / K;
  after1 += on.top1 / K;
  process.stdout.write(`fold ${k + 1}/${K} (${test.length}): top-3 ${pct(off.top3)} → ${pct(on.top3)}  top-1 ${pct(off.top1)} → ${pct(on.top1)}  top-5 ${pct(off.top5)} → ${pct(on.top5)}\n`);
}
process.stdout.write(`mean top-3 ${pct(before)} → ${pct(after)} (${after >= before ? '+' : ''}${pct(after - before)})  top-1 ${pct(before1)} → ${pct(after1)}  [depth ${depth}, ${JSON.stringify(train)}]\n`);
