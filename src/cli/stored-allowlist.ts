import { ExecAllowlistStore, type StoredAllowlistEntry } from '../exec/allowlist-store.js';
import { openConfiguredStore, type ConfiguredStore } from '../app/migrations.js';
import { parseStoreUrl } from '../store/store.js';

/**
 * The stored exec allowlist on a PostgreSQL store, for the read-only commands (`exec-check`,
 * `audit`); undefined on SQLite, where they read the file without opening it for writing.
 */
export async function readSharedAllowlist(configured: ConfiguredStore, agentId?: string): Promise<{ ok: true; entries: StoredAllowlistEntry[] } | { ok: false; error: string } | undefined> {
  if (parseStoreUrl(configured.store?.url).engine === 'sqlite') return undefined;
  const opened = await openConfiguredStore(configured);
  if (!opened.ok) return { ok: false, error: opened.error.message };
  try {
    const store = new ExecAllowlistStore(opened.store.db);
    return { ok: true, entries: agentId === undefined ? await store.all() : await store.list(agentId) };
  } catch (err) {
    return { ok: false, error: `cannot read the stored allowlist in ${opened.store.location}: ${(err as Error).message}` };
  } finally {
    await opened.store.close();
  }
}
