import { describe, expect, it } from 'vitest';
import { RecentForwards } from './recent-forwards.js';

describe('RecentForwards: whether a conversation is likely running on another instance', () => {
  const cases: Array<{ name: string; notes: Array<[key: string, forwarded: boolean, at: number]>; ask: [key: string, at: number]; elsewhere: boolean }> = [
    { name: 'never placed here', notes: [], ask: ['a', 0], elsewhere: false },
    { name: 'latest place went to another instance, just now', notes: [['a', true, 1_000]], ask: ['a', 1_000], elsewhere: true },
    { name: 'latest place went to another instance, within the window', notes: [['a', true, 1_000]], ask: ['a', 1_999], elsewhere: true },
    { name: 'latest place went to another instance, the window passed', notes: [['a', true, 1_000]], ask: ['a', 2_000], elsewhere: false },
    { name: 'forwarded, then a place here', notes: [['a', true, 1_000], ['a', false, 1_100]], ask: ['a', 1_200], elsewhere: false },
    { name: 'a place here, then forwarded', notes: [['a', false, 1_000], ['a', true, 1_100]], ask: ['a', 1_200], elsewhere: true },
    { name: 'another conversation forwarded', notes: [['b', true, 1_000]], ask: ['a', 1_000], elsewhere: false },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const recent = new RecentForwards(1_000);
      for (const [key, forwarded, at] of c.notes) recent.note(key, forwarded, at);
      expect(recent.elsewhere(...c.ask)).toBe(c.elsewhere);
    });
  }

  it('forgets a conversation once its window passed, and the oldest forward past its bound', () => {
    const recent = new RecentForwards(1_000, 2);
    recent.note('a', true, 0);
    expect(recent.elsewhere('a', 5_000)).toBe(false);
    expect(recent.size).toBe(0);
    recent.note('a', true, 10);
    recent.note('b', true, 20);
    recent.note('a', true, 30);
    recent.note('c', true, 40);
    expect(recent.size).toBe(2);
    expect([recent.elsewhere('a', 50), recent.elsewhere('b', 50), recent.elsewhere('c', 50)]).toEqual([true, false, true]);
  });
});
