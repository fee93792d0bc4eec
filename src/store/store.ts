import { mkdirSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { DATABASE_FILE } from './data-dir.js';
import { applyMigrations, MIGRATIONS, type Migration } from './migrations.js';

/**
 * The open SQLite database. `db` is the better-sqlite3 handle: other modules keep their own
 * prepared statements against it and add tables through `migrations.ts`.
 */
export interface Store {
  readonly db: Database.Database;
  /** Absolute path of the database file. */
  readonly file: string;
  close(): void;
}

/** Why the store could not open; `path` is what the operator must look at. */
export interface StoreOpenError {
  kind: 'unwritable' | 'corrupt' | 'migration-failed';
  path: string;
  message: string;
}

export type StoreOpenResult = { ok: true; store: Store } | { ok: false; error: StoreOpenError };

export interface OpenStoreOptions {
  /** Data directory; created when missing. */
  dataDir: string;
  migrations?: readonly Migration[];
  /** How long a writer waits for another process's lock before failing. */
  busyTimeoutMs?: number;
}

/**
 * Opens (creating when needed) the database under the data dir, switches it to WAL and
 * applies pending migrations. Bad input (a directory that cannot be created or written, a
 * file that is not SQLite) comes back as an error value naming the path.
 */
export function openStore(options: OpenStoreOptions): StoreOpenResult {
  const dir = path.resolve(options.dataDir);
  try {
    mkdirSync(dir, { recursive: true });
  } catch (err) {
    return fail('unwritable', dir, `data dir ${dir} cannot be created: ${(err as Error).message}`);
  }
  const file = path.join(dir, DATABASE_FILE);
  let db: Database.Database;
  try {
    db = new Database(file);
  } catch (err) {
    return fail('unwritable', file, `database ${file} cannot be opened: ${(err as Error).message} (is ${dir} writable?)`);
  }
  try {
    db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
  } catch (err) {
    db.close();
    const code = (err as { code?: string }).code ?? '';
    if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') {
      return fail('corrupt', file, `${file} is not a Warden SQLite database (${(err as Error).message}); move it away or point WARDEN_DATA_DIR elsewhere`);
    }
    return fail('unwritable', file, `database ${file} cannot be written: ${(err as Error).message} (is ${dir} writable?)`);
  }
  try {
    applyMigrations(db, options.migrations ?? MIGRATIONS);
  } catch (err) {
    db.close();
    const code = (err as { code?: string }).code ?? '';
    if (code === 'SQLITE_READONLY' || code === 'SQLITE_CANTOPEN' || code.startsWith('SQLITE_IOERR')) {
      return fail('unwritable', file, `database ${file} cannot be written: ${(err as Error).message}`);
    }
    return fail('migration-failed', file, `migrating ${file} failed: ${(err as Error).message}`);
  }
  return {
    ok: true,
    store: {
      db,
      file,
      close: () => {
        if (db.open) db.close();
      },
    },
  };
}

function fail(kind: StoreOpenError['kind'], at: string, message: string): StoreOpenResult {
  return { ok: false, error: { kind, path: at, message } };
}
