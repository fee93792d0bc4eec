import type { WardenConfig } from '../config/index.js';
import { trustedScopes, type ScopeWhere } from './channel-scope.js';
import type { InboundMessage } from './inbound.js';

/**
 * Whether a message must mention the bot to be answered. DMs and the web chat never need a
 * mention; a thread the bot already takes part in does not either (the conversation is with
 * the bot). Elsewhere the most specific trusted scope that sets `requireMention` decides —
 * channel, then guild (Discord), then the provider default (on). Scopes are matched as the
 * tool policy matches them (policy/channel-scope.ts): a scope matched by a name others may
 * choose sets nothing here.
 */
export function requiresMention(config: WardenConfig, message: InboundMessage, botInThread: boolean): boolean {
  if (message.provider === 'web' || message.chatType === 'dm') return false;
  if (message.chatType === 'thread' && botInThread) return false;
  const platform = message.provider === 'discord' ? config.channels.discord : config.channels.slack;
  if (!platform) return true;
  const { channel, guild } = trustedScopes(config, message);
  return channel?.requireMention ?? guild?.requireMention ?? platform.requireMention;
}

/** Where a message (or a turn) is, as the scope matchers read it. */
export type { ScopeWhere };
