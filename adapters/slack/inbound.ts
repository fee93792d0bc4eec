import type { AttachmentRef, InboundAttachment, InboundMessage } from '../../src/gateway/types.js';
import { fetchAttachment } from '../common/attachment-fetch.js';
import type { ClickOrigin } from '../../src/gateway/types.js';

/** A file of a message event, as Slack describes it (files:read gives the URLs). */
export interface SlackFile {
  id: string;
  name?: string | undefined;
  title?: string | undefined;
  mimetype?: string | undefined;
  size?: number | undefined;
  /** `slack_audio` for a recorded clip. */
  subtype?: string | undefined;
  url_private?: string | undefined;
  url_private_download?: string | undefined;
  /** `hidden_by_limit` and the like: no URL to fetch. */
  file_access?: string | undefined;
}

/** Where Slack serves the files people post; the bot token goes nowhere else. */
export const SLACK_FILE_HOSTS = ['files.slack.com'] as const;

/** The fields of a Slack `message` or `app_mention` event the adapter reads. */
export interface SlackMessageEvent {
  type: string;
  subtype?: string | undefined;
  channel: string;
  channel_type?: string | undefined;
  user?: string | undefined;
  bot_id?: string | undefined;
  text?: string | undefined;
  ts: string;
  thread_ts?: string | undefined;
  team?: string | undefined;
  files?: SlackFile[] | undefined;
}

/** Subtypes that are a person writing; edits, deletions, joins and bot posts are not. */
const USER_SUBTYPES = new Set([undefined, 'thread_broadcast', 'file_share']);

/**
 * Normalises a Slack event, or returns undefined for one Warden must not answer (its own post,
 * an edit, a join). Another bot's or app's post (`bot_id`, `bot_message`) comes through marked
 * `senderIsBot`, and the access gate drops it unless `allowBots`. A reply in a thread keeps the
 * thread's root `ts` as `threadId`, so the answer goes back into the thread.
 */
export function inboundFromSlack(
  event: SlackMessageEvent,
  context: { teamId?: string | undefined; botUserId?: string | undefined; botId?: string | undefined; channelName?: string | undefined; files?: { token: string; hosts: readonly string[] } | undefined },
): InboundMessage | undefined {
  const isBot = event.bot_id !== undefined || event.subtype === 'bot_message';
  if (!USER_SUBTYPES.has(event.subtype) && event.subtype !== 'bot_message') return undefined;
  if (context.botUserId && event.user === context.botUserId) return undefined;
  if (context.botId && event.bot_id === context.botId) return undefined;
  // A bot's post may carry no user: the bot id stands for it (and is never an owner's id).
  const senderId = event.user ?? (isBot ? event.bot_id : undefined);
  if (!senderId) return undefined;
  const text = event.text ?? '';
  const isDm = event.channel_type === 'im' || (event.channel_type === undefined && event.channel.startsWith('D'));
  const inThread = event.thread_ts !== undefined && event.thread_ts !== event.ts;
  return {
    provider: 'slack',
    chatType: isDm ? 'dm' : inThread ? 'thread' : 'channel',
    guildId: context.teamId ?? event.team,
    channelId: event.channel,
    channelName: isDm ? undefined : context.channelName,
    threadId: inThread ? event.thread_ts : undefined,
    senderId,
    ...(isBot ? { senderIsBot: true } : {}),
    text,
    ...(context.files ? attachmentsOf(event.files, context.files) : {}),
    mentionsBot: event.type === 'app_mention' || (context.botUserId !== undefined && text.includes(`<@${context.botUserId}>`)),
    messageId: event.ts,
    receivedAt: Math.round(Number.parseFloat(event.ts) * 1000),
  };
}

/**
 * The files of a message, fetched when the turn runs with the bot token in an Authorization
 * header, from Slack's file host only (the URL is in the event; what an event carries is not
 * trusted to name a host the token may go to).
 */
function attachmentsOf(files: SlackFile[] | undefined, access: { token: string; hosts: readonly string[] }): Pick<InboundMessage, 'attachments'> {
  const list: InboundAttachment[] = (files ?? []).map((f) => {
    const url = f.url_private_download ?? f.url_private;
    const ref: AttachmentRef = { id: f.id, name: f.name ?? f.title ?? f.id, mimeType: f.mimetype, size: f.size, voice: f.subtype === 'slack_audio', ...(url ? { url } : {}) };
    return slackAttachment(ref, access, f.file_access);
  });
  return list.length > 0 ? { attachments: list } : {};
}

/**
 * A file on Slack's files host, fetched when its turn runs with the bot token, from Slack's
 * file hosts only — for a message this instance received, and for one another instance
 * recorded (the URL is data: it never chooses where the token goes).
 */
