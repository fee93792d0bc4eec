import { PermissionFlagsBits, type Client } from 'discord.js';
import { ChannelType, Routes, type APIChannel, type APIMessage } from 'discord-api-types/v10';
import { fetchAttachment } from '../common/attachment-fetch.js';
import { ownMessageRefusal, type ChannelKind, type ChannelPage, type MessageActionPort, type PlatformChannel, type PlatformActionRequest, type PlatformActionResult, type ReadMessage } from '../../src/tools/core/message/actions.js';

/**
 * The message tool's actions on Discord, through discord.js's REST client. Every message is
 * addressed by its channel and id together (Discord answers "Unknown Message" for an id from
 * another channel), a thread is accepted only under the channel the gate judged, edit and delete
 * read the message's author from Discord first, and a file is fetched only from Discord's CDN by
 * the URL Discord gives for that message's attachment.
 */
export function discordMessageActions(client: () => Client | undefined, fileHosts: readonly string[]): MessageActionPort {
  const rest = () => {
    const c = client();
    if (!c) throw new Error('the Discord adapter is not started');
    return c;
  };
  const describe = async (id: string): Promise<APIChannel | undefined> => {
    try {
      return (await rest().rest.get(Routes.channel(id))) as APIChannel;
    } catch {
      return undefined;
    }
  };
  /** The channel the messages live in: the thread, when one is named and it sits under `channel`. */
  const channelOf = async (r: PlatformActionRequest): Promise<{ ok: true; id: string } | { ok: false; error: string }> => {
    if (r.threadId === undefined || r.threadId === r.channel) return { ok: true, id: r.channel };
    const thread = await describe(r.threadId);
    if (!thread || !('parent_id' in thread) || thread.parent_id !== r.channel) return { ok: false, error: `thread ${r.threadId} is not a thread of channel ${r.channel}` };
    return { ok: true, id: thread.id };
  };
  const message = async (channel: string, id: string) => (await rest().rest.get(Routes.channelMessage(channel, id))) as APIMessage;
  const readOf = (m: APIMessage): ReadMessage => ({
    id: m.id,
    authorId: m.author.id,
    authorName: m.author.username,
    fromBot: m.author.id === client()?.user?.id,
    text: m.content,
    at: m.timestamp,
    files: (m.attachments ?? []).map((a) => ({ id: a.id, name: a.filename, size: a.size })),
    reactions: m.reactions?.map((r) => ({ emoji: r.emoji.id ? `${r.emoji.name}:${r.emoji.id}` : (r.emoji.name ?? '?'), count: r.count })),
  });

  async function act(r: PlatformActionRequest): Promise<PlatformActionResult> {
    const where = await channelOf(r);
    if (!where.ok) return where;
    const ch = where.id;
    const c = rest();
    switch (r.action) {
      case 'react': {
        const route = Routes.channelMessageOwnReaction(ch, r.messageId, encodeURIComponent(r.emoji));
        await (r.remove ? c.rest.delete(route) : c.rest.put(route));
        return { ok: true, summary: `${r.remove ? 'Removed' : 'Added'} ${r.emoji} on message ${r.messageId}.` };
      }
      case 'thread-create': {
        const thread = (await (r.messageId
          ? c.rest.post(Routes.threads(ch, r.messageId), { body: { name: r.name, auto_archive_duration: 1440 } })
          : c.rest.post(Routes.threads(ch), { body: { name: r.name, type: ChannelType.PublicThread, auto_archive_duration: 1440 } }))) as APIChannel;
        if (r.text) await c.rest.post(Routes.channelMessages(thread.id), { body: { content: r.text, allowed_mentions: { parse: [] } } });
        return { ok: true, summary: `Created thread "${r.name}" (${thread.id}).`, id: thread.id };
      }
      case 'pin':
        await c.rest.put(Routes.channelPin(ch, r.messageId));
        return { ok: true, summary: `Pinned message ${r.messageId}.` };
      case 'unpin':
        await c.rest.delete(Routes.channelPin(ch, r.messageId));
        return { ok: true, summary: `Unpinned message ${r.messageId}.` };
      case 'list-pins': {
        const pins = (await c.rest.get(Routes.channelPins(ch))) as APIMessage[];
        return { ok: true, summary: `${pins.length} pinned message(s):`, messages: pins.map(readOf) };
      }
      case 'poll': {
        const body = { poll: { question: { text: r.question }, answers: r.options.map((text) => ({ poll_media: { text } })), duration: r.hours, allow_multiselect: false }, allowed_mentions: { parse: [] } };
        const posted = (await c.rest.post(Routes.channelMessages(ch), { body })) as APIMessage;
        return { ok: true, summary: `Posted a poll (message ${posted.id}).`, id: posted.id, pollKind: 'native' };
      }
      case 'edit':
      case 'delete': {
        const refused = ownMessageRefusal(r.action, (await message(ch, r.messageId)).author.id, c.user?.id);
        if (refused) return { ok: false, error: refused };
        if (r.action === 'edit') await c.rest.patch(Routes.channelMessage(ch, r.messageId), { body: { content: r.text, allowed_mentions: { parse: [] } } });
        else await c.rest.delete(Routes.channelMessage(ch, r.messageId));
        return { ok: true, summary: `${r.action === 'edit' ? 'Edited' : 'Deleted'} message ${r.messageId}.` };
      }
      case 'read': {
        const list = (await c.rest.get(Routes.channelMessages(ch), { query: new URLSearchParams({ limit: String(r.limit) }) })) as APIMessage[];
        return { ok: true, summary: `The ${list.length} most recent message(s), newest last:`, messages: list.reverse().map(readOf) };
      }
      case 'download-file': {
        const m = await message(ch, r.messageId);
        const file = m.attachments.find((a) => a.id === r.fileId);
        if (!file) return { ok: false, error: `message ${r.messageId} has no file ${r.fileId}` };
        if (file.size > r.maxBytes) return { ok: false, error: `${file.filename} is ${file.size} bytes, over the ${r.maxBytes}-byte limit` };
        const got = await fetchAttachment(file.url, { allowedHosts: fileHosts, maxBytes: r.maxBytes });
        if (!got.ok) return { ok: false, error: `${file.filename} could not be fetched: ${got.error}` };
        return { ok: true, summary: `Fetched ${file.filename}.`, file: { name: file.filename, data: got.data } };
      }
    }
  }

  /**
   * The guild text channels and threads the bot may view, from discord.js's cache (filled by
   * GUILD_CREATE and the thread events), judged by the bot's own member's permissions in each
   * channel (overwrites included). A guild whose member object for the bot is not cached is left
   * out rather than guessed. Ordered by id; the cursor is the last id given.
   */
  function reachable(): PlatformChannel[] {
    const c = client();
    const out: PlatformChannel[] = [];
    if (!c) return out;
    for (const guild of c.guilds.cache.values()) {
      const me = guild.members.me;
      if (!me) continue;
      for (const ch of guild.channels.cache.values()) {
        const thread = ch.type === ChannelType.PublicThread || ch.type === ChannelType.PrivateThread || ch.type === ChannelType.AnnouncementThread;
        if (!thread && ch.type !== ChannelType.GuildText && ch.type !== ChannelType.GuildAnnouncement) continue;
        if (thread && (ch as { archived?: boolean | null }).archived) continue;
        if (!ch.permissionsFor(me)?.has(PermissionFlagsBits.ViewChannel)) continue;
        out.push({ id: ch.id, name: ch.name, kind: thread ? 'thread' : 'channel', ...(thread && ch.parentId ? { parentId: ch.parentId } : {}), guildId: guild.id, ...(ch.type === ChannelType.PrivateThread ? { private: true } : {}) });
      }
    }
    return out.sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : BigInt(a.id) > BigInt(b.id) ? 1 : 0));
  }

  return {
    async listChannels({ cursor, limit }): Promise<ChannelPage> {
      const all = reachable();
      const after = cursor === undefined || !/^\d{1,20}$/.test(cursor) ? -1n : BigInt(cursor);
      const rest = all.filter((ch) => BigInt(ch.id) > after);
      const channels = rest.slice(0, limit);
      return { channels, ...(rest.length > limit ? { nextCursor: channels.at(-1)!.id } : {}) };
    },
    async threadIn(channel, threadId) {
      if (threadId === channel) return true;
      const thread = await describe(threadId);
      return thread !== undefined && 'parent_id' in thread && thread.parent_id === channel;
    },
    async channelKind(id): Promise<ChannelKind | undefined> {
      const channel = await describe(id);
      if (!channel) return undefined;
      return channel.type === ChannelType.DM || channel.type === ChannelType.GroupDM ? 'dm' : 'channel';
    },
    async run(r) {
      try {
        return await act(r);
      } catch (err) {
        return { ok: false, error: `Discord refused: ${(err as Error).message}` };
      }
    },
  };
}
