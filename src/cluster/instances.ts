import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { log } from '../log/log.js';
import type { Db } from '../store/db.js';
import { serverNow } from './clock.js';
import { background } from '../util/background.js';

export interface InstanceRegistryOptions {
  /** How long a heartbeat keeps the instance alive (`store.leaseSec`). */
  leaseMs: number;
  /** `server`: renders cards and runs turns; `cli`: a one-shot command that may wait for a decision. */
  role: 'server' | 'cli';
  id?: string | undefined;
}

/**
 * This process's row among the instances sharing the store, kept alive by a heartbeat every
 * third of the lease. An instance whose lease ran out is dead to the others: they take over its
 * approvals, its conversations and its cron runs. Rows dead for a day are removed.
 */
export class InstanceRegistry {
  readonly id: string;
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;

  constructor(
    private readonly db: Db,
    private readonly options: InstanceRegistryOptions,
  ) {
    this.id = options.id ?? randomUUID();
  }

  get leaseMs(): number {
    return this.options.leaseMs;
  }

  /** Registers the instance and starts its heartbeat. */
  async start(): Promise<void> {
    const now = serverNow(this.db);
    await this.db.run(
      `INSERT INTO instances (id, host, pid, role, started_at, lease_until) VALUES (?, ?, ?, ?, ${now}, ${now} + ?)
       ON CONFLICT (id) DO UPDATE SET lease_until = excluded.lease_until`,
      [this.id, hostname(), process.pid, this.options.role, this.options.leaseMs],
    );
    await this.db.run(`DELETE FROM instances WHERE lease_until < ${now} - 86400000`);
    this.timer = setInterval(() => background(this.beat(), 'instance heartbeat failed'), Math.max(100, Math.floor(this.options.leaseMs / 3)));
    this.timer.unref();
  }

  private beat(): Promise<void> {
    this.beating ??= (async () => {
      try {
        const { changes } = await this.db.run(`UPDATE instances SET lease_until = ${serverNow(this.db)} + ? WHERE id = ?`, [this.options.leaseMs, this.id]);
        if (changes === 0) await this.start().catch(() => undefined);
      } catch (err) {
        if (this.db.open) log.warn({ err: (err as Error).message }, 'instance heartbeat failed; others take over this instance once its lease runs out');
      } finally {
        this.beating = undefined;
      }
    })();
    return this.beating;
  }

  /** Whether `id` names an instance whose lease has not run out (this one always is). */
  async isLive(id: string): Promise<boolean> {
    if (id === this.id) return true;
    return (await this.db.value(`SELECT 1 FROM instances WHERE id = ? AND lease_until > ${serverNow(this.db)}`, [id])) !== undefined;
  }

  /** Instances alive now, with their role. */
  async live(): Promise<Array<{ id: string; role: string; host: string; pid: number }>> {
    return this.db.all(`SELECT id, role, host, pid FROM instances WHERE lease_until > ${serverNow(this.db)} ORDER BY started_at, id`);
  }

  /** Stops the heartbeat and removes the row: a clean stop hands over at once, without waiting for expiry. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.beating;
    if (this.db.open) await this.db.run('DELETE FROM instances WHERE id = ?', [this.id]).catch(() => undefined);
  }
}
