import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { FEATURES, SHIPPED_TRAIN_OPTIONS, score, trainPairwise, type RankedList } from './rerank.js';
import { RERANK_MODEL } from './rerank-model.js';
import { DEFAULT_RANK_OPTIONS, rankCandidates, rankTools, type Searchable } from './rank.js';

const D = FEATURES.length;
/** A vector with the named features set, the rest 0. */
const vec = (set: Partial<Record<(typeof FEATURES)[number], number>>) => FEATURES.map((f) => set[f] ?? 0);

describe('pairwise training (logistic loss on right-above-wrong pairs)', () => {
  // The right tool is the one whose name the request says, wherever the first stage put it.
  const lists: RankedList[] = [
    { features: [vec({ base_rank_recip: 1, name_said: 0 }), vec({ base_rank_recip: 0.5, name_said: 1 }), vec({ base_rank_recip: 0.33, name_said: 0.2 })], relevant: [false, true, false] },
    { features: [vec({ base_rank_recip: 1, name_said: 0.1 }), vec({ base_rank_recip: 0.5, name_said: 0 }), vec({ base_rank_recip: 0.33, name_said: 0.9 })], relevant: [false, false, true] },
    { features: [vec({ base_rank_recip: 1, name_said: 1 }), vec({ base_rank_recip: 0.5, name_said: 0 })], relevant: [true, false] },
  ];

  it('learns the feature that tells the right tool apart, and ranks every list right', () => {
    const w = trainPairwise(lists);
    expect(w).toHaveLength(D);
    expect(w[FEATURES.indexOf('name_said')]!).toBeGreaterThan(0);
    for (const l of lists) {
      const scores = l.features.map((x) => score(w, x));
      const right = scores[l.relevant.indexOf(true)]!;
      for (let i = 0; i < scores.length; i++) if (!l.relevant[i]) expect(right).toBeGreaterThan(scores[i]!);
    }
  });

  it('is deterministic (the shipped weights are rebuilt digit for digit)', () => {
    expect(trainPairwise(lists)).toEqual(trainPairwise(lists));
  });

  it('lists with no right candidate, or only right ones, teach nothing', () => {
    const none: RankedList[] = [
      { features: [vec({ name_said: 1 }), vec({ name_said: 0 })], relevant: [false, false] },
      { features: [vec({ name_said: 1 }), vec({ name_said: 0 })], relevant: [true, true] },
    ];
    expect(trainPairwise(none).every((x) => x === 0)).toBe(true);
    expect(trainPairwise([]).every((x) => x === 0)).toBe(true);
  });

  it('a larger L2 penalty gives smaller weights', () => {
    const norm = (w: number[]) => Math.hypot(...w);
    expect(norm(trainPairwise(lists, { ...SHIPPED_TRAIN_OPTIONS, l2: 1 }))).toBeLessThan(norm(trainPairwise(lists, { ...SHIPPED_TRAIN_OPTIONS, l2: 0.001 })));
  });
});

describe('the shipped re-ranker', () => {
  it('has one finite weight a feature and re-ranks a few dozen candidates', () => {
    expect(RERANK_MODEL.weights).toHaveLength(D);
    for (const w of RERANK_MODEL.weights) expect(Number.isFinite(w)).toBe(true);
    expect(RERANK_MODEL.depth).toBeGreaterThan(3);
    expect(RERANK_MODEL.depth).toBeLessThanOrEqual(50);
    expect(DEFAULT_RANK_OPTIONS.rerank).toBe(RERANK_MODEL);
  });

  it('is what the build script makes from the tuning labels and the catalog', async () => {
    const root = fileURLToPath(new URL('../../../', import.meta.url));
    const run = await execa('npx', ['tsx', 'bench/tool-search-rerank.ts', '--check'], { cwd: root, reject: false });
    expect(run.stderr).not.toContain('differs');
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain('rerank-model.ts is current');
  }, 120_000);
});

describe('candidate features', () => {
  const tools: Searchable[] = [
    { id: 'web_fetch', description: 'Fetch a web page.', parameters: {} },
    { id: 'k8s__scale_deployment', description: 'Scale a deployment to a number of replicas.', parameters: { type: 'object', properties: { replicas: { type: 'number', description: 'How many' } } } },
    { id: 'k8s__delete_deployment', description: 'Delete a deployment.', parameters: {} },
  ];
  const byId = (query: string) => new Map(rankCandidates(query, tools, 10).map((c) => [c.tool.id, c.features]));
  const f = (x: Float64Array | undefined, name: (typeof FEATURES)[number]) => x![FEATURES.indexOf(name)]!;

  it('are computed for MCP servers\' tools only (Warden\'s own keep their places), one value a feature', () => {
    const found = byId('fetch the deployment page');
    expect(found.has('web_fetch')).toBe(false);
    for (const x of found.values()) expect(x).toHaveLength(D);
  });

  it('say what the request asks against what the tool\'s name and text say', () => {
    const found = byId('scale the deployment replicas');
    const scale = found.get('k8s__scale_deployment');
    const del = found.get('k8s__delete_deployment');
    expect(f(scale, 'name_said')).toBe(1);
    expect(f(del, 'name_said')).toBe(0.5);
    expect(f(scale, 'coverage_any')).toBe(1);
    expect(f(scale, 'action_match')).toBe(1);
    expect(f(del, 'action_opposed')).toBe(1);
    expect(f(scale, 'base_rank_recip')).toBe(1);
    expect(f(scale, 'bm25_params')).toBeGreaterThan(0);
    expect(f(del, 'bm25_params')).toBe(0);
  });

  it('re-ranking keeps an exact id first', () => {
    expect(rankTools('k8s__delete_deployment', tools, 3)[0]!.id).toBe('k8s__delete_deployment');
  });
});
