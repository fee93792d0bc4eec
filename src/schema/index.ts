import { webMigrations } from '../../adapters/web/migrations.js';
import { agentMigrations } from '../agent/subagent-runs.js';
import { approvalsMigrations } from '../approvals/migrations.js';
import { cronMigrations } from '../cron/migrations.js';
import { execMigrations } from '../exec/allowlist-store.js';
import { gatewayCardsMigrations } from '../gateway/card-store.js';
import { nodesMigrations } from '../gateway/nodes/store.js';
import type { FeatureMigrations } from '../store/migrations.js';
import { openStore, type OpenStoreOptions, type StoreOpenResult } from '../store/store.js';
import { coreMigrations } from './core.js';

/**
 * Every feature's tables, in the order their migrations depend on each other: the core schema
 * first (on SQLite it made the approvals and exec tables that their areas later alter), then each
 * area. A new area appends its `FeatureMigrations` here; a new table or column of an existing
 * area is a new migration at the end of that area's lists, one per engine.
 */
export const WARDEN_MIGRATIONS: readonly FeatureMigrations[] = [
  coreMigrations,
  approvalsMigrations,
  execMigrations,
  cronMigrations,
  gatewayCardsMigrations,
  agentMigrations,
  webMigrations,
  nodesMigrations,
];

/** Opens the store with every feature's migrations (what `warden start` and the CLI commands use). */
export function openWardenStore(options: Omit<OpenStoreOptions, 'migrations'> & { migrations?: OpenStoreOptions['migrations'] }): Promise<StoreOpenResult> {
  return openStore({ ...options, migrations: options.migrations ?? WARDEN_MIGRATIONS });
}
