import type { WardenConfig } from '../config/index.js';
import { slugify } from './channel-scope.js';
import type { InboundMessage } from './inbound.js';

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
    const guild = pickGuildScope(discord.guilds, message);
    const channel = guild ? pickChannelScope(guild.channels, message) : undefined;
    return channel?.requireMention ?? guild?.requireMention ?? discord.requireMention;
  }
  const slack = config.channels.slack;
  if (!slack) return true;
  return pickChannelScope(slack.channels, message)?.requireMention ?? slack.requireMention;
}

/** Where a message (or a turn) is, as the scope pickers read it. */
export type ScopeWhere = Pick<InboundMessage, 'provider' | 'guildId' | 'guildName' | 'channelName'> & { channelId?: string | undefined };

/** The guild scope: by id, then by the slug of the guild's name (key or `slug` field), then `*`. */
export function pickGuildScope<S extends { slug?: string | undefined }>(guilds: Record<string, S>, message: ScopeWhere): S | undefined {
  if (message.guildId !== undefined && guilds[message.guildId]) return guilds[message.guildId];
  const slug = message.guildName ? slugify(message.guildName) : undefined;
  if (slug) {
    const keys = Object.keys(guilds).filter((k) => k !== '*');
    const key = keys.find((k) => slugify(k) === slug) ?? keys.find((k) => guilds[k]!.slug !== undefined && slugify(guilds[k]!.slug!) === slug);
    if (key !== undefined) return guilds[key];
  }
  return guilds['*'];
}

/**
 * The channel scope a message falls under, matched as the policy's channel scopes match
 * (policy/channel-scope.ts): the channel id (any case on Slack), then the name or its slug,
 * plain or with `#`, then `*`.
 */
export function pickChannelScope<S>(scopes: Record<string, S>, message: ScopeWhere): S | undefined {
  const keys = Object.keys(scopes);
  const id = message.channelId ?? '';
  const byId = keys.find((k) => k === id) ?? (message.provider === 'slack' ? keys.find((k) => k.toLowerCase() === id.toLowerCase()) : undefined);
  if (byId !== undefined) return scopes[byId];
  if (message.channelName) {
    const name = message.channelName.trim().replace(/^#/, '').toLowerCase();
    const slug = slugify(name);
    const plain = keys.find((k) => !k.startsWith('#') && (k.toLowerCase() === name || k.toLowerCase() === slug));
    if (plain !== undefined) return scopes[plain];
    const hash = keys.find((k) => k.startsWith('#') && (k.slice(1).toLowerCase() === name || slugify(k) === slug));
    if (hash !== undefined) return scopes[hash];
  }
  return scopes['*'];
}
