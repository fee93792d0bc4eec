// What instances sharing a PostgreSQL store must never do twice or out of order: a
// conversation's items run one at a time across instances (the gateway wraps its session queue
// in the session lease, as here), and a dead instance's cron run neither blocks its job nor runs again.
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { freshStoreTarget } from '../../test/store-engines.js';
import { CronJobs, type CronJob } from '../cron/jobs.js';
import { CronScheduler } from '../cron/scheduler.js';
import { SessionQueues } from '../gateway/queue.js';
import { openWardenStore } from '../app/migrations.js';
import type { Store } from '../store/store.js';
import { InstanceRegistry } from './instances.js';
import { Leases } from './leases.js';
import { until } from '../../test/until.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function open(target: { dataDir: string; url: string | undefined }): Promise<Store> {
  const opened = await openWardenStore(target);
  if (!opened.ok) throw new Error(opened.error.message);
  cleanups.push(() => opened.store.close());
  return opened.store;
}

describe('session lease across instances (PostgreSQL)', () => {
  it("a conversation's items never overlap across two instances; each instance keeps its own items in order", async () => {
    const target = await freshStoreTarget('postgres');
    const log: string[] = [];
    let running = 0;
    let overlapped = false;
    const queueOf = async (name: string) => {
      const store = await open(target);
      const leases = new Leases(store.db, { ttlMs: 2000, holder: name });
      cleanups.push(() => leases.close());
      return new SessionQueues<string>((key, item, signal) =>
        leases.hold(`session:${key}`, signal, async () => {
          if (++running > 1) overlapped = true;
          log.push(`start ${item}`);
          await new Promise((r) => setTimeout(r, 150));
          log.push(`end ${item}`);
          running--;
        }),
      );
    };
    const a = await queueOf('A');
    const b = await queueOf('B');
    a.enqueue('s1', 'a1');
    await until(() => log.includes('start a1'));
    // Arrives at B while A's turn runs: waits for A's release, not for the lease to expire.
    b.enqueue('s1', 'b1');
    a.enqueue('s1', 'a2');
    await until(() => log.filter((l) => l.startsWith('end')).length === 3);
    expect(overlapped).toBe(false);
    expect(log.slice(0, 2)).toEqual(['start a1', 'end a1']);
    expect(log.filter((l) => l.startsWith('start')).sort()).toEqual(['start a1', 'start a2', 'start b1']);
    // Across instances the lease decides who goes next (b1 or a2), not arrival order; within one, its queue's order holds.
    expect(log.indexOf('start a2')).toBeGreaterThan(log.indexOf('end a1'));
    // Another conversation is never held up by this one.
    const other: string[] = [];
    const c = new SessionQueues<string>(async (_k, item) => void other.push(item));
    c.enqueue('s2', 'x');
    await until(() => other.length === 1);
  });
});

describe('cron across instances (PostgreSQL)', () => {
  const target = { sessionKey: 'agent:main:slack:channel:C1', provider: 'slack', chat: 'channel' as const, channelId: 'C1' };

  it("a dead instance's running run is recorded as interrupted at the next slot and the job runs there, once", async () => {
    const where = await freshStoreTarget('postgres');
    const dead = await open(where);
    const live = await open(where);
    // The dead instance registered, claimed a slot and died mid-run (its lease ran out).
    const deadRegistry = new InstanceRegistry(dead.db, { leaseMs: 200, role: 'server' });
    await deadRegistry.start();
    clearInterval((deadRegistry as unknown as { timer: NodeJS.Timeout }).timer);
    const deadJobs = new CronJobs(dead.db, { instanceId: deadRegistry.id });
    let now = Date.now();
    const job = await deadJobs.add({ agentId: 'main', name: 'digest', schedule: { kind: 'every', everyMs: 60_000 }, message: 'm', target, createdBy: 't' }, now);
    now += 60_000;
    const stuck = (await deadJobs.claimSlot((await deadJobs.get(job.id))!, 'schedule', now))!;
    await deadJobs.start(stuck, job.id, now);
    // A second claim of the same slot (a second instance whose timer fired too) gets nothing.
    expect(await deadJobs.claimSlot({ ...(await deadJobs.get(job.id))!, nextRunAt: now }, 'schedule', now)).toBeUndefined();

    const liveRegistry = new InstanceRegistry(live.db, { leaseMs: 5000, role: 'server' });
    await liveRegistry.start();
    cleanups.push(() => liveRegistry.stop());
    const delivered: string[] = [];
    const scheduler = new CronScheduler({
      jobs: new CronJobs(live.db, { instanceId: liveRegistry.id }),
      shared: true,
      now: () => now,
      log: pino({ level: 'silent' }),
      deliver: async (j: CronJob) => {
        delivered.push(j.name);
        return { ok: true };
      },
    });
    cleanups.push(() => scheduler.stop());
    // Once the dead instance's lease ran out, its run no longer counts as running elsewhere.
    await until(async () => !(await liveRegistry.isLive(deadRegistry.id)));
    now += 60_000;
    expect(await scheduler.tick()).toBe(1);
    expect(delivered).toEqual(['digest']);
    const runs = await live.db.all<{ id: number; status: string; detail: string | null }>('SELECT id, status, detail FROM cron_runs WHERE job_id = ? ORDER BY id', [job.id]);
    expect(runs.map((r) => r.status)).toEqual(['interrupted', 'ok']);
    expect(runs[0]!.id).toBe(stuck);
  });

  it("a live instance's running run is its own: the next slot elsewhere is skipped as an overlap, never run beside it", async () => {
    const where = await freshStoreTarget('postgres');
    const a = await open(where);
    const b = await open(where);
    const ra = new InstanceRegistry(a.db, { leaseMs: 5000, role: 'server' });
    const rb = new InstanceRegistry(b.db, { leaseMs: 5000, role: 'server' });
    await ra.start();
    await rb.start();
    cleanups.push(() => ra.stop(), () => rb.stop());
    const jobsA = new CronJobs(a.db, { instanceId: ra.id });
    let now = Date.now();
    const job = await jobsA.add({ agentId: 'main', name: 'long', schedule: { kind: 'every', everyMs: 60_000 }, message: 'm', target, createdBy: 't' }, now);
    now += 60_000;
    const running = (await jobsA.claimSlot((await jobsA.get(job.id))!, 'schedule', now))!;
    await jobsA.start(running, job.id, now);
    const delivered: string[] = [];
    const sb = new CronScheduler({ jobs: new CronJobs(b.db, { instanceId: rb.id }), shared: true, now: () => now, log: pino({ level: 'silent' }), deliver: async (j) => (delivered.push(j.name), { ok: true }) });
    cleanups.push(() => sb.stop());
    now += 60_000;
    expect(await sb.tick()).toBe(0);
    expect(delivered).toEqual([]);
    const statuses = await b.db.all<{ status: string }>('SELECT status FROM cron_runs WHERE job_id = ? ORDER BY id', [job.id]);
    expect(statuses.map((r) => r.status)).toEqual(['running', 'skipped']);
  });
});
