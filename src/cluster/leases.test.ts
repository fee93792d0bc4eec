import { describe, expect, it, vi } from 'vitest';
import pg from 'pg';
import { ENGINES, useTestStores } from '../../test/store-engines.js';
import type { Store } from '../store/store.js';
import { InstanceRegistry } from './instances.js';
import { INBOX_CHANNEL, Leases, type HeldLease, type Place } from './leases.js';
import { BatchStepError, type BatchStep, type Db } from '../store/db.js';
import { until } from '../../test/until.js';
import { leasedInstances } from '../../test/cluster/leased-instances.js';

const stores = useTestStores();
/** Two handles on one fresh store, as two instances would open it. */
const twoHandles = (engine: (typeof ENGINES)[number]) => stores.handles(engine, 2);

describe.each(ENGINES)('leases on %s', (engine) => {
  it('one holder at a time; a release hands over to the waiter; the old generation can no longer renew or release', async () => {
    const [a, b] = await twoHandles(engine);
    const la = new Leases(a.db, { ttlMs: 5_000, holder: 'A' });
    const lb = new Leases(b.db, { ttlMs: 5_000, holder: 'B' });
    const held = (await la.tryAcquire('session:x'))!;
    expect(held.generation).toBe(1);
    expect(await lb.tryAcquire('session:x')).toBeUndefined();
    const order: string[] = [];
    const waiting = lb.hold('session:x', new AbortController().signal, async () => {
      order.push('B runs');
    });
    await new Promise((r) => setTimeout(r, 100));
    order.push('A releases');
    await la.release(held);
    await waiting;
    expect(order).toEqual(['A releases', 'B runs']);
    // B's hold took generation 2 and released it; A's stale lease is nothing now.
    expect(await la.renew(held)).toBe(false);
    expect(await la.holds(held)).toBe(false);
    await la.close();
    await lb.close();
  });

  it('an expired lease is taken over; its old holder learns it lost the lease at the next renewal and its work is aborted', async () => {
    const [a, b] = await twoHandles(engine);
    const la = new Leases(a.db, { ttlMs: 300, holder: 'A' });
    const lb = new Leases(b.db, { ttlMs: 300, holder: 'B' });
    const stale = (await la.tryAcquire('cron:job'))!;
    // A "pauses" past its expiry: B takes the lease over.
    await until(async () => (await lb.tryAcquire('cron:job')) !== undefined);
    expect(await la.renew(stale)).toBe(false);
    await la.release(stale);
    expect(await lb.holds({ name: 'cron:job', generation: stale.generation + 1 })).toBe(true);

    // A holder whose renewal fails stops its work instead of running on beside the new holder.
    const [c, d] = await twoHandles(engine);
    const lc = new Leases(c.db, { ttlMs: 300, holder: 'C' });
    const ld = new Leases(d.db, { ttlMs: 300, holder: 'D' });
    let aborted: unknown;
    const work = lc.hold('session:y', new AbortController().signal, (signal) => new Promise<void>((resolve) => signal.addEventListener('abort', () => ((aborted = signal.reason), resolve()))));
    await until(async () => (await c.db.value('SELECT 1 FROM leases WHERE name = ?', ['session:y'])) !== undefined);
    // Another instance deletes and retakes it (as after an expiry while C was paused).
    await d.db.run('UPDATE leases SET expires_at = 0 WHERE name = ?', ['session:y']);
    expect(await ld.tryAcquire('session:y')).toBeDefined();
    await work;
    expect(String(aborted)).toMatch(/lost its lease/);
    for (const l of [la, lb, lc, ld]) await l.close();
  });

  it('instances are live while their heartbeat runs and dead once their lease runs out', async () => {
    const [a, b] = await twoHandles(engine);
    const ia = new InstanceRegistry(a.db, { leaseMs: 400, role: 'server' });
    const ib = new InstanceRegistry(b.db, { leaseMs: 400, role: 'server' });
    await ia.start();
    await ib.start();
    expect((await ia.live()).map((i) => i.id).sort()).toEqual([ia.id, ib.id].sort());
    await new Promise((r) => setTimeout(r, 900));
    // Heartbeats kept both alive past their first lease.
    expect(await ia.isLive(ib.id)).toBe(true);
    // B stops beating without removing its row (as a killed process would).
    (ib as unknown as { timer: NodeJS.Timeout }).timer && clearInterval((ib as unknown as { timer: NodeJS.Timeout }).timer);
    await until(async () => !(await ia.isLive(ib.id)), 5_000);
    await ia.stop();
    expect(await ib.isLive(ia.id)).toBe(false);
  });
});

