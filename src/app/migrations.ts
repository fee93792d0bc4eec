import { webMigrations } from '../../adapters/web/migrations.js';
import { agentMigrations } from '../agent/subagent-runs.js';
import { approvalsMigrations } from '../approvals/migrations.js';
import { cronMigrations } from '../cron/migrations.js';
import { clusterMigrations } from '../cluster/migrations.js';
import { pairingMigrations } from '../cluster/pairing.js';
import { rateLimitMigrations } from '../cluster/rate-limit.js';
import { botLoopMigrations } from '../cluster/bot-loop.js';
import { deliveriesMigrations } from '../cluster/deliveries.js';
import { execMigrations } from '../exec/allowlist-store.js';
import { gatewayCardsMigrations } from '../gateway/card-store.js';
import { nodesMigrations } from '../control/nodes/store.js';
import type { FeatureMigrations } from '../store/migrations.js';
import { secretsMigrations } from '../store/secret-store.js';
import { transcriptSearchMigrations } from '../store/transcript-search.js';
import { openStore, parseStoreUrl, type OpenStoreOptions, type StoreOpenResult } from '../store/store.js';
import { usageMigrations } from '../usage/store.js';
import { coreMigrations } from './core-migrations.js';
import { progressCardsMigrations } from './progress-cards.js';
import { conversationWaitsMigrations } from './conversation-waits.js';
import { pollMigrations } from '../tools/core/message/polls.js';
import { userQuestionsMigrations } from './user-questions-store.js';
import { secretPromptsMigrations } from './secret-prompts.js';
import { followUpMigrations } from '../gateway/follow-up-store.js';

/**
 * Every feature's tables, in the order their migrations depend on each other: the core schema
 * first (on SQLite it made the approvals and exec tables that their areas later alter), then each
 * area. A new area appends its `FeatureMigrations` here; a new table or column of an existing
 * area is a new migration at the end of that area's lists, one per engine.
 */
export const WARDEN_MIGRATIONS: readonly FeatureMigrations[] = [
  coreMigrations,
  // After core: it indexes transcript_entries (and backfills from it).
  transcriptSearchMigrations,
  approvalsMigrations,
  execMigrations,
  cronMigrations,
  gatewayCardsMigrations,
  agentMigrations,
  webMigrations,
  nodesMigrations,
  // After cron: it adds a column to cron_runs.
  clusterMigrations,
  rateLimitMigrations,
  pairingMigrations,
  usageMigrations,
  secretsMigrations,
  botLoopMigrations,
  progressCardsMigrations,
  deliveriesMigrations,
  conversationWaitsMigrations,
  pollMigrations,
  userQuestionsMigrations,
  secretPromptsMigrations,
  followUpMigrations,
];

/** Opens the store with every feature's migrations (what `warden start` and the CLI commands use). */
export function openWardenStore(options: Omit<OpenStoreOptions, 'migrations'> & { migrations?: OpenStoreOptions['migrations'] }): Promise<StoreOpenResult> {
  return openStore({ ...options, migrations: options.migrations ?? WARDEN_MIGRATIONS });
}

/** What a config says about its store: the data dir (resolved as `resolveDataDir` does) and `store.*`. */
export interface ConfiguredStore {
  dataDir: string;
  store?: { url?: string | undefined; poolMax?: number | undefined } | undefined;
}

/**
 * Opens the store a config names, for `warden start` and every command that reads or writes
 * it. An error names the key the operator must fix: `store.url` for a malformed URL, a server
 * that cannot be reached or a database that cannot be migrated; the data dir otherwise.
 */
export async function openConfiguredStore(configured: ConfiguredStore): Promise<StoreOpenResult> {
  const url = configured.store?.url;
  const opened = await openWardenStore({ dataDir: configured.dataDir, url, poolMax: configured.store?.poolMax });
  if (opened.ok || parseStoreUrl(url).engine === 'sqlite') return opened;
  const { error } = opened;
  return { ok: false, error: { ...error, path: 'store.url', message: `store.url: ${error.message}` } };
}
