import type { CronJob, CronJobs } from '../../../cron/jobs.js';
import { describeSchedule, parseSchedule } from '../../../cron/schedule.js';
import type { CronScheduler } from '../../../cron/scheduler.js';
import type { ToolCallContext, ToolImplementation, ToolResult } from '../../types.js';

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
}

export interface CronToolDeps {
  jobs: CronJobs;
  /** Absent when no scheduler runs (the CLI): jobs are stored, and `run` says it cannot run them here. */
  scheduler?: CronScheduler | undefined;
  now?: () => number;
}

const parameters = {
  type: 'object',
  properties: {
    action: {
      type: 'string',
      enum: ['status', 'list', 'add', 'update', 'remove', 'run', 'runs'],
      description: 'status: scheduler state; list: jobs of this agent; add: schedule a job; update: enable/disable or rename; remove; run: run now; runs: recent runs of a job.',
    },
    id: { type: 'string', description: 'Job id (update, remove, run, runs).' },
    name: { type: 'string', minLength: 1, maxLength: 80, description: 'Short job name (add, update).' },
    message: {
      type: 'string',
      minLength: 1,
      maxLength: 4000,
      description: 'What you will be asked when the job fires; the answer is posted where the job was created (add).',
    },
    cron: { type: 'string', description: 'Cron expression, e.g. "0 9 * * 1-5" (add; one of cron, everyMs, at).' },
    tz: { type: 'string', description: 'IANA time zone for cron, e.g. "Europe/Paris".' },
    everyMs: { type: 'integer', minimum: 60000, description: 'Repeat interval in milliseconds, at least one minute.' },
    at: { type: 'string', description: 'One-off time, ISO 8601 (e.g. "2026-12-01T09:00:00Z").' },
    enabled: { type: 'boolean', description: 'Enable or pause the job (update).' },
  },
  required: ['action'],
  additionalProperties: false,
} as const;

const text = (value: string, details: unknown, isError = false): ToolResult => ({ content: [{ type: 'text', text: value }], details, ...(isError ? { isError } : {}) });
const fail = (message: string) => text(message, { status: 'error', error: message }, true);

const summary = (job: CronJob) => ({
  id: job.id,
  name: job.name,
  schedule: describeSchedule(job.schedule),
  enabled: job.enabled,
  nextRunAt: job.nextRunAt ? new Date(job.nextRunAt).toISOString() : null,
  lastRunAt: job.lastRunAt ? new Date(job.lastRunAt).toISOString() : null,
  lastStatus: job.lastStatus ?? null,
  runs: job.runCount,
});

/**
 * cron (owner-only): schedules messages to this agent; when a job fires the agent answers it in
 * the conversation where the job was created. The owner-only gate sits in the call chain; the
 * tool checks again so no path (slash command, subagent, plugin) can reach it as a non-owner.
 */
export function createCronTool(deps: CronToolDeps): ToolImplementation<CronArgs> {
  const now = deps.now ?? Date.now;
  return {
    id: 'cron',
    parameters,
    async execute(args, ctx: ToolCallContext) {
      if (!ctx.turn.senderIsOwner) return fail('cron is owner-only: only an owner can schedule or change jobs.');
      const agentId = ctx.turn.agentId;
      const own = (id: string | undefined): CronJob | ToolResult => {
        if (!id) return fail(`id is required for ${args.action}`);
        const job = deps.jobs.get(id);
        return job && job.agentId === agentId ? job : fail(`no cron job "${id}" for agent ${agentId}`);
      };
      switch (args.action) {
        case 'status': {
          const jobs = deps.jobs.list(agentId);
          const next = jobs.filter((j) => j.enabled && j.nextRunAt).sort((a, b) => a.nextRunAt! - b.nextRunAt!)[0];
          const status = { scheduler: deps.scheduler ? 'running' : 'not running in this process', jobs: jobs.length, enabled: jobs.filter((j) => j.enabled).length, next: next ? summary(next) : null };
          return text(JSON.stringify(status, null, 2), status);
        }
        case 'list': {
          const jobs = deps.jobs.list(agentId).map(summary);
          return text(jobs.length ? JSON.stringify(jobs, null, 2) : 'No cron jobs.', { jobs });
        }
        case 'add': {
          if (!args.message) return fail('message is required for add');
          const parsed = parseSchedule({ cron: args.cron, tz: args.tz, everyMs: args.everyMs, at: args.at }, now());
          if (!parsed.ok) return fail(parsed.error);
          const turn = ctx.turn;
          const job = deps.jobs.add(
            {
              agentId,
              name: args.name ?? args.message.slice(0, 40),
              schedule: parsed.schedule,
              message: args.message,
              target: {
                sessionKey: ctx.sessionKey,
                provider: turn.provider,
                chat: turn.chat,
                guildId: turn.guildId,
                guildName: turn.guildName,
                channelId: turn.channelId,
                channelName: turn.channelName,
                threadId: turn.threadId,
                dmUserId: turn.chat === 'dm' ? turn.senderId : undefined,
                // A job never runs wider than the turn that made it.
                ...(turn.inherited ? { inherited: turn.inherited } : {}),
              },
              createdBy: turn.senderId ?? 'unknown',
            },
            now(),
          );
          deps.scheduler?.poke();
          return text(`Scheduled "${job.name}" (${describeSchedule(job.schedule)}), id ${job.id}; next run ${summary(job).nextRunAt}.`, summary(job));
        }
        case 'update': {
          const job = own(args.id);
          if (!('schedule' in job)) return job;
          if (args.enabled === undefined && args.name === undefined) return fail('update needs enabled or name');
          if (args.name !== undefined) deps.jobs.rename(job.id, args.name);
          const updated = args.enabled === undefined ? deps.jobs.get(job.id)! : deps.jobs.setEnabled(job.id, args.enabled, now())!;
          deps.scheduler?.poke();
          return text(`Job ${updated.id} is now ${updated.enabled ? 'enabled' : 'paused'}.`, summary(updated));
        }
        case 'remove': {
          const job = own(args.id);
          if (!('schedule' in job)) return job;
          deps.jobs.remove(job.id);
          deps.scheduler?.poke();
          return text(`Removed job ${job.id} ("${job.name}").`, { removed: job.id });
        }
        case 'run': {
          const job = own(args.id);
          if (!('schedule' in job)) return job;
          if (!deps.scheduler) return fail('cron jobs run only inside `warden start`; the job is stored and will run there.');
          void deps.scheduler.runNow(job);
          return text(`Started job ${job.id} ("${job.name}") now; its answer goes to the job's conversation.`, { started: job.id });
        }
        case 'runs': {
          const job = own(args.id);
          if (!('schedule' in job)) return job;
          const runs = deps.jobs.runs(job.id).map((r) => ({ ...r, startedAt: new Date(r.startedAt).toISOString(), finishedAt: r.finishedAt ? new Date(r.finishedAt).toISOString() : null }));
          return text(runs.length ? JSON.stringify(runs, null, 2) : 'No runs yet.', { runs });
        }
      }
    },
  };
}
