import type { WardenConfig } from '../config/index.js';
import type { CronJob } from '../cron/jobs.js';
import type { CronDeliver } from '../cron/scheduler.js';
import { describeTarget } from '../tools/core/cron/target.js';
import type { EventBus } from '../events/events.js';
import type { ScheduledOutcome } from './gateway.js';
import type { Route } from './router.js';
import { buildTurnContext } from '../turn/turn-context.js';

/**
 * The route of a cron job's turn: the conversation it was created in, under that
 * conversation's policy, with the job as the sender. The job runs as a non-owner even when an
 * owner created it: a schedule must not carry owner rights into a channel turn (it could then
 * create or change jobs unattended). A job created by a turn that had a ceiling (one started by
 * another session) keeps that ceiling on every run.
 */
export function routeForCronJob(config: WardenConfig, job: CronJob): Route {
  const t = job.target;
  const channelId = t.channelId ?? (t.dmUserId ? `dm:${t.dmUserId}` : '');
  return {
    agentId: job.agentId,
    sessionKey: t.sessionKey,
    context: buildTurnContext(config, {
      agentId: job.agentId,
      conversation: t,
      sender: { id: `cron:${job.id}`, name: `scheduled job "${job.name}"` },
      mayBeOwner: false,
      inherited: t.inherited,
    }),
    replyTo: {
      provider: t.provider as Route['replyTo']['provider'],
      channelId,
      threadId: t.threadId,
      dmUserId: t.chat === 'dm' ? t.dmUserId : undefined,
    },
    text: `Scheduled job "${job.name}" (${job.id}) fired. Do this now: ${job.message}`,
  };
}

export interface CronDeliverDeps {
  config: WardenConfig;
  /** Runs the job's turn behind its session's queue, as a message would (`Gateway.runScheduled`). */
  runScheduled(route: Route): Promise<ScheduledOutcome>;
  /** Approvals waiting in a session. */
  pendingApprovals(sessionKey: string): number | Promise<number>;
  events: EventBus;
}

const APPROVAL_EVENTS = ['approval.requested', 'approval.resolved', 'approval.expired', 'approval.interrupted'] as const;

/**
 * How the scheduler runs a job in the live bot: a turn in the job's conversation. While that
 * conversation has an approval waiting — the job's own call, or a turn ahead of it in the
 * queue — the run is parked and its slot goes to the next job: a card nobody answers for half
 * an hour must not hold every other schedule back. Decided or expired, the run takes a slot again.
 */
export function createCronDeliver(deps: CronDeliverDeps): CronDeliver {
  return async (job, run) => {
    const route = routeForCronJob(deps.config, job);
    const key = route.sessionKey;
    // Reads may finish out of order: only the answer to the latest event decides.
    let latest = 0;
    const follow = async () => {
      const mine = ++latest;
      const pending = await deps.pendingApprovals(key);
      if (mine !== latest) return;
      if (pending > 0) run.park(`waiting for an approval in ${describeTarget(job.target)}`);
      else run.resume();
    };
    const offs = APPROVAL_EVENTS.map((name) =>
      deps.events.on(name, ({ request }) => {
        if (request.sessionKey === key) void follow().catch(() => undefined);
      }),
    );
    // The scheduler's signal lives as long as the process: a listener left on it by each run
    // would pile up for months (and warn after eleven), so it is removed when the run ends.
    let onAbort: (() => void) | undefined;
    try {
      await follow();
      const stopped = new Promise<{ ok: false; error: string }>((resolve) => {
        onAbort = () => resolve({ ok: false, error: 'Warden stopped during this run' });
        if (run.signal.aborted) onAbort();
        else run.signal.addEventListener('abort', onAbort, { once: true });
      });
      return await Promise.race([deps.runScheduled(route), stopped]);
    } finally {
      if (onAbort) run.signal.removeEventListener('abort', onAbort);
      for (const off of offs) off();
    }
  };
}
