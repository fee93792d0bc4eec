import { describe, expect, it } from 'vitest';
import { KeyedCache } from './keyed-cache.js';

type Gen = 'A' | 'B';
/** One step: ask for a key in a generation (expecting a build or not), or invalidate. */
type Step = { get: [Gen, string]; built: boolean } | { invalidate: [Gen?, string?] };

/**
 * Each case runs its steps against a cache of at most `max` keys per generation, over two
 * generation objects; a build returns `${gen}:${key}#${n}` (n counting builds), so a value
 * answered from memory is told apart from a rebuilt one.
 */
const cases: Array<[string, number, Step[]]> = [
  ['a key is built once, then answered from memory', 4, [{ get: ['A', 'x'], built: true }, { get: ['A', 'x'], built: false }, { get: ['A', 'x'], built: false }]],
  ['another key is built on its own', 4, [{ get: ['A', 'x'], built: true }, { get: ['A', 'y'], built: true }, { get: ['A', 'x'], built: false }]],
  ['a new generation (a reload) starts empty', 4, [{ get: ['A', 'x'], built: true }, { get: ['B', 'x'], built: true }, { get: ['A', 'x'], built: false }, { get: ['B', 'x'], built: false }]],
  [
    'past the bound the oldest key goes, the others stay',
    2,
    [{ get: ['A', 'x'], built: true }, { get: ['A', 'y'], built: true }, { get: ['A', 'z'], built: true }, { get: ['A', 'y'], built: false }, { get: ['A', 'z'], built: false }, { get: ['A', 'x'], built: true }],
  ],
  ['the bound is per generation', 1, [{ get: ['A', 'x'], built: true }, { get: ['B', 'y'], built: true }, { get: ['A', 'x'], built: false }, { get: ['B', 'y'], built: false }]],
  ['invalidating a key rebuilds only it', 4, [{ get: ['A', 'x'], built: true }, { get: ['A', 'y'], built: true }, { invalidate: ['A', 'x'] }, { get: ['A', 'x'], built: true }, { get: ['A', 'y'], built: false }]],
  ['invalidating a generation leaves the other', 4, [{ get: ['A', 'x'], built: true }, { get: ['B', 'x'], built: true }, { invalidate: ['A'] }, { get: ['A', 'x'], built: true }, { get: ['B', 'x'], built: false }]],
  ['invalidating everything rebuilds every generation', 4, [{ get: ['A', 'x'], built: true }, { get: ['B', 'x'], built: true }, { invalidate: [] }, { get: ['A', 'x'], built: true }, { get: ['B', 'x'], built: true }]],
  ['invalidating what was never kept is harmless', 4, [{ invalidate: ['B', 'nothing'] }, { invalidate: ['B'] }, { get: ['A', 'x'], built: true }, { get: ['A', 'x'], built: false }]],
];

describe('KeyedCache', () => {
  it.each(cases)('%s', (_label, max, steps) => {
    const cache = new KeyedCache<object, string>(max);
    const gens = { A: {}, B: {} };
    let builds = 0;
    const given = new Map<string, string>();
    for (const step of steps) {
      if ('invalidate' in step) {
        const [gen, key] = step.invalidate;
        cache.invalidate(gen ? gens[gen] : undefined, key);
        continue;
      }
      const [gen, key] = step.get;
      const before = builds;
      const value = cache.get(gens[gen], key, () => `${gen}:${key}#${++builds}`);
      expect(builds - before, `${gen}/${key} built`).toBe(step.built ? 1 : 0);
      expect(value.startsWith(`${gen}:${key}#`)).toBe(true);
      // From memory: the very value built before for this generation and key.
      if (!step.built) expect(value).toBe(given.get(`${gen}/${key}`));
      given.set(`${gen}/${key}`, value);
      expect(cache.size(gens[gen])).toBeLessThanOrEqual(max);
    }
  });

  it('keeps undefined as a value: built once, not a miss', () => {
    const cache = new KeyedCache<object, string | undefined>(4);
    const gen = {};
    let builds = 0;
    expect(cache.get(gen, 'k', () => (builds++, undefined))).toBeUndefined();
    expect(cache.get(gen, 'k', () => (builds++, 'other'))).toBeUndefined();
    expect(builds).toBe(1);
    expect(cache.has(gen, 'k')).toBe(true);
  });

  it('does not keep a value whose build threw', () => {
    const cache = new KeyedCache<object, number>(4);
    const gen = {};
    expect(() => cache.get(gen, 'k', () => { throw new Error('bad'); })).toThrow('bad');
    expect(cache.has(gen, 'k')).toBe(false);
    expect(cache.get(gen, 'k', () => 7)).toBe(7);
  });

  it.each([0, -1, 1.5, Number.NaN])('refuses a bound of %s', (max) => {
    expect(() => new KeyedCache(max)).toThrow(/maxPerGeneration must be a positive integer/);
  });
});
