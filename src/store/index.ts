export { AuditLog, type AuditEvent, type AuditInput } from './audit.js';
export { DATABASE_FILE, resolveDataDir } from './data-dir.js';
export { applyMigrations, MIGRATIONS, type Migration } from './migrations.js';
export { openStore, type OpenStoreOptions, type Store, type StoreOpenError, type StoreOpenResult } from './store.js';
export { Transcripts, type TranscriptEntry, type TranscriptInput, type TranscriptRole } from './transcript.js';
