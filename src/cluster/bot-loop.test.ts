import { afterEach, describe, expect, it } from 'vitest';
import { ENGINES, freshStoreTarget } from '../../test/store-engines.js';
import { openWardenStore } from '../app/migrations.js';
import type { Store } from '../store/store.js';
import { botLoopStep, BotLoopStore, type BotLoopState } from './bot-loop.js';

const LIMITS = { maxEventsPerWindow: 3, windowSeconds: 60, cooldownSeconds: 120 };
const EMPTY: BotLoopState = { events: [], cooldownUntil: 0 };

describe('one bot turn (pure)', () => {
  it.each<[string, BotLoopState, number, boolean, BotLoopState]>([
    ['the first turn is taken', EMPTY, 1_000, true, { events: [1_000], cooldownUntil: 0 }],
    ['the third within the window is taken', { events: [1_000, 2_000], cooldownUntil: 0 }, 3_000, true, { events: [1_000, 2_000, 3_000], cooldownUntil: 0 }],
    ['the fourth within the window trips the breaker', { events: [1_000, 2_000, 3_000], cooldownUntil: 0 }, 4_000, false, { events: [], cooldownUntil: 124_000 }],
    ['during the cooldown nothing is taken', { events: [], cooldownUntil: 124_000 }, 100_000, false, { events: [], cooldownUntil: 124_000 }],
    ['after the cooldown turns are taken again', { events: [], cooldownUntil: 124_000 }, 124_000, true, { events: [124_000], cooldownUntil: 0 }],
    ['turns older than the window no longer count', { events: [1_000, 2_000, 3_000], cooldownUntil: 0 }, 62_500, true, { events: [3_000, 62_500], cooldownUntil: 0 }],
  ])('%s', (_name, state, now, allowed, next) => expect(botLoopStep(state, now, LIMITS)).toEqual({ allowed, next }));
});

const stores: Store[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

describe.each(ENGINES)('the bot loop count in the store on %s', (engine) => {
  it('counts one conversation across instances: of ten racing bot turns exactly three are taken; a person resets it', async () => {
    const target = await freshStoreTarget(engine);
    const open = async () => {
      const opened = await openWardenStore(target);
      if (!opened.ok) throw new Error(opened.error.message);
      stores.push(opened.store);
      return new BotLoopStore(opened.store.db);
    };
    const a = await open();
    // One SQLite file has one Warden; on PostgreSQL two instances race.
    const b = engine === 'postgres' ? await open() : a;
    const now = 1_000_000;
    const taken = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).take('discord:dev', LIMITS, now + i)));
    expect(taken.filter(Boolean)).toHaveLength(3);
    // Cooling down, on both instances; another conversation has its own count.
    expect(await b.take('discord:dev', LIMITS, now + 60_000)).toBe(false);
    expect(await a.take('discord:general', LIMITS, now)).toBe(true);
    // A person speaks: the count starts again.
    await a.reset('discord:dev');
    expect(await b.take('discord:dev', LIMITS, now + 60_000)).toBe(true);
  });
});
