import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { log } from '../log/log.js';
import { BatchStepError, type BatchResult, type BatchStep, type Db, type SqlValue } from '../store/db.js';
import { serverNow } from './clock.js';
import { background } from '../util/background.js';

/** Notified when a lease is released; the payload is the lease name's digest, never the name. */
export const LEASE_CHANNEL = 'warden_lease';

/** Notified when `/stop` reached an instance that is not running the conversation's turn; the payload is the lease's digest. */
export const STOP_CHANNEL = 'warden_stop';

/**
 * Notified when an instance stopped and left places for the others to take over (`*`). A place
 * forwarded to one instance is announced on that instance's own channel (`inboxChannel`), so
 * the others neither hear nor parse it; a forward announced here with the instance's id as the
 * payload (as earlier versions did) is still heard.
 */
export const INBOX_CHANNEL = 'warden_inbox';

/**
 * The channel only instance `id` listens on for places forwarded to it: named by a digest of
 * the id, so it stays a short identifier (PostgreSQL refuses channel names past 63 bytes)
 * whatever the id is.
 */
export const inboxChannel = (id: string): string => `${INBOX_CHANNEL}_${leaseDigest(id)}`;

/** A message's place in its conversation's line, and which instance runs it. */
export interface Place {
  seq: number;
  /** The instance that runs the message: this one, or the conversation's owner it was forwarded to. */
  holder: string;
  /** Whether the holder is this instance. */
  here: boolean;
  /** Whether it is this instance's and already counted as picked up (else `claim` picks it up, in place order). */
  taken: boolean;
  /**
   * The conversation's lease, when `place` was asked for it and the conversation was idle (this
   * place alone in its line, the lease free): taken in the same write. Its work starts with
   * `hold(…, lease)`; work that will not run gives it back with `release`.
   */
  lease?: HeldLease | undefined;
  /**
   * What `place`'s `alongside` steps gave, in order: present only with `lease` (they ran in the
   * same transaction, after the lease was taken, so they read what the lease's holder may use).
   */
  alongside?: BatchResult[] | undefined;
  /**
   * What `place`'s `written` steps gave, in order: present only with `lease` (the steps wrote
   * only then, and the place is marked `written`, see `ClaimedPlace.written`).
   */
  written?: BatchResult[] | undefined;
}

/**
 * A condition for `place`'s `written` steps (a boolean SQL expression and its parameters): true
 * only in the write that took the conversation's lease with the place. Steps put it in their
 * WHERE so that they write nothing otherwise.
 */
export interface PlaceGuard {
  sql: string;
  params: SqlValue[];
}

/** A place picked up by its holder: the message to run, as `place` was given it. */
export interface ClaimedPlace {
  seq: number;
  name: string;
  payload: string | undefined;
  /** When the place was first taken (the database's clock, ms). */
  placedAt?: number | undefined;
  /** Whether its message was written to the transcript with the place (see `place`'s `written`): not to be written again. */
  written?: boolean | undefined;
}

/** How often a waiter behind another instance's earlier place looks again when no notification came. */
const BLOCKED_LOOK_MS = 250;

/**
 * How long release notifications stay subscribed after this instance's last waiter took its
 * lease. Only an instance with a waiter needs them: one whose conversations all run here
 * (sticky delivery, a lease passed on in place) would otherwise be woken, and have its
 * listening connection woken, by every release of every other instance. Lingering keeps a
 * stream of waits (round-robin delivery) from subscribing and unsubscribing around each one.
 */
const LISTEN_LINGER_MS = 5_000;

/**
 * How long a lease whose work is done waits, on a shared store, for this instance's next write
 * to carry its release (see `hold`) before it is released alone. A stream of messages then pays
 * no round trip or commit of its own for releases; an instance waiting for the conversation
 * hears the release at most this much later than it would have at once.
 */
export const RELEASE_LINGER_MS = 2;

/**
 * Places of one conversation are taken one at a time (PostgreSQL: a transaction-scoped advisory
 * lock on the line's name, in the keyspace of two 32-bit keys, apart from the migration lock's
 * single key; SQLite: its write transactions already run one at a time). So a place's number
 * is also its commit order: a place that sees no earlier one in its line has none still coming,
 * and the lease taken with it (`place`'s `takeLease`) never jumps ahead of an earlier message.
 */
const LINE_LOCK_CLASS = 0x7761; // "wa"
function lineLock(db: Db, name: string): Array<{ sql: string; params: string[] }> {
  return db.engine === 'postgres' ? [{ sql: `SELECT pg_advisory_xact_lock(${LINE_LOCK_CLASS}, hashtext(?))`, params: [name] }] : [];
}

/** A lease this instance holds; `generation` fences it against a later holder. */
export interface HeldLease {
  name: string;
  generation: number;
  /** When this instance took it (its own clock, ms; `performance.now()`), for a lease handed to `hold` taken earlier. */
  takenAt?: number | undefined;
}

