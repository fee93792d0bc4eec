// What a sweep takes from `follow_ups`, and what it reads to find out (both engines). Every
// instance sweeps every 15 s: when nothing is takeable the sweep reads no follow-up row and asks
// each other instance's liveness once, however many follow-ups are running elsewhere.
import { describe, expect, it } from 'vitest';
import type { TurnContext } from '../policy/context.js';
import type { Db } from '../store/db.js';
import { ENGINES, useTestStores } from '../../test/store-engines.js';
import { FollowUpStore, TAKE_LIMIT } from './follow-up-store.js';

const ME = 'me';
const context = { agentId: 'main', provider: 'web', chat: 'dm', channelId: 'web', senderId: 'local' } as unknown as TurnContext;

/** A row as the test sets it up: parked, or taken by an instance (null: a taken row naming none). */
type Holder = { state: 'parked' } | { state: 'taken'; by: string | null };

/** Counts the follow-up rows the store's queries return (`SELECT *`: whole rows). */
function counting(db: Db): { db: Db; rowsRead: () => number } {
  let rows = 0;
  const wrapped = new Proxy(db, {
    get(target, prop, receiver) {
      if (prop !== 'all') return Reflect.get(target, prop, receiver) as unknown;
      return async (sql: string, params?: unknown[]) => {
        const out = await target.all(sql, params as never);
        if (/^SELECT \*/.test(sql)) rows += out.length;
        return out;
      };
    },
  });
  return { db: wrapped, rowsRead: () => rows };
}

describe.each(ENGINES)('FollowUpStore.take (%s)', (engine) => {
  const stores = useTestStores();

  async function seeded(holders: readonly Holder[]) {
    const store = await (await stores.fresh(engine)).open();
    const plain = new FollowUpStore(store.db);
    const ids: string[] = [];
    for (const [i, h] of holders.entries()) {
      const id = await plain.park({ sessionKey: `s${i}`, agentId: 'main', context, replyTo: { provider: 'web', channelId: 'web' }, text: `follow-up ${i}` });
      if (h.state === 'taken') await store.db.run("UPDATE follow_ups SET state = 'taken', taken_by = ? WHERE id = ?", [h.by, id]);
      ids.push(id);
    }
    return { db: store.db, ids };
  }

  const LIVE = new Set(['live']);
  it.each<[string, Holder, boolean]>([
    ['a parked row', { state: 'parked' }, true],
    ['a row taken by this instance (its turn is queued here)', { state: 'taken', by: ME }, false],
    ['a row taken by a live instance', { state: 'taken', by: 'live' }, false],
    ['a row taken by an instance that no longer runs', { state: 'taken', by: 'dead' }, true],
    ['a taken row that names no instance', { state: 'taken', by: null }, true],
  ])('%s', async (_name, holder, takeable) => {
    const { db, ids } = await seeded([holder]);
    const taken = await new FollowUpStore(db).take(ME, async (i) => LIVE.has(i));
    expect(taken.map((t) => t.id)).toEqual(takeable ? ids : []);
    if (takeable) expect(await db.get('SELECT state, taken_by FROM follow_ups WHERE id = ?', [ids[0]!])).toEqual({ state: 'taken', taken_by: ME });
  });

  it('a sweep that finds nothing reads no follow-up row and asks each other instance once', async () => {
    const holders: Holder[] = [...Array.from({ length: 20 }, () => ({ state: 'taken', by: ME }) as const), ...Array.from({ length: 20 }, () => ({ state: 'taken', by: 'live' }) as const)];
    const { db } = await seeded(holders);
    const { db: watched, rowsRead } = counting(db);
    const asked: string[] = [];
    const taken = await new FollowUpStore(watched).take(ME, async (i) => (asked.push(i), LIVE.has(i)));
    expect(taken).toEqual([]);
    expect(rowsRead()).toBe(0);
    expect(asked).toEqual(['live']);
  });

  it('takes at most the limit, in park order across parked and orphaned rows; the next sweep takes the rest', async () => {
    const { db, ids } = await seeded([{ state: 'taken', by: 'dead' }, { state: 'parked' }, { state: 'taken', by: 'live' }, { state: 'parked' }, { state: 'taken', by: 'dead' }]);
    const store = new FollowUpStore(db);
    const alive = async (i: string) => LIVE.has(i);
    expect((await store.take(ME, alive, 2)).map((t) => t.id)).toEqual([ids[0], ids[1]]);
    expect((await store.take(ME, alive, 2)).map((t) => t.id)).toEqual([ids[3], ids[4]]);
    expect(await store.take(ME, alive, 2)).toEqual([]);
  });

  it.runIf(engine === 'sqlite')('both sweep queries are answered from the index, not a scan of the table', async () => {
    const { db } = await seeded([{ state: 'parked' }]);
    const plan = async (sql: string, params: unknown[]) => (await db.all<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`, params as never)).map((r) => r.detail).join('; ');
    expect(await plan("SELECT * FROM follow_ups WHERE state = 'parked' ORDER BY id LIMIT ?", [TAKE_LIMIT])).toMatch(/USING INDEX follow_ups_takeable/);
    expect(await plan("SELECT DISTINCT taken_by FROM follow_ups WHERE state = 'taken' AND (taken_by IS NULL OR taken_by <> ?)", [ME])).toMatch(/USING COVERING INDEX follow_ups_takeable/);
  });

  it('two instances sweeping at once never both take a row', async () => {
    const { db, ids } = await seeded(Array.from({ length: 6 }, () => ({ state: 'parked' }) as const));
    const store = new FollowUpStore(db);
    const [a, b] = await Promise.all([store.take('a', async () => true), store.take('b', async () => true)]);
    expect([...a, ...b].map((t) => t.id).sort()).toEqual([...ids].sort());
  });
});
