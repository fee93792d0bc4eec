import type { TurnContext } from '../../policy/context.js';
import { OWNER_ONLY_TOOLS } from '../../policy/catalog.js';

/**
 * The execution-side owner check (semantics §3): cron, gateway and nodes refuse a non-owner
 * whatever path the call came by (model, slash command, subagent, plugin). The surface filter
 * already hides them; this is the second line. Returns the refusal text, or undefined.
 */
export function ownerOnlyRefusal(tool: string, turn: Pick<TurnContext, 'senderIsOwner' | 'provider' | 'senderId'>, ownerOnly: readonly string[] = OWNER_ONLY_TOOLS): string | undefined {
  if (!ownerOnly.includes(tool) || turn.senderIsOwner === true) return undefined;
  const who = turn.senderId ? `${turn.provider} user ${turn.senderId}` : `an unidentified ${turn.provider} sender`;
  return `Tool ${tool} is restricted to owners and ${who} is not an owner (owners.${turn.provider}). The tool call did not run.`;
}
