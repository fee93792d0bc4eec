import type { ButtonInteraction, ChatInputCommandInteraction, Message, ModalSubmitInteraction } from 'discord.js';
import type { ClickOrigin } from '../../src/gateway/types.js';
import type { AttachmentRef, InboundAttachment, InboundMessage } from '../../src/gateway/types.js';
import { fetchAttachment } from '../common/attachment-fetch.js';
import { isCommandName, SKILL_INPUT_OPTION, typedCommandText, typedSkillText } from '../common/native-commands.js';

type Place = Pick<InboundMessage, 'chatType' | 'guildId' | 'guildName' | 'channelId' | 'channelName' | 'threadId'>;
type AnyChannel = Message['channel'];
/** Discord's InteractionContextType.BotDM. */
const BOT_DM_CONTEXT = 1;

/** Where a message or command was sent: guild channel, thread (keyed by its parent) or DM. */
function placeOf(channel: AnyChannel | null, channelId: string, guildId: string | null, client: Message['client']): Place {
  if (guildId === null) return { chatType: 'dm', channelId: channel?.id ?? channelId };
  // The guild's name as it is now: a scope keyed by name matches it (and only restricts unless trusted).
  const guildName = client.guilds.cache.get(guildId)?.name ?? undefined;
  if (channel?.isThread()) {
    const parentId = channel.parentId ?? channel.id;
    const parent = client.channels.cache.get(parentId);
    return {
      chatType: 'thread',
      guildId,
      guildName,
      channelId: parentId,
      channelName: parent && 'name' in parent && typeof parent.name === 'string' ? parent.name : undefined,
      threadId: channel.id,
    };
  }
  return { chatType: 'channel', guildId, guildName, channelId, channelName: channel && 'name' in channel ? (channel.name ?? undefined) : undefined };
}

/**
 * The conversation a button click or form came from, as Discord reports the interaction: its
 * channel and guild (a thread as its parent + the thread, like a message there), a DM when it
 * has no guild. Never read from the button's custom id.
 */
export function clickOriginOf(interaction: ButtonInteraction | ModalSubmitInteraction): ClickOrigin | undefined {
  const channelId = interaction.channelId;
  if (!channelId) return undefined;
  const guildId = interaction.inGuild() ? interaction.guildId : null;
  const place = placeOf(interaction.channel, channelId, guildId, interaction.client);
  // A DM is the bot's own with the clicker (context 1). A user-installed app's click in a group DM
  // or someone else's DM (context 2) has no guild either, but is nobody's DM with the bot.
  const dm = place.chatType === 'dm' && interaction.context === BOT_DM_CONTEXT;
  return { provider: 'discord', ...(place.guildId !== undefined ? { guildId: place.guildId } : {}), channelId: place.channelId, ...(place.threadId !== undefined ? { threadId: place.threadId } : {}), dm };
}

/**
 * Normalises a discord.js message, or returns undefined for messages Warden must not answer:
 * its own and system messages. Another bot's message — or a webhook's, whose author Discord
 * marks as a bot and whose name and avatar anyone with the webhook URL chooses — comes through
 * marked `senderIsBot`, and the access gate drops it unless `allowBots` (with its loop breaker).
 * A thread the client never saw arrives as a partial without its parent; it is fetched once
 * so policy can use the parent channel.
 */
export async function inboundFromDiscord(message: Message, botId: string, fileHosts: readonly string[] = DISCORD_FILE_HOSTS): Promise<InboundMessage | undefined> {
  if (message.author.id === botId || message.system) return undefined;
  const isBot = message.author.bot || message.webhookId !== null;
  let channel = message.channel;
  if (channel.isThread() && channel.parentId === null) channel = await message.client.channels.fetch(channel.id, { force: true }).then((c) => (c?.isThread() ? c : channel));
  return {
    provider: 'discord',
    ...placeOf(channel, channel.id, message.inGuild() ? message.guildId : null, message.client),
    senderId: message.author.id,
    senderName: message.author.globalName ?? message.author.username,
    ...(isBot ? { senderIsBot: true } : {}),
    // A webhook has no member object; a bot's roles are its own, read like anyone's.
    ...rolesOf(message.webhookId !== null ? null : message.member),
    // Raw text: the router strips the leading mention, so a mention mid-sentence keeps its place.
    text: message.content,
    ...attachmentsOf(message, fileHosts),
    mentionsBot: message.mentions.users.has(botId),
    messageId: message.id,
    receivedAt: message.createdTimestamp,
  };
}

/**
 * A slash command as the message its typed form would be: same conversation, same sender,
 * text `/exec …` or `/release_notes v1.2`, so the router gives it the same session, policy
 * context and owner check. A command Warden does not have (one an older version left
 * registered) goes to the router as typed too, which answers it as unknown.
 */
export async function inboundFromCommand(interaction: ChatInputCommandInteraction): Promise<InboundMessage> {
  const values = Object.fromEntries(interaction.options.data.map((o) => [o.name, o.value === undefined ? undefined : String(o.value)]));
  const name = interaction.commandName;
  const text = isCommandName(name)
    ? typedCommandText(name, values)
    : typedSkillText(name, values[SKILL_INPUT_OPTION] ?? Object.values(values).filter(Boolean).join(' '));
  let channel = interaction.channel;
  if (channel?.isThread() && channel.parentId === null) channel = await interaction.client.channels.fetch(channel.id, { force: true }).then((c) => (c?.isThread() ? c : channel));
  return {
    provider: 'discord',
    ...placeOf(channel, interaction.channelId, interaction.inGuild() ? interaction.guildId : null, interaction.client),
    senderId: interaction.user.id,
    senderName: interaction.user.globalName ?? interaction.user.username,
    ...rolesOf(interaction.inCachedGuild() ? interaction.member : null),
    text,
    mentionsBot: false,
    messageId: interaction.id,
    receivedAt: interaction.createdTimestamp,
    invocationId: interaction.id,
  };
}

/** The sender's guild roles for role bindings; `@everyone` (the guild's own id) is no role. */
function rolesOf(member: Message['member'] | null): Pick<InboundMessage, 'senderRoles'> {
  if (!member) return {};
  const roles = [...member.roles.cache.keys()].filter((id) => id !== member.guild.id);
  return roles.length > 0 ? { senderRoles: roles } : {};
}

/** Where Discord serves the files people post. */
export const DISCORD_FILE_HOSTS = ['cdn.discordapp.com', 'media.discordapp.net'] as const;

function attachmentsOf(message: Message, fileHosts: readonly string[]): Pick<InboundMessage, 'attachments'> {
  const voice = message.flags.has(1 << 13);
  const list = [...message.attachments.values()].map((a) => discordAttachment({ id: a.id, name: a.name, mimeType: a.contentType ?? undefined, size: a.size, voice, url: a.url }, fileHosts));
  return list.length > 0 ? { attachments: list } : {};
}

/**
 * A file on Discord's CDN, fetched when its turn runs from Discord's file hosts only — for a
 * message this instance received, and for one another instance recorded (whose URL, signed by
 * Discord, may have expired by then: the fetch then fails and the model is told).
 */
export function discordAttachment(ref: AttachmentRef, fileHosts: readonly string[]): InboundAttachment {
  const url = ref.url;
  return {
    ...ref,
    download: (maxBytes, signal) => (url ? fetchAttachment(url, { allowedHosts: fileHosts, maxBytes, signal }) : Promise.resolve({ ok: false as const, error: 'Discord gave no URL for it' })),
  };
}