export interface LeaseOptions {
  /** How long a lease lasts without a renewal (`store.leaseSec`). */
  ttlMs: number;
  /** Who holds the leases taken here (the instance id). */
  holder: string;
  /** How long release notifications stay subscribed after the last waiter (default `LISTEN_LINGER_MS`). */
  listenLingerMs?: number | undefined;
  /**
   * How long a finished lease waits for a write to carry its release (see `hold`); 0: released
   * at once, as on an unshared store, where nobody else waits for it (the default there).
   * Default on a shared store: `RELEASE_LINGER_MS`.
   */
  releaseLingerMs?: number | undefined;
}

/** The statement texts of `place` on one engine, built once (the engine looks each text up per statement). */
interface PlaceStatements {
  /** A place of this instance's own. */
  placeHere: string;
  /** A place for a message any instance can run: it goes to the conversation's owner. */
  placeRouted: string;
  /** PostgreSQL: `placeRouted` that also announces a place that went to another instance (see `place`). */
  placeAnnounced: string;
  /** The lease taken with the place (see `place`). */
  leasing: string;
  /** PostgreSQL: `leasing` that also marks the place written when it took the lease. */
  leasingWritten: string;
  /** SQLite: the place marked written right after `leasing`, while `changes()` still counts its row. */
  markWritten: string;
  /** The guard of the message's own steps: the place was marked written. */
  writtenGuard: string;
}

function placeStatements(db: Db): PlaceStatements {
  const now = serverNow(db);
  const live = `i.role = 'server' AND i.lease_until > ${now}`;
  const placeRouted = `INSERT INTO lease_queue (name, holder, payload, taken, placed_at)
       SELECT ?, o.holder, ?, CASE WHEN o.holder = ? AND NOT EXISTS (SELECT 1 FROM lease_queue u WHERE u.holder = ? AND u.name = ? AND u.taken = 0) THEN 1 ELSE 0 END, ${now}
       FROM (SELECT COALESCE(
         (SELECT q.holder FROM lease_queue q JOIN instances i ON i.id = q.holder WHERE q.name = ? AND ${live} ORDER BY q.seq DESC LIMIT 1),
         (SELECT l.holder FROM leases l JOIN instances i ON i.id = l.holder WHERE l.name = ? AND l.expires_at > ${now} AND ${live}),
         ?) AS holder) o
       RETURNING seq, holder, taken`;
  // With the lease asked for: taken in the same transaction (one round trip) when the place just
  // written is the newest of its line, this instance's and picked up, with no earlier place of
  // this instance or of another live one before it, and the lease free or run out. Two instances
  // placing at once for an idle conversation meet on the lease's row: one takes it.
  const newest = 'SELECT MAX(m.seq) FROM lease_queue m WHERE m.name = ?';
  const leasing = `INSERT INTO leases (name, holder, generation, expires_at) SELECT ?, ?, 1, ${now} + ?
       WHERE EXISTS (SELECT 1 FROM lease_queue p WHERE p.name = ? AND p.holder = ? AND p.taken = 1 AND p.seq = (${newest}))
         AND NOT EXISTS (SELECT 1 FROM lease_queue q LEFT JOIN instances i ON i.id = q.holder
                         WHERE q.name = ? AND q.seq < (${newest}) AND (q.holder = ? OR i.lease_until > ${now}))
       ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, generation = leases.generation + 1, expires_at = excluded.expires_at
       WHERE leases.expires_at <= ${now}
       RETURNING generation`;
  const newestPlace = `seq = (SELECT MAX(seq) FROM lease_queue WHERE name = ?)`;
  return {
    placeHere: `INSERT INTO lease_queue (name, holder, placed_at) VALUES (?, ?, ${now}) RETURNING seq, holder, taken`,
    placeRouted,
    // The announcement's channel digest is computed by the server, as `inboxChannel` computes it:
    // no statement or round trip of its own, and the notification leaves at the place's commit.
    // The insert's text is kept whole inside; what it returns is unchanged.
    placeAnnounced: `WITH p AS (${placeRouted}) SELECT p.seq, p.holder, p.taken,
       CASE WHEN p.holder != ? THEN pg_notify(CAST(? AS text) || left(encode(sha256(convert_to(p.holder, 'UTF8')), 'hex'), 24), p.holder) IS NULL END AS told FROM p`,
    leasing,
    leasingWritten: `WITH l AS (${leasing}), m AS (UPDATE lease_queue SET written = 1 WHERE ${newestPlace} AND EXISTS (SELECT 1 FROM l)) SELECT generation FROM l`,
    markWritten: `UPDATE lease_queue SET written = 1 WHERE ${newestPlace} AND changes() > 0`,
    writtenGuard: `EXISTS (SELECT 1 FROM lease_queue w WHERE w.${newestPlace} AND w.written = 1)`,
  };
}

/** A lease whose work is done and that is not released yet (see `hold`), with the place it gives up. */
interface Parked {
  lease: HeldLease;
  place: number | undefined;
}

/** Digests of recent names: each message's release and wake-up names its lease, mostly a conversation's again. */
const digests = new Map<string, string>();
const DIGEST_CACHE = 4096;