describe.each(ENGINES)('a session line across instances on %s', (engine) => {
  const twoInstances = () => leasedInstances(stores, engine);
  const never = new AbortController().signal;

  it('runs the work in the order its places were taken, whichever instance took each', async () => {
    const { ra, rb, la, lb } = await twoInstances();
    const order: string[] = [];
    const work = (label: string) => async () => {
      order.push(`${label} starts`);
      await new Promise((r) => setTimeout(r, 60));
      order.push(`${label} ends`);
    };
    // Arrival order: A1 (at A), B2 (at B), A3 (at A). A's local queue runs A1 then A3.
    const p1 = await la.enqueue('session:s');
    const p2 = await lb.enqueue('session:s');
    const p3 = await la.enqueue('session:s');
    const laneA = (async () => {
      await la.hold('session:s', never, work('A1'), p1);
      // Straight after its release A asks again: without the line it would take the lease before B heard.
      await la.hold('session:s', never, work('A3'), p3);
    })();
    const laneB = (async () => {
      await new Promise((r) => setTimeout(r, 20));
      await lb.hold('session:s', never, work('B2'), p2);
    })();
    await Promise.all([laneA, laneB]);
    expect(order).toEqual(['A1 starts', 'A1 ends', 'B2 starts', 'B2 ends', 'A3 starts', 'A3 ends']);
    // A finished lease's release waits for this instance's next write (see `hold`): flushed to look at the store.
    await Promise.all([la.flush(), lb.flush()]);
    expect(await la['db'].value('SELECT COUNT(*) FROM lease_queue')).toBe(0);
    await Promise.all([la.close(), lb.close(), ra.stop(), rb.stop()]);
  });

  it('with more work of its own queued (`keep`), the lease passes to the next hold in one write; an earlier place of another instance still goes first', async () => {
    const { ra, rb, la, lb } = await twoInstances();
    const generation = () => la['db'].value<number>('SELECT generation FROM leases WHERE name = ?', ['session:k']);
    const seen: Array<number | undefined> = [];
    const p1 = await la.enqueue('session:k');
    const p2 = await la.enqueue('session:k');
    await la.hold('session:k', never, async () => void seen.push(await generation()), p1, () => true);
    await la.hold('session:k', never, async () => void seen.push(await generation()), p2);
    // Passed on, never deleted and taken again (which would start over at generation 1).
    expect(seen).toEqual([1, 2]);
    await la.flush();
    expect(await generation()).toBeUndefined();
    expect(await la['db'].value('SELECT COUNT(*) FROM lease_queue')).toBe(0);

    // A1 keeps it for A3, but B2 took its place before A3 did: B2 runs between them.
    const order: string[] = [];
    const q1 = await la.enqueue('session:k');
    const q2 = await lb.enqueue('session:k');
    const q3 = await la.enqueue('session:k');
    const laneB = lb.hold('session:k', never, async () => void order.push('B2'), q2);
    await la.hold('session:k', never, async () => void order.push('A1'), q1, () => true);
    await la.hold('session:k', never, async () => void order.push('A3'), q3);
    await laneB;
    expect(order).toEqual(['A1', 'B2', 'A3']);

    // Kept with nothing taking it over: released at once after (another instance takes it).
    await la.hold('session:k', never, async () => undefined, undefined, () => true);
    await until(async () => (await lb.tryAcquire('session:k')) !== undefined, 2_000);
    expect(await la['db'].value('SELECT COUNT(*) FROM lease_queue')).toBe(0);
    await Promise.all([la.close(), lb.close(), ra.stop(), rb.stop()]);
  });

  it('does not wait for the place of an instance that is gone', async () => {
    const { ra, rb, la, lb } = await twoInstances();
    await lb.enqueue('session:s');
    await rb.stop();
    const started = Date.now();
    expect(await la.hold('session:s', never, async () => 'ran', await la.enqueue('session:s'))).toBe('ran');
    expect(Date.now() - started).toBeLessThan(2_000);
    await Promise.all([la.close(), lb.close(), ra.stop()]);
  });

  it('gives up the place of a waiter stopped before its turn, so the next in line runs', async () => {
    const { ra, rb, la, lb } = await twoInstances();
    const held = (await la.tryAcquire('session:s'))!;
    const stop = new AbortController();
    const waiting = lb.hold('session:s', stop.signal, async () => 'never', await lb.enqueue('session:s'));
    const later = await la.enqueue('session:s');
    await new Promise((r) => setTimeout(r, 50));
    stop.abort(new Error('stopped'));
    await expect(waiting).rejects.toThrow('stopped');
    await la.release(held);
    expect(await la.hold('session:s', never, async () => 'next ran', later)).toBe('next ran');
    await Promise.all([la.close(), lb.close(), ra.stop(), rb.stop()]);
  });

  it("a busy conversation's next place goes to the instance running it, which is told and picks its places up in order", async () => {
    const { ra, rb, la, lb } = await twoInstances();
    const told: string[] = [];
    const offA = await la.onForwarded((takeOver) => told.push(takeOver ? 'take over' : 'forwarded'));
    // Idle: the place is the receiving instance's, taken at once.
    expect(await la.place('session:s', '{"m":1}')).toMatchObject({ holder: 'inst-a', here: true, taken: true });
    // Busy at A: B's message goes to A, not taken yet; A hears of it.
    const forwarded = await lb.place('session:s', '{"m":2}');
    expect(forwarded).toMatchObject({ holder: 'inst-a', here: false, taken: false });
    // (SQLite tells only the handle that notified: it is never shared by two instances.)
    if (engine === 'postgres') await until(() => told.includes('forwarded'), 5_000);
    // A's own next message queues behind the forwarded one: it is picked up with it, in order.
    const own = await la.place('session:s', '{"m":3}');
    expect(own).toMatchObject({ holder: 'inst-a', here: true, taken: false });
    expect(await la.claim()).toEqual([
      { seq: forwarded.seq, name: 'session:s', payload: '{"m":2}' },
      { seq: own.seq, name: 'session:s', payload: '{"m":3}' },
    ]);
    expect(await la.claim()).toEqual([]);
    // Another conversation, idle, stays where it arrived; a place without a message never moves.
    expect(await lb.place('session:t', '{"m":4}')).toMatchObject({ holder: 'inst-b', taken: true });
    expect(await lb.place('session:s')).toMatchObject({ holder: 'inst-b', taken: true });
    await offA();
    await Promise.all([la.close(), lb.close(), ra.stop(), rb.stop()]);
  });

  it('takes the lease with the place in one write when the conversation is idle, and only then; the work starts on it without an acquire', async () => {
    const { a, ra, rb, la, lb } = await twoInstances();
    const lease = () => a.db.get<{ holder: string; generation: number }>('SELECT holder, generation FROM leases WHERE name = ?', ['session:s']);
    // Idle: place and lease in one round trip.
    const first = await la.place('session:s', '{"m":1}', true);
    expect(first).toMatchObject({ holder: 'inst-a', here: true, taken: true, lease: { name: 'session:s', generation: 1 } });
    expect(await lease()).toEqual({ holder: 'inst-a', generation: 1 });
    // Busy: another instance's message is forwarded and takes no lease; so does this instance's own next one.
    const forwarded = await lb.place('session:s', '{"m":2}', true);
    expect(forwarded).toMatchObject({ holder: 'inst-a', here: false });
    expect(forwarded.lease).toBeUndefined();
    const second = await la.place('session:s', undefined, true);
    expect(second.lease).toBeUndefined();
    // The work runs on the lease it was handed (no new generation), and its release gives up the place.
    const seen: unknown[] = [];
    await la.hold('session:s', never, async () => void seen.push(await lease()), first.seq, undefined, first.lease);
    expect(seen).toEqual([{ holder: 'inst-a', generation: 1 }]);
    // A finished lease's release waits for this instance's next write (see `hold`): flushed to look at the store.
    await la.flush();
    expect(await lease()).toBeUndefined();
    // The later places still run in their order, each taking the lease as usual.
    await la.claim();
    await la.hold('session:s', never, async () => void seen.push('m2'), forwarded.seq);
    await la.hold('session:s', never, async () => void seen.push('own'), second.seq);
    expect(seen.slice(1)).toEqual(['m2', 'own']);
    // Without asking, no lease is taken even when idle.
    expect((await lb.place('session:t', '{"m":3}')).lease).toBeUndefined();
    expect(await a.db.value('SELECT COUNT(*) FROM leases WHERE name = ?', ['session:t'])).toBe(0);
    await Promise.all([la.close(), lb.close(), ra.stop(), rb.stop()]);
  });

  it('two instances placing at once for an idle conversation: one takes the lease, the other waits its turn behind it', async () => {
    const { a, ra, rb, la, lb } = await twoInstances();
    for (let round = 0; round < 8; round++) {
      const name = `session:race${round}`;
      // (SQLite is never shared by two instances: there the two take turns.)
      const [pa, pb] = engine === 'postgres' ? await Promise.all([la.place(name, `{"a":${round}}`, true), lb.place(name, `{"b":${round}}`, true)]) : [await la.place(name, `{"a":${round}}`, true), await lb.place(name, `{"b":${round}}`, true)];
      const leased = [pa, pb].filter((p) => p.lease !== undefined);
      expect(leased).toHaveLength(1);
      const holder = await a.db.value<string>('SELECT holder FROM leases WHERE name = ?', [name]);
      expect(holder).toBe(leased[0]!.holder);
      // The lease went to the earlier place: the later one is never ahead of it.
      const others = [pa, pb].filter((p) => p.lease === undefined);
      expect(others[0]!.seq).toBeGreaterThan(leased[0]!.seq);
      const order: number[] = [];
      const run = (l: Leases, p: Place) => (p.here ? l.hold(name, never, async () => void order.push(p.seq), p.seq, undefined, p.lease) : Promise.resolve());
      // The one forwarded to the lease holder (or left to wait at its own instance) runs after.
      const owner = leased[0]!.holder === 'inst-a' ? la : lb;
      await Promise.all([run(la, pa), run(lb, pb)]);
      if (!others[0]!.here) {
        const claimed = await owner.claim();
        for (const c of claimed) await owner.hold(name, never, async () => void order.push(c.seq), c.seq);
      }
      expect(order).toEqual([leased[0]!.seq, others[0]!.seq]);
    }
    await Promise.all([la.flush(), lb.flush()]);
    expect(await a.db.value('SELECT COUNT(*) FROM lease_queue')).toBe(0);
    await Promise.all([la.close(), lb.close(), ra.stop(), rb.stop()]);
  });

  it('a lease taken with a place and handed to `hold` late is renewed first; one lost meanwhile is waited for as usual', async () => {
    const [a, b] = await twoHandles(engine);
    const ra = new InstanceRegistry(a.db, { leaseMs: 5_000, role: 'server', id: 'inst-a' });
    const rb = new InstanceRegistry(b.db, { leaseMs: 5_000, role: 'server', id: 'inst-b' });
    await ra.start();
    await rb.start();
    const la = new Leases(a.db, { ttlMs: 300, holder: 'inst-a' });
    const lb = new Leases(b.db, { ttlMs: 300, holder: 'inst-b' });
    const generation = () => a.db.value<number>('SELECT generation FROM leases WHERE name = ?', ['session:s']);
    const late = await la.place('session:s', '{"m":1}', true);
    await new Promise((r) => setTimeout(r, 150));
    expect(await la.hold('session:s', never, async () => generation(), late.seq, undefined, late.lease)).toBe(1);
    // Lost: it ran out and another instance (holding no place) took and released it in between.
    const lost = await la.place('session:s', '{"m":2}', true);
    expect(lost.lease).toBeDefined();
    await until(async () => (await lb.tryAcquire('session:s')) !== undefined, 3_000);
    await lb.release({ name: 'session:s', generation: (await generation())! });
    expect(await la.hold('session:s', never, async () => 'ran on a lease of its own', lost.seq, undefined, lost.lease)).toBe('ran on a lease of its own');
    await la.flush();
    expect(await a.db.value('SELECT COUNT(*) FROM leases')).toBe(0);
    await Promise.all([la.close(), lb.close(), ra.stop(), rb.stop()]);
  });

  it('the places of a dead instance are taken over with their message, or deleted without one; the dead holder can no longer run them', async () => {
    const { a, ra, rb, la, lb } = await twoInstances();
    const running = await lb.place('session:s', '{"m":1}');
    const waiting = await la.place('session:s', '{"m":2}');
    expect(waiting.holder).toBe('inst-b');
    const filesOnly = await lb.place('session:u');
    // B dies: its heartbeat stops and its lease runs out (its row stays, as after a SIGKILL).
    clearInterval((rb as unknown as { timer: NodeJS.Timeout }).timer);
    await a.db.run('UPDATE instances SET lease_until = 0 WHERE id = ?', ['inst-b']);
    const taken = await la.takeOver();
    expect(taken.map((t) => t.payload)).toEqual(['{"m":1}', '{"m":2}']);
    expect(taken.every((t) => t.seq > filesOnly.seq)).toBe(true);
    const rows = await a.db.all<{ holder: string; name: string; taken: number }>('SELECT holder, name, taken FROM lease_queue ORDER BY seq');
    expect(rows.map((r) => [r.holder, r.name, Number(r.taken)])).toEqual([
      ['inst-a', 'session:s', 1],
      ['inst-a', 'session:s', 1],
    ]);
    // Taken once: a second survivor finds nothing.
    expect(await lb.takeOver()).toEqual([]);
    // B (paused, not dead after all) may not run what it held: its place is A's now.
    await expect(lb.hold('session:s', new AbortController().signal, async () => 'ran twice', running.seq)).rejects.toThrow(/took this message over/);
    // A runs them.
    for (const t of taken) expect(await la.hold('session:s', new AbortController().signal, async () => t.payload, t.seq)).toBe(t.payload);
    await la.flush();
    expect(await a.db.value('SELECT COUNT(*) FROM lease_queue')).toBe(0);
    await Promise.all([la.close(), lb.close(), ra.stop()]);
  });

  it('a stopping instance leaves the places forwarded to it for the others, and deletes those it picked up', async () => {
    const { a, ra, rb, la, lb } = await twoInstances();
    await la.place('session:s', '{"m":1}');
    const forwarded = await lb.place('session:s', '{"m":2}');
    expect(forwarded.holder).toBe('inst-a');
    await la.close();
    await ra.stop();
    expect((await a.db.all<{ seq: number | string }>('SELECT seq FROM lease_queue')).map((r) => Number(r.seq))).toEqual([forwarded.seq]);
    const taken = await lb.takeOver();
    expect(taken.map((t) => t.payload)).toEqual(['{"m":2}']);
    await Promise.all([lb.close(), rb.stop()]);
  });
});

