/**
 * Values derived from an immutable generation (a loaded config, or a map inside one: a reload
 * parses a new object, never changes one in place) and a string key, built once and then
 * answered from memory.
 *
 * - Per generation, by identity and held weakly: a reload's new config starts empty, and the
 *   old one's values go with it, without anyone having to clear them.
 * - Bounded per generation: past `maxPerGeneration` keys the oldest key goes, so keys chosen by
 *   others (channel and guild names, sender ids) cannot grow it without end.
 * - `undefined` is a value like any other (built once), not a miss.
 * - Invalidation: one key, one generation, or everything.
 *
 * The key is the caller's: encode every input the build reads, unambiguously (JSON-encode
 * strings others choose, so no separator they can write makes two inputs share a key).
 */
export class KeyedCache<G extends object, V> {
  private byGeneration = new WeakMap<G, Map<string, V>>();

  constructor(private readonly maxPerGeneration: number) {
    if (!Number.isInteger(maxPerGeneration) || maxPerGeneration < 1) throw new RangeError(`maxPerGeneration must be a positive integer, got ${maxPerGeneration}`);
  }

  /** The value for `key` in `generation`, built by `build` (and kept) the first time it is asked for. */
  get(generation: G, key: string, build: () => V): V {
    let values = this.byGeneration.get(generation);
    if (values === undefined) this.byGeneration.set(generation, (values = new Map()));
    if (values.has(key)) return values.get(key) as V;
    const value = build();
    if (values.size >= this.maxPerGeneration) values.delete(values.keys().next().value as string);
    values.set(key, value);
    return value;
  }

  /** Whether a value is kept for `key` in `generation` (nothing is built). */
  has(generation: G, key: string): boolean {
    return this.byGeneration.get(generation)?.has(key) === true;
  }

  /** How many keys `generation` keeps. */
  size(generation: G): number {
    return this.byGeneration.get(generation)?.size ?? 0;
  }

  /** Forgets one key of a generation, every key of one generation, or (no argument) everything. */
  invalidate(generation?: G, key?: string): void {
    if (generation === undefined) this.byGeneration = new WeakMap();
    else if (key === undefined) this.byGeneration.delete(generation);
    else this.byGeneration.get(generation)?.delete(key);
  }
}
