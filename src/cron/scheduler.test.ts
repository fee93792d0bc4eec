import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { applyMigrations } from '../store/migrations.js';
import { CronJobs, type CronJob } from './jobs.js';
import { CRON_MIGRATIONS } from './migrations.js';
import { CronScheduler, type CronRunControl, type CronSchedulerEvent } from './scheduler.js';

const T0 = Date.parse('2026-11-30T10:00:00Z');
const target = { sessionKey: 'agent:main:discord:direct:1', provider: 'discord', chat: 'dm' as const, channelId: 'D1', dmUserId: '1' };

function setup(file = path.join(mkdtempSync(path.join(tmpdir(), 'warden-cron-')), 'db.sqlite')) {
  const db = new Database(file);
  applyMigrations(db, CRON_MIGRATIONS);
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
    const started = t.scheduler.runNow(t.jobs.get(job.id)!);
    if (!started.ok) throw new Error(started.reason);
    await started.done;
    expect(t.delivered).toEqual(['x']);
    expect(t.jobs.get(job.id)!.nextRunAt).toBe(T0 + 60_000);
  });

  it('records a run cut short by a crash as interrupted on the next start', async () => {
    const t = setup();
    const job = t.jobs.add({ agentId: 'main', name: 'x', schedule: { kind: 'every', everyMs: 60_000 }, message: 'm', target, createdBy: '1' }, T0);
    t.jobs.start(t.jobs.claim(job, 'schedule', T0 + 60_000), job.id, T0 + 60_000);
    t.db.close();
    const again = setup(t.file);
    again.scheduler.start();
    await again.scheduler.stop();
    expect(again.jobs.runs(job.id)).toMatchObject([{ status: 'interrupted' }]);
    expect(again.jobs.get(job.id)).toMatchObject({ lastStatus: 'interrupted', nextRunAt: T0 + 120_000 });
  });

  it('fires on its own timer', async () => {
    const db = new Database(':memory:');
    applyMigrations(db, CRON_MIGRATIONS);
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

/**
 * A scheduler whose deliveries wait until the test releases them, with its clock in the test's
 * hands and every scheduler event recorded; tests wait on events, never on the wall clock.
 */
function controlled(options: { maxConcurrent?: number; keepRuns?: number; file?: string } = {}) {
  const db = new Database(options.file ?? ':memory:');
  applyMigrations(db, CRON_MIGRATIONS);
  let now = T0;
  const jobs = new CronJobs(db, { keepRuns: options.keepRuns });
  const events: CronSchedulerEvent[] = [];
  const waiters: Array<{ match: (e: CronSchedulerEvent) => boolean; resolve: (e: CronSchedulerEvent) => void }> = [];
  const gates = new Map<string, { release: (outcome?: { ok: true; detail?: string } | { ok: false; error: string }) => void; control: CronRunControl }>();
  const scheduler = new CronScheduler({
    jobs,
    now: () => now,
    log: pino({ level: 'silent' }),
    maxConcurrent: options.maxConcurrent,
    onEvent: (e) => {
      events.push(e);
      for (const w of waiters.splice(0)) (w.match(e) ? w.resolve(e) : waiters.push(w));
    },
    deliver: (job, control) =>
      new Promise((resolve) => gates.set(job.name, { release: (outcome = { ok: true, detail: `${job.name} answered` }) => resolve(outcome), control })),
  });
  const waitFor = (match: (e: CronSchedulerEvent) => boolean): Promise<CronSchedulerEvent> => {
    const seen = events.find(match);
    return seen ? Promise.resolve(seen) : new Promise((resolve) => waiters.push({ match, resolve }));
  };
  const nameOf = (id: string) => jobs.get(id)!.name;
  const started = (name: string) => waitFor((e) => e.type === 'started' && nameOf(e.jobId) === name);
  const running = () => events.filter((e) => e.type === 'started').map((e) => nameOf(e.jobId));
  const add = (name: string, schedule: CronJob['schedule'] = { kind: 'every', everyMs: 60_000 }, missed?: 'skip' | 'run-once') =>
    jobs.add({ agentId: 'main', name, schedule, message: `do ${name}`, target, createdBy: '1', missed }, now);
  return { db, jobs, scheduler, events, waitFor, started, running, gates, add, nameOf, advance: (ms: number) => (now += ms), now: () => now };
}

describe('CronScheduler concurrency', () => {
  it('runs due jobs at once up to maxConcurrent; the rest wait in order for a free slot', async () => {
    const t = controlled({ maxConcurrent: 2 });
    for (const name of ['a', 'b', 'c', 'd']) t.add(name);
    t.advance(60_000);
    const ticked = t.scheduler.tick();
    await t.started('b');
    expect(t.running()).toEqual(['a', 'b']);
    expect(['c', 'd'].map((n) => t.scheduler.state(t.jobs.list().find((j) => j.name === n)!.id))).toEqual(['queued', 'queued']);
    expect(t.jobs.runs(t.jobs.list()[2]!.id)).toMatchObject([{ status: 'queued', startedAt: undefined }]);
    t.gates.get('b')!.release();
    await t.started('c');
    expect(t.running()).toEqual(['a', 'b', 'c']);
    t.gates.get('a')!.release();
    await t.started('d');
    t.gates.get('c')!.release();
    t.gates.get('d')!.release();
    expect(await ticked).toBe(4);
    expect(t.jobs.list().map((j) => j.lastStatus)).toEqual(['ok', 'ok', 'ok', 'ok']);
  });

  it('skips a slot that comes while the job is still running, records the skip, and runs the next one', async () => {
    const t = controlled();
    const job = t.add('slow');
    t.advance(60_000);
    const first = t.scheduler.tick();
    await t.started('slow');
    t.advance(60_000);
    expect(await t.scheduler.tick()).toBe(0);
    const skipped = await t.waitFor((e) => e.type === 'skipped');
    expect(skipped).toMatchObject({ jobId: job.id, trigger: 'schedule', reason: 'overlap' });
    expect(t.jobs.runs(job.id)).toMatchObject([
      { status: 'skipped', trigger: 'schedule', dueAt: T0 + 120_000, detail: expect.stringMatching(/^skipped: the run for an earlier slot \(run \d+\) was still running$/) },
      { status: 'running', trigger: 'schedule', dueAt: T0 + 60_000, startedAt: T0 + 60_000 },
    ]);
    expect(t.jobs.get(job.id)!.nextRunAt).toBe(T0 + 180_000);
    t.advance(5_000);
    t.gates.get('slow')!.release();
    await first;
    expect(t.jobs.runs(job.id)[1]).toMatchObject({ status: 'ok', durationMs: 65_000, finishedAt: T0 + 125_000, detail: 'slow answered' });
    t.advance(55_000);
    const next = t.scheduler.tick();
    await t.waitFor((e) => e.type === 'started' && e.runId !== t.jobs.runs(job.id)[1]!.id);
    t.gates.get('slow')!.release();
    expect(await next).toBe(1);
  });

  it('does not start a manual run of a job that is still running, and says so', async () => {
    const t = controlled();
    const job = t.add('busy');
    const first = t.scheduler.runNow(job);
    expect(first.ok).toBe(true);
    await t.started('busy');
    const second = t.scheduler.runNow(t.jobs.get(job.id)!);
    expect(second).toEqual({ ok: false, reason: expect.stringMatching(/^job \w+ is still running \(run \d+\); it was not started again$/) });
    expect(t.jobs.runs(job.id)[0]).toMatchObject({ status: 'skipped', trigger: 'manual' });
    t.gates.get('busy')!.release();
    if (first.ok) await first.done;
    expect(t.jobs.runs(job.id)[1]).toMatchObject({ status: 'ok', trigger: 'manual' });
  });

  it('gives the slot of a run waiting for an approval to the next job, and takes one again when it resumes', async () => {
    const t = controlled({ maxConcurrent: 1 });
    const waiting = t.add('needs-approval');
    const other = t.add('other');
    const third = t.add('third');
    t.advance(60_000);
    const ticked = t.scheduler.tick();
    await t.started('needs-approval');
    expect(t.running()).toEqual(['needs-approval']);
    // Its turn raised an approval card: the run parks and the queue moves on.
    t.gates.get('needs-approval')!.control.park('waiting for an approval in #dev');
    await t.started('other');
    expect(t.scheduler.state(waiting.id)).toBe('parked');
    // Its next slot comes while it waits: skipped, and the skip says why.
    t.advance(60_000);
    await t.scheduler.tick();
    expect(t.jobs.runs(waiting.id)[0]).toMatchObject({ status: 'skipped', detail: expect.stringContaining('was still waiting for an approval in #dev') });
    t.gates.get('other')!.release();
    await t.started('third');
    // Decided: the waiting run continues at once, over the bound; nothing new starts until both end.
    t.gates.get('needs-approval')!.control.resume();
    expect(t.scheduler.state(waiting.id)).toBe('running');
    t.gates.get('needs-approval')!.release();
    t.gates.get('third')!.release();
    await ticked;
    expect([waiting, other, third].map((j) => t.jobs.runs(j.id).find((r) => r.status !== 'skipped')?.status)).toEqual(['ok', 'ok', 'ok']);
    expect(t.events.filter((e) => e.type === 'parked' || e.type === 'resumed').map((e) => e.type)).toEqual(['parked', 'resumed']);
  });

  it('with every slot taken by runs waiting for approvals, still runs the other jobs', async () => {
    const t = controlled({ maxConcurrent: 2 });
    for (const name of ['w1', 'w2', 'free']) t.add(name);
    t.advance(60_000);
    const ticked = t.scheduler.tick();
    await t.started('w2');
    t.gates.get('w1')!.control.park('waiting for an approval');
    t.gates.get('w2')!.control.park('waiting for an approval');
    await t.started('free');
    t.gates.get('free')!.release();
    await t.waitFor((e) => e.type === 'finished' && t.nameOf(e.jobId) === 'free');
    for (const n of ['w1', 'w2']) t.gates.get(n)!.release();
    expect(await ticked).toBe(3);
  });

  it('stopping ends the runs still waiting for a slot as interrupted', async () => {
    const t = controlled({ maxConcurrent: 1 });
    const a = t.add('a');
    const b = t.add('b');
    t.advance(60_000);
    void t.scheduler.tick();
    await t.started('a');
    t.gates.get('a')!.control.signal.addEventListener('abort', () => t.gates.get('a')!.release({ ok: false, error: 'Warden stopped during this run' }));
    await t.scheduler.stop();
    expect(t.jobs.runs(a.id)[0]).toMatchObject({ status: 'interrupted' });
    expect(t.jobs.runs(b.id)[0]).toMatchObject({ status: 'interrupted', detail: 'Warden stopped before this run started', startedAt: undefined });
  });
});

describe('CronScheduler missed runs', () => {
  /** Jobs were made, Warden stopped, and starts again `downMs` later. */
  function restartAfter(downMs: number, make: (t: ReturnType<typeof controlled>) => void) {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'warden-cron-missed-')), 'db.sqlite');
    const before = controlled({ file });
    make(before);
    before.db.close();
    const after = controlled({ file });
    after.advance(downMs);
    return after;
  }

  it.each([
    ['skip: every slot is skipped, recorded once with the count, and the job waits for its next slot', 'skip' as const, { kind: 'every', everyMs: 3_600_000 } as const, 'skipped', /^skipped 3 missed runs while Warden was not running \(first due 2026-11-30T11:00:00.000Z\)$/],
    ['run-once: the job runs once now, however many slots passed', 'run-once' as const, { kind: 'every', everyMs: 3_600_000 } as const, 'ok', /^3 runs missed while Warden was not running .*; run once now\. job answered$/],
    ['a cron schedule counts its missed slots too', 'skip' as const, { kind: 'cron', expr: '0 * * * *' } as const, 'skipped', /^skipped 3 missed runs/],
  ])('%s', async (_label, missed, schedule, status, detail) => {
    const t = restartAfter(3.5 * 3_600_000, (b) => b.add('job', schedule, missed));
    const job = t.jobs.list()[0]!;
    const started = t.scheduler.start();
    if (status === 'ok') {
      await t.started('job');
      t.gates.get('job')!.release();
    }
    await Promise.all(started);
    await t.scheduler.stop();
    expect(t.jobs.runs(job.id)).toEqual([expect.objectContaining({ status, trigger: 'missed', detail: expect.stringMatching(detail) })]);
    // Either way the job is back on its schedule: the next slot after now.
    expect(t.jobs.get(job.id)!.nextRunAt).toBe(T0 + 4 * 3_600_000);
  });

  it('a one-off missed while down runs once by default; a repeating job skips by default', async () => {
    const t = restartAfter(120_000, (b) => {
      b.add('reminder', { kind: 'at', at: T0 + 60_000 });
      b.add('digest', { kind: 'every', everyMs: 60_000 });
    });
    const [reminder, digest] = t.jobs.list();
    expect([reminder!.missed, digest!.missed]).toEqual(['run-once', 'skip']);
    const started = t.scheduler.start();
    await t.started('reminder');
    t.gates.get('reminder')!.release();
    await Promise.all(started);
    await t.scheduler.stop();
    expect(t.jobs.runs(reminder!.id)).toMatchObject([{ status: 'ok', trigger: 'missed' }]);
    expect(t.jobs.get(reminder!.id)!.nextRunAt).toBeUndefined();
    expect(t.jobs.runs(digest!.id)).toMatchObject([{ status: 'skipped', trigger: 'missed' }]);
  });
});

