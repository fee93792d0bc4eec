import type { ChatType } from './context.js';

/** A message from any platform, normalised by its adapter. */
export interface InboundMessage {
  provider: 'discord' | 'slack' | 'web';
  chatType: ChatType;
  /** Discord guild id or Slack team id. */
  guildId?: string | undefined;
  /** The guild's display name, when the platform gives it; a guild scope key may be its slug. */
  guildName?: string | undefined;
  /** The conversation: guild channel, DM channel, or (for threads) the parent channel. */
  channelId: string;
  channelName?: string | undefined;
  threadId?: string | undefined;
  senderId: string;
  senderName?: string | undefined;
  /**
   * A bot, an app or a webhook wrote it (Discord `author.bot` or a webhook id; Slack `bot_id`).
   * Dropped by the access gate unless `allowBots`; never an owner.
   */
  senderIsBot?: boolean | undefined;
  /** Discord role ids the sender holds in the guild (role bindings). */
  senderRoles?: string[] | undefined;
  text: string;
  /** Files posted with the message; fetched only when its turn runs. */
  attachments?: InboundAttachment[] | undefined;
  mentionsBot: boolean;
  /** Platform message id, for replies and de-duplication. */
  messageId: string;
  receivedAt: number;
  /** Set for a native slash command: the adapter's handle to answer that invocation itself. */
  invocationId?: string | undefined;
  /**
   * A fresh session the user started in this DM with `/new` (the web chat): the session key is
   * the DM's key plus `:session:<sessionId>`. Absent: the DM's first session.
   */
  sessionId?: string | undefined;
}

/**
 * A file a person posted, as plain data: what a message's record on a shared store carries so
 * that another instance can run it (`gateway/forwarded.ts`) and fetch the file again through its
 * own adapter (`ChatAdapter.attachmentFrom`), under the same host, size and type checks.
 */
export interface AttachmentRef {
  /** The platform's id of the file (cache key). */
  id: string;
  name: string;
  /** As the platform declares it; the bytes are sniffed again before anything trusts it. */
  mimeType?: string | undefined;
  /** Declared size in bytes, when the platform gives it. */
  size?: number | undefined;
  /** A voice message (Discord's voice-message flag, Slack's audio clip). */
  voice?: boolean | undefined;
  /**
   * Where the platform serves it (Discord's CDN, Slack's files host), as the event gave it: only
   * ever fetched through the adapter's `download`, which refuses any other host. May expire.
   */
  url?: string | undefined;
}

/**
 * A file a person posted, as the adapter describes it. `download` is the adapter's own fetch of
 * the platform's copy (Discord's CDN, Slack's files host with the bot token); it refuses more
 * than `maxBytes` and any host that is not the platform's (`attachment-fetch.ts`).
 */
export interface InboundAttachment extends AttachmentRef {
  download(maxBytes: number, signal?: AbortSignal): Promise<{ ok: true; data: Buffer } | { ok: false; error: string }>;
}
