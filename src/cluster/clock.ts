import type { Db } from '../store/db.js';

/**
 * The database server's clock in milliseconds, as SQL. Leases are written and compared with it
 * alone, so two instances whose clocks disagree still agree on who holds what.
 */
export function serverNow(db: Db): string {
  return db.engine === 'postgres' ? '(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT' : "CAST(unixepoch('subsec') * 1000 AS INTEGER)";
}