describe('cron run history', () => {
  it('keeps the last keepRuns runs of each job', async () => {
    const t = controlled({ keepRuns: 3 });
    const job = t.add('x');
    for (let i = 0; i < 5; i++) {
      const run = t.scheduler.runNow(t.jobs.get(job.id)!);
      await t.waitFor((e) => e.type === 'started' && e.runId === (run.ok ? run.runId : -1));
      t.gates.get('x')!.release({ ok: true, detail: `run ${i}` });
      if (run.ok) await run.done;
    }
    expect(t.jobs.runs(job.id).map((r) => r.detail)).toEqual(['run 4', 'run 3', 'run 2']);
  });

  it('moves older runs and their schema forward (cron-001 rows read as scheduled runs with their duration)', () => {
    const db = new Database(':memory:');
    applyMigrations(db, [CRON_MIGRATIONS[0]!]);
    db.prepare("INSERT INTO cron_jobs (id, agent_id, name, schedule, message, target, created_by, created_at) VALUES ('j1', 'main', 'n', ?, 'm', ?, '1', 0)").run(
      JSON.stringify({ kind: 'at', at: T0 }),
      JSON.stringify(target),
    );
    db.prepare("INSERT INTO cron_runs (job_id, started_at, finished_at, status, detail) VALUES ('j1', 1000, 4000, 'ok', 'fine')").run();
    applyMigrations(db, CRON_MIGRATIONS);
    const jobs = new CronJobs(db);
    expect(jobs.get('j1')).toMatchObject({ missed: 'run-once' });
    expect(jobs.runs('j1')).toEqual([{ id: 1, jobId: 'j1', trigger: 'schedule', dueAt: 1000, startedAt: 1000, finishedAt: 4000, durationMs: 3000, status: 'ok', detail: 'fine' }]);
  });
});

describe('CronJobs.update', () => {
  it('changes schedule, message and target; a new schedule counts from now, resuming picks the next slot', () => {
    const t = controlled();
    const job = t.add('x', { kind: 'every', everyMs: 3_600_000 });
    const there = { ...target, sessionKey: 'agent:main:discord:channel:c2', chat: 'channel' as const, channelId: 'c2', channelName: 'ops' };
    t.advance(600_000);
    const updated = t.jobs.update(job.id, { schedule: { kind: 'every', everyMs: 60_000 }, message: 'new text', target: there }, t.now())!;
    expect(updated).toMatchObject({ message: 'new text', target: there, nextRunAt: T0 + 660_000, schedule: { everyMs: 60_000 } });
    t.jobs.update(job.id, { enabled: false }, t.now());
    t.advance(3_600_000);
    expect(t.jobs.update(job.id, { enabled: true }, t.now())!.nextRunAt).toBe(t.now() + 60_000);
  });
});