/** The digest other instances are told when a lease is free: it names no session or job. */
export const leaseDigest = (name: string): string => {
  let digest = digests.get(name);
  if (digest === undefined) {
    // Bounded: a long-running instance sees names without end; a full cache starts over.
    if (digests.size >= DIGEST_CACHE) digests.clear();
    digests.set(name, (digest = createHash('sha256').update(name).digest('hex').slice(0, 24)));
  }
  return digest;
};

/**
 * Named leases with expiry on the shared store. `tryAcquire` takes a free or expired lease in
 * one conditional write; `hold` waits its turn (woken by the holder's release notification, or at
 * the holder's expiry when it died), renews every third of the lease while `fn` runs, and aborts
 * `fn`'s signal the moment a renewal finds the lease gone — a holder that lost its lease stops
 * rather than runs on beside the new one.
 */
export class Leases {
  private readonly wakers = new Map<string, Set<() => void>>();
  /** Leases whose work is done, not released yet: passed on to the next `hold` of their name here, carried by the next write, or released alone (see `hold`). */
  private readonly parked = new Map<string, Parked>();
  /** `place`'s statement texts on this engine, built at the first place. */
  private placeSql: PlaceStatements | undefined;
  /** Cancels the pending release of what is parked, while one is set. */
  private flushing: (() => void) | undefined;
  /** Releases of parked leases nobody took over, not yet done (`close` waits for them). */
  private readonly releasing = new Set<Promise<void>>();
  /** The release subscription while there is one: resolves to its `off` (undefined when LISTEN failed). */
  private listening: Promise<(() => Promise<void>) | undefined> | undefined;
  /** Set while no waiter is left: ends the release subscription when it fires (see `LISTEN_LINGER_MS`). */
  private lingering: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly options: LeaseOptions,
  ) {}

  get ttlMs(): number {
    return this.options.ttlMs;
  }

  private get releaseLingerMs(): number {
    return this.options.releaseLingerMs ?? (this.db.shared ? RELEASE_LINGER_MS : 0);
  }

  /**
   * Takes `name` when nobody holds it or its holder's lease ran out; undefined when another holds
   * it. With a `place` (from `enqueue`), also only when no other live instance holds an earlier
   * place in `name`'s line (this instance's own earlier places are its local queue's business),
   * and only while the place is still this instance's (another took it over when this one's
   * heartbeat lapsed: running it here too would run it twice).
   */
  async tryAcquire(name: string, ttlMs = this.options.ttlMs, place?: number): Promise<HeldLease | undefined> {
    const now = serverNow(this.db);
    const row =
      place === undefined
        ? await this.db.get<{ generation: number }>(
            `INSERT INTO leases (name, holder, generation, expires_at) VALUES (?, ?, 1, ${now} + ?)
       ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, generation = leases.generation + 1, expires_at = excluded.expires_at
       WHERE leases.expires_at <= ${now}
       RETURNING generation`,
            [name, this.options.holder, ttlMs],
          )
        : await this.db.get<{ generation: number }>(
            `INSERT INTO leases (name, holder, generation, expires_at) SELECT ?, ?, 1, ${now} + ?
       WHERE NOT EXISTS (SELECT 1 FROM lease_queue q JOIN instances i ON i.id = q.holder
                         WHERE q.name = ? AND q.seq < ? AND q.holder != ? AND i.lease_until > ${now})
         AND EXISTS (SELECT 1 FROM lease_queue p WHERE p.seq = ? AND p.holder = ?)
       ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, generation = leases.generation + 1, expires_at = excluded.expires_at
       WHERE leases.expires_at <= ${now}
       RETURNING generation`,
            [name, this.options.holder, ttlMs, name, place, this.options.holder, place, this.options.holder],
          );
    return row ? { name, generation: Number(row.generation) } : undefined;
  }

  /**
   * Takes a place in `name`'s line, in the order the store sees the calls (a message's arrival);
   * `hold` with the place waits for every earlier place of another live instance. The place is
   * given up when its work's lease is released, or by `leave` when the work will not run.
   */
  async enqueue(name: string): Promise<number> {
    return (await this.place(name)).seq;
  }

  /**
   * Takes a place for a message that can run on any instance (`payload`: the routed message),
   * recorded with it so it outlives the instance it reached. The place goes to the
   * conversation's owner — the instance holding its latest live place, else its lease — and
   * to this instance when the conversation is idle, in the same conditional write, so a busy
   * conversation stays on one instance and its messages never wait for a handoff. Another
   * owner is told at once (a notification naming it, sent with the place's commit); it picks
   * the place up with `claim`.
   * Without a payload the place is this instance's (the message runs where it arrived).
   * `takeLease`: the conversation's lease too, in the same round trip, when it is idle (see
   * `Place.lease`); the caller then owes the lease a `hold` or a `release`.
   *
   * `alongside` (with `takeLease`): steps run in the same transaction right after the lease's
   * write — the turn's first reads — so a message on an idle conversation starts with one round
   * trip for its place, its lease and its transcript. They run whether or not the lease was
   * taken; their results are handed back (`Place.alongside`) only when it was. A failing step
   * fails the whole write (nothing of it stays) with a `BatchStepError` naming the step.
   *
   * `written` (with `takeLease`): steps that write the message itself (its transcript entry),
   * given a guard that holds only when this write took the lease — the message is next in its
   * conversation and runs here — so the message is durable from its place on, in the same round
   * trip. They run right after the lease's write, before `alongside` (whose reads then see the
   * message). The place is marked `written` in the same write, so an instance that takes it
   * over does not write the message again. A place that did not take the lease writes nothing.
   */
  async place(name: string, payload?: string, takeLease = false, alongside: readonly BatchStep[] = [], written?: (guard: PlaceGuard) => readonly BatchStep[]): Promise<Place> {
    const me = this.options.holder;
    const sql = (this.placeSql ??= placeStatements(this.db));
    const placing =
      payload === undefined
        ? { sql: sql.placeHere, params: [name, me] }
        : this.db.engine === 'postgres'
          ? { sql: sql.placeAnnounced, params: [name, payload, me, me, name, name, name, me, me, `${INBOX_CHANNEL}_`] }
          : { sql: sql.placeRouted, params: [name, payload, me, me, name, name, name, me] };
    const leasing = { sql: sql.leasing, params: [name, me, this.options.ttlMs, name, me, name, name, name, me] };
    const writing = takeLease && written !== undefined;
    const leaseSteps: BatchStep[] = !takeLease
      ? []
      : !writing
        ? [leasing]
        : this.db.engine === 'postgres'
          ? [{ sql: sql.leasingWritten, params: [...leasing.params, name] }]
          : [leasing, { sql: sql.markWritten, params: [name] }];
    const messageSteps = writing ? written({ sql: sql.writtenGuard, params: [name] }) : [];
    const takenAt = performance.now();
    const lock = lineLock(this.db, name);
    const extra = takeLease ? alongside : [];
    const steps = (await this.carrying([...lock, placing, ...leaseSteps, ...messageSteps, ...extra])).slice(lock.length);
    const row = steps[0]!.rows[0] as { seq: number | string; holder: string; taken: number | string } | undefined;
    if (!row) throw new Error('lease queue: the place was not recorded');
    const leased = takeLease ? (steps[1]!.rows[0] as { generation: number | string } | undefined) : undefined;
    const from = 1 + leaseSteps.length;
    const place: Place = {
      seq: Number(row.seq),
      holder: row.holder,
      here: row.holder === me,
      taken: Number(row.taken) === 1,
      ...(leased
        ? {
            lease: { name, generation: Number(leased.generation), takenAt },
            ...(messageSteps.length > 0 ? { written: steps.slice(from, from + messageSteps.length) } : {}),
            ...(extra.length > 0 ? { alongside: steps.slice(from + messageSteps.length) } : {}),
          }
        : {}),
    };
    if (!place.here && this.db.engine !== 'postgres') await this.db.notify(inboxChannel(place.holder), place.holder);
    return place;
  }

  /** Picks up the places forwarded to this instance (or left for it by `place`), in place order. */
  async claim(): Promise<ClaimedPlace[]> {
    const rows = await this.db.all<{ seq: number | string; name: string; payload: string | null }>('UPDATE lease_queue SET taken = 1 WHERE holder = ? AND taken = 0 RETURNING seq, name, payload', [
      this.options.holder,
    ]);
    return rows.map((r) => ({ seq: Number(r.seq), name: r.name, payload: r.payload ?? undefined })).sort((a, b) => a.seq - b.seq);
  }

  /**
   * The places of instances that died (their heartbeat ran out) or stopped: a place without a
   * message is deleted; one with its message becomes this instance's, taken, at the end of its
   * conversation's line (behind what other instances ran since the death), in its old order.
   * One conditional delete: two survivors never take the same place.
   *
   * The new places are written under their lines' locks, as `place` writes its own: without
   * them a place another instance writes meanwhile could take a later number yet commit first,
   * see no earlier place in its line and take the lease, so its newer message would run ahead
   * of the older one taken over here. Under the lock such a place waits for this transaction
   * and then finds the taken-over places before it (and goes to this instance, their owner
   * now). The locks are taken after the delete, in name order: the delete's rows are this
   * transaction's alone (a second survivor waits on them, holding no line lock), and `place`
   * holds one line lock and none of these rows, so no two of them wait on each other.
   */
  async takeOver(): Promise<ClaimedPlace[]> {
    const now = serverNow(this.db);
    return this.db.tx(async () => {
      const dead = await this.db.all<{ seq: number | string; name: string; payload: string | null; placed_at: number | string | null; written: number | string }>(
        `DELETE FROM lease_queue WHERE NOT EXISTS (SELECT 1 FROM instances i WHERE i.id = lease_queue.holder AND i.lease_until > ${now}) RETURNING seq, name, payload, placed_at, written`,
      );
      const moving = dead.filter((row): row is typeof row & { payload: string } => row.payload !== null).sort((a, b) => Number(a.seq) - Number(b.seq));
      const names = [...new Set(moving.map((row) => row.name))].sort();
      const locks = names.flatMap((name) => lineLock(this.db, name));
      // One batch (one round trip, inside this transaction): the lines' locks, then the places in their old order.
      const steps = moving.length === 0 ? [] : (await this.db.batch([...locks, ...moving.map((row) => ({ sql: 'INSERT INTO lease_queue (name, holder, payload, taken, placed_at, written) VALUES (?, ?, ?, 1, ?, ?) RETURNING seq', params: [row.name, this.options.holder, row.payload, row.placed_at, Number(row.written)] }))])).slice(locks.length);
      const taken: ClaimedPlace[] = moving.map((row, i) => {
        const seq = (steps[i]!.rows[0] as { seq: number | string } | undefined)?.seq;
        if (seq === undefined) throw new Error('lease queue: a taken-over place was not recorded');
        return { seq: Number(seq), name: row.name, payload: row.payload, ...(row.placed_at === null ? {} : { placedAt: Number(row.placed_at) }), ...(Number(row.written) === 1 ? { written: true } : {}) };
      });
      if (dead.length > 0) log.info({ deleted: dead.length - taken.length, taken: taken.length }, 'took over the places of instances that stopped or died');
      return taken;
    });
  }

  /**
   * Hears places forwarded to this instance (and instances that stopped leaving theirs);
   * `handler(true)` also asks for `takeOver`, which runs every third of the lease as well, so
   * a dead instance's places move within its lease plus that period.
   */
  async onForwarded(handler: (takeOver: boolean) => void): Promise<() => Promise<void>> {
    // No payload: notifications may have been lost (a reconnect): look for everything.
    const own = await this.db.listen(inboxChannel(this.options.holder), (payload) => handler(payload === undefined));
    const all = await this.db
      .listen(INBOX_CHANNEL, (payload) => {
        if (payload === this.options.holder) handler(false);
        else if (payload === undefined || payload === '*') handler(true);
      })
      .catch(async (err: unknown) => {
        await own();
        throw err;
      });
    const timer = setInterval(() => handler(true), Math.max(100, Math.floor(this.options.ttlMs / 3)));
    timer.unref();
    return async () => {
      clearInterval(timer);
      await Promise.all([own(), all()]);
    };
  }

  /** Whether `place` is still this instance's (false once another instance took it over). */
  async holdsPlace(place: number): Promise<boolean> {
    return (await this.db.value('SELECT 1 FROM lease_queue WHERE seq = ? AND holder = ?', [place, this.options.holder])) !== undefined;
  }

  /** Gives up a place whose work will not run (refused, stopped while waiting). */
  async leave(place: number): Promise<void> {
    await this.db.run('DELETE FROM lease_queue WHERE seq = ? AND holder = ?', [place, this.options.holder]);
  }

  /** Extends a held lease; false when it was lost (expired and taken, or released). */
  async renew(lease: HeldLease, ttlMs = this.options.ttlMs): Promise<boolean> {
    const now = serverNow(this.db);
    const { changes } = await this.db.run(`UPDATE leases SET expires_at = ${now} + ? WHERE name = ? AND holder = ? AND generation = ? AND expires_at > ${now}`, [
      ttlMs,
      lease.name,
      this.options.holder,
      lease.generation,
    ]);
    return changes > 0;
  }

  /** Whether the lease is still this holder's (checked before an effect that must not happen twice). */
  async holds(lease: HeldLease): Promise<boolean> {
    return (await this.db.value(`SELECT 1 FROM leases WHERE name = ? AND holder = ? AND generation = ? AND expires_at > ${serverNow(this.db)}`, [lease.name, this.options.holder, lease.generation])) !== undefined;
  }

  /**
   * Gives the lease up and tells the instances queued behind it, in one batch (one round trip on
   * PostgreSQL; the notification goes out at its commit, never before the lease is free). A
   * release that found the lease already gone still notifies: waiters only look again.
   */
  async release(lease: HeldLease, place?: number): Promise<void> {
    await this.db.batch(this.releaseSteps([{ lease, place }]));
  }

  /**
   * The steps of `release` for each of `entries`. A release done twice frees nothing twice (the
   * generation and the place's number are gone after the first) and only wakes waiters again.
   */
  private releaseSteps(entries: readonly Parked[]): BatchStep[] {
    return entries.flatMap(({ lease, place }): BatchStep[] => {
      const freeing = { sql: 'DELETE FROM leases WHERE name = ? AND holder = ? AND generation = ?', params: [lease.name, this.options.holder, lease.generation] };
      const leaving = place === undefined ? undefined : { sql: 'DELETE FROM lease_queue WHERE seq = ? AND holder = ?', params: [place, this.options.holder] };
      // PostgreSQL, one statement: both deletes run whole whatever the select reads (data-modifying
      // WITH), and the notification, queued by the select, still goes out only at commit.
      if (this.db.engine === 'postgres')
        return [
          {
            sql: `WITH l AS (${freeing.sql})${leaving ? `, q AS (${leaving.sql})` : ''} SELECT pg_notify(?, ?)`,
            params: [...freeing.params, ...(leaving?.params ?? []), LEASE_CHANNEL, leaseDigest(lease.name)],
          },
        ];
      return [freeing, ...(leaving ? [leaving] : []), { notify: LEASE_CHANNEL, payload: leaseDigest(lease.name) }];
    });
  }

  /**
   * `db.batch(steps)` carrying the releases of the parked leases, first (a lease of the same
   * name as a place in `steps` is free by the time the place looks at it): one round trip and one
   * commit for both. Resolves to `steps`' own results; a failing step of `steps` rejects with its
   * own index, as `db.batch` would. When the batch fails, the releases are sent alone at once:
   * - at a step of `steps` (`BatchStepError`: the engine took the whole transaction back, nothing
   *   of it stays): the write fails as it would have alone, the releases do not fail with it;
   * - at a release's step: `steps` are sent again alone, so a release that cannot be written
   *   never costs the write carrying it (the lease then expires on its own at worst);
   * - otherwise (the connection went: it may or may not have committed): the write fails as it
   *   would have alone; the releases are sent again, which is harmless if they were done.
   * Inside a transaction nothing is carried: it may still be rolled back after this batch.
   */
  private async carrying(steps: readonly BatchStep[]): Promise<BatchResult[]> {
    if (this.parked.size === 0 || this.db.inTransaction) return this.db.batch(steps);
    const entries = this.takeParked();
    const releases = this.releaseSteps(entries);
    try {
      return (await this.db.batch([...releases, ...steps])).slice(releases.length);
    } catch (err) {
      this.releaseAlone(entries);
      if (!(err instanceof BatchStepError)) throw err;
      if (err.step < releases.length) return this.db.batch(steps);
      throw new BatchStepError(err.step - releases.length, err.cause);
    }
  }

  /**
   * Runs `fn` holding `name`: waits until the lease is free (or `signal` aborts: rejects with
   * its reason), renews it while `fn` runs, releases it after. `fn`'s signal aborts when `signal`
   * does or when the lease is lost.
   *
   * When `fn` is done the lease is parked, not released at once (on a shared store; see
   * `releaseLingerMs`): its release rides with this instance's next write — the next `place`,
   * of any conversation, or the next pass of a parked lease — in the same round trip and commit,
   * ahead of that write's own steps; nothing writing within `releaseLingerMs`, it is released
   * alone then (and at `close`). Its place in line goes with the release.
   * Meanwhile the next `hold` of `name` here takes the lease over in the write that gives up the
   * finished work's place — one round trip instead of a release and an acquire — when no other
   * live instance holds an earlier place in line (else the lease is released and that instance
   * woken).
   *
   * `keep`, asked when `fn` is done: true when this instance has more work for `name` queued
   * (the session's next message). Where releases are not lingered (`releaseLingerMs` 0), the
   * lease is then parked until the event loop's check phase, for that next `hold` to take over,
   * else released at once.
   *
   * `taken`: the lease already taken for this work (`place` with `takeLease`): no acquire. `fn`
   * is handed the lease it runs on: `taken` itself while that was held throughout (what was
   * read with it still stands), another one when it was lost and waited for again.
   */
  async hold<T>(name: string, signal: AbortSignal, fn: (signal: AbortSignal, lease: HeldLease) => Promise<T>, place?: number, keep?: () => boolean, taken?: HeldLease): Promise<T> {
    let lease: HeldLease;
    try {
      lease = (await this.stillHeld(name, taken)) ?? (await this.passParked(name, place)) ?? (await this.waitFor(name, signal, place));
    } catch (err) {
      if (taken) await this.release(taken).catch((e: unknown) => log.warn({ err: (e as Error).message }, 'lease release failed; it expires on its own'));
      if (place !== undefined) await this.leave(place).catch((e: unknown) => log.warn({ err: (e as Error).message }, 'lease queue place not given up; it lapses with this instance'));
      throw err;
    }
    const controller = new AbortController();
    const onAbort = () => controller.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    let renewing: Promise<void> | undefined;
    const timer = setInterval(() => {
      renewing ??= this.renew(lease)
        .then(
          (held) => {
            if (held || controller.signal.aborted) return;
            log.error({ lease: leaseDigest(name) }, 'lease lost while its work ran (this instance paused past its expiry?): stopping the work');
            controller.abort(new Error('this instance lost its lease; another instance took the work over'));
          },
          (err: unknown) => log.warn({ err: (err as Error).message }, 'lease renewal failed; retrying'),
        )
        .finally(() => (renewing = undefined));
    }, Math.max(50, Math.floor(this.options.ttlMs / 3)));
    timer.unref();
    try {
      return await fn(controller.signal, lease);
    } finally {
      clearInterval(timer);
      signal.removeEventListener('abort', onAbort);
      await renewing;
      if (!controller.signal.aborted && (this.releaseLingerMs > 0 || keep?.() === true)) this.park(lease, place);
      else await this.release(lease, place).catch((err: unknown) => log.warn({ err: (err as Error).message }, 'lease release failed; it expires on its own'));
    }
  }

  /**
   * A lease taken before `hold` (with the place, see `place`): used as it is while young (well
   * inside its term, as renewals keep it), else renewed first; undefined when it is not `name`'s
   * or was lost meanwhile (then waited for as usual).
   */
  private async stillHeld(name: string, taken: HeldLease | undefined): Promise<HeldLease | undefined> {
    if (!taken) return undefined;
    if (taken.name === name && taken.takenAt !== undefined && performance.now() - taken.takenAt < this.options.ttlMs / 3) return taken;
    if (taken.name === name && (await this.renew(taken))) return taken;
    await this.release(taken).catch((err: unknown) => log.warn({ err: (err as Error).message }, 'lease release failed; it expires on its own'));
    return undefined;
  }

  /**
   * Keeps a finished lease for a write to carry its release (or the next `hold` of its name to
   * take it over); whatever is still parked when `releaseLingerMs` ran out (0: at the event
   * loop's check phase) is released alone, together, in one batch.
   */
  private park(lease: HeldLease, place: number | undefined): void {
    const stale = this.parked.get(lease.name);
    // An earlier lease of the same name still parked (taken again meanwhile without taking it over): it goes now.
    if (stale) this.releaseAlone([stale]);
    this.parked.set(lease.name, { lease, place });
    if (this.flushing) return;
    const flush = () => {
      this.flushing = undefined;
      this.releaseAlone(this.takeParked());
    };
    const lingerMs = this.releaseLingerMs;
    if (lingerMs > 0) {
      const timer = setTimeout(flush, lingerMs);
      this.flushing = () => clearTimeout(timer);
    } else {
      const immediate = setImmediate(flush);
      this.flushing = () => clearImmediate(immediate);
    }
  }

  /** Everything parked, no longer parked (its release is the caller's now). */
  private takeParked(): Parked[] {
    const entries = [...this.parked.values()];
    this.parked.clear();
    this.flushing?.();
    this.flushing = undefined;
    return entries;
  }

  /** Releases `entries` in one batch of their own, in the background (`close` waits for it). */
  private releaseAlone(entries: readonly Parked[]): void {
    if (entries.length === 0) return;
    const done: Promise<void> = this.db
      .batch(this.releaseSteps(entries))
      .then(
        () => undefined,
        (err: unknown) => log.warn({ err: (err as Error).message, leases: entries.length }, 'lease release failed; it expires on its own'),
      )
      .finally(() => this.releasing.delete(done));
    this.releasing.add(done);
  }

  /**
   * Takes over a parked lease of `name` for the work at `place`: one write gives up the finished
   * work's place and passes the lease on (a new generation, a full term) unless another live
   * instance holds an earlier place in line. Undefined when nothing was parked or the lease had to
   * go to another instance (then released, waking it).
   */
  private async passParked(name: string, place: number | undefined): Promise<HeldLease | undefined> {
    const entry = this.parked.get(name);
    if (!entry) return undefined;
    this.parked.delete(name);
    const now = serverNow(this.db);
    const { lease } = entry;
    let placeGone = entry.place === undefined;
    try {
      const steps = await this.carrying([
        ...(entry.place === undefined ? [] : [{ sql: 'DELETE FROM lease_queue WHERE seq = ? AND holder = ?', params: [entry.place, this.options.holder] }]),
        {
          sql: `UPDATE leases SET generation = generation + 1, expires_at = ${now} + ? WHERE name = ? AND holder = ? AND generation = ? AND expires_at > ${now}${
            place === undefined
              ? ''
              : ` AND NOT EXISTS (SELECT 1 FROM lease_queue q JOIN instances i ON i.id = q.holder
                                  WHERE q.name = ? AND q.seq < ? AND q.holder != ? AND i.lease_until > ${now})`
          } RETURNING generation`,
          params: [this.options.ttlMs, name, this.options.holder, lease.generation, ...(place === undefined ? [] : [name, place, this.options.holder])],
        },
      ]);
      placeGone = true;
      const row = steps.at(-1)!.rows[0] as { generation: number } | undefined;
      if (row) return { name, generation: Number(row.generation) };
    } catch (err) {
      log.warn({ err: (err as Error).message, lease: leaseDigest(name) }, 'lease not passed on; releasing it');
    }
    // Another instance's earlier place (or the lease is gone): give it up, waking whoever waits.
    await this.release(lease, placeGone ? undefined : entry.place).catch((err: unknown) => log.warn({ err: (err as Error).message }, 'lease release failed; it expires on its own'));
    return undefined;
  }

  /** Takes `name` as soon as it is free: woken by release notifications, else at the holder's expiry. */
  private async waitFor(name: string, signal: AbortSignal, place: number | undefined): Promise<HeldLease> {
    const digest = leaseDigest(name);
    if (!this.listening) {
      // Free at once (the common case): taken without subscribing to releases. Else subscribed
      // first and then looked at again, so a release in between is not missed.
      signal.throwIfAborted();
      const lease = await this.tryAcquire(name, this.options.ttlMs, place);
      if (lease) return lease;
    }
    await this.subscribe();
    for (;;) {
      signal.throwIfAborted();
      let wake!: () => void;
      const woken = new Promise<void>((resolve) => (wake = resolve));
      let set = this.wakers.get(digest);
      if (!set) this.wakers.set(digest, (set = new Set()));
      set.add(wake);
      try {
        const lease = await this.tryAcquire(name, this.options.ttlMs, place);
        if (lease) return lease;
        if (place !== undefined && !(await this.holdsPlace(place))) throw new Error('another instance took this message over');
        // The holder releases (notification) or dies (its lease runs out): whichever comes first.
        // No holder: an earlier place of another instance is about to take it (its notification
        // wakes this one after), or that instance died (its places lapse with its heartbeat).
        const left = await this.db.value<number>(`SELECT expires_at - ${serverNow(this.db)} FROM leases WHERE name = ?`, [name]);
        const delay = Math.min(left === undefined ? BLOCKED_LOOK_MS : Math.max(20, left + 20), this.options.ttlMs);
        let timer: NodeJS.Timeout | undefined;
        let onAbort: (() => void) | undefined;
        await Promise.race([
          woken,
          new Promise<void>((resolve) => (timer = setTimeout(resolve, delay))),
          new Promise<void>((resolve) => {
            onAbort = resolve;
            signal.addEventListener('abort', onAbort, { once: true });
          }),
        ]);
        clearTimeout(timer);
        if (onAbort) signal.removeEventListener('abort', onAbort);
      } finally {
        set.delete(wake);
        if (set.size === 0) this.wakers.delete(digest);
        if (this.wakers.size === 0) this.linger();
      }
    }
  }

  /** The last waiter is gone: release notifications are given up unless another comes soon. */
  private linger(): void {
    clearTimeout(this.lingering);
    this.lingering = setTimeout(() => {
      this.lingering = undefined;
      if (this.wakers.size === 0) background(this.unsubscribe(), 'leases: release notifications not given up');
    }, this.options.listenLingerMs ?? LISTEN_LINGER_MS);
    this.lingering.unref();
  }

  /** Whether release notifications are subscribed now (they are while a waiter needs them). */
  get subscribed(): boolean {
    return this.listening !== undefined;
  }

  private subscribe(): Promise<void> {
    clearTimeout(this.lingering);
    this.lingering = undefined;
    if (this.closed) return Promise.resolve();
    this.listening ??= this.db
      .listen(LEASE_CHANNEL, (payload) => {
        // No payload: notifications may have been missed (a reconnect); every waiter looks again.
        const sets = payload === undefined ? [...this.wakers.values()] : [this.wakers.get(payload)].filter((s) => s !== undefined);
        for (const set of sets) for (const wake of [...set]) wake();
      })
      .then(
        (off) => off,
        // Waiters still take the lease at the holder's expiry or at their next look; they are never stuck.
        (err: unknown) => void log.warn({ err: (err as Error).message }, 'leases: release notifications unavailable; waiting by expiry'),
      );
    return this.listening.then(() => undefined);
  }

  /**
   * Gives the subscription up once its LISTEN finished. A waiter that comes meanwhile subscribes
   * afresh: its LISTEN goes out on the same connection after this UNLISTEN, and it looks at the
   * lease only once that LISTEN is done, so no release between the two goes unheard.
   */
  private async unsubscribe(): Promise<void> {
    const listening = this.listening;
    this.listening = undefined;
    const off = await listening;
    await off?.();
  }

  /**
   * Asks whichever instance holds `name` to stop its work (`/stop` that reached another
   * instance). True when another live holder has it and was told; the holder aborts the work
   * as if `/stop` had reached it (see `onStop`).
   */
  async requestStop(name: string): Promise<boolean> {
    const held = await this.db.value(`SELECT 1 FROM leases WHERE name = ? AND holder != ? AND expires_at > ${serverNow(this.db)}`, [name, this.options.holder]);
    if (held === undefined) return false;
    await this.db.notify(STOP_CHANNEL, leaseDigest(name));
    return true;
  }

  /** Hears stop requests: `handler` gets the digest of the lease whose work should stop. */
  async onStop(handler: (digest: string) => void): Promise<() => Promise<void>> {
    return this.db.listen(STOP_CHANNEL, (payload) => {
      if (payload !== undefined) handler(payload);
    });
  }

  /** Releases every parked lease now, in one batch (see `hold`); resolves once that is done. */
  async flush(): Promise<void> {
    this.releaseAlone(this.takeParked());
    await Promise.all([...this.releasing]);
  }

  async close(): Promise<void> {
    await this.flush();
    // Places picked up here go with this instance (their senders were told it is shutting down);
    // places forwarded here and not yet picked up stay for another instance to take over.
    if (this.db.open) await this.db.run('DELETE FROM lease_queue WHERE holder = ? AND taken = 1', [this.options.holder]).catch(() => undefined);
    this.closed = true;
    clearTimeout(this.lingering);
    await this.unsubscribe().catch(() => undefined);
  }
}
