import { terms } from './text.js';

/**
 * A translation model from the words teammates write to the words tool lists use, learned from
 * labelled (request, tool) pairs the IBM-Model-1 way: each word of the tool's name, server and
 * first sentence is explained by one word of the request (or by none: a NULL word takes the
 * words every tool has), and expectation-maximisation shares the counts out. It learns word
 * associations (`waiting` → `pull`, `copies` → `replica`), never tool ids, so it carries over
 * to tools and servers no labelled request named. Pure: the build script ships its output as
 * data (translations.ts) and the ranker reads that.
 */

/** Request term → the tool terms it stands for, each with p(tool term | request term). */
export type Translations = ReadonlyMap<string, ReadonlyArray<readonly [term: string, p: number]>>;

export interface TrainingPair {
  /** The request's terms (stemmed, stop words out: `terms()`). */
  request: readonly string[];
  /** The tool's terms the model may translate to (its name, server and first sentence). */
  tool: readonly string[];
  /** How much the pair counts (a request with two right tools gives each half). */
  weight: number;
}

export interface LearnOptions {
  /** EM rounds. */
  iterations: number;
  /** A request term seen in fewer labelled requests than this learns nothing. */
  minCount: number;
  /** Translations kept per request term (the most probable). */
  keep: number;
  /** Translations below this probability are dropped. */
  minProbability: number;
}

/**
 * What the shipped table is built with (bench/tool-search-learn.ts) and what cross-validation
 * measures: every request term, its 30 likeliest tool terms down to p = 0.01 (the ranker sums
 * them over a tool's words, so the tail counts too).
 */
export const SHIPPED_LEARN_OPTIONS: Readonly<LearnOptions> = Object.freeze({ iterations: 12, minCount: 1, keep: 30, minProbability: 0.01 });

const NULL = '';

export function learnTranslations(pairs: readonly TrainingPair[], options: LearnOptions = SHIPPED_LEARN_OPTIONS): Translations {
  const seen = new Map<string, number>();
  for (const pair of pairs) for (const q of new Set(pair.request)) seen.set(q, (seen.get(q) ?? 0) + pair.weight);
  const prepared = pairs.map((p) => ({ request: [NULL, ...new Set(p.request)], tool: [...new Set(p.tool)], weight: p.weight }));
  // p(t | q), over the terms co-occurring with q (uniform to start: Model 1's likelihood is convex).
  let prob = new Map<string, Map<string, number>>();
  for (const p of prepared) {
    for (const q of p.request) {
      let row = prob.get(q);
      if (!row) prob.set(q, (row = new Map()));
      for (const t of p.tool) row.set(t, 1);
    }
  }
  for (let round = 0; round < options.iterations; round++) {
    const counts = new Map<string, Map<string, number>>();
    for (const p of prepared) {
      for (const t of p.tool) {
        let total = 0;
        for (const q of p.request) total += prob.get(q)!.get(t)!;
        if (total <= 0) continue;
        for (const q of p.request) {
          let row = counts.get(q);
          if (!row) counts.set(q, (row = new Map()));
          row.set(t, (row.get(t) ?? 0) + (p.weight * prob.get(q)!.get(t)!) / total);
        }
      }
    }
    const next = new Map<string, Map<string, number>>();
    for (const [q, row] of counts) {
      let sum = 0;
      for (const c of row.values()) sum += c;
      const normalised = new Map<string, number>();
      for (const [t, c] of row) normalised.set(t, c / sum);
      next.set(q, normalised);
    }
    prob = next;
  }
  const out = new Map<string, Array<readonly [string, number]>>();
  for (const [q, row] of prob) {
    if (q === NULL || (seen.get(q) ?? 0) < options.minCount) continue;
    // A term's translation to itself is kept: how much a request word is matched by the same
    // word in a tool's name varies (`new` seldom is, `pods` nearly always), and cross-validation
    // scores the table better with it (80.2 % against 79.3 % top-3 over four folds).
    const kept = [...row]
      .filter(([, p]) => p >= options.minProbability)
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, options.keep)
      .map(([t, p]) => [t, Math.round(p * 1000) / 1000] as const);
    if (kept.length > 0) out.set(q, kept);
  }
  return out;
}

/** The training pairs of labelled requests: one per right tool, its terms from `toolTerms`. */
export function trainingPairs(requests: ReadonlyArray<{ request: string; expected: readonly string[] }>, toolTerms: (id: string) => readonly string[]): TrainingPair[] {
  const out: TrainingPair[] = [];
  for (const r of requests) {
    const request = terms(r.request);
    for (const id of r.expected) out.push({ request, tool: toolTerms(id), weight: 1 / r.expected.length });
  }
  return out;
}
