import type { WardenConfig } from '../../../config/index.js';
import { MISSED_RUN_POLICIES, type CronJob, type CronJobs, type CronRun, type JobPatch, type MissedRunPolicy } from '../../../cron/jobs.js';
import { describeSchedule, parseSchedule, type Schedule } from '../../../cron/schedule.js';
import type { CronScheduler } from '../../../cron/scheduler.js';
import { describeTarget, resolveCronTarget, type KnownConversations } from './target.js';
import { ownerOnlyRefusal } from '../../invoke/owner-guard.js';
import type { ToolCallContext, ToolImplementation, ToolResult } from '../../types.js';
import { cronParameters as parameters } from './cron-schema.js';

export interface CronArgs {
  action: 'status' | 'list' | 'add' | 'update' | 'remove' | 'run' | 'runs';
  id?: string;
  name?: string;
  message?: string;
  cron?: string;
  tz?: string;
  everyMs?: number;
  at?: string;
  enabled?: boolean;
  missed?: MissedRunPolicy;
  target?: string;
}

export interface CronToolDeps {
  jobs: CronJobs;
  /** Absent when no scheduler runs (the CLI): jobs are stored, and `run` says it cannot run them here. */
  scheduler?: CronScheduler | undefined;
  /** The conversations a `target` may name; absent = a job can only post where it is made. */
  conversations?: KnownConversations | undefined;
  config: WardenConfig;
  now?: () => number;
}

const text = (value: string, details: unknown, isError = false): ToolResult => ({ content: [{ type: 'text', text: value }], details, ...(isError ? { isError } : {}) });
const fail = (message: string) => text(message, { status: 'error', error: message }, true);
const iso = (t: number | undefined) => (t === undefined ? null : new Date(t).toISOString());

export const runView = (r: CronRun) => ({
  id: r.id,
  trigger: r.trigger,
  status: r.status,
  dueAt: iso(r.dueAt),
  startedAt: iso(r.startedAt),
  finishedAt: iso(r.finishedAt),
  durationMs: r.durationMs ?? null,
  detail: r.detail ?? null,
});

export type JobView = Awaited<ReturnType<typeof jobView>>;

async function jobView(job: CronJob, jobs: CronJobs, scheduler: CronScheduler | undefined) {
  const last = (await jobs.runs(job.id, 1))[0];
  return {
    id: job.id,
    name: job.name,
    schedule: describeSchedule(job.schedule),
    message: job.message,
    target: describeTarget(job.target),
    enabled: job.enabled,
    missed: job.missed,
    /** Where its current run is, if one is under way. */
    state: scheduler?.state(job.id) ?? null,
    nextRunAt: job.enabled ? iso(job.nextRunAt) : null,
    lastRun: last ? runView(last) : null,
    runs: job.runCount,
  };
}

/** The one schedule the arguments give, if they give any: `cron` (+ `tz`), `everyMs`, or `at`. */
function scheduleFrom(args: CronArgs, now: number): { ok: true; schedule: Schedule | undefined } | { ok: false; error: string } {
  if (args.cron === undefined && args.everyMs === undefined && args.at === undefined) {
    return args.tz === undefined ? { ok: true, schedule: undefined } : { ok: false, error: 'tz: only applies with cron' };
  }
  const parsed = parseSchedule({ cron: args.cron, tz: args.tz, everyMs: args.everyMs, at: args.at }, now);
  return parsed.ok ? { ok: true, schedule: parsed.schedule } : parsed;
}

/**
 * cron (owner-only): schedules messages to this agent; when a job fires the agent answers it in
 * the job's target conversation. The owner-only gate sits in the call chain; the tool checks
 * again, with the same refusal, so no path (chat command, subagent, plugin) reaches it as a
 * non-owner.
 */
