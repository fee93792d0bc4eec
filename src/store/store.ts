import { mkdirSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { DATABASE_FILE } from './data-dir.js';
import type { Db, StoreEngine } from './db.js';
import { applyMigrations, migrationsFor, pendingMigrations, type FeatureMigrations, type Migration } from './migrations.js';
import { SqliteDb } from './sqlite/engine.js';

/**
 * The open store. `db` is the one interface features use (their own statements and tables,
 * registered as migrations by the composition root).
 */
export interface Store {
  readonly db: Db;
  readonly engine: StoreEngine;
  /** The SQLite file, or the PostgreSQL server and database (never its password). */
  readonly location: string;
  /** Absolute path of the SQLite file; undefined on PostgreSQL. */
  readonly file: string | undefined;
  /** Whether the server answers (readiness). */
  ping(): Promise<boolean>;
  /** The migrations this build knows that the database has not recorded (another instance may be older). */
  pending(): Promise<string[]>;
  close(): Promise<void>;
}

/** Why the store could not open; `path` is what the operator must look at. */
export interface StoreOpenError {
  kind: 'unwritable' | 'corrupt' | 'migration-failed' | 'unreachable' | 'bad-url';
  path: string;
  message: string;
}

export type StoreOpenResult = { ok: true; store: Store } | { ok: false; error: StoreOpenError };

export interface OpenStoreOptions {
  /** Data directory; created when missing (the SQLite file lives here). */
  dataDir: string;
  /** `postgres://…` for a shared PostgreSQL store; absent (or `sqlite:`) for the embedded one. */
  url?: string | undefined;
  /** Every feature's migrations, in dependency order. */
  migrations: readonly FeatureMigrations[] | readonly Migration[];
  /** How long a writer waits for another process's lock before failing (SQLite). */
  busyTimeoutMs?: number;
  /** PostgreSQL pool size. */
  poolMax?: number | undefined;
}

import { parseStoreUrl } from './store-url.js';
export { parseStoreUrl, type StoreUrl } from './store-url.js';

/**
 * Opens the store and applies pending migrations. SQLite: the database under the data dir
 * (created when needed), in WAL mode. PostgreSQL: a pooled connection to `url`. Bad input (a
 * directory that cannot be written, a file that is not SQLite, a server that cannot be reached,
 * a malformed URL) comes back as an error value naming what to look at.
 */
export async function openStore(options: OpenStoreOptions): Promise<StoreOpenResult> {
  const target = parseStoreUrl(options.url);
  if (target.engine === 'invalid') return fail('bad-url', 'store.url', target.message);
  const opened = target.engine === 'postgres' ? await openPostgres(target, options) : openSqlite(options);
  if (!opened.ok) return opened;
  const { db, location, file } = opened;
  const migrations = isFeatureList(options.migrations) ? migrationsFor(db.engine, options.migrations) : [...options.migrations];
  try {
    await applyMigrations(db, migrations);
  } catch (err) {
    await db.close().catch(() => undefined);
    const code = (err as { code?: string }).code ?? '';
    if (code === 'SQLITE_READONLY' || code === 'SQLITE_CANTOPEN' || code.startsWith('SQLITE_IOERR')) {
      return fail('unwritable', location, `database ${location} cannot be written: ${(err as Error).message}`);
    }
    return fail('migration-failed', location, `migrating ${location} failed: ${(err as Error).message}`);
  }
  return {
    ok: true,
    store: {
      db,
      engine: db.engine,
      location,
      file,
      ping: async () => {
        try {
          return (await db.value<number>('SELECT 1')) === 1;
        } catch {
          return false;
        }
      },
      pending: () => pendingMigrations(db, migrations),
      close: () => db.close(),
    },
  };
}

type Opened = { ok: true; db: Db; location: string; file: string | undefined } | { ok: false; error: StoreOpenError };

function openSqlite(options: OpenStoreOptions): Opened {
  const dir = path.resolve(options.dataDir);
  try {
    mkdirSync(dir, { recursive: true });
  } catch (err) {
    return fail('unwritable', dir, `data dir ${dir} cannot be created: ${(err as Error).message}`);
  }
  const file = path.join(dir, DATABASE_FILE);
  let raw: Database.Database;
  try {
    raw = new Database(file);
  } catch (err) {
    return fail('unwritable', file, `database ${file} cannot be opened: ${(err as Error).message} (is ${dir} writable?)`);
  }
  try {
    raw.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
    raw.pragma('journal_mode = WAL');
    raw.pragma('synchronous = NORMAL');
    raw.pragma('foreign_keys = ON');
  } catch (err) {
    raw.close();
    const code = (err as { code?: string }).code ?? '';
    if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') {
      return fail('corrupt', file, `${file} is not a Warden SQLite database (${(err as Error).message}); move it away or point WARDEN_DATA_DIR elsewhere`);
    }
    return fail('unwritable', file, `database ${file} cannot be written: ${(err as Error).message} (is ${dir} writable?)`);
  }
  return { ok: true, db: new SqliteDb(raw), location: file, file };
}

async function openPostgres(target: { url: string; display: string }, options: OpenStoreOptions): Promise<Opened> {
  // Loaded only for a PostgreSQL store: the SQLite default and every CLI start never pay for the client.
  const { PostgresDb } = await import('./postgres/engine.js');
  const db = new PostgresDb({ connectionString: target.url, poolMax: options.poolMax });
  try {
    await db.value('SELECT 1');
  } catch (err) {
    await db.close().catch(() => undefined);
    return fail('unreachable', target.display, `PostgreSQL at ${target.display} cannot be reached: ${(err as Error).message}`);
  }
  return { ok: true, db, location: target.display, file: undefined };
}

/** An in-memory SQLite store for tests and tools that keep nothing. */
export function memoryDb(): SqliteDb {
  return new SqliteDb(new Database(':memory:'));
}

const isFeatureList = (list: OpenStoreOptions['migrations']): list is readonly FeatureMigrations[] => list.length > 0 && 'feature' in list[0]!;

function fail(kind: StoreOpenError['kind'], at: string, message: string): { ok: false; error: StoreOpenError } {
  return { ok: false, error: { kind, path: at, message } };
}
