import { randomUUID } from 'node:crypto';
import type { webApi } from '@slack/bolt';
import { fetchAttachment } from '../common/attachment-fetch.js';
import {
  ownMessageRefusal,
  POLL_NUMBER_GLYPHS,
  SLACK_POLL_EMOJI,
  type ChannelKind,
  type ChannelPage,
  type PlatformChannel,
  type MessageActionPort,
  type PlatformActionRequest,
  type PlatformActionResult,
  type ReadMessage,
} from '../../src/tools/core/message/actions.js';
import type { PollRecord, PollStore } from '../../src/tools/core/message/polls.js';
import { slackPollMessage } from './poll.js';

type WebClient = webApi.WebClient;

/** The most conversations.list calls one listing makes (each at most 200 channels). */
const SLACK_LIST_CALLS = 5;

/** A message as conversations.history / replies / pins.list return it (the fields read here). */
interface SlackApiMessage {
  ts?: string;
  user?: string;
  bot_id?: string;
  text?: string;
  thread_ts?: string;
  files?: Array<{ id?: string; name?: string; size?: number; url_private?: string; url_private_download?: string }>;
  reactions?: Array<{ name?: string; count?: number }>;
}

/**
 * The message tool's actions on Slack, through Bolt's Web API client. A message is addressed by
 * channel and ts together; edit and delete read the message's author from Slack first (a bot
 * token cannot be trusted to refuse: an admin-installed app may delete others' messages);
 * a file is fetched from Slack's file host only, by the URL Slack gives for that message's file,
 * with the bot token sent to that host alone. Slack has no native poll: a poll is a message with
 * one button per option, its votes kept in the store (`polls`); without a store to keep them in,
 * the question with numbered options and the number reactions under it, for people to click.
 */
