import type { TurnContext } from '../policy/context.js';
import { formatUsd } from '../usage/cost.js';
import { describeReset, periodAt } from '../usage/periods.js';
import { reportMarkdown, reportTable, type ReportFilter, type UsageReport } from '../usage/report.js';
import type { UsageService } from '../usage/service.js';
import type { Route } from './router.js';

/** What `/usage` reads: the same report `warden usage` prints, and the budgets the turn loop checks. */
export interface UsageCommandDeps {
  report(filter: ReportFilter): Promise<UsageReport>;
  budgets: Pick<UsageService, 'budgetsFor'>;
  timeZone(): string;
}

const USAGE_TEXT = 'usage: /usage [me | channel | all]  (all: owners only)';

/**
 * `/usage` — yours (this month by model, and your budgets), `/usage channel` — this channel's by
 * sender, `/usage all` — for owners, everyone's top spenders. The web chat gets markdown tables,
 * the platforms a fixed-width table in a code block.
 */
export async function runUsageCommand(args: string, route: Route, deps: UsageCommandDeps, now = Date.now()): Promise<string> {
  const ctx = route.context;
  const which = args.trim().toLowerCase() || 'me';
  const since = periodAt(now, 'month', deps.timeZone()).start;
  const table = (report: UsageReport, title: string) => (ctx.provider === 'web' ? reportMarkdown(report, title) : `\`\`\`\n${reportTable(report, title)}\n\`\`\``);
  const month = new Date(since).toISOString().slice(0, 7);
  switch (which) {
    case 'me': {
      if (ctx.senderId === undefined) return 'No sender here to show usage for.';
      const report = await deps.report({ since, by: 'model', sender: `${ctx.provider}:${ctx.senderId}` });
      const lines = [table(report, `Your usage this month (${month}, ${deps.timeZone()})`)];
      lines.push(...(await budgetLines(ctx, route, deps)));
      return lines.join('\n');
    }
    case 'channel': {
      if (ctx.channelId === undefined) return 'This conversation has no channel.';
      const report = await deps.report({ since, by: 'sender', channelId: ctx.channelId, limit: 10 });
      return table(report, `This channel’s usage this month (${month}), top spenders`);
    }
    case 'all': {
      // Who spends what is the owners' business; others see only their own and their channel's.
      if (!ctx.senderIsOwner) return '/usage all is reserved for owners. Try /usage or /usage channel.';
      const bySender = await deps.report({ since, by: 'sender', limit: 10 });
      const byModel = await deps.report({ since, by: 'model' });
      return [table(bySender, `Everyone’s usage this month (${month}), top spenders`), table(byModel, 'By model')].join('\n\n');
    }
    default:
      return USAGE_TEXT;
  }
}

async function budgetLines(ctx: TurnContext, route: Route, deps: UsageCommandDeps): Promise<string[]> {
  const budgets = await deps.budgets.budgetsFor({
    agentId: ctx.agentId,
    sessionKey: route.sessionKey,
    platform: ctx.provider,
    senderId: ctx.senderId,
    channelId: ctx.channelId,
    guildId: ctx.guildId,
    purpose: 'turn',
  });
  if (budgets.length === 0) return ['No budget applies to you here.'];
  return budgets.map(({ counter, spent, limit }) => {
    const amount = (v: number) => (counter.unit === 'usd' ? formatUsd(v) : `${v} tokens`);
    return `Budget (${counter.scope}${counter.scope === 'sender' ? '' : ` ${counter.subject}`}): ${amount(spent)} of ${amount(limit)} spent; resets ${describeReset(counter.window.end, deps.timeZone())}.`;
  });
}
