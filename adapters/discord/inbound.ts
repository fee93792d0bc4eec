import type { Message } from 'discord.js';
import type { InboundMessage } from '../../src/gateway/types.js';

/**
 * Normalises a discord.js message, or returns undefined for messages Warden must not answer:
 * its own, other bots' (two bots answering each other never stop) and system messages.
 * A thread the client never saw arrives as a partial without its parent; it is fetched once
 * so policy can use the parent channel.
 */
export async function inboundFromDiscord(message: Message, botId: string): Promise<InboundMessage | undefined> {
  if (message.author.id === botId || message.author.bot || message.system) return undefined;
  let channel = message.channel;
  if (channel.isThread() && channel.parentId === null) channel = await message.client.channels.fetch(channel.id, { force: true }).then((c) => (c?.isThread() ? c : channel));
  const base = {
    provider: 'discord' as const,
    senderId: message.author.id,
    senderName: message.author.globalName ?? message.author.username,
    // Raw text: the router strips the leading mention, so a mention mid-sentence keeps its place.
    text: message.content,
    mentionsBot: message.mentions.users.has(botId),
    messageId: message.id,
    receivedAt: message.createdTimestamp,
  };
  if (!message.inGuild()) return { ...base, chatType: 'dm', channelId: channel.id };
  if (channel.isThread()) {
    const parentId = channel.parentId ?? channel.id;
    const parent = message.client.channels.cache.get(parentId);
    return {
      ...base,
      chatType: 'thread',
      guildId: message.guildId,
      channelId: parentId,
      channelName: parent && 'name' in parent && typeof parent.name === 'string' ? parent.name : undefined,
      threadId: channel.id,
    };
  }
  return {
    ...base,
    chatType: 'channel',
    guildId: message.guildId,
    channelId: channel.id,
    channelName: 'name' in channel ? (channel.name ?? undefined) : undefined,
  };
}
