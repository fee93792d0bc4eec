import type { Db, StoreEngine } from './db.js';

/**
 * One schema change. Ids are recorded in `schema_migrations` once applied, so an entry must
 * never change after it has shipped: add a new one instead. Ids start with the area that owns
 * them (`cron-…`, `exec-…`) so parallel work does not collide. `up` runs inside a transaction.
 */
export interface Migration {
  id: string;
  up(db: Db): Promise<void> | void;
}

/**
 * What a feature brings to the store: its tables, as ordered migrations for each engine. The
 * store imports no feature; the composition root hands it the list of features at start-up, in
 * the order their tables depend on each other (a feature whose migration alters another's
 * table comes after it).
 */
export interface FeatureMigrations {
  feature: string;
  sqlite: readonly Migration[];
  postgres: readonly Migration[];
}

/** The migrations of `engine`, features in the order given; an id appearing twice is a bug. */
export function migrationsFor(engine: StoreEngine, features: readonly FeatureMigrations[]): Migration[] {
  const out: Migration[] = [];
  const seen = new Set<string>();
  for (const feature of features) {
    for (const migration of feature[engine]) {
      if (seen.has(migration.id)) throw new Error(`duplicate migration id ${migration.id}`);
      seen.add(migration.id);
      out.push(migration);
    }
  }
  return out;
}

const LEDGER = 'CREATE TABLE IF NOT EXISTS schema_migrations (id TEXT PRIMARY KEY, applied_at BIGINT NOT NULL)';

/**
 * Applies the migrations not yet recorded, in order, each in its own transaction, while holding
 * the store's migration lock (two instances starting together never migrate at once; the second
 * finds the work done). Returns the ids it applied. A failing migration throws (a bug in the
 * migration, not bad input) and leaves the database at the last good version.
 */
export async function applyMigrations(db: Db, migrations: readonly Migration[]): Promise<string[]> {
  const seen = new Set<string>();
  for (const m of migrations) {
    if (seen.has(m.id)) throw new Error(`duplicate migration id ${m.id}`);
    seen.add(m.id);
  }
  return db.exclusive(async () => {
    await db.exec(LEDGER);
    const applied: string[] = [];
    for (const migration of migrations) {
      const ran = await db.tx(async () => {
        // Checked inside the transaction: on SQLite another process may have applied it since.
        if ((await db.value('SELECT 1 FROM schema_migrations WHERE id = ?', [migration.id])) !== undefined) return false;
        await migration.up(db);
        await db.run('INSERT INTO schema_migrations (id, applied_at) VALUES (?, ?)', [migration.id, Date.now()]);
        return true;
      });
      if (ran) applied.push(migration.id);
    }
    return applied;
  });
}

/** The ids of `migrations` the database has not recorded (empty: the schema is current for this build). */
export async function pendingMigrations(db: Db, migrations: readonly Migration[]): Promise<string[]> {
  const done = new Set(await db.all<{ id: string }>('SELECT id FROM schema_migrations').then((rows) => rows.map((r) => r.id)));
  return migrations.filter((m) => !done.has(m.id)).map((m) => m.id);
}
