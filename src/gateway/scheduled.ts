import type { WardenConfig } from '../config/index.js';
import type { CronJob } from '../cron/jobs.js';
import type { Route } from './router.js';
import { buildTurnContext } from './turn-context.js';

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
