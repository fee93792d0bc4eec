import type { WardenConfig } from '../config/schema/index.js';
import type { InheritedPolicy } from './context.js';
import { normalizeToolName } from './tool-names.js';
import { pickPolicy, type PolicyEntry, type ToolPolicy } from './policy.js';

/**
 * Subagent policy (semantics §3): fixed deny lists by depth plus `tools.subagents.tools`, and the
 * parent's final surface as a child's ceiling. Configured allows never re-enable a hard-denied
 * tool because deny wins inside a step.
 */

/** Denied to every subagent. */
export const SUBAGENT_DENY_ALWAYS: readonly string[] = ['gateway', 'agents_list', 'session_status', 'cron', 'sessions_send', 'progress_card', 'conversations_list', 'conversations_send', 'conversations_turn'];
/** Also denied to a leaf (depth ≥ maxSpawnDepth): it cannot look around or spawn further. */
export const SUBAGENT_DENY_LEAF: readonly string[] = ['subagents', 'sessions_list', 'sessions_history', 'sessions_search', 'sessions_spawn'];

export type SubagentRole = 'main' | 'orchestrator' | 'leaf';

export function subagentRole(depth: number, maxSpawnDepth: number): SubagentRole {
  if (depth <= 0) return 'main';
  return depth < Math.max(1, maxSpawnDepth) ? 'orchestrator' : 'leaf';
}

const builtin = (names: readonly string[], key: string): PolicyEntry[] => names.map((name) => ({ raw: name, name, key, builtin: true }));

const cache = new WeakMap<object, Map<SubagentRole, ToolPolicy | undefined>>();

/** The subagent step's policy for a session at `depth`; undefined for a main session. */
export function subagentPolicy(config: WardenConfig, depth: number): ToolPolicy | undefined {
  const role = subagentRole(depth, config.agents.defaults.subagents.maxSpawnDepth);
  if (role === 'main') return undefined;
  let byRole = cache.get(config);
  if (!byRole) cache.set(config, (byRole = new Map()));
  if (byRole.has(role)) return byRole.get(role);
  const configured = pickPolicy(config.tools.subagents?.tools, 'tools.subagents.tools');
  const deny = [
    ...builtin(SUBAGENT_DENY_ALWAYS, 'subagent deny list (every subagent)'),
    ...(role === 'leaf' ? builtin(SUBAGENT_DENY_LEAF, `subagent deny list (leaf: depth ≥ agents.defaults.subagents.maxSpawnDepth)`) : []),
    ...(configured?.deny ?? []),
  ];
  const policy: ToolPolicy = { deny, ...(configured?.allow ? { allow: configured.allow } : {}) };
  byRole.set(role, policy);
  return policy;
}

const inheritedCache = new WeakMap<InheritedPolicy, ToolPolicy>();

/** A child's ceiling as a policy: only the parent's final tools, minus the parent's denies. */
export function inheritedPolicy(inherited: InheritedPolicy | undefined): ToolPolicy | undefined {
  if (!inherited) return undefined;
  let policy = inheritedCache.get(inherited);
  if (!policy) {
    const deny = builtin(inherited.deny.map(normalizeToolName).filter(Boolean), "the parent's denies");
    // An empty ceiling means the parent had no tools: the child gets none (an empty allowlist would keep all).
    if (inherited.allow?.length === 0) deny.push({ raw: '*', name: '*', key: 'the parent had no tools', builtin: true });
    const allow = inherited.allow?.length ? builtin(inherited.allow.map(normalizeToolName).filter(Boolean), "the parent's final surface") : undefined;
    policy = { deny, ...(allow ? { allow } : {}) };
    inheritedCache.set(inherited, policy);
  }
  return policy;
}