export function createCronTool(deps: CronToolDeps): ToolImplementation<CronArgs> {
  const now = deps.now ?? Date.now;
  return {
    id: 'cron',
    parameters,
    async execute(args, ctx: ToolCallContext) {
      const refusal = ownerOnlyRefusal('cron', ctx.turn);
      if (refusal) return text(refusal, { status: 'blocked', deniedReason: 'owner-only', reason: refusal }, true);
      const agentId = ctx.turn.agentId;
      const own = async (id: string | undefined): Promise<CronJob | ToolResult> => {
        if (!id) return fail(`id is required for ${args.action}`);
        const job = await deps.jobs.get(id);
        return job && job.agentId === agentId ? job : fail(`no cron job "${id}" for agent ${agentId}`);
      };
      const view = (job: CronJob) => jobView(job, deps.jobs, deps.scheduler);
      switch (args.action) {
        case 'status': {
          const jobs = await deps.jobs.list(agentId);
          const next = jobs.filter((j) => j.enabled && j.nextRunAt).sort((a, b) => a.nextRunAt! - b.nextRunAt!)[0];
          const status = {
            scheduler: deps.scheduler ? 'running' : 'not running in this process',
            jobs: jobs.length,
            enabled: jobs.filter((j) => j.enabled).length,
            running: jobs.filter((j) => deps.scheduler?.state(j.id) !== undefined).length,
            next: next ? await view(next) : null,
          };
          return text(JSON.stringify(status, null, 2), status);
        }
        case 'list': {
          const jobs = await Promise.all((await deps.jobs.list(agentId)).map(view));
          return text(jobs.length ? JSON.stringify(jobs, null, 2) : 'No cron jobs.', { jobs });
        }
        case 'add': {
          if (!args.message) return fail('message is required for add');
          const schedule = scheduleFrom(args, now());
          if (!schedule.ok) return fail(schedule.error);
          if (!schedule.schedule) return fail('give exactly one of cron, everyMs or at');
          const target = await resolveCronTarget(args.target, ctx.turn, ctx.sessionKey, deps.conversations, deps.config);
          if (!target.ok) return fail(target.error);
          const job = await deps.jobs.add(
            {
              agentId,
              name: args.name ?? args.message.slice(0, 40),
              schedule: schedule.schedule,
              message: args.message,
              target: target.target,
              createdBy: ctx.turn.senderId ?? 'unknown',
              missed: args.missed,
            },
            now(),
          );
          deps.scheduler?.poke();
          const v = await view(job);
          return text(`Scheduled "${job.name}" (${v.schedule}) in ${v.target}, id ${job.id}; next run ${v.nextRunAt}.`, v);
        }
        case 'update': {
          const job = await own(args.id);
          if (!('schedule' in job)) return job;
          const schedule = scheduleFrom(args, now());
          if (!schedule.ok) return fail(schedule.error);
          const patch: JobPatch = { name: args.name, message: args.message, schedule: schedule.schedule, enabled: args.enabled, missed: args.missed };
          if (args.target !== undefined) {
            const target = await resolveCronTarget(args.target, ctx.turn, ctx.sessionKey, deps.conversations, deps.config);
            if (!target.ok) return fail(target.error);
            patch.target = target.target;
          }
          const changed = Object.entries(patch).filter(([, v]) => v !== undefined).map(([k]) => k);
          if (changed.length === 0) return fail('update needs one of name, message, cron/everyMs/at, target, enabled or missed');
          const updated = (await deps.jobs.update(job.id, patch, now()))!;
          deps.scheduler?.poke();
          const v = await view(updated);
          const state = updated.enabled ? `enabled, next run ${v.nextRunAt}` : 'paused';
          return text(`Job ${updated.id} updated (${changed.join(', ')}): ${v.schedule} in ${v.target}, ${state}.`, v);
        }
        case 'remove': {
          const job = await own(args.id);
          if (!('schedule' in job)) return job;
          await deps.jobs.remove(job.id);
          deps.scheduler?.poke();
          return text(`Removed job ${job.id} ("${job.name}").`, { removed: job.id, name: job.name });
        }
        case 'run': {
          const job = await own(args.id);
          if (!('schedule' in job)) return job;
          if (!deps.scheduler) return fail('cron jobs run only inside `warden start`; the job is stored and will run there.');
          const started = await deps.scheduler.runNow(job);
          if (!started.ok) return fail(started.reason);
          return text(`Started job ${job.id} ("${job.name}") now; its answer goes to ${describeTarget(job.target)}.`, { started: job.id, name: job.name, runId: started.runId, target: describeTarget(job.target) });
        }
        case 'runs': {
          const job = await own(args.id);
          if (!('schedule' in job)) return job;
          const runs = (await deps.jobs.runs(job.id)).map(runView);
          return text(runs.length ? JSON.stringify(runs, null, 2) : 'No runs yet.', { id: job.id, name: job.name, runs });
        }
      }
    },
  };
}