describe('a dead instance’s places taken over on PostgreSQL while a third instance places', () => {
  it('a place written during the takeover waits for it and queues behind the taken-over message: the older runs first, each once', async () => {
    const { target, open } = await stores.fresh('postgres');
    const handles = [await open(), await open(), await open()];
    const [a, b, c] = handles as [Store, Store, Store];
    const [ra, rb, rc] = (['inst-a', 'inst-b', 'inst-c'] as const).map((id, i) => new InstanceRegistry(handles[i]!.db, { leaseMs: 5_000, role: 'server', id }));
    for (const r of [ra, rb, rc]) await r!.start();
    const [la, lb, lc] = (['inst-a', 'inst-b', 'inst-c'] as const).map((holder, i) => new Leases(handles[i]!.db, { ttlMs: 5_000, holder }));
    const never = new AbortController().signal;
    const name = 'session:s';
    // The older message reached A, which dies before running it (its heartbeat stops, its row stays).
    expect(await la!.place(name, '{"old":1}')).toMatchObject({ holder: 'inst-a', taken: true });
    clearInterval((ra as unknown as { timer: NodeJS.Timeout }).timer);
    await a.db.run('UPDATE instances SET lease_until = 0 WHERE id = ?', ['inst-a']);
    // B's takeover is slow between writing the new place (its number drawn) and committing: a
    // trigger on the store holds that insert, as a slow disk or a busy server would.
    const admin = new pg.Client({ connectionString: target.url });
    await admin.connect();
    try {
      await admin.query(`CREATE FUNCTION slow_place() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(0.6); RETURN NEW; END $$`);
      await admin.query(`CREATE TRIGGER slow_takeover AFTER INSERT ON lease_queue FOR EACH ROW WHEN (NEW.holder = 'inst-b' AND NEW.payload = '{"old":1}') EXECUTE FUNCTION slow_place()`);
      const takingOver = lb!.takeOver();
      await until(async () => (await admin.query("SELECT 1 FROM pg_stat_activity WHERE wait_event = 'PgSleep'")).rowCount === 1, 5_000);
      // Meanwhile the newer message reaches C, asking for the lease as an idle conversation's would.
      const fresh = await lc!.place(name, '{"new":1}', true);
      const taken = await takingOver;
      expect(taken.map((t) => t.payload)).toEqual(['{"old":1}']);
      // C's place came after the taken-over one, found it (B owns the conversation now) and took no lease.
      expect(fresh.seq).toBeGreaterThan(taken[0]!.seq);
      expect(fresh).toMatchObject({ holder: 'inst-b', here: false, taken: false });
      expect(fresh.lease).toBeUndefined();
      // Each instance runs what is its own; the older message runs first, each exactly once.
      const order: string[] = [];
      const work = (label: string) => async () => {
        order.push(`${label} starts`);
        await new Promise((r) => setTimeout(r, 40));
        order.push(`${label} ends`);
      };
      const laneB = (async () => {
        await lb!.hold(name, never, work('old'), taken[0]!.seq);
        for (const claimed of await lb!.claim()) await lb!.hold(name, never, work(JSON.parse(claimed.payload!).new ? 'new' : 'old again'), claimed.seq);
      })();
      const laneC = fresh.here ? lc!.hold(name, never, work('new'), fresh.seq, undefined, fresh.lease) : Promise.resolve();
      await Promise.all([laneB, laneC]);
      expect(order).toEqual(['old starts', 'old ends', 'new starts', 'new ends']);
      await Promise.all([lb!.flush(), lc!.flush()]);
      expect(await b.db.value('SELECT COUNT(*) FROM lease_queue')).toBe(0);
      expect(await c.db.value('SELECT COUNT(*) FROM leases')).toBe(0);
    } finally {
      await admin.end();
    }
    await Promise.all([la!.close(), lb!.close(), lc!.close(), rb!.stop(), rc!.stop()]);
  });
});

