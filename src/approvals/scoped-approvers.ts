import type { WardenConfig } from '../config/index.js';
import { trustedScopes, type ScopeWhere } from '../policy/channel-scope.js';

/**
 * Who approves calls made in one conversation: the `approvals.approvers` of the most specific
 * trusted guild or channel scope that sets it (channel, then guild), matched as the tool
 * policy's scopes match: a scope matched by a name others may choose never names approvers. Undefined when no scope sets it: the platform's `approvals.approvers.<platform>`
 * (else its owners) decide, as before. A scope list replaces the platform list there; it does
 * not add to it, so a channel can be handed to its own team.
 */
export function scopedApprovers(config: Pick<WardenConfig, 'channels'>, where: ScopeWhere): string[] | undefined {
  if (where.provider === 'discord') {
    const discord = config.channels.discord;
    if (!discord) return undefined;
    const scopes = trustedScopes(config, where);
    const channel = where.channelId !== undefined ? scopes.channel : undefined;
    const guild = scopes.guild;
    return copy(channel?.approvals?.approvers ?? guild?.approvals?.approvers);
  }
  if (where.provider === 'slack') {
    const slack = config.channels.slack;
    if (!slack || where.channelId === undefined) return undefined;
    return copy(trustedScopes(config, where).channel?.approvals?.approvers);
  }
  return undefined;
}

const copy = (list: readonly string[] | undefined) => (list === undefined ? undefined : [...new Set(list)]);
