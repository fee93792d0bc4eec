export { AuditLog, type AuditEvent, type AuditInput } from './audit.js';
export { DATABASE_FILE, resolveDataDir } from './data-dir.js';
export type { Db, RunResult, SqlParams, SqlValue, StoreEngine } from './db.js';
export { applyMigrations, migrationsFor, pendingMigrations, type FeatureMigrations, type Migration } from './migrations.js';
export { memoryDb, openStore, parseStoreUrl, type OpenStoreOptions, type Store, type StoreOpenError, type StoreOpenResult } from './store.js';
export { Transcripts, type TranscriptEntry, type TranscriptInput, type TranscriptRole } from './transcript.js';
