import { afterEach, describe, expect, it } from 'vitest';
import { ENGINES, freshStoreTarget } from '../../test/store-engines.js';
import { openWardenStore } from '../app/migrations.js';
import type { Store } from '../store/store.js';
import { normalizeCode, PAIRING_ALPHABET, PairingStore } from './pairing.js';
import { RateLimiter } from './rate-limit.js';

const stores: Store[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

/** Two handles on one fresh store, as two instances would open it. */
async function twoHandles(engine: (typeof ENGINES)[number]): Promise<[Store, Store]> {
  const target = await freshStoreTarget(engine);
  const open = async () => {
    const opened = await openWardenStore(target);
    if (!opened.ok) throw new Error(opened.error.message);
    stores.push(opened.store);
    return opened.store;
  };
  return [await open(), await open()];
}

describe.each(ENGINES)('rate limits on %s', (engine) => {
  it('a bucket of 10 lets 10 through across two instances, refuses the 11th, and tells the sender once', async () => {
    const [a, b] = await twoHandles(engine);
    const la = new RateLimiter(a.db);
    const lb = new RateLimiter(b.db);
    const bucket = { perMinute: 10, burst: 10 };
    // Ten takes racing on two handles: each token is taken once.
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? la : lb).take('sender:discord:7', bucket)));
    expect(results.every((r) => r.ok)).toBe(true);
    const eleventh = await la.take('sender:discord:7', bucket);
    expect(eleventh).toMatchObject({ ok: false, tell: true });
    // One token comes back every 6 s.
    expect(eleventh.ok === false && eleventh.retryAfterMs).toBeGreaterThan(1000);
    expect(eleventh.ok === false && eleventh.retryAfterMs).toBeLessThanOrEqual(6000);
    const twelfth = await lb.take('sender:discord:7', bucket);
    expect(twelfth).toMatchObject({ ok: false, tell: false });
    // Another key has its own bucket.
    expect(await lb.take('sender:discord:8', bucket)).toEqual({ ok: true });
  });

  it('refills at perMinute', async () => {
    const [a] = await twoHandles(engine);
    const limiter = new RateLimiter(a.db);
    const bucket = { perMinute: 600, burst: 1 };
    expect(await limiter.take('k', bucket)).toEqual({ ok: true });
    expect((await limiter.take('k', bucket)).ok).toBe(false);
    await new Promise((r) => setTimeout(r, 150));
    expect(await limiter.take('k', bucket)).toEqual({ ok: true });
  });
});

describe.each(ENGINES)('pairing on %s', (engine) => {
  it('one code per sender; an owner approval pairs once; a second instance sees it', async () => {
    const [a, b] = await twoHandles(engine);
    const pa = new PairingStore(a.db);
    const pb = new PairingStore(b.db);
    const first = await pa.request('discord', '7', 'mallory');
    expect(first.kind).toBe('created');
    const code = first.kind === 'created' ? first.code : '';
    expect(code).toHaveLength(8);
    expect([...code].every((c) => PAIRING_ALPHABET.includes(c))).toBe(true);
    expect(await pb.request('discord', '7')).toEqual({ kind: 'pending' });
    expect(await pb.approve(code, 'slack', 'slack:U1')).toEqual({ ok: false, reason: 'other-platform' });
    expect(await pb.approve(code.toLowerCase(), 'discord', 'discord:1')).toMatchObject({ ok: true, userId: '7', userName: 'mallory' });
    expect(await pa.approve(code, 'discord', 'discord:1')).toEqual({ ok: false, reason: 'unknown-code' });
    expect(await pa.isPaired('discord', '7')).toBe(true);
    expect(await pa.isPaired('slack', '7')).toBe(false);
  });

  it('caps pending codes per platform and expires them', async () => {
    const [a] = await twoHandles(engine);
    let now = 1_000_000;
    const store = new PairingStore(a.db, { now: () => now });
    for (const u of ['1', '2', '3']) expect((await store.request('discord', u)).kind).toBe('created');
    expect(await store.request('discord', '4')).toEqual({ kind: 'full' });
    expect((await store.request('slack', '4')).kind).toBe('created');
    const code = (await store.pending('discord'))[0]!.code;
    now += 60 * 60 * 1000;
    expect(await store.approve(code, 'discord', 'discord:1')).toEqual({ ok: false, reason: 'unknown-code' });
    expect((await store.request('discord', '4')).kind).toBe('created');
  });
});

describe('pairing codes as typed', () => {
  it.each([
    ['abcd-efgh', 'ABCDEFGH'],
    ['ABCD EFGH', 'ABCDEFGH'],
    ['ABCDEFG0', undefined],
    ['ABCDEFG', undefined],
    ["ABCD' OR 1=1", undefined],
  ])('%s', (raw, expected) => expect(normalizeCode(raw)).toBe(expected));
});