describe('notifications reach only the instance concerned (PostgreSQL)', () => {
  const never = new AbortController().signal;

  it('a place forwarded to one instance wakes that instance alone; a stopping instance still reaches every other', async () => {
    const { la, lb, stop } = await leasedInstances(stores, 'postgres');
    const toA: boolean[] = [];
    const toB: boolean[] = [];
    const offA = await la.onForwarded((takeOver) => toA.push(takeOver));
    const offB = await lb.onForwarded((takeOver) => toB.push(takeOver));
    // What every instance hears (the shared channel): no forward is announced there.
    const shared: string[] = [];
    const offShared = await la['db'].listen(INBOX_CHANNEL, (payload) => shared.push(payload ?? '(none)'));
    // Busy at A; B's message for it goes to A, and A alone is told (a forward, not a takeover),
    // by the place's own write: no statement of its own.
    const notifyB = vi.spyOn(lb['db'], 'notify');
    expect(await la.place('session:f', '{"m":1}')).toMatchObject({ holder: 'inst-a', here: true });
    expect(await lb.place('session:f', '{"m":2}')).toMatchObject({ holder: 'inst-a', here: false });
    expect(notifyB).not.toHaveBeenCalled();
    notifyB.mockRestore();
    await until(() => toA.includes(false), 5_000);
    // A stray notification to B would have come with A's: give it that long again.
    await new Promise((r) => setTimeout(r, 200));
    expect(toB).toEqual([]);
    // The other way round: busy at B, A's message is B's business only.
    toA.length = 0;
    expect(await lb.place('session:g', '{"m":3}')).toMatchObject({ holder: 'inst-b', here: true });
    expect(await la.place('session:g', '{"m":4}')).toMatchObject({ holder: 'inst-b', here: false });
    await until(() => toB.includes(false), 5_000);
    await new Promise((r) => setTimeout(r, 200));
    expect(toA).toEqual([]);
    expect(shared).toEqual([]);
    // An instance leaving places behind (`*`), and a forward in the form earlier versions sent, still reach the others.
    await la['db'].notify('warden_inbox', '*');
    await la['db'].notify('warden_inbox', 'inst-b');
    await until(() => toB.filter((t) => t).length === 1 && toB.filter((t) => !t).length === 2, 5_000);
    await offA();
    await offB();
    await offShared();
    await stop();
  });

  it('release notifications are subscribed only while this instance has a waiter, and a later waiter is still woken by the release, not by expiry', async () => {
    const [a, b] = await stores.handles('postgres', 2);
    // A long lease: a waiter woken only at its expiry would take 30 s.
    const la = new Leases(a.db, { ttlMs: 30_000, holder: 'A', listenLingerMs: 100 });
    const lb = new Leases(b.db, { ttlMs: 30_000, holder: 'B', listenLingerMs: 100 });
    for (let round = 0; round < 2; round++) {
      const held = (await la.tryAcquire('session:w'))!;
      const waiting = lb.hold('session:w', never, async () => 'B ran');
      await until(() => lb.subscribed, 5_000);
      // A, the holder, waits for nothing: it is not woken by releases.
      expect(la.subscribed).toBe(false);
      const released = performance.now();
      await la.release(held);
      expect(await waiting).toBe('B ran');
      expect(performance.now() - released).toBeLessThan(5_000);
      // The waiter gone, the subscription ends after the linger.
      await until(() => !lb.subscribed, 5_000);
    }
    // Work that runs where its lease is free never subscribes.
    expect(await la.hold('session:v', never, async () => 'A ran')).toBe('A ran');
    expect(la.subscribed).toBe(false);
    await la.close();
    await lb.close();
  });
});

