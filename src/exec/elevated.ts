import type { WardenConfig } from '../config/schema/index.js';
import type { ElevatedConfig } from '../config/schema/elevated.js';
import type { TurnContext } from '../policy/context.js';

/**
 * `tools.elevated` (OpenClaw's escape hatch): a sender named in `allowFrom` may have an agent
 * whose exec is sandboxed run one command on the gateway host instead. Every gate must pass
 * (global and agent `enabled`, the sender in the global list and in the agent's when it has
 * one), the turn must come from that person (no subagent, schedule or relayed session), and
 * the command still goes through the exec policy — always with an approval card, never an
 * allow-always grant and never on an expired approval. Anything unclear refuses.
 */
export type ElevatedDecision = { ok: true; who: string } | { ok: false; why: string };

const ID_PREFIXES = ['id:', 'from:', 'e164:'];

/** The sender ids an allowFrom list names for a platform; display names never count. */
export function elevatedIds(allowFrom: ElevatedConfig['allowFrom'], provider: string): string[] {
  const list = allowFrom?.[provider] ?? [];
  return list.flatMap((raw) => {
    const entry = String(raw).trim();
    const prefix = ID_PREFIXES.find((p) => entry.toLowerCase().startsWith(p));
    if (prefix) return [entry.slice(prefix.length).trim()];
    // `name:`, `username:`, `tag:`, `*` and other prefixed forms name no one here.
    return entry === '' || entry === '*' || /^[a-z]+:/i.test(entry) ? [] : [entry];
  });
}

export function elevatedDecision(config: WardenConfig, turn: TurnContext, host: 'sandbox' | 'gateway'): ElevatedDecision {
  const global = config.tools.elevated;
  const agent = config.agents.list.find((a) => a.id === turn.agentId)?.tools?.elevated;
  if (host !== 'sandbox') return { ok: false, why: 'exec already runs on the gateway host here; elevated changes nothing' };
  if (!global) return { ok: false, why: 'tools.elevated is not configured' };
  if (global.enabled === false) return { ok: false, why: 'tools.elevated.enabled is false' };
  if (agent?.enabled === false) return { ok: false, why: `elevated is turned off for agent ${turn.agentId}` };
  if (turn.spawnDepth > 0 || turn.inherited !== undefined) return { ok: false, why: 'a subagent cannot run elevated commands' };
  const sender = turn.senderId?.trim();
  if (!sender || /^(cron|session|subagent|system):/.test(sender)) return { ok: false, why: 'only a person named in tools.elevated.allowFrom can ask for elevated commands' };
  const provider = turn.provider.trim().toLowerCase();
  if (!elevatedIds(global.allowFrom, provider).includes(sender)) return { ok: false, why: `sender ${sender} is not in tools.elevated.allowFrom.${provider}` };
  if (agent?.allowFrom !== undefined && !elevatedIds(agent.allowFrom, provider).includes(sender)) {
    return { ok: false, why: `sender ${sender} is not in agent ${turn.agentId}'s tools.elevated.allowFrom.${provider}` };
  }
  return { ok: true, who: `${provider}:${sender}` };
}

/** `warden audit`: who may take commands out of the sandbox. */
export function auditElevated(config: WardenConfig): Array<{ id: string; severity: 'warn'; message: string; fix: string }> {
  const global = config.tools.elevated;
  if (!global || global.enabled === false) return [];
  const named = ['discord', 'slack', 'web'].flatMap((p) => elevatedIds(global.allowFrom, p).map((id) => `${p}:${id}`));
  if (named.length === 0) return [];
  return [
    {
      id: 'tools.elevated',
      severity: 'warn',
      message: `${named.length} sender${named.length === 1 ? '' : 's'} (${named.slice(0, 5).join(', ')}${named.length > 5 ? ', …' : ''}) may have exec run on the gateway host, outside the sandbox, after an approver allows each command`,
      fix: 'keep tools.elevated.allowFrom to the people who need it, or set tools.elevated.enabled: false',
    },
  ];
}
