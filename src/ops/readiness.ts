import { describeAdapter, type ShardState } from './adapter-text.js';
import type { Db } from '../store/db.js';
import { pendingMigrations, type Migration } from '../store/migrations.js';
import { metrics as processMetrics, type WardenMetrics } from './metrics.js';

/** One readiness check's answer; `reason` says what an operator should look at. */
export type CheckResult = { ok: true; detail?: string } | { ok: false; reason: string };

export interface Readiness {
  ready: boolean;
  checks: Record<string, CheckResult>;
}

/** Ready when every check is; a check that throws is a failed check naming the error. */
export async function readiness(checks: Record<string, () => CheckResult | Promise<CheckResult>>): Promise<Readiness> {
  const out: Record<string, CheckResult> = {};
  await Promise.all(
    Object.entries(checks).map(async ([name, check]) => {
      try {
        out[name] = await check();
      } catch (err) {
        out[name] = { ok: false, reason: (err as Error).message };
      }
    }),
  );
  // Answer in the order the checks were given, whichever finished first.
  const ordered = Object.fromEntries(Object.keys(checks).map((name) => [name, out[name]!]));
  return { ready: Object.values(ordered).every((c) => c.ok), checks: ordered };
}

/** The store answers a query (timed as store operation `ping`). */
export async function storeCheck(db: Db, metrics: WardenMetrics = processMetrics): Promise<CheckResult> {
  if (!db.open) return { ok: false, reason: 'the store is closed' };
  await metrics.timeStoreAsync('ping', () => db.value('SELECT 1'));
  return { ok: true };
}

/** Every migration this build knows is applied to the store. */
export async function migrationsCheck(db: Db, migrations: readonly Migration[]): Promise<CheckResult> {
  if (!db.open) return { ok: false, reason: 'the store is closed' };
  const pending = await pendingMigrations(db, migrations);
  return pending.length === 0 ? { ok: true } : { ok: false, reason: `migrations not applied: ${pending.join(', ')}` };
}

export interface AdapterView {
  provider: string;
  state: 'running' | 'retrying';
  connected: boolean | undefined;
}

/** The gateway accepts messages and every chat platform it runs is connected. */
export function adaptersCheck(accepting: boolean, adapters: readonly AdapterView[]): CheckResult {
  if (!accepting) return { ok: false, reason: 'the gateway is not accepting messages (starting or stopping)' };
  const down = adapters.filter((a) => a.state === 'retrying' || a.connected === false);
  if (down.length === 0) return { ok: true };
  return { ok: false, reason: down.map((a) => `${a.provider} ${a.state === 'retrying' ? 'unreachable, retrying' : 'not connected'}`).join('; ') };
}

/** Every gateway shard of a platform is ready; `detail` lists them (what `warden doctor` shows of a running instance). */
export function shardsCheck(provider: string, shards: readonly ShardState[]): CheckResult {
  const detail = describeAdapter(provider, shards);
  const down = shards.filter((s) => s.status !== 'ready');
  if (down.length === 0) return { ok: true, detail };
  return { ok: false, reason: `${down.map((s) => `${provider} shard ${s.id} ${s.status}`).join('; ')}: ${detail}` };
}