/** A stand-in around a store handle that counts its batches and fails the next one when told to (`failNext`), without running it. */
function batchesOf(db: Db): { db: Db; count(): number; failNext(err: Error): void } {
  let count = 0;
  let failing: Error | undefined;
  const wrapped = new Proxy(db, {
    get(target, key) {
      if (key === 'batch')
        return async (steps: readonly BatchStep[]) => {
          count++;
          const err = failing;
          failing = undefined;
          if (err) throw err;
          return target.batch(steps);
        };
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { db: wrapped, count: () => count, failNext: (err) => (failing = err) };
}

describe.each(ENGINES)("a finished lease's release rides with this instance's next write on %s", (engine) => {
  const never = new AbortController().signal;
  const free = async (l: Leases, name: string) => (await l.tryAcquire(name)) !== undefined;

  it('lingers only where another instance may wait for it: at once on an unshared store unless asked; released alone once the linger is over, or at close', async () => {
    const cases = [
      { options: {}, lingers: engine === 'postgres', close: false },
      { options: { releaseLingerMs: 0 }, lingers: false, close: false },
      { options: { releaseLingerMs: 60_000 }, lingers: true, close: true },
    ];
    for (const { options, lingers, close } of cases) {
      const counted: Array<ReturnType<typeof batchesOf>> = [];
      const { a, la, stop } = await leasedInstances(stores, engine, options, (db) => (counted.push(batchesOf(db)), counted.at(-1)!.db));
      const before = counted[0]!.count();
      let held: HeldLease | undefined;
      await la.hold('session:x', never, async (_, lease) => void (held = lease));
      // Read before any timer can fire: a lingering release has not been sent when `hold` returns.
      expect({ options, releases: counted[0]!.count() - before }).toEqual({ options, releases: lingers ? 0 : 1 });
      if (close) {
        expect(await la.holds(held!)).toBe(true);
        await stop();
      }
      // Nothing is held forever: the linger ends it, closing ends it at once.
      await until(async () => (await a.db.value('SELECT COUNT(*) FROM leases')) === 0, 5_000, 'the release');
      if (!close) await stop();
    }
  });

  it('goes out with the next place, of any conversation, in its one batch: its line given up, a waiting instance woken at once', async () => {
    const counted: Array<ReturnType<typeof batchesOf>> = [];
    const { a, la, lb, stop } = await leasedInstances(stores, engine, { ttlMs: 30_000, releaseLingerMs: 60_000 }, (db) => (counted.push(batchesOf(db)), counted.at(-1)!.db));
    const first = await la.place('session:x', '{"m":1}', true);
    await la.hold('session:x', never, async () => undefined, first.seq, undefined, first.lease);
    // B's message for the conversation finds A's place still in line: it goes to A (nothing is lost, nothing runs twice).
    const next = await lb.place('session:x', '{"m":2}', true);
    expect(next).toMatchObject({ holder: 'inst-a', here: false });
    const before = counted[0]!.count();
    const other = await la.place('session:y', '{"m":3}', true);
    expect(counted[0]!.count() - before).toBe(1);
    expect(other.lease).toBeDefined();
    // x's lease and first place are gone with that batch; the forwarded message is next in line.
    expect((await a.db.all<{ seq: number | string }>('SELECT seq FROM lease_queue WHERE name = ?', ['session:x'])).map((r) => Number(r.seq))).toEqual([next.seq]);
    expect(await a.db.value('SELECT COUNT(*) FROM leases WHERE name = ?', ['session:x'])).toBe(0);
    const [claimed] = await la.claim();
    expect(await la.hold('session:x', never, async () => claimed!.payload, claimed!.seq)).toBe('{"m":2}');
    // The place of the conversation whose release it carries takes the lease in that same write.
    const again = await la.place('session:x', '{"m":4}', true);
    expect(again.lease).toBeDefined();
    await la.hold('session:x', never, async () => undefined, again.seq, undefined, again.lease);
    await la.hold('session:y', never, async () => undefined, other.seq, undefined, other.lease);
    await stop();
    expect(await a.db.value('SELECT COUNT(*) FROM lease_queue')).toBe(0);
  });

  // Two instances share only a PostgreSQL store (SQLite's notifications stay in its one process).
  it.skipIf(engine === 'sqlite')('an instance waiting for the conversation is woken by the release, at most the linger later: by the timer, or sooner by a write that carries it', async () => {
    const LINGER = 1_000;
    const cases = [
      { write: 'nothing', within: [LINGER - 50, 10_000] },
      { write: 'a place of another conversation', within: [0, LINGER - 50] },
    ] as const;
    for (const { write, within } of cases) {
      // A long lease: a waiter woken only at its expiry would take 30 s.
      const { la, lb, stop } = await leasedInstances(stores, engine, { ttlMs: 30_000, releaseLingerMs: LINGER });
      let enter!: () => void;
      let finish!: () => void;
      const entered = new Promise<void>((r) => (enter = r));
      const done = new Promise<void>((r) => (finish = r));
      const running = la.hold('session:w', never, async () => (enter(), await done));
      await entered;
      const waiting = lb.hold('session:w', never, async () => performance.now());
      await until(() => lb.subscribed, 5_000);
      await new Promise((r) => setTimeout(r, 50));
      finish();
      await running;
      const finished = performance.now();
      if (write !== 'nothing') await la.place('session:other', undefined, true);
      const woken = (await waiting) - finished;
      expect({ write, woken: woken >= within[0] && woken < within[1] ? 'in time' : woken }).toEqual({ write, woken: 'in time' });
      await stop();
    }
  });

  it('a failure of the carrying batch loses neither the release nor the write', async () => {
    const counted: Array<ReturnType<typeof batchesOf>> = [];
    const cases = [
      { fails: 'nowhere', place: 'resolves' },
      { fails: "at one of the place's own steps", place: 'rejects as alone' },
      { fails: "at the release's step", place: 'resolves' },
      { fails: 'with the connection', place: 'rejects' },
    ] as const;
    // What the failing place gives when nothing rides with it: the same step, the same error.
    const broken = [{ sql: 'SELECT * FROM no_such_table' }];
    for (const { fails, place } of cases) {
      counted.length = 0;
      const { a, la, lb, stop } = await leasedInstances(stores, engine, { ttlMs: 30_000, releaseLingerMs: 60_000 }, (db) => (counted.push(batchesOf(db)), counted.at(-1)!.db));
      const alone = await la.place('session:alone', undefined, true, broken).then(
        () => undefined,
        (err: unknown) => err as BatchStepError,
      );
      expect(alone).toBeInstanceOf(BatchStepError);
      const first = await la.place('session:x', '{"m":1}', true);
      await la.hold('session:x', never, async () => undefined, first.seq, undefined, first.lease);
      if (fails === "at the release's step") counted[0]!.failNext(new BatchStepError(0, new Error('the release failed')));
      if (fails === 'with the connection') counted[0]!.failNext(new Error('Connection terminated unexpectedly'));
      const writing = la.place('session:y', undefined, true, fails === "at one of the place's own steps" ? broken : []);
      if (place === 'resolves') expect((await writing).lease).toBeDefined();
      else if (place === 'rejects as alone') await expect(writing).rejects.toMatchObject({ step: alone!.step, message: alone!.message });
      else await expect(writing).rejects.toThrow(/Connection terminated/);
      // The release was done (alone when the carrier failed): x is free for another instance, its place gone.
      await la.flush();
      expect({ fails, free: await free(lb, 'session:x'), places: await a.db.value('SELECT COUNT(*) FROM lease_queue WHERE seq = ?', [first.seq]) }).toEqual({ fails, free: true, places: 0 });
      // The place's write stands exactly when it resolved (once: its line holds it once).
      expect({ fails, y: await a.db.value('SELECT COUNT(*) FROM lease_queue WHERE name = ?', ['session:y']) }).toEqual({ fails, y: place === 'resolves' ? 1 : 0 });
      await stop();
    }
  });

  // A frees x and places for y while B frees y and places for x, both releases done before
  // either place reads: each place still sees the other's line (the release is not committed) and
  // is forwarded to it without touching the lease's row, so neither waits on the other's row.
  it.skipIf(engine === 'sqlite')('two instances each carrying the release of the lease the other places for both get their places', async () => {
    const { a, la, lb, stop } = await leasedInstances(stores, engine, { ttlMs: 30_000, releaseLingerMs: 60_000 });
    // Each crossing place is slow right after its insert, as on a busy server: both releases are
    // done by the time either place reaches the lease's row.
    await a.db.run(`CREATE FUNCTION slow_place() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(0.2); RETURN NEW; END $$`);
    await a.db.run(`CREATE TRIGGER slow_crossing AFTER INSERT ON lease_queue FOR EACH ROW WHEN (NEW.payload = '{"m":2}') EXECUTE FUNCTION slow_place()`);
    for (let round = 0; round < 3; round++) {
      const [x, y] = [`session:x${round}`, `session:y${round}`];
      const px = await la.place(x, '{"m":1}', true);
      const py = await lb.place(y, '{"m":1}', true);
      await Promise.all([la.hold(x, never, async () => undefined, px.seq, undefined, px.lease), lb.hold(y, never, async () => undefined, py.seq, undefined, py.lease)]);
      const settled = await Promise.allSettled([la.place(y, '{"m":2}', true), lb.place(x, '{"m":2}', true)]);
      expect({ round, outcomes: settled.map((r) => (r.status === 'fulfilled' ? 'placed' : String((r.reason as Error).message))) }).toEqual({ round, outcomes: ['placed', 'placed'] });
    }
    await stop();
  });

  it.skipIf(engine === 'sqlite')('a stream of messages alternating between two instances runs each conversation in order, each message once', async () => {
    const { a, la, lb, stop } = await leasedInstances(stores, engine, { releaseLingerMs: 2 });
    const placed: Array<{ l: Leases; name: string; seq: number; m: number }> = [];
    for (let m = 0; m < 30; m++) {
      const l = m % 2 === 0 ? la : lb;
      const name = `session:c${m % 3}`;
      placed.push({ l, name, seq: await l.enqueue(name), m });
    }
    const ran = new Map<string, number[]>();
    // Each instance runs its own places of a conversation in place order (its local queue), all conversations at once.
    const lanes = new Map<string, typeof placed>();
    for (const p of placed) lanes.set(`${p.l === la ? 'a' : 'b'} ${p.name}`, [...(lanes.get(`${p.l === la ? 'a' : 'b'} ${p.name}`) ?? []), p]);
    await Promise.all(
      [...lanes.values()].map(async (lane) => {
        for (const p of lane)
          await p.l.hold(p.name, never, async () => {
            ran.set(p.name, [...(ran.get(p.name) ?? []), p.m]);
            await new Promise((r) => setTimeout(r, 1));
          }, p.seq, () => true);
      }),
    );
    for (const name of ['session:c0', 'session:c1', 'session:c2']) expect(ran.get(name)).toEqual(placed.filter((p) => p.name === name).map((p) => p.m));
    await stop();
    expect(await a.db.value('SELECT COUNT(*) FROM lease_queue')).toBe(0);
    expect(await a.db.value('SELECT COUNT(*) FROM leases')).toBe(0);
  });
});
