import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { ENGINES, freshStoreTarget } from '../../test/store-engines.js';
import type { StoreEngine } from '../store/db.js';
import { openStore, type Store } from '../store/store.js';
import { CronJobs, type CronJob } from './jobs.js';
import { clusterMigrations } from '../cluster/migrations.js';
import { CRON_MIGRATIONS, cronMigrations } from './migrations.js';
import { CronScheduler, type CronRunControl, type CronSchedulerEvent } from './scheduler.js';

const T0 = Date.parse('2026-11-30T10:00:00Z');
const target = { sessionKey: 'agent:main:discord:direct:1', provider: 'discord', chat: 'dm' as const, channelId: 'D1', dmUserId: '1' };

type Target = { dataDir: string; url: string | undefined };

const open: Store[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

/** The cron tables on `engine`: a new store, or the one at `where` opened again (a restart). */
async function cronStore(engine: StoreEngine, where?: Target, migrations = [cronMigrations]): Promise<{ store: Store; where: Target }> {
  const at = where ?? (await freshStoreTarget(engine));
  const opened = await openStore({ dataDir: at.dataDir, url: at.url, migrations });
  if (!opened.ok) throw new Error(opened.error.message);
  open.push(opened.store);
  return { store: opened.store, where: at };
}

async function setup(engine: StoreEngine, where?: Target) {
  const { store, where: at } = await cronStore(engine, where);
  let now = T0;
  const delivered: string[] = [];
  let fail = false;
  const jobs = new CronJobs(store.db);
  const scheduler = new CronScheduler({
    jobs,
    now: () => now,
    log: pino({ level: 'silent' }),
    deliver: async (job: CronJob) => {
      delivered.push(job.name);
      return fail ? { ok: false, error: 'model unavailable' } : { ok: true, detail: 'answered' };
    },
  });
  return { store, where: at, jobs, scheduler, delivered, advance: (ms: number) => (now += ms), failNext: (v: boolean) => (fail = v) };
}

describe.each(ENGINES)('CronScheduler on %s', (engine) => {
  it('runs due jobs once, records the run and moves to the next time', async () => {
    const t = await setup(engine);
    const job = await t.jobs.add({ agentId: 'main', name: 'standup', schedule: { kind: 'every', everyMs: 3_600_000 }, message: 'post the standup', target, createdBy: '1' }, T0);
    expect(await t.scheduler.tick()).toBe(0);
    t.advance(3_600_000);
    expect(await t.scheduler.tick()).toBe(1);
    expect(await t.scheduler.tick()).toBe(0);
    expect(t.delivered).toEqual(['standup']);
    const after = (await t.jobs.get(job.id))!;
    expect(after).toMatchObject({ runCount: 1, lastStatus: 'ok', nextRunAt: T0 + 2 * 3_600_000 });
    expect(await t.jobs.runs(job.id)).toMatchObject([{ status: 'ok', detail: 'answered' }]);
  });

  it('retires a one-off after its run', async () => {
    const t = await setup(engine);
    const job = await t.jobs.add({ agentId: 'main', name: 'remind', schedule: { kind: 'at', at: T0 + 1000 }, message: 'm', target, createdBy: '1' }, T0);
    t.advance(5000);
    await t.scheduler.tick();
    expect((await t.jobs.get(job.id))!.nextRunAt).toBeUndefined();
    t.advance(10_000_000);
    expect(await t.scheduler.tick()).toBe(0);
  });

  it('records a failed delivery with its error and keeps the schedule', async () => {
    const t = await setup(engine);
    const job = await t.jobs.add({ agentId: 'main', name: 'x', schedule: { kind: 'every', everyMs: 60_000 }, message: 'm', target, createdBy: '1' }, T0);
    t.failNext(true);
    t.advance(60_000);
    await t.scheduler.tick();
    expect(await t.jobs.get(job.id)).toMatchObject({ lastStatus: 'error', lastError: 'model unavailable', nextRunAt: T0 + 120_000 });
  });

  it('skips disabled jobs and runs a manual run without moving the schedule', async () => {
    const t = await setup(engine);
    const job = await t.jobs.add({ agentId: 'main', name: 'x', schedule: { kind: 'every', everyMs: 60_000 }, message: 'm', target, createdBy: '1' }, T0);
    await t.jobs.setEnabled(job.id, false, T0);
    t.advance(120_000);
    expect(await t.scheduler.tick()).toBe(0);
    const started = await t.scheduler.runNow((await t.jobs.get(job.id))!);
    if (!started.ok) throw new Error(started.reason);
    await started.done;
    expect(t.delivered).toEqual(['x']);
    expect((await t.jobs.get(job.id))!.nextRunAt).toBe(T0 + 60_000);
  });

  it('records a run cut short by a crash as interrupted on the next start', async () => {
    const t = await setup(engine);
    const job = await t.jobs.add({ agentId: 'main', name: 'x', schedule: { kind: 'every', everyMs: 60_000 }, message: 'm', target, createdBy: '1' }, T0);
    await t.jobs.start(await t.jobs.claim(job, 'schedule', T0 + 60_000), job.id, T0 + 60_000);
    await t.store.close();
    const again = await setup(engine, t.where);
    await again.scheduler.start();
    await again.scheduler.stop();
    expect(await again.jobs.runs(job.id)).toMatchObject([{ status: 'interrupted' }]);
    expect(await again.jobs.get(job.id)).toMatchObject({ lastStatus: 'interrupted', nextRunAt: T0 + 120_000 });
  });

  it('fires on its own timer', async () => {
    const { store } = await cronStore(engine);
    const jobs = new CronJobs(store.db);
    const fired: string[] = [];
    const job = await jobs.add({ agentId: 'main', name: 'soon', schedule: { kind: 'every', everyMs: 60_000 }, message: 'm', target, createdBy: '1' }, Date.now());
    await store.db.run('UPDATE cron_jobs SET next_run_at = ? WHERE id = ?', [Date.now() + 50, job.id]);
    const scheduler = new CronScheduler({ jobs, log: pino({ level: 'silent' }), deliver: async (j) => (fired.push(j.id), { ok: true }) });
    await scheduler.start();
    await expect.poll(() => fired, { timeout: 5000 }).toEqual([job.id]);
    await scheduler.stop();
  });
});

/**
 * A scheduler whose deliveries wait until the test releases them, with its clock in the test's
 * hands and every scheduler event recorded; tests wait on events, never on the wall clock.
 */
async function controlled(engine: StoreEngine, options: { maxConcurrent?: number; keepRuns?: number; where?: Target } = {}) {
  const { store, where } = await cronStore(engine, options.where);
  let now = T0;
  const jobs = new CronJobs(store.db, { keepRuns: options.keepRuns });
  // Job names by id, for matching events synchronously (jobs made before a restart included).
  const names = new Map((await jobs.list()).map((j) => [j.id, j.name]));
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
  const nameOf = (id: string) => names.get(id)!;
  const started = (name: string) => waitFor((e) => e.type === 'started' && nameOf(e.jobId) === name);
  const queued = (name: string) => waitFor((e) => e.type === 'queued' && nameOf(e.jobId) === name);
  const running = () => events.filter((e) => e.type === 'started').map((e) => nameOf(e.jobId));
  const add = async (name: string, schedule: CronJob['schedule'] = { kind: 'every', everyMs: 60_000 }, missed?: 'skip' | 'run-once') => {
    const job = await jobs.add({ agentId: 'main', name, schedule, message: `do ${name}`, target, createdBy: '1', missed }, now);
    names.set(job.id, name);
    return job;
  };
  const idOf = (name: string) => [...names].find(([, n]) => n === name)![0];
  return { store, where, jobs, scheduler, events, waitFor, started, queued, running, gates, add, nameOf, idOf, advance: (ms: number) => (now += ms), now: () => now };
}

describe.each(ENGINES)('CronScheduler concurrency on %s', (engine) => {
  it('runs due jobs at once up to maxConcurrent; the rest wait in order for a free slot', async () => {
    const t = await controlled(engine, { maxConcurrent: 2 });
    for (const name of ['a', 'b', 'c', 'd']) await t.add(name);
    t.advance(60_000);
    const ticked = t.scheduler.tick();
    await t.started('b');
    await t.queued('d');
    expect(t.running()).toEqual(['a', 'b']);
    expect(['c', 'd'].map((n) => t.scheduler.state(t.idOf(n)))).toEqual(['queued', 'queued']);
    expect(await t.jobs.runs((await t.jobs.list())[2]!.id)).toMatchObject([{ status: 'queued', startedAt: undefined }]);
    t.gates.get('b')!.release();
    await t.started('c');
    expect(t.running()).toEqual(['a', 'b', 'c']);
    t.gates.get('a')!.release();
    await t.started('d');
    t.gates.get('c')!.release();
    t.gates.get('d')!.release();
    expect(await ticked).toBe(4);
    expect((await t.jobs.list()).map((j) => j.lastStatus)).toEqual(['ok', 'ok', 'ok', 'ok']);
  });

  it('skips a slot that comes while the job is still running, records the skip, and runs the next one', async () => {
    const t = await controlled(engine);
    const job = await t.add('slow');
    t.advance(60_000);
    const first = t.scheduler.tick();
    await t.started('slow');
    t.advance(60_000);
    expect(await t.scheduler.tick()).toBe(0);
    const skipped = await t.waitFor((e) => e.type === 'skipped');
    expect(skipped).toMatchObject({ jobId: job.id, trigger: 'schedule', reason: 'overlap' });
    expect(await t.jobs.runs(job.id)).toMatchObject([
      { status: 'skipped', trigger: 'schedule', dueAt: T0 + 120_000, detail: expect.stringMatching(/^skipped: the run for an earlier slot \(run \d+\) was still running$/) },
      { status: 'running', trigger: 'schedule', dueAt: T0 + 60_000, startedAt: T0 + 60_000 },
    ]);
    expect((await t.jobs.get(job.id))!.nextRunAt).toBe(T0 + 180_000);
    t.advance(5_000);
    t.gates.get('slow')!.release();
    await first;
    expect((await t.jobs.runs(job.id))[1]).toMatchObject({ status: 'ok', durationMs: 65_000, finishedAt: T0 + 125_000, detail: 'slow answered' });
    t.advance(55_000);
    const next = t.scheduler.tick();
    const firstRunId = (await t.jobs.runs(job.id))[1]!.id;
    await t.waitFor((e) => e.type === 'started' && e.runId !== firstRunId);
    t.gates.get('slow')!.release();
    expect(await next).toBe(1);
  });

  it('does not start a manual run of a job that is still running, and says so', async () => {
    const t = await controlled(engine);
    const job = await t.add('busy');
    const first = await t.scheduler.runNow(job);
    expect(first.ok).toBe(true);
    await t.started('busy');
    const second = await t.scheduler.runNow((await t.jobs.get(job.id))!);
    expect(second).toEqual({ ok: false, reason: expect.stringMatching(/^job \w+ is still running \(run \d+\); it was not started again$/) });
    expect((await t.jobs.runs(job.id))[0]).toMatchObject({ status: 'skipped', trigger: 'manual' });
    t.gates.get('busy')!.release();
    if (first.ok) await first.done;
    expect((await t.jobs.runs(job.id))[1]).toMatchObject({ status: 'ok', trigger: 'manual' });
  });

  it('gives the slot of a run waiting for an approval to the next job, and takes one again when it resumes', async () => {
    const t = await controlled(engine, { maxConcurrent: 1 });
    const waiting = await t.add('needs-approval');
    const other = await t.add('other');
    const third = await t.add('third');
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
    expect((await t.jobs.runs(waiting.id))[0]).toMatchObject({ status: 'skipped', detail: expect.stringContaining('was still waiting for an approval in #dev') });
    t.gates.get('other')!.release();
    await t.started('third');
    // Decided: the waiting run continues at once, over the bound; nothing new starts until both end.
    t.gates.get('needs-approval')!.control.resume();
    expect(t.scheduler.state(waiting.id)).toBe('running');
    t.gates.get('needs-approval')!.release();
    t.gates.get('third')!.release();
    await ticked;
    const settled = await Promise.all([waiting, other, third].map(async (j) => (await t.jobs.runs(j.id)).find((r) => r.status !== 'skipped')?.status));
    expect(settled).toEqual(['ok', 'ok', 'ok']);
    expect(t.events.filter((e) => e.type === 'parked' || e.type === 'resumed').map((e) => e.type)).toEqual(['parked', 'resumed']);
  });

  it('with every slot taken by runs waiting for approvals, still runs the other jobs', async () => {
    const t = await controlled(engine, { maxConcurrent: 2 });
    for (const name of ['w1', 'w2', 'free']) await t.add(name);
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
    const t = await controlled(engine, { maxConcurrent: 1 });
    const a = await t.add('a');
    const b = await t.add('b');
    t.advance(60_000);
    void t.scheduler.tick();
    await t.started('a');
    await t.queued('b');
    t.gates.get('a')!.control.signal.addEventListener('abort', () => t.gates.get('a')!.release({ ok: false, error: 'Warden stopped during this run' }));
    await t.scheduler.stop();
    expect((await t.jobs.runs(a.id))[0]).toMatchObject({ status: 'interrupted' });
    expect((await t.jobs.runs(b.id))[0]).toMatchObject({ status: 'interrupted', detail: 'Warden stopped before this run started', startedAt: undefined });
  });
});

describe.each(ENGINES)('CronScheduler missed runs on %s', (engine) => {
  /** Jobs were made, Warden stopped, and starts again `downMs` later. */
  async function restartAfter(downMs: number, make: (t: Awaited<ReturnType<typeof controlled>>) => Promise<unknown>) {
    const before = await controlled(engine);
    await make(before);
    await before.store.close();
    const after = await controlled(engine, { where: before.where });
    after.advance(downMs);
    return after;
  }

  it.each([
    ['skip: every slot is skipped, recorded once with the count, and the job waits for its next slot', 'skip' as const, { kind: 'every', everyMs: 3_600_000 } as const, 'skipped', /^skipped 3 missed runs while Warden was not running \(first due 2026-11-30T11:00:00.000Z\)$/],
    ['run-once: the job runs once now, however many slots passed', 'run-once' as const, { kind: 'every', everyMs: 3_600_000 } as const, 'ok', /^3 runs missed while Warden was not running .*; run once now\. job answered$/],
    ['a cron schedule counts its missed slots too', 'skip' as const, { kind: 'cron', expr: '0 * * * *' } as const, 'skipped', /^skipped 3 missed runs/],
  ])('%s', async (_label, missed, schedule, status, detail) => {
    const t = await restartAfter(3.5 * 3_600_000, (b) => b.add('job', schedule, missed));
    const job = (await t.jobs.list())[0]!;
    const starting = t.scheduler.start();
    if (status === 'ok') {
      await t.started('job');
      t.gates.get('job')!.release();
    }
    await Promise.all(await starting);
    await t.scheduler.stop();
    expect(await t.jobs.runs(job.id)).toEqual([expect.objectContaining({ status, trigger: 'missed', detail: expect.stringMatching(detail) })]);
    // Either way the job is back on its schedule: the next slot after now.
    expect((await t.jobs.get(job.id))!.nextRunAt).toBe(T0 + 4 * 3_600_000);
  });

  it('a one-off missed while down runs once by default; a repeating job skips by default', async () => {
    const t = await restartAfter(120_000, async (b) => {
      await b.add('reminder', { kind: 'at', at: T0 + 60_000 });
      await b.add('digest', { kind: 'every', everyMs: 60_000 });
    });
    const [reminder, digest] = await t.jobs.list();
    expect([reminder!.missed, digest!.missed]).toEqual(['run-once', 'skip']);
    const starting = t.scheduler.start();
    await t.started('reminder');
    t.gates.get('reminder')!.release();
    await Promise.all(await starting);
    await t.scheduler.stop();
    expect(await t.jobs.runs(reminder!.id)).toMatchObject([{ status: 'ok', trigger: 'missed' }]);
    expect((await t.jobs.get(reminder!.id))!.nextRunAt).toBeUndefined();
    expect(await t.jobs.runs(digest!.id)).toMatchObject([{ status: 'skipped', trigger: 'missed' }]);
  });
});

describe.each(ENGINES)('cron run history on %s', (engine) => {
  it('keeps the last keepRuns runs of each job', async () => {
    const t = await controlled(engine, { keepRuns: 3 });
    const job = await t.add('x');
    for (let i = 0; i < 5; i++) {
      const run = await t.scheduler.runNow((await t.jobs.get(job.id))!);
      await t.waitFor((e) => e.type === 'started' && e.runId === (run.ok ? run.runId : -1));
      t.gates.get('x')!.release({ ok: true, detail: `run ${i}` });
      if (run.ok) await run.done;
    }
    expect((await t.jobs.runs(job.id)).map((r) => r.detail)).toEqual(['run 4', 'run 3', 'run 2']);
  });
});

describe('cron schema on SQLite', () => {
  it('moves older runs and their schema forward (cron-001 rows read as scheduled runs with their duration)', async () => {
    const where = await freshStoreTarget('sqlite');
    const first = await openStore({ dataDir: where.dataDir, migrations: [CRON_MIGRATIONS[0]!] });
    if (!first.ok) throw new Error(first.error.message);
    open.push(first.store);
    const { db } = first.store;
    await db.run("INSERT INTO cron_jobs (id, agent_id, name, schedule, message, target, created_by, created_at) VALUES ('j1', 'main', 'n', ?, 'm', ?, '1', 0)", [
      JSON.stringify({ kind: 'at', at: T0 }),
      JSON.stringify(target),
    ]);
    await db.run("INSERT INTO cron_runs (job_id, started_at, finished_at, status, detail) VALUES ('j1', 1000, 4000, 'ok', 'fine')");
    await first.store.close();
    const { store } = await cronStore('sqlite', where);
    const jobs = new CronJobs(store.db);
    expect(await jobs.get('j1')).toMatchObject({ missed: 'run-once' });
    expect(await jobs.runs('j1')).toEqual([{ id: 1, jobId: 'j1', trigger: 'schedule', dueAt: 1000, startedAt: 1000, finishedAt: 4000, durationMs: 3000, status: 'ok', detail: 'fine' }]);
  });
});

describe.each(ENGINES)('CronJobs.update on %s', (engine) => {
  it('changes schedule, message and target; a new schedule counts from now, resuming picks the next slot', async () => {
    const t = await controlled(engine);
    const job = await t.add('x', { kind: 'every', everyMs: 3_600_000 });
    const there = { ...target, sessionKey: 'agent:main:discord:channel:c2', chat: 'channel' as const, channelId: 'c2', channelName: 'ops' };
    t.advance(600_000);
    const updated = (await t.jobs.update(job.id, { schedule: { kind: 'every', everyMs: 60_000 }, message: 'new text', target: there }, t.now()))!;
    expect(updated).toMatchObject({ message: 'new text', target: there, nextRunAt: T0 + 660_000, schedule: { everyMs: 60_000 } });
    await t.jobs.update(job.id, { enabled: false }, t.now());
    t.advance(3_600_000);
    expect((await t.jobs.update(job.id, { enabled: true }, t.now()))!.nextRunAt).toBe(t.now() + 60_000);
  });
});

describe('CronScheduler on a shared store (PostgreSQL), two instances', () => {
  async function instance(where: Target, delivered: string[]) {
    const { store } = await cronStore('postgres', where, [cronMigrations, clusterMigrations]);
    const jobs = new CronJobs(store.db);
    const scheduler = new CronScheduler({
      jobs,
      shared: true,
      log: pino({ level: 'silent' }),
      deliver: async (job) => {
        delivered.push(job.name);
        return { ok: true };
      },
    });
    await scheduler.start();
    return { jobs, scheduler };
  }

  it('a job added, or moved earlier, through one instance fires in the other without waiting for its idle timer', async () => {
    const { where } = await cronStore('postgres', undefined, [cronMigrations, clusterMigrations]);
    const inA: string[] = [];
    const inB: string[] = [];
    const a = await instance(where, inA);
    const b = await instance(where, inB);
    // B alone runs jobs here: A only takes the add (as the instance a `/cron add` landed on would).
    await a.scheduler.stop();
    try {
      const added = Date.now();
      const job = await a.jobs.add({ agentId: 'main', name: 'soon', schedule: { kind: 'at', at: added + 1500 }, message: 'm', target, createdBy: '1' }, added);
      // B's idle timer is a minute: only the notification can wake it in time.
      await waitFor(() => inB.includes('soon'), 10_000);
      expect(Date.now() - added).toBeLessThan(5_000);
      expect((await b.jobs.get(job.id))!.runCount).toBe(1);

      // A job changed elsewhere: moved from an hour away to a second away.
      const later = await a.jobs.add({ agentId: 'main', name: 'moved', schedule: { kind: 'at', at: Date.now() + 3_600_000 }, message: 'm', target, createdBy: '1' }, Date.now());
      await new Promise((r) => setTimeout(r, 200));
      const changed = Date.now();
      await a.jobs.update(later.id, { schedule: { kind: 'at', at: changed + 1000 } }, changed);
      await waitFor(() => inB.includes('moved'), 10_000);
      expect(Date.now() - changed).toBeLessThan(5_000);
      expect(inA).toEqual([]);
    } finally {
      await b.scheduler.stop();
    }
  }, 30_000);
});

async function waitFor(check: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}