export function slackMessageActions(web: () => WebClient, options: { token: () => string; fileHosts: readonly string[]; polls?: PollStore | undefined }): MessageActionPort {
  let me: Promise<{ userId?: string | undefined; botId?: string | undefined }> | undefined;
  const identity = () => {
    me ??= web()
      .auth.test()
      .then((r) => ({ userId: r.user_id, botId: r.bot_id }))
      .catch((err: unknown) => {
        me = undefined;
        throw err;
      });
    return me;
  };
  const isMine = (m: SlackApiMessage, self: { userId?: string | undefined; botId?: string | undefined }) => (m.user !== undefined && m.user === self.userId) || (m.bot_id !== undefined && m.bot_id === self.botId);

  /** The one message at `ts` in `channel` (in thread `threadId` when given), as Slack reports it. */
  async function messageAt(channel: string, ts: string, threadId: string | undefined): Promise<SlackApiMessage | undefined> {
    const found = threadId
      ? await web().conversations.replies({ channel, ts: threadId, latest: ts, oldest: ts, inclusive: true, limit: 1 })
      : await web().conversations.history({ channel, latest: ts, oldest: ts, inclusive: true, limit: 1 });
    return (found.messages as SlackApiMessage[] | undefined)?.find((m) => m.ts === ts);
  }

  const readOf = (m: SlackApiMessage, self: { userId?: string | undefined; botId?: string | undefined }): ReadMessage => ({
    id: m.ts ?? '?',
    authorId: m.user ?? m.bot_id ?? '?',
    fromBot: isMine(m, self),
    text: m.text ?? '',
    threadId: m.thread_ts && m.thread_ts !== m.ts ? m.thread_ts : undefined,
    files: (m.files ?? []).map((f) => ({ id: f.id ?? '?', name: f.name ?? 'file', size: f.size })),
    reactions: m.reactions?.map((r) => ({ emoji: r.name ?? '?', count: r.count ?? 0 })),
  });

  async function act(r: PlatformActionRequest): Promise<PlatformActionResult> {
    const c = web();
    switch (r.action) {
      case 'react':
        await (r.remove ? c.reactions.remove({ channel: r.channel, timestamp: r.messageId, name: r.emoji }) : c.reactions.add({ channel: r.channel, timestamp: r.messageId, name: r.emoji }));
        return { ok: true, summary: `${r.remove ? 'Removed' : 'Added'} :${r.emoji}: on message ${r.messageId}.` };
      case 'thread-create': {
        // A Slack thread is the replies under a message: under the one named, else under a new one carrying the name.
        if (r.messageId) {
          const posted = await c.chat.postMessage({ channel: r.channel, thread_ts: r.messageId, text: r.text ?? r.name });
          return { ok: true, summary: `Started a thread under message ${r.messageId} (reply ${posted.ts}).`, id: r.messageId };
        }
        const head = await c.chat.postMessage({ channel: r.channel, text: r.text ? `*${r.name}*\n${r.text}` : `*${r.name}*` });
        return { ok: true, summary: `Created thread "${r.name}" (${head.ts}).`, id: head.ts };
      }
      case 'pin':
        await c.pins.add({ channel: r.channel, timestamp: r.messageId });
        return { ok: true, summary: `Pinned message ${r.messageId}.` };
      case 'unpin':
        await c.pins.remove({ channel: r.channel, timestamp: r.messageId });
        return { ok: true, summary: `Unpinned message ${r.messageId}.` };
      case 'list-pins': {
        const self = await identity();
        const items = ((await c.pins.list({ channel: r.channel })).items ?? []) as Array<{ message?: SlackApiMessage }>;
        const messages = items.flatMap((i) => (i.message ? [readOf(i.message, self)] : []));
        return { ok: true, summary: `${messages.length} pinned message(s):`, messages };
      }
      case 'poll': {
        if (options.polls) {
          const now = Date.now();
          const poll: PollRecord = { id: randomUUID(), provider: 'slack', channelId: r.channel, threadId: r.threadId, question: r.question, options: r.options, createdAt: now, closesAt: now + r.hours * 3_600_000 };
          // Stored before the post: a click that comes the moment it shows finds its poll.
          await options.polls.create(poll);
          let ts: string | undefined;
          try {
            ts = (await c.chat.postMessage({ channel: r.channel, ...(r.threadId ? { thread_ts: r.threadId } : {}), ...slackPollMessage(poll, r.options.map(() => 0)) })).ts;
            if (!ts) throw new Error('chat.postMessage answered no ts');
          } catch (err) {
            await options.polls.remove(poll.id);
            throw err;
          }
          await options.polls.posted(poll.id, ts);
          return {
            ok: true,
            summary: `Posted a poll with one button per option (message ${ts}), open for ${r.hours} h; one vote per person (clicking another option changes it); the message shows the counts as they change — read it for them.`,
            id: ts,
            pollKind: 'buttons',
          };
        }
        const lines = r.options.map((o, i) => `${POLL_NUMBER_GLYPHS[i]} ${o}`);
        const posted = await c.chat.postMessage({ channel: r.channel, ...(r.threadId ? { thread_ts: r.threadId } : {}), text: `📊 *${r.question}*\n${lines.join('\n')}\n_Vote by reacting with the number._` });
        const ts = posted.ts!;
        for (const name of SLACK_POLL_EMOJI.slice(0, r.options.length)) await c.reactions.add({ channel: r.channel, timestamp: ts, name });
        return { ok: true, summary: `Slack has no native poll: posted the question with numbered options and added the number reactions for votes (message ${ts}); read it later to count them.`, id: ts, pollKind: 'numbered-reactions' };
      }
      case 'edit':
      case 'delete': {
        const m = await messageAt(r.channel, r.messageId, r.threadId);
        if (!m) return { ok: false, error: `no message ${r.messageId} in ${r.channel}` };
        const self = await identity();
        const refused = ownMessageRefusal(r.action, isMine(m, self) ? self.userId : (m.user ?? m.bot_id ?? undefined), self.userId);
        if (refused) return { ok: false, error: refused };
        if (r.action === 'edit') await c.chat.update({ channel: r.channel, ts: r.messageId, text: r.text });
        else await c.chat.delete({ channel: r.channel, ts: r.messageId });
        return { ok: true, summary: `${r.action === 'edit' ? 'Edited' : 'Deleted'} message ${r.messageId}.` };
      }
      case 'read': {
        const self = await identity();
        const got = r.threadId ? await c.conversations.replies({ channel: r.channel, ts: r.threadId, limit: r.limit }) : await c.conversations.history({ channel: r.channel, limit: r.limit });
        const list = ((got.messages ?? []) as SlackApiMessage[]).slice(0, r.limit);
        // history is newest first; replies oldest first. Both are returned oldest first.
        const ordered = r.threadId ? list : list.reverse();
        return { ok: true, summary: `The ${ordered.length} most recent message(s), newest last:`, messages: ordered.map((m) => readOf(m, self)) };
      }
      case 'download-file': {
        const m = await messageAt(r.channel, r.messageId, r.threadId);
        const file = m?.files?.find((f) => f.id === r.fileId);
        if (!file) return { ok: false, error: `message ${r.messageId} has no file ${r.fileId}` };
        if ((file.size ?? 0) > r.maxBytes) return { ok: false, error: `${file.name ?? 'the file'} is ${file.size} bytes, over the ${r.maxBytes}-byte limit` };
        const url = file.url_private_download ?? file.url_private;
        if (!url) return { ok: false, error: 'Slack gives no URL for that file' };
        const got = await fetchAttachment(url, { allowedHosts: options.fileHosts, maxBytes: r.maxBytes, headers: { authorization: `Bearer ${options.token()}` } });
        if (!got.ok) return { ok: false, error: `${file.name ?? 'the file'} could not be fetched: ${got.error}` };
        return { ok: true, summary: `Fetched ${file.name}.`, file: { name: file.name ?? 'file', data: got.data } };
      }
    }
  }

  return {
    /**
     * conversations.list (public and private channels, archived left out), the ones the bot is a
     * member of. Slack filters nothing by membership, so each call asks for at most what is still
     * missing and stops after a few pages; the cursor is Slack's own.
     */
    async listChannels({ cursor, limit }): Promise<ChannelPage> {
      const channels: PlatformChannel[] = [];
      let next = cursor;
      for (let calls = 0; calls < SLACK_LIST_CALLS && channels.length < limit; calls++) {
        const page = await web().conversations.list({ types: 'public_channel,private_channel', exclude_archived: true, limit: Math.min(200, limit - channels.length), ...(next ? { cursor: next } : {}) });
        for (const ch of (page.channels ?? []) as Array<{ id?: string; name?: string; is_member?: boolean; is_private?: boolean }>) {
          if (ch.id && ch.is_member) channels.push({ id: ch.id, name: ch.name, kind: 'channel', ...(ch.is_private ? { private: true } : {}) });
        }
        next = page.response_metadata?.next_cursor || undefined;
        if (!next) break;
      }
      return { channels, ...(next ? { nextCursor: next } : {}) };
    },
    // A Slack thread is the ts of its parent message in that channel.
    async threadIn(channel, threadId) {
      try {
        return (await messageAt(channel, threadId, undefined)) !== undefined;
      } catch {
        return false;
      }
    },
    async channelKind(channel): Promise<ChannelKind | undefined> {
      try {
        const info = (await web().conversations.info({ channel })).channel as { is_im?: boolean; is_mpim?: boolean } | undefined;
        if (!info) return undefined;
        return info.is_im || info.is_mpim ? 'dm' : 'channel';
      } catch {
        return undefined;
      }
    },
    async run(r) {
      try {
        return await act(r);
      } catch (err) {
        return { ok: false, error: `Slack refused: ${(err as Error).message}` };
      }
    },
  };
}
