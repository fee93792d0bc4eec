// Training the re-ranker (src/agent/tool-search/rerank.ts) from labelled requests, shared by the
// build script and cross-validation. Each request's candidate features are computed with a
// translation table learned WITHOUT that request (inner folds), so the model learns how much a
// translation counts on a request it has not seen, as at run time.
import { DEFAULT_RANK_OPTIONS, learningTerms, rankCandidates, type RankOptions, type Searchable } from '../src/agent/tool-search/rank.js';
import { learnTranslations, trainingPairs, SHIPPED_LEARN_OPTIONS, type Translations } from '../src/agent/tool-search/learn.js';
import { SHIPPED_TRAIN_OPTIONS, trainPairwise, type RankedList, type TrainOptions } from '../src/agent/tool-search/rerank.js';
import type { LabelledRequest } from './tool-search-data.js';

/** How many first-stage candidates the shipped model re-ranks. */
export const SHIPPED_DEPTH = 30;
/** Inner folds of the cross-fitted features. */
export const INNER_FOLDS = 4;

export function termsOf(surface: readonly Searchable[]): (id: string) => string[] {
  const byId = new Map(surface.map((t) => [t.id, t]));
  const cache = new Map<string, string[]>();
  return (id) => {
    let t = cache.get(id);
    if (!t) cache.set(id, (t = learningTerms(byId.get(id)!)));
    return t;
  };
}

export const tableFrom = (requests: readonly LabelledRequest[], toolTerms: (id: string) => string[]): Translations =>
  learnTranslations(trainingPairs(requests, toolTerms), SHIPPED_LEARN_OPTIONS);

/** The requests' candidate lists, each request's features from a table learned without it. */
export function crossFitLists(requests: readonly LabelledRequest[], surface: readonly Searchable[], depth: number, rank: Partial<RankOptions> = {}, folds = INNER_FOLDS): RankedList[] {
  const toolTerms = termsOf(surface);
  const lists: RankedList[] = [];
  for (let j = 0; j < folds; j++) {
    const table = tableFrom(requests.filter((_, i) => i % folds !== j), toolTerms);
    for (const r of requests.filter((_, i) => i % folds === j)) {
      const found = rankCandidates(r.request, surface, depth, { ...DEFAULT_RANK_OPTIONS, ...rank, translations: table });
      lists.push({ features: found.map((c) => c.features), relevant: found.map((c) => r.expected.includes(c.tool.id)) });
    }
  }
  return lists;
}

export function trainModel(requests: readonly LabelledRequest[], surface: readonly Searchable[], depth = SHIPPED_DEPTH, train: TrainOptions = SHIPPED_TRAIN_OPTIONS, rank: Partial<RankOptions> = {}): number[] {
  return trainPairwise(crossFitLists(requests, surface, depth, rank), train);
}
