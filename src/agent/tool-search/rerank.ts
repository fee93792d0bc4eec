/**
 * The learning-to-rank stage of tool_search: a linear model over generic features of a
 * (request, candidate tool) pair, trained pairwise (logistic loss on "the right tool scores above
 * that wrong one") from labelled requests, and applied as a re-rank of the first stage's best
 * candidates. It only reorders candidates it is handed, which the first stage found on the turn's
 * surface: it adds none. Features are about words and fields, never tool ids or servers by name,
 * so the model carries to servers no labelled request named. Only MCP servers' tools are
 * re-ordered, among the places they held: the labelled requests ask for none of Warden's own
 * tools, so a model would learn only that those are never right, which is the data's make-up,
 * not the world's. Pure: a build script ships the
 * weights as data (rerank-model.ts) and the ranker reads them.
 */

/** The features, in the order a vector holds them (rank.ts computes them). */
export const FEATURES = [
  // The first stage: its score relative to the best candidate's (log), and its rank.
  'base_log_ratio',
  'base_rank_recip',
  // BM25 of the request's terms in each field alone (the first stage sums them with fixed weights).
  'bm25_name',
  'bm25_server',
  'bm25_lead',
  'bm25_description',
  'bm25_params',
  // The request's own terms found in the tool: any field; name, server or first sentence; idf-weighted.
  'coverage_any',
  'coverage_head',
  'coverage_idf',
  // The tool's name words the request asks for: said, or translated (learned table), and the
  // name's object words (its words other than verbs) alone.
  'name_said',
  'name_translated',
  'object_said',
  'object_translated',
  // The first sentence's terms the request translates to.
  'lead_translated',
  // The learned translation evidence (rank.ts: Σ ln(1 + Σ p)).
  'translation',
  // What the request wants done against what the name says: the same, near, opposed, unknown.
  'action_match',
  'action_opposed',
  'action_none',
  // The server: its prior (its tools together against the request), named by the request.
  'server_prior',
  'server_named',
  // Name length (words, log): long names match by chance more.
  'name_length',
  // The request's own terms the tool explains: each term's best p(tool word | term) over the
  // tool's name, server and first sentence (1 when it holds the term), averaged; and over the
  // whole description and parameters.
  'request_explained_head',
  'request_explained_all',
  // General English (related-words.ts, from WordNet): the name's object words a request term
  // relates to without saying them; the request's terms the tool lacks but its name, server or
  // first sentence holds a related word of. Each weighted by the relation's weight.
  'object_related',
  'request_related_head',
] as const;

export type FeatureName = (typeof FEATURES)[number];

export interface RerankModel {
  /** How many of the first stage's best candidates are re-ranked (0: off). */
  depth: number;
  /** One weight a feature, in FEATURES order (the score is their dot product). */
  weights: readonly number[];
}

export const score = (weights: readonly number[], x: ArrayLike<number>): number => {
  let s = 0;
  for (let j = 0; j < weights.length; j++) s += weights[j]! * x[j]!;
  return s;
};

/** One labelled request's candidates: their feature vectors and which are right. */
export interface RankedList {
  features: ReadonlyArray<ArrayLike<number>>;
  relevant: readonly boolean[];
}

export interface TrainOptions {
  /** Gradient steps (full batch, deterministic). */
  iterations: number;
  /** Step size on standardised features. */
  rate: number;
  /** L2 penalty on the standardised weights. */
  l2: number;
  /**
   * How much more a pair counts when its wrong tool is ranked in the first stage's top 3 (the
   * pairs top-3 recall depends on): weight 1 + topWeight there, 1 below.
   */
  topWeight: number;
}

export const SHIPPED_TRAIN_OPTIONS: Readonly<TrainOptions> = Object.freeze({ iterations: 300, rate: 0.5, l2: 0.01, topWeight: 0 });

/**
 * Pairwise logistic regression (RankNet with a linear scorer): minimises Σ w_pair · ln(1 + e^−(s⁺ − s⁻))
 * over every (right, wrong) pair of a list, plus l2/2 · |w|². Features are standardised for the
 * descent and the weights returned on the raw scale. Lists with no right candidate teach nothing.
 */
export function trainPairwise(lists: readonly RankedList[], options: TrainOptions = SHIPPED_TRAIN_OPTIONS): number[] {
  const d = FEATURES.length;
  const mean = new Float64Array(d);
  const sd = new Float64Array(d);
  let n = 0;
  for (const l of lists) for (const x of l.features) {
    n++;
    for (let j = 0; j < d; j++) mean[j]! += x[j]!;
  }
  if (n === 0) return new Array<number>(d).fill(0);
  for (let j = 0; j < d; j++) mean[j]! /= n;
  for (const l of lists) for (const x of l.features) for (let j = 0; j < d; j++) sd[j]! += (x[j]! - mean[j]!) ** 2;
  for (let j = 0; j < d; j++) sd[j] = Math.sqrt(sd[j]! / n) || 1;
  // Differences of standardised vectors (the mean cancels in a difference).
  const diffs: Float64Array[] = [];
  const pairWeights: number[] = [];
  for (const l of lists) {
    l.features.forEach((pos, i) => {
      if (!l.relevant[i]) return;
      l.features.forEach((neg, k) => {
        if (l.relevant[k]) return;
        const v = new Float64Array(d);
        for (let j = 0; j < d; j++) v[j] = (pos[j]! - neg[j]!) / sd[j]!;
        diffs.push(v);
        pairWeights.push(k < 3 ? 1 + options.topWeight : 1);
      });
    });
  }
  const w = new Float64Array(d);
  if (diffs.length === 0) return [...w];
  const total = pairWeights.reduce((a, b) => a + b, 0);
  const grad = new Float64Array(d);
  for (let it = 0; it < options.iterations; it++) {
    grad.fill(0);
    for (let p = 0; p < diffs.length; p++) {
      const v = diffs[p]!;
      const m = score(w as unknown as number[], v);
      // d/dm ln(1 + e^−m) = −1 / (1 + e^m)
      const g = -pairWeights[p]! / (1 + Math.exp(m));
      for (let j = 0; j < d; j++) grad[j]! += g * v[j]!;
    }
    for (let j = 0; j < d; j++) w[j]! -= options.rate * (grad[j]! / total + options.l2 * w[j]!);
  }
  return [...w].map((x, j) => x / sd[j]!);
}
