import type { WardenConfig } from '../config/index.js';
import { trustedScopes, type ScopeWhere } from '../policy/channel-scope.js';

/**
 * Whether replies stream where a turn runs: the most specific trusted scope that sets
 * `streaming` decides — channel, then guild (Discord), then the platform (on by default). A DM
 * has no scope: the platform setting.
 */
export function streamingFor(config: Pick<WardenConfig, 'channels'>, where: ScopeWhere): boolean {
  switch (where.provider) {
    case 'web':
      return config.channels.web.streaming;
    case 'discord': {
      const discord = config.channels.discord;
      if (!discord) return false;
      if (where.guildId === undefined) return discord.streaming;
      const scopes = trustedScopes(config, where);
      const channel = where.channelId !== undefined ? scopes.channel : undefined;
      const guild = scopes.guild;
      return channel?.streaming ?? guild?.streaming ?? discord.streaming;
    }
    case 'slack': {
      const slack = config.channels.slack;
      if (!slack) return false;
      const channel = where.channelId !== undefined ? trustedScopes(config, where).channel : undefined;
      return channel?.streaming ?? slack.streaming;
    }
    default:
      return false;
  }
}
