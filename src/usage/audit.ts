import type { AuditFinding } from '../config/audit-finding.js';
import { isLoopbackHost, type WardenConfig } from '../config/index.js';

/** The chat platforms people beyond this machine can reach: Discord and Slack, and the web chat bound beyond loopback. */
export function platformsBeyondLoopback(config: WardenConfig): string[] {
  const out: string[] = [];
  if (config.channels.discord) out.push('discord');
  if (config.channels.slack) out.push('slack');
  if (!isLoopbackHost(config.channels.web.host)) out.push(`web (${config.channels.web.host})`);
  return out;
}

/**
 * A bot others can talk to, with a model and no budget: every message they send is spent
 * without a cap (`warden audit`).
 */
export function auditBudgets(config: WardenConfig): AuditFinding[] {
  const anyModel = config.models.default !== undefined || config.agents.list.some((a) => a.model !== undefined);
  const platforms = platformsBeyondLoopback(config);
  if (!anyModel || platforms.length === 0 || config.budgets.rules.length > 0) return [];
  return [
    {
      id: 'usage.no-budget',
      severity: 'warn',
      message: `${platforms.join(', ')} ${platforms.length === 1 ? 'is' : 'are'} reachable beyond this machine and no budget is set: model spend has no cap`,
      fix: 'add budgets (e.g. budgets: [{ scope: sender, per: day, usd: 2 }, { scope: global, per: month, usd: 200 }]); see docs/usage-and-budgets.md',
    },
  ];
}
