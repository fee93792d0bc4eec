import type { Db } from '../store/db.js';
import type { FeatureMigrations, Migration } from '../store/migrations.js';
import { serverNow } from './clock.js';

/**
 * Token buckets in the store, so every instance on one PostgreSQL (or the one process on SQLite)
 * counts against the same budget. A bucket holds at most `burst` tokens and refills at
 * `perMinute` a minute; taking a token is ONE conditional write (an upsert whose update only
 * happens when the refilled bucket holds a token), so two instances racing for the last token
 * cannot both get it. Times are the database server's clock (`serverNow`).
 */
const bucketsTable = (bigint: string) => `
  CREATE TABLE rate_buckets (
    key        TEXT PRIMARY KEY,
    tokens     DOUBLE PRECISION NOT NULL,
    updated_at ${bigint} NOT NULL,
    told       INTEGER NOT NULL DEFAULT 0
  );
`;

const sqlite001: Migration = { id: 'ratelimit-001-buckets', up: (db) => db.exec(bucketsTable('INTEGER')) };
const pg001: Migration = { id: 'ratelimit-pg-001-buckets', up: (db) => db.exec(bucketsTable('BIGINT')) };
export const rateLimitMigrations: FeatureMigrations = { feature: 'rate-limit', sqlite: [sqlite001], postgres: [pg001] };

export interface Bucket {
  perMinute: number;
  burst?: number | undefined;
}

export type TakeResult =
  | { ok: true }
  /** Over the limit: `retryAfterMs` until a token is back; `tell` is true once per wait (the first refusal since the last success). */
  | { ok: false; retryAfterMs: number; tell: boolean };

export class RateLimiter {
  constructor(private readonly db: Db) {}

  /** Takes one token from `key`'s bucket, creating it full. */
  async take(key: string, bucket: Bucket): Promise<TakeResult> {
    const burst = bucket.burst ?? Math.max(1, Math.floor(bucket.perMinute));
    const rate = bucket.perMinute / 60_000;
    const now = serverNow(this.db);
    const refilled = `(CASE WHEN rate_buckets.tokens + (${now} - rate_buckets.updated_at) * CAST(@rate AS DOUBLE PRECISION) > CAST(@burst AS DOUBLE PRECISION) THEN CAST(@burst AS DOUBLE PRECISION) ELSE rate_buckets.tokens + (${now} - rate_buckets.updated_at) * CAST(@rate AS DOUBLE PRECISION) END)`;
    const taken = await this.db.get<{ tokens: number }>(
      `INSERT INTO rate_buckets (key, tokens, updated_at, told) VALUES (@key, CAST(@burst AS DOUBLE PRECISION) - 1, ${now}, 0)
       ON CONFLICT (key) DO UPDATE SET tokens = ${refilled} - 1, updated_at = ${now}, told = 0
       WHERE ${refilled} >= 1
       RETURNING tokens`,
      { key, rate, burst },
    );
    if (taken) return { ok: true };
    // Refused: mark the bucket told, conditionally, so only the first refusal of a wait says so.
    const told = await this.db.get<{ tokens: number; elapsed: number }>(
      `UPDATE rate_buckets SET told = 1 WHERE key = @key AND told = 0 RETURNING tokens, (${now} - updated_at) AS elapsed`,
      { key },
    );
    const row = told ?? (await this.db.get<{ tokens: number; elapsed: number }>(`SELECT tokens, (${now} - updated_at) AS elapsed FROM rate_buckets WHERE key = @key`, { key }));
    const missing = 1 - (Number(row?.tokens ?? 0) + Number(row?.elapsed ?? 0) * rate);
    return { ok: false, retryAfterMs: Math.max(1000, Math.ceil(missing / rate)), tell: told !== undefined };
  }
}
