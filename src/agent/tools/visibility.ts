import picomatch from 'picomatch';
import type { WardenConfig } from '../../config/schema/index.js';
import type { SessionVisibility } from '../../config/schema/cross-context.js';
import { agentOfKey, canReach } from './result.js';

/**
 * How far the session tools (sessions_list, sessions_history, sessions_send) see, from
 * `tools.sessions.visibility` and `tools.agentToAgent` (OpenClaw's semantics):
 *
 * - `self`: this session only; `tree`: this session and the sessions it spawned, at any depth,
 *   in any agent; `agent` (and unset): Warden's rule, below; `all`: Warden's rule in this agent
 *   and in every other agent `tools.agentToAgent` lets both sides reach.
 * - Warden's rule inside an agent stays under every setting: channel sessions, your own DM and
 *   the subagents your session spawned; another person's DM and other sessions' subagents are
 *   for owners only. OpenClaw's `agent` and `all` show other users' DMs to anyone; Warden does not.
 */
export interface SessionAccess {
  visibility: SessionVisibility | undefined;
  agentToAgent: { enabled: boolean; allow: string[] | undefined };
}

export const DEFAULT_SESSION_ACCESS: SessionAccess = { visibility: undefined, agentToAgent: { enabled: true, allow: undefined } };

export function sessionAccessFor(config: WardenConfig): SessionAccess {
  const a2a = config.tools.agentToAgent;
  return { visibility: config.tools.sessions?.visibility, agentToAgent: { enabled: a2a?.enabled !== false, allow: a2a?.allow } };
}

type Turn = Parameters<typeof canReach>[0];
type SpawnedBy = (key: string) => string | undefined;

/** Whether `key` was spawned by `fromKey`, directly or through its subagents. */
function spawnedFrom(key: string, fromKey: string, spawnedBy: SpawnedBy): boolean {
  let current: string | undefined = key;
  for (let depth = 0; current !== undefined && depth < 16; depth++) {
    current = spawnedBy(current);
    if (current === fromKey) return true;
  }
  return false;
}

/**
 * agentToAgent.allow: exact ids (case-sensitive) or `*` globs (case-insensitive); both agents
 * must match. Empty or absent allows every pair; a list of blank entries allows none.
 */
export function agentsMayTalk(access: SessionAccess, from: string, to: string): boolean {
  if (!access.agentToAgent.enabled) return false;
  const allow = access.agentToAgent.allow;
  if (allow === undefined || allow.length === 0) return true;
  const patterns = allow.map((p) => p.trim()).filter((p) => p !== '');
  const matches = (id: string) => patterns.some((p) => (p.includes('*') ? picomatch.isMatch(id.toLowerCase(), p.toLowerCase()) : p === id));
  return matches(from) && matches(to);
}

export function canSeeSession(turn: Turn, fromKey: string, key: string, spawnedBy: SpawnedBy, access: SessionAccess = DEFAULT_SESSION_ACCESS): boolean {
  const own = spawnedFrom(key, fromKey, spawnedBy);
  switch (access.visibility) {
    case 'self':
      return key === fromKey;
    case 'tree':
      return key === fromKey || own;
    case 'all': {
      if (own) return true;
      const target = agentOfKey(key);
      if (target === undefined) return false;
      if (target === turn.agentId) return canReach(turn, fromKey, key, spawnedBy);
      // The same rule, applied inside the other agent, once both agents may talk.
      return agentsMayTalk(access, turn.agentId, target) && canReach({ ...turn, agentId: target }, fromKey, key, spawnedBy);
    }
    default:
      return canReach(turn, fromKey, key, spawnedBy);
  }
}

/** The deepest spawn chain a visibility decision follows (as `spawnedFrom` does). */
const MAX_SPAWN_DEPTH = 16;

/**
 * Reads, before a visibility decision, who spawned each session on the chains above `keys`,
 * so the decision itself stays a pure function over what was read. A session not read answers
 * "spawned by nobody", which only ever narrows what is visible.
 */
export async function spawnChains(keys: readonly string[], parentOf: (key: string) => Promise<string | undefined> | string | undefined): Promise<SpawnedBy> {
  const parents = new Map<string, string | undefined>();
  for (const start of keys) {
    let current: string | undefined = start;
    for (let depth = 0; current !== undefined && depth < MAX_SPAWN_DEPTH && !parents.has(current); depth++) {
      const parent: string | undefined = await parentOf(current);
      parents.set(current, parent);
      current = parent;
    }
  }
  return (key) => parents.get(key);
}
