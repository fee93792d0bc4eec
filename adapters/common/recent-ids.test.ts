import { describe, expect, it } from 'vitest';
import { RecentIds } from './recent-ids.js';

describe('RecentIds', () => {
  it('reports a repeat and forgets the oldest id beyond capacity', () => {
    const ids = new RecentIds(2);
    expect(['a', 'a', 'b', 'c', 'b', 'a'].map((id) => ids.firstTime(id))).toEqual([true, false, true, true, false, true]);
  });
});
