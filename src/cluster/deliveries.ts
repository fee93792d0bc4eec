import type { Db } from '../store/db.js';
import type { FeatureMigrations, Migration } from '../store/migrations.js';
import { log } from '../log/log.js';
import { serverNow } from './clock.js';

/**
 * Deliveries a platform may repeat — and notices to be given once per window, such as the
 * access gate's refusal reply — remembered in the store so every instance sharing it
 * handles one once: Slack re-sends an event (same `event_id`, an `X-Slack-Retry-Num` header)
 * when the first delivery was not acknowledged in time, and behind a load balancer the retry
 * may reach another instance than the first try. A key is remembered until `expires_at`
 * (Slack retries for about five minutes; an hour covers it with room). Times are the database
 * server's clock (`serverNow`).
 */
const table = (bigint: string) => `
  CREATE TABLE delivered_events (
    key        TEXT PRIMARY KEY,
    expires_at ${bigint} NOT NULL
  );
  CREATE INDEX delivered_events_expiry ON delivered_events (expires_at);
`;

const sqlite001: Migration = { id: 'deliveries-001-events', up: (db) => db.exec(table('INTEGER')) };
const pg001: Migration = { id: 'deliveries-pg-001-events', up: (db) => db.exec(table('BIGINT')) };
export const deliveriesMigrations: FeatureMigrations = { feature: 'deliveries', sqlite: [sqlite001], postgres: [pg001] };

/** How long a delivery is remembered by default: Slack's retries span about five minutes. */
export const DELIVERY_TTL_MS = 60 * 60_000;
/** Expired keys are deleted at most this often, by the instance that notices first. */
const PRUNE_EVERY_MS = 60_000;

export class SharedDeliveries {
  private lastPrune = Date.now();

  constructor(
    private readonly db: Db,
    private readonly ttlMs = DELIVERY_TTL_MS,
  ) {}

  /**
   * True when none of `keys` was delivered before (within the expiry) on any instance; every
   * key is remembered either way. ONE conditional write: an insert whose conflict arm only
   * takes over an expired key, returning the keys it wrote — so of two instances racing with a
   * shared key, exactly one gets it back (the other waits on the row and then sees it taken).
   * `ttlMs` overrides how long these keys are remembered (the refusal notice's 10 minutes).
   */
  async firstTime(keys: readonly string[], ttlMs = this.ttlMs): Promise<boolean> {
    if (keys.length === 0) return true;
    // Sorted: two deliveries sharing keys lock them in the same order, never a deadlock.
    const sorted = [...new Set(keys)].sort();
    const now = serverNow(this.db);
    const rows = await this.db.all<{ key: string }>(
      `INSERT INTO delivered_events (key, expires_at) VALUES ${sorted.map(() => `(?, ${now} + CAST(? AS BIGINT))`).join(', ')}
       ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at WHERE delivered_events.expires_at <= ${now}
       RETURNING key`,
      sorted.flatMap((key) => [key, ttlMs]),
    );
    this.pruneNowAndThen();
    return rows.length === sorted.length;
  }

  /** Deletes expired keys (at most once a minute per instance), off the delivery's path. */
  private pruneNowAndThen(): void {
    if (Date.now() - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = Date.now();
    // Not awaited: a failure only leaves expired rows for the next try (they never count as delivered).
    void this.prune().catch((err: unknown) => log.warn({ err }, 'expired deliveries not pruned; the next delivery tries again'));
  }

  /** Deletes the keys whose expiry passed; resolves to how many. */
  async prune(): Promise<number> {
    return (await this.db.run(`DELETE FROM delivered_events WHERE expires_at <= ${serverNow(this.db)}`)).changes;
  }
}
