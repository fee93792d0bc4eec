import * as z from 'zod';
import { lazySchema } from './lazy.js';

/**
 * `store`: where durable state lives. Without `url` (or with `sqlite:`) it is the embedded SQLite
 * file under the data dir; `postgres://user:password@host:5432/db` names a PostgreSQL server
 * several instances share. Write the password as `${ENV}` (e.g. `url: ${WARDEN_STORE_URL}`) so
 * it never sits in the file.
 */
export const storeConfig = lazySchema(() => z.strictObject({
  url: z.string().optional(),
  /** PostgreSQL connections per instance. */
  poolMax: z.number().int().min(2).max(100).optional(),
  /**
   * Shared store only: how long an instance, a conversation's turn or a cron run stays leased
   * without a renewal. An instance killed outright is taken over by another within this time
   * (plus one renewal period); renewals run every third of it.
   */
  leaseSec: z.number().min(1).max(600).default(15),
}));
export type StoreConfig = z.infer<typeof storeConfig>;
