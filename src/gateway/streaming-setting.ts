import type { WardenConfig } from '../config/index.js';
import { pickChannelScope, pickGuildScope, type ScopeWhere } from '../policy/mention.js';

/**
 * Whether replies stream where a turn runs: the most specific scope that sets `streaming`
 * decides — channel, then guild (Discord), then the platform (on by default). A DM has no
 * scope: the platform setting.
 */
export function streamingFor(config: Pick<WardenConfig, 'channels'>, where: ScopeWhere): boolean {
  switch (where.provider) {
    case 'web':
      return config.channels.web.streaming;
    case 'discord': {
      const discord = config.channels.discord;
      if (!discord) return false;
      const guild = where.guildId !== undefined ? pickGuildScope(discord.guilds, where) : undefined;
      const channel = guild && where.channelId !== undefined ? pickChannelScope(guild.channels, where) : undefined;
      return channel?.streaming ?? guild?.streaming ?? discord.streaming;
    }
    case 'slack': {
      const slack = config.channels.slack;
      if (!slack) return false;
      const channel = where.channelId !== undefined ? pickChannelScope(slack.channels, where) : undefined;
      return channel?.streaming ?? slack.streaming;
    }
    default:
      return false;
  }
}
