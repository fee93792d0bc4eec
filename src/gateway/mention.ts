import type { WardenConfig } from '../config/index.js';
import type { InboundMessage } from './types.js';

/**
 * Whether a message must mention the bot to be answered. DMs and the web chat never need a
 * mention; a thread the bot already takes part in does not either (the conversation is with
 * the bot). Elsewhere the most specific scope that sets `requireMention` decides — channel,
 * then guild (Discord), then the provider default (on).
 */
export function requiresMention(config: WardenConfig, message: InboundMessage, botInThread: boolean): boolean {
  if (message.provider === 'web' || message.chatType === 'dm') return false;
  if (message.chatType === 'thread' && botInThread) return false;
  if (message.provider === 'discord') {
    const discord = config.channels.discord;
    if (!discord) return true;
    const guild = message.guildId !== undefined ? pickScope(discord.guilds, [message.guildId]) : discord.guilds['*'];
    const channel = guild ? pickScope(guild.channels, channelKeys(message)) : undefined;
    return channel?.requireMention ?? guild?.requireMention ?? discord.requireMention;
  }
  const slack = config.channels.slack;
  if (!slack) return true;
  return pickScope(slack.channels, channelKeys(message))?.requireMention ?? slack.requireMention;
}

/** Keys a channel scope may be written under, most specific first: id, `#name`, name. */
function channelKeys(message: InboundMessage): string[] {
  const keys = [message.channelId];
  const name = message.channelName?.replace(/^#/, '');
  if (name) keys.push(`#${name}`, name, name.toLowerCase());
  return keys;
}

function pickScope<S>(scopes: Record<string, S>, keys: string[]): S | undefined {
  for (const key of keys) {
    const hit = scopes[key];
    if (hit) return hit;
  }
  return scopes['*'];
}
