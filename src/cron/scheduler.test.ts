import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { applyMigrations } from '../store/migrations.js';
import { CronJobs, type CronJob } from './jobs.js';
import { cron001 } from './migrations.js';
import { CronScheduler } from './scheduler.js';

const T0 = Date.parse('2026-11-30T10:00:00Z');
const target = { sessionKey: 'agent:main:discord:direct:1', provider: 'discord', chat: 'dm' as const, channelId: 'D1', dmUserId: '1' };

function setup(file = path.join(mkdtempSync(path.join(tmpdir(), 'warden-cron-')), 'db.sqlite')) {
  const db = new Database(file);
  applyMigrations(db, [cron001]);
  let now = T0;
  const delivered: string[] = [];
  let fail = false;
  const jobs = new CronJobs(db);
  const scheduler = new CronScheduler({
    jobs,
    now: () => now,
    log: pino({ level: 'silent' }),
    deliver: async (job: CronJob) => {
      delivered.push(job.name);
      return fail ? { ok: false, error: 'model unavailable' } : { ok: true, detail: 'answered' };
    },
  });
  return { db, file, jobs, scheduler, delivered, advance: (ms: number) => (now += ms), failNext: (v: boolean) => (fail = v) };
}

describe('CronScheduler', () => {
  it('runs due jobs once, records the run and moves to the next time', async () => {
    const t = setup();
    const job = t.jobs.add({ agentId: 'main', name: 'standup', schedule: { kind: 'every', everyMs: 3_600_000 }, message: 'post the standup', target, createdBy: '1' }, T0);
    expect(await t.scheduler.tick()).toBe(0);
    t.advance(3_600_000);
    expect(await t.scheduler.tick()).toBe(1);
    expect(await t.scheduler.tick()).toBe(0);
    expect(t.delivered).toEqual(['standup']);
    const after = t.jobs.get(job.id)!;
    expect(after).toMatchObject({ runCount: 1, lastStatus: 'ok', nextRunAt: T0 + 2 * 3_600_000 });
    expect(t.jobs.runs(job.id)).toMatchObject([{ status: 'ok', detail: 'answered' }]);
  });

  it('retires a one-off after its run', async () => {
    const t = setup();
    const job = t.jobs.add({ agentId: 'main', name: 'remind', schedule: { kind: 'at', at: T0 + 1000 }, message: 'm', target, createdBy: '1' }, T0);
    t.advance(5000);
    await t.scheduler.tick();
    expect(t.jobs.get(job.id)!.nextRunAt).toBeUndefined();
    t.advance(10_000_000);
    expect(await t.scheduler.tick()).toBe(0);
  });

  it('records a failed delivery with its error and keeps the schedule', async () => {
    const t = setup();
    const job = t.jobs.add({ agentId: 'main', name: 'x', schedule: { kind: 'every', everyMs: 60_000 }, message: 'm', target, createdBy: '1' }, T0);
    t.failNext(true);
    t.advance(60_000);
    await t.scheduler.tick();
    expect(t.jobs.get(job.id)).toMatchObject({ lastStatus: 'error', lastError: 'model unavailable', nextRunAt: T0 + 120_000 });
  });

  it('skips disabled jobs and runs a manual run without moving the schedule', async () => {
    const t = setup();
    const job = t.jobs.add({ agentId: 'main', name: 'x', schedule: { kind: 'every', everyMs: 60_000 }, message: 'm', target, createdBy: '1' }, T0);
    t.jobs.setEnabled(job.id, false, T0);
    t.advance(120_000);
    expect(await t.scheduler.tick()).toBe(0);
    await t.scheduler.runNow(t.jobs.get(job.id)!);
    expect(t.delivered).toEqual(['x']);
    expect(t.jobs.get(job.id)!.nextRunAt).toBe(T0 + 60_000);
  });

  it('records a run cut short by a crash as interrupted on the next start', async () => {
    const t = setup();
    const job = t.jobs.add({ agentId: 'main', name: 'x', schedule: { kind: 'every', everyMs: 60_000 }, message: 'm', target, createdBy: '1' }, T0);
    t.jobs.begin(job, T0 + 60_000);
    t.db.close();
    const again = setup(t.file);
    again.scheduler.start();
    await again.scheduler.stop();
    expect(again.jobs.runs(job.id)).toMatchObject([{ status: 'interrupted' }]);
    expect(again.jobs.get(job.id)).toMatchObject({ lastStatus: 'interrupted', nextRunAt: T0 + 120_000 });
  });

  it('fires on its own timer', async () => {
    const db = new Database(':memory:');
    applyMigrations(db, [cron001]);
    const jobs = new CronJobs(db);
    const fired: string[] = [];
    const job = jobs.add({ agentId: 'main', name: 'soon', schedule: { kind: 'every', everyMs: 60_000 }, message: 'm', target, createdBy: '1' }, Date.now());
    db.prepare('UPDATE cron_jobs SET next_run_at = ? WHERE id = ?').run(Date.now() + 50, job.id);
    const scheduler = new CronScheduler({ jobs, log: pino({ level: 'silent' }), deliver: async (j) => (fired.push(j.id), { ok: true }) });
    scheduler.start();
    await expect.poll(() => fired, { timeout: 5000 }).toEqual([job.id]);
    await scheduler.stop();
  });
});
