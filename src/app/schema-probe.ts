import { existsSync } from 'node:fs';
import path from 'node:path';
import { DATABASE_FILE } from '../store/data-dir.js';
import type { Db } from '../store/db.js';
import { migrationsFor, pendingMigrations } from '../store/migrations.js';
import { parseStoreUrl } from '../store/store.js';
import { WARDEN_MIGRATIONS } from './migrations.js';

/** What `warden doctor` says about the store: which engine, whether it answers, whether its schema is this build's. */
export interface StoreProbe {
  ok: boolean;
  /** A migration this build knows is not applied yet: the next `warden start` applies it. */
  warn?: boolean;
  detail: string;
  fix?: string;
}

/**
 * Looks at the store without changing it: no file is created, no migration applied. The
 * PostgreSQL client is loaded only when `store.url` names PostgreSQL.
 */
export async function probeStore(configured: { dataDir: string; url: string | undefined }): Promise<StoreProbe> {
  const target = parseStoreUrl(configured.url);
  if (target.engine === 'invalid') return { ok: false, detail: target.message, fix: 'set store.url to postgres://user:${PASSWORD}@host:5432/database, or remove it for SQLite' };
  if (target.engine === 'sqlite') {
    const file = path.join(configured.dataDir, DATABASE_FILE);
    if (!existsSync(file)) return { ok: true, detail: `sqlite ${file} (created at the first start)` };
    const { default: Database } = await import('better-sqlite3');
    const { SqliteDb } = await import('../store/sqlite/engine.js');
    let db: Db | undefined;
    try {
      db = new SqliteDb(new Database(file, { readonly: true, fileMustExist: true }));
      return await schemaState(db, `sqlite ${file}`);
    } catch (err) {
      return { ok: false, detail: `sqlite ${file}: ${(err as Error).message}`, fix: 'move the file away or point WARDEN_DATA_DIR elsewhere' };
    } finally {
      await db?.close().catch(() => undefined);
    }
  }
  const { PostgresDb } = await import('../store/postgres/engine.js');
  const db = new PostgresDb({ connectionString: target.url, poolMax: 1, connectTimeoutMs: 5000 });
  try {
    await db.value('SELECT 1');
  } catch (err) {
    await db.close().catch(() => undefined);
    return { ok: false, detail: `postgres ${target.display}: unreachable (${(err as Error).message})`, fix: 'check store.url (host, port, database, user and password) and that the server accepts this host' };
  }
  try {
    return await schemaState(db, `postgres ${target.display} reachable`);
  } finally {
    await db.close().catch(() => undefined);
  }
}

async function schemaState(db: Db, where: string): Promise<StoreProbe> {
  const known = migrationsFor(db.engine, WARDEN_MIGRATIONS);
  const hasLedger =
    db.engine === 'sqlite'
      ? (await db.value("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'")) !== undefined
      : (await db.value<string | null>("SELECT to_regclass('schema_migrations')::text")) != null;
  const pending = hasLedger ? await pendingMigrations(db, known) : known.map((m) => m.id);
  if (pending.length === 0) return { ok: true, detail: `${where}, migrations current (${known.length})` };
  return { ok: true, warn: true, detail: `${where}, ${pending.length} of ${known.length} migrations not applied yet`, fix: '`warden start` applies them (under a lock: one instance migrates, the others wait)' };
}