export function slackAttachment(ref: AttachmentRef, access: { token: string; hosts: readonly string[] }, fileAccess?: string): InboundAttachment {
  const url = ref.url;
  return {
    ...ref,
    download: (maxBytes, signal) =>
      url ? fetchAttachment(url, { allowedHosts: access.hosts, maxBytes, headers: { authorization: `Bearer ${access.token}` }, signal }) : Promise.resolve({ ok: false as const, error: `Slack gives no URL for it${fileAccess ? ` (${fileAccess})` : ''}` }),
  };
}

/** The fields of a Slack slash-command payload the adapter reads. */
export interface SlackCommandPayload {
  channel_id: string;
  channel_name?: string | undefined;
  user_id: string;
  user_name?: string | undefined;
  team_id?: string | undefined;
  trigger_id: string;
}

/**
 * A slash command as the message its typed form would be (`typedText`, e.g. `/exec ls`): same
 * channel, same sender, so the router gives it the same session, policy and owner check.
 * Slack sends no thread for slash commands; a `D…` channel (or `directmessage`) is the DM.
 */
export function inboundFromSlackCommand(command: SlackCommandPayload, typedText: string, channelName: string | undefined): InboundMessage {
  const isDm = command.channel_id.startsWith('D') || command.channel_name === 'directmessage';
  return {
    provider: 'slack',
    chatType: isDm ? 'dm' : 'channel',
    guildId: command.team_id,
    channelId: command.channel_id,
    channelName: isDm ? undefined : (channelName ?? command.channel_name),
    senderId: command.user_id,
    senderName: command.user_name,
    text: typedText,
    mentionsBot: false,
    messageId: command.trigger_id,
    receivedAt: Date.now(),
    invocationId: command.trigger_id,
  };
}

/**
 * What makes a delivery the same as an earlier one, as keys for the delivery log: the event's
 * id (Slack's retry of an unacknowledged event carries the same `event_id`) and, for a message,
 * its channel and `ts` (a mention in a channel arrives as `message` and as `app_mention`, two
 * event ids). Prefixed by platform and workspace, so one log serves every adapter. Empty for
 * what is not an Events API callback (clicks, commands, forms).
 */
export function deliveryKeys(body: unknown): string[] {
  if (typeof body !== 'object' || body === null) return [];
  const { event_id: eventId, team_id: teamId, event } = body as { event_id?: unknown; team_id?: unknown; event?: { type?: unknown; channel?: unknown; ts?: unknown } };
  if (typeof eventId !== 'string') return [];
  const team = typeof teamId === 'string' ? teamId : '';
  const keys = [`slack:event:${team}:${eventId}`];
  if ((event?.type === 'message' || event?.type === 'app_mention') && typeof event.channel === 'string' && typeof event.ts === 'string') {
    keys.push(`slack:message:${team}:${event.channel}:${event.ts}`);
  }
  return keys;
}

/** What of a Slack block action payload says where it was clicked. */
export interface SlackActionPlace {
  channel?: { id?: string | undefined; name?: string | undefined } | undefined;
  container?: { channel_id?: string | undefined; thread_ts?: string | undefined; message_ts?: string | undefined } | undefined;
  message?: { ts?: string | undefined; thread_ts?: string | undefined } | undefined;
  team?: { id?: string | undefined } | null | undefined;
  user?: { team_id?: string | undefined } | undefined;
}

/**
 * The conversation a button was clicked in, as Slack's (signed) payload reports it: the
 * channel, the team, the thread of the clicked message (a root message with replies carries
 * its own ts as thread_ts: it is not in a thread), a DM for a `D…` channel. Never read from
 * the button's action id or value.
 */
export function slackClickOrigin(body: SlackActionPlace): ClickOrigin | undefined {
  const channelId = body.channel?.id ?? body.container?.channel_id;
  if (!channelId) return undefined;
  const ts = body.message?.ts ?? body.container?.message_ts;
  const threadTs = body.message?.thread_ts ?? body.container?.thread_ts;
  const threadId = threadTs !== undefined && threadTs !== ts ? threadTs : undefined;
  const guildId = body.team?.id ?? body.user?.team_id;
  return { provider: 'slack', ...(guildId ? { guildId } : {}), channelId, ...(threadId !== undefined ? { threadId } : {}), dm: channelId.startsWith('D') };
}

/** A modal carries the origin of the click that opened it (the app's own private_metadata). */
export function originFromMetadata(raw: string | undefined): ClickOrigin | undefined {
  try {
    const meta = JSON.parse(raw ?? '') as { origin?: unknown };
    const o = meta.origin as Partial<ClickOrigin> | undefined;
    if (!o || o.provider !== 'slack' || typeof o.channelId !== 'string' || typeof o.dm !== 'boolean') return undefined;
    return { provider: 'slack', channelId: o.channelId, dm: o.dm, ...(typeof o.guildId === 'string' ? { guildId: o.guildId } : {}), ...(typeof o.threadId === 'string' ? { threadId: o.threadId } : {}) };
  } catch {
    return undefined;
  }
}
