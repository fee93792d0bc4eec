import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { DEFAULT_RANK_OPTIONS, rankTools, type Searchable } from './rank.js';
import { SHIPPED_LEARN_OPTIONS, learnTranslations, trainingPairs, type TrainingPair } from './learn.js';
import { TRANSLATIONS } from './translations.js';

const pair = (request: string[], tool: string[], weight = 1): TrainingPair => ({ request, tool, weight });

describe('learning request words → tool words (IBM Model 1)', () => {
  // Team speak on one side, API words on the other; `list` and `kubernetes` are in every tool.
  const PAIRS = [
    pair(['bump', 'copies', 'web'], ['scale', 'replica', 'kubernetes']),
    pair(['copies', 'worker'], ['scale', 'replica', 'kubernetes']),
    pair(['crashing', 'pods'], ['list', 'pod', 'kubernetes']),
    pair(['which', 'pods', 'pending'], ['list', 'pod', 'kubernetes']),
    pair(['web', 'logs'], ['log', 'pod', 'kubernetes']),
  ];
  const table = learnTranslations(PAIRS, { ...SHIPPED_LEARN_OPTIONS, minCount: 2 });
  const p = (q: string, t: string) => table.get(q)?.find(([w]) => w === t)?.[1] ?? 0;

  it.each([
    // A word every tool has is explained by the NULL word, not by the request's words.
    ['copies', 'replica', 'kubernetes'],
    ['copies', 'scale', 'kubernetes'],
    ['pods', 'pod', 'kubernetes'],
    // `web` was said with a scale tool once and a logs tool once: neither tool's own word wins it.
    ['copies', 'scale', 'log'],
  ])('%s stands for %s more than for %s', (q, likely, unlikely) => {
    expect(p(q, likely)).toBeGreaterThan(0.1);
    expect(p(q, likely)).toBeGreaterThan(p(q, unlikely));
  });

  it('a request word seen in fewer requests than minCount learns nothing', () => {
    expect(table.has('bump')).toBe(false);
    expect(table.has('copies')).toBe(true);
  });

  it('keeps at most `keep` translations a word, none below minProbability, probabilities summing to at most 1', () => {
    const small = learnTranslations(PAIRS, { iterations: 12, minCount: 1, keep: 2, minProbability: 0.2 });
    for (const row of small.values()) {
      expect(row.length).toBeLessThanOrEqual(2);
      for (const [, p] of row) expect(p).toBeGreaterThanOrEqual(0.2);
      expect(row.reduce((s, [, p]) => s + p, 0)).toBeLessThanOrEqual(1.001);
    }
  });

  it('is deterministic (the shipped table is rebuilt byte for byte)', () => {
    expect([...learnTranslations(PAIRS)]).toEqual([...learnTranslations(PAIRS)]);
  });

  it('a request with two right tools gives each half a pair', () => {
    const pairs = trainingPairs([{ request: 'scale the web pods', expected: ['a', 'b'] }], (id) => [id]);
    expect(pairs).toEqual([
      { request: ['scal', 'web', 'pod'], tool: ['a'], weight: 0.5 },
      { request: ['scal', 'web', 'pod'], tool: ['b'], weight: 0.5 },
    ]);
  });

  it('the shipped table is what the build script makes from the tuning labels and the catalog', async () => {
    const root = fileURLToPath(new URL('../../../', import.meta.url));
    const run = await execa('npx', ['tsx', 'bench/tool-search-learn.ts', '--check'], { cwd: root, reject: false });
    expect(run.stderr).not.toContain('differs');
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain('translations.ts is current');
  }, 60_000);

  it('the shipped table holds only words (no tool ids) and probabilities', () => {
    expect(TRANSLATIONS.size).toBeGreaterThan(500);
    for (const [q, row] of TRANSLATIONS) {
      expect(q.includes('__')).toBe(false);
      for (const [t, p] of row) {
        expect(t.includes('__')).toBe(false);
        expect(p).toBeGreaterThan(0);
        expect(p).toBeLessThanOrEqual(1);
      }
    }
  });
});

describe('the ranker with learned translations', () => {
  const tools: Searchable[] = [
    { id: 'k8s__kubectl_resize', description: 'Resize a deployment: the replicas of the deployment.', parameters: {} },
    { id: 'k8s__kubectl_logs', description: 'Deployment logs.', parameters: {} },
  ];
  // A word no tool and no lexicon row knows, seen standing for `logs` in labelled requests.
  const translations = new Map([['oomph', [['log', 0.5], ['output', 0.3]] as const]]);

  it('lifts the tool whose name holds the words the request word stood for', () => {
    const query = 'oomph of the deployment';
    // Without the table only `deployment` matches, and the resize tool wins it (its description says it twice over).
    expect(rankTools(query, tools, 2, { ...DEFAULT_RANK_OPTIONS, learned: 0 }).map((t) => t.id)[0]).toBe('k8s__kubectl_resize');
    expect(rankTools(query, tools, 2, { ...DEFAULT_RANK_OPTIONS, learned: 0.4, translations }).map((t) => t.id)[0]).toBe('k8s__kubectl_logs');
  });

  it('with learned 0 the table is not read', () => {
    // A table that puts the logs tool first when it is read.
    const lure = new Map([['oomph', [['log', 0.9]] as const]]);
    const query = 'oomph of the deployment';
    const ids = (options: typeof DEFAULT_RANK_OPTIONS) => rankTools(query, tools, 2, options).map((t) => t.id);
    expect(ids({ ...DEFAULT_RANK_OPTIONS, learned: 2, translations: lure })[0]).toBe('k8s__kubectl_logs');
    expect(ids({ ...DEFAULT_RANK_OPTIONS, learned: 0, translations: lure })).toEqual(ids({ ...DEFAULT_RANK_OPTIONS, learned: 0, translations: new Map() }));
  });

  it('a translation to words only off-surface tools hold finds nothing off the surface', () => {
    const lure = new Map([['deploy', [['secret', 0.9], ['vault', 0.9]] as const]]);
    const surface = tools.map((t) => ({ ...t }));
    const found = rankTools('deployment', surface, 10, { ...DEFAULT_RANK_OPTIONS, learned: 5, translations: lure });
    for (const t of found) expect(surface).toContain(t);
  });
});
