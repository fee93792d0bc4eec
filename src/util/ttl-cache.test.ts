import { describe, expect, it } from 'vitest';
import { TtlCache } from './ttl-cache.js';

describe('TtlCache', () => {
  const clock = () => {
    let t = 1_000;
    return { now: () => t, advance: (ms: number) => (t += ms) };
  };

  it('answers within the TTL and forgets after it', () => {
    const c = clock();
    const cache = new TtlCache<string>(10, c.now);
    cache.set('k', 'v', 60_000);
    expect(cache.get('k', 60_000)).toBe('v');
    c.advance(59_999);
    expect(cache.get('k', 60_000)).toBe('v');
    c.advance(1);
    expect(cache.get('k', 60_000)).toBeUndefined();
  });

  it('a shorter TTL limits reuse; a longer one does not extend the entry', () => {
    const c = clock();
    const cache = new TtlCache<string>(10, c.now);
    cache.set('k', 'v', 60_000);
    c.advance(30_000);
    expect(cache.get('k', 10_000)).toBeUndefined();
    expect(cache.get('k', 3_600_000)).toBe('v');
    c.advance(30_000);
    expect(cache.get('k', 3_600_000)).toBeUndefined();
  });

  it('a TTL of 0 neither reads nor writes', () => {
    const cache = new TtlCache<string>();
    cache.set('k', 'v', 0);
    expect(cache.size).toBe(0);
    cache.set('k', 'v', 1000);
    expect(cache.get('k', 0)).toBeUndefined();
  });

  it('drops the oldest entry past its bound', () => {
    const cache = new TtlCache<number>(2);
    cache.set('a', 1, 1000);
    cache.set('b', 2, 1000);
    cache.set('c', 3, 1000);
    expect([cache.get('a', 1000), cache.get('b', 1000), cache.get('c', 1000)]).toEqual([undefined, 2, 3]);
  });
});
