// Scores the ranker across authors: the translation table and the re-ranker's weights are learned
// from one set of tuning files and the requests of another tuning file, written by another author,
// are ranked. Closer to a blind set than a fold of one author's requests, and it never touches a
// held-out file (only tune*.jsonl names are accepted).
// Run: npx tsx bench/tool-search-cross.ts <train file,…> <test file>   e.g. tune-2.jsonl tune.jsonl
import path from 'node:path';
import { DEFAULT_RANK_OPTIONS } from '../src/agent/tool-search/rank.js';
import { SHIPPED_TRAIN_OPTIONS } from '../src/agent/tool-search/rerank.js';
import { SHIPPED_LEARN_OPTIONS, learnTranslations, trainingPairs } from '../src/agent/tool-search/learn.js';
import { DATA_DIR, coreDeferred, loadCatalog, loadRequests, recall } from './tool-search-data.js';
import { SHIPPED_DEPTH, termsOf, trainModel } from './tool-search-rerank-train.js';

const [trainArg, testArg] = process.argv.slice(2);
const files = [...(trainArg ?? '').split(','), testArg ?? ''];
if (!trainArg || !testArg || files.some((f) => !/^tune[\w-]*\.jsonl$/.test(f))) {
  process.stderr.write('usage: tool-search-cross.ts <tune file,…> <tune file>\n');
  process.exit(2);
}
const catalog = loadCatalog();
const surface = [...(await coreDeferred()), ...catalog.tools];
const train = trainArg.split(',').flatMap((f) => loadRequests(path.join(DATA_DIR, f), catalog));
const test = loadRequests(path.join(DATA_DIR, testArg), catalog);
// Options to try (JSON): RANK (first stage), LEARN (translation table), TRAIN (re-ranker), DEPTH.
const rank = { ...DEFAULT_RANK_OPTIONS, ...JSON.parse(process.env.RANK ?? '{}') };
const depth = Number(process.env.DEPTH ?? SHIPPED_DEPTH);
const table = learnTranslations(trainingPairs(train, termsOf(surface)), { ...SHIPPED_LEARN_OPTIONS, ...JSON.parse(process.env.LEARN ?? '{}') });
const weights = trainModel(train, surface, depth, { ...SHIPPED_TRAIN_OPTIONS, ...JSON.parse(process.env.TRAIN ?? '{}') }, JSON.parse(process.env.RANK ?? '{}'));
const pct = (x: number) => (x * 100).toFixed(1);
const none = recall(test, surface, { ...rank, translations: new Map(), rerank: undefined });
const off = recall(test, surface, { ...rank, translations: table, rerank: undefined });
const on = recall(test, surface, { ...rank, translations: table, rerank: { depth, weights } });
process.stdout.write(
  `train ${trainArg} (${train.length}) → test ${testArg} (${test.length}): no table top-3 ${pct(none.top3)} | first stage top-3 ${pct(off.top3)} top-5 ${pct(off.top5)} | re-ranked top-1 ${pct(on.top1)} top-3 ${pct(on.top3)} top-5 ${pct(on.top5)}\n`,
);
