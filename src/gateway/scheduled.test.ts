import { getEventListeners } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { CronJobs } from '../cron/jobs.js';
import { cronMigrations } from '../cron/migrations.js';
import { CronScheduler } from '../cron/scheduler.js';
import { EventBus } from '../events/events.js';
import { openStore } from '../store/store.js';
import type { ScheduledOutcome } from './gateway.js';
import { parseConfig } from '../config/index.js';
import type { CronJob } from '../cron/jobs.js';
import { resolveToolSurface } from '../policy/surface.js';
import { surfaceInputs } from '../app/surface-inputs.js';
import { createCronDeliver, routeForCronJob } from './scheduled.js';

const config = (() => {
  const r = parseConfig({
    owners: { discord: ['1'] },
    models: { default: 'anthropic/claude-sonnet-4-5' },
    tools: { profile: 'coding' },
    channels: { discord: { guilds: { G1: { tools: { allow: ['*'] }, channels: { general: { tools: { deny: ['exec', 'process'] } } } } } } },
  });
  if (!r.ok) throw r.error;
  return r.value.config;
})();

const job = (target: Partial<CronJob['target']>): CronJob => ({
  id: 'j1',
  agentId: 'main',
  name: 'digest',
  schedule: { kind: 'every', everyMs: 3_600_000 },
  message: 'post the digest',
  target: { sessionKey: 'agent:main:discord:channel:c1', provider: 'discord', chat: 'channel', ...target },
  createdBy: '1',
  createdAt: 0,
  enabled: true,
  missed: 'skip',
  nextRunAt: undefined,
  lastRunAt: undefined,
  lastStatus: undefined,
  lastError: undefined,
  runCount: 0,
});

describe('routeForCronJob', () => {
  it('runs in the conversation it was created in, as a non-owner, with the job as sender', () => {
    const route = routeForCronJob(config, job({ guildId: 'G1', channelId: 'c1', channelName: 'general', threadId: 't1', chat: 'thread' }));
    expect(route.replyTo).toEqual({ provider: 'discord', channelId: 'c1', threadId: 't1', dmUserId: undefined });
    expect(route.context).toMatchObject({ senderId: 'cron:j1', senderIsOwner: false, chat: 'thread', guildId: 'G1', channelName: 'general', model: 'anthropic/claude-sonnet-4-5' });
    expect(route.text).toBe('Scheduled job "digest" (j1) fired. Do this now: post the digest');
  });

  it('keeps the channel policy: a job created in #general gets no exec, and no owner tools', () => {
    const route = routeForCronJob(config, job({ guildId: 'G1', channelId: 'c1', channelName: 'general' }));
    const surface = resolveToolSurface(config, route.context, surfaceInputs(config, '.'));
    expect(surface.removed).toEqual(expect.arrayContaining([{ tool: 'exec', by: 'channels.discord.guilds.G1.channels.general.tools.deny' }]));
    // A job's turn is no owner: the owner-only tools do not exist for it, not even as removed.
    for (const id of ['cron', 'gateway', 'nodes']) expect([...surface.tools, ...surface.removed.map((r) => r.tool)]).not.toContain(id);
  });

  it('answers a DM job in the DM', () => {
    const route = routeForCronJob(config, job({ chat: 'dm', channelId: 'd9', dmUserId: '1', sessionKey: 'agent:main:discord:direct:1' }));
    expect(route.replyTo).toMatchObject({ channelId: 'd9', dmUserId: '1' });
  });
});

describe('createCronDeliver on the live scheduler', () => {
  const RUNS = 25;

  async function scheduler(runScheduled: () => Promise<ScheduledOutcome>) {
    const opened = await openStore({ dataDir: mkdtempSync(path.join(tmpdir(), 'warden-scheduled-')), migrations: [cronMigrations] });
    if (!opened.ok) throw new Error(opened.error.message);
    const store = opened.store;
    const jobs = new CronJobs(store.db);
    const deliver = createCronDeliver({ config, runScheduled, pendingApprovals: () => 0, events: new EventBus() });
    let signal: AbortSignal | undefined;
    const listening: number[] = [];
    const s = new CronScheduler({
      jobs,
      log: pino({ level: 'silent' }),
      deliver: async (j, run) => {
        signal = run.signal;
        const outcome = await deliver(j, run);
        listening.push(getEventListeners(run.signal, 'abort').length);
        return outcome;
      },
    });
    const added = await jobs.add({ agentId: 'main', name: 'digest', schedule: { kind: 'every', everyMs: 3_600_000 }, message: 'post', target: job({}).target, createdBy: '1' }, Date.now());
    return { store, jobs, s, added, listening, signal: () => signal };
  }

  it(`leaves no abort listener on the scheduler's signal after ${RUNS} runs, and no warning`, async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    const t = await scheduler(async () => ({ ok: true, detail: 'answered' }));
    try {
      await t.s.start();
      for (let i = 0; i < RUNS; i++) {
        const r = await t.s.runNow(t.added);
        if (!r.ok) throw new Error(r.reason);
        await r.done;
      }
      // Warnings are emitted on the next tick.
      await new Promise((r) => setImmediate(r));
      expect(t.listening).toHaveLength(RUNS);
      expect(t.listening.every((n) => n === 0)).toBe(true);
      expect(getEventListeners(t.signal()!, 'abort')).toHaveLength(0);
      expect(warnings.filter((w) => w === 'MaxListenersExceededWarning')).toEqual([]);
      expect((await t.jobs.runs(t.added.id, 100)).filter((r) => r.status === 'ok')).toHaveLength(RUNS);
    } finally {
      process.off('warning', onWarning);
      await t.s.stop();
      await t.store.close();
    }
  });

  it('still ends a run cut short by a stop, as interrupted', async () => {
    const t = await scheduler(() => new Promise<ScheduledOutcome>(() => undefined));
    try {
      await t.s.start();
      const r = await t.s.runNow(t.added);
      if (!r.ok) throw new Error(r.reason);
      await new Promise((res) => setTimeout(res, 50));
      expect(getEventListeners(t.signal()!, 'abort')).toHaveLength(1);
      await t.s.stop();
      await r.done;
      expect(await t.jobs.runs(t.added.id)).toMatchObject([{ status: 'interrupted', detail: 'Warden stopped during this run' }]);
    } finally {
      await t.store.close();
    }
  });
});
