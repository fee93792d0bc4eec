import type { WardenConfig } from '../config/index.js';
import { pickChannelScope, pickGuildScope, type ScopeWhere } from '../policy/mention.js';

/**
 * Who approves calls made in one conversation: the `approvals.approvers` of the most specific
 * guild, team or channel scope that sets it (channel, then guild), matched as the tool policy's
 * scopes match. Undefined when no scope sets it: the platform's `approvals.approvers.<platform>`
 * (else its owners) decide, as before. A scope list replaces the platform list there; it does
 * not add to it, so a channel can be handed to its own team.
 */
export function scopedApprovers(config: Pick<WardenConfig, 'channels'>, where: ScopeWhere): string[] | undefined {
  if (where.provider === 'discord') {
    const discord = config.channels.discord;
    if (!discord) return undefined;
    const guild = pickGuildScope(discord.guilds, where);
    const channel = guild && where.channelId !== undefined ? pickChannelScope(guild.channels, where) : undefined;
    return copy(channel?.approvals?.approvers ?? guild?.approvals?.approvers);
  }
  if (where.provider === 'slack') {
    const slack = config.channels.slack;
    if (!slack || where.channelId === undefined) return undefined;
    return copy(pickChannelScope(slack.channels, where)?.approvals?.approvers);
  }
  return undefined;
}

const copy = (list: readonly string[] | undefined) => (list === undefined ? undefined : [...new Set(list)]);
