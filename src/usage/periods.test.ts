import { describe, expect, it } from 'vitest';
import { PARTS_CACHE_MAX, partsCache, periodAt } from './periods.js';

describe('time zone formatters stay bounded over a long-lived process', () => {
  it('every spelling of every zone (names are matched case-insensitively, so spellings are many) keeps at most its bound; an evicted zone answers the same', () => {
    const now = Date.UTC(2026, 11, 6, 23, 30);
    const berlin = periodAt(now, 'day', 'Europe/Berlin');
    const zones = Intl.supportedValuesOf('timeZone');
    for (const zone of zones) {
      periodAt(now, 'day', zone);
      periodAt(now, 'day', zone.toLowerCase());
    }
    expect(zones.length * 2).toBeGreaterThan(PARTS_CACHE_MAX);
    expect(partsCache.size).toBeLessThanOrEqual(PARTS_CACHE_MAX);
    expect(partsCache.has('Europe/Berlin')).toBe(false);
    expect(periodAt(now, 'day', 'Europe/Berlin')).toEqual(berlin);
  });
});
