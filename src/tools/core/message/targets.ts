// Who a turn may post to, and the marker a post outside its conversation carries: decisions the
// message tool, the conversations tool and cron's delivery targets share. Apart from the tool
// itself (its actions, its argument schema), so a start that checks a cron job's target does not
// load the tool.
import type { WardenConfig } from '../../../config/schema/index.js';
import type { TurnContext } from '../../../policy/context.js';
import type { MessageTarget } from '../../types.js';

/** Is the target the conversation this turn runs in? */
function isCurrentConversation(target: MessageTarget, turn: TurnContext): boolean {
  if (target.provider !== turn.provider) return false;
  if (target.userId !== undefined) return turn.chat === 'dm' && target.userId === turn.senderId;
  return target.channel === turn.channelId || (turn.channelName !== undefined && target.channel === `#${turn.channelName}`);
}

/**
 * Whether a turn may post to a target: its own conversation always; an owner anywhere; anyone
 * else only to `tools.message.allowedTargets`. A model steered by one user must not be able to
 * broadcast into channels the operator never opened to it.
 */
export function messageTargetAllowed(config: WardenConfig, target: MessageTarget, turn: TurnContext): { ok: true } | { ok: false; why: string } {
  if (isCurrentConversation(target, turn)) return { ok: true };
  // tools.message.crossContext narrows every sender, owners included (OpenClaw's defaults: both true).
  const cross = config.tools.message?.crossContext;
  if (cross?.allowWithinProvider === false && target.provider === turn.provider) {
    return { ok: false, why: `posting outside this conversation on ${target.provider} is turned off (tools.message.crossContext.allowWithinProvider: false)` };
  }
  if (cross?.allowAcrossProviders === false && target.provider !== turn.provider) {
    return { ok: false, why: `posting from ${turn.provider} to ${target.provider} is turned off (tools.message.crossContext.allowAcrossProviders: false)` };
  }
  if (turn.senderIsOwner) return { ok: true };
  const allowed = config.tools.message?.allowedTargets ?? [];
  const key = target.userId !== undefined ? `${target.provider}:@${target.userId}` : `${target.provider}:${target.channel}`;
  if (allowed.includes('*') || allowed.includes(key)) return { ok: true };
  return { ok: false, why: `posting to ${key} is not allowed from here: only this conversation, or a target in tools.message.allowedTargets` };
}

/**
 * The origin marker a post outside its conversation carries when `tools.message.crossContext`
 * is configured (OpenClaw's default marker: `[from {channel}] `), so readers there know where
 * it came from. Without the block, posts go out unmarked, as before.
 */
export function crossContextText(config: WardenConfig, target: MessageTarget, turn: TurnContext, text: string): string {
  const cross = config.tools.message?.crossContext;
  if (!cross || cross.marker?.enabled === false || isCurrentConversation(target, turn)) return text;
  const origin = `${turn.provider} ${turn.channelName ? `#${turn.channelName}` : turn.chat === 'dm' ? 'DM' : (turn.channelId ?? 'conversation')}`;
  const fill = (s: string) => s.replaceAll('{channel}', origin);
  return `${fill(cross.marker?.prefix ?? '[from {channel}] ')}${text}${fill(cross.marker?.suffix ?? '')}`;
}
