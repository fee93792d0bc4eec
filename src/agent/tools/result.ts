import type { ToolResult } from '../../tools/types.js';

/** Pretty JSON for the model, the value itself kept as details. */
export function jsonResult(value: unknown): ToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }], details: value };
}

export function errorResult(message: string): ToolResult {
  return { content: [{ type: 'text', text: message }], details: { status: 'error', error: message }, isError: true };
}

/** The agent a session key belongs to; a tool only reaches sessions of its own agent. */
export const agentOfKey = (key: string): string | undefined => /^agent:([^:]+):/.exec(key)?.[1];

/**
 * Which sessions a turn may read or message (fail closed): its own, channel and thread
 * sessions of its agent, its own DM and the subagents it spawned. Another person's DM or
 * another session's subagent is only for owners.
 */
export function canReach(turn: { agentId: string; provider: string; senderId?: string | undefined; senderIsOwner: boolean }, fromKey: string, key: string, spawnedBy: (key: string) => string | undefined): boolean {
  if (agentOfKey(key) !== turn.agentId) return false;
  if (key === fromKey || turn.senderIsOwner) return true;
  const dm = /^agent:[^:]+:([^:]+):direct:([^:]+)$/.exec(key);
  if (dm) return dm[1] === turn.provider && turn.senderId !== undefined && dm[2] === turn.senderId.trim().toLowerCase().replaceAll(':', '%3a');
  if (/^agent:[^:]+:subagent:/.test(key)) return spawnedBy(key) === fromKey;
  return /^agent:[^:]+:[^:]+:channel:/.test(key);
}
