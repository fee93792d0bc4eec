/**
 * A small in-memory cache whose entries expire: repeated web searches, fetched pages and media
 * descriptions are answered without a second request. Bounded: past `maxEntries` the oldest
 * entry goes. The clock is injectable so tests need not wait.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; storedAt: number; expiresAt: number }>();

  constructor(
    private readonly maxEntries = 200,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The value under `key` when it is younger than `ttlMs` and its own expiry has not passed: a
   * shorter TTL than the one it was stored with limits reuse, a longer one does not extend it.
   * A TTL of 0 reads nothing.
   */
  get(key: string, ttlMs: number): V | undefined {
    if (ttlMs <= 0) return undefined;
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    const now = this.now();
    if (now >= entry.expiresAt) {
      this.entries.delete(key);
      return undefined;
    }
    return now - entry.storedAt < ttlMs ? entry.value : undefined;
  }

  set(key: string, value: V, ttlMs: number): void {
    if (ttlMs <= 0) return;
    const now = this.now();
    this.entries.delete(key);
    this.entries.set(key, { value, storedAt: now, expiresAt: now + ttlMs });
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
  }

  get size(): number {
    return this.entries.size;
  }
}
