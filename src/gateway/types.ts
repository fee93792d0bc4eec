import type { StreamSurface } from './reply-stream.js';
import type { ApprovalDecision, ApprovalRenderer, ApprovalRequest } from '../approvals/types.js';
import type { ChatType } from '../policy/context.js';
import type { SkillCommandSpec } from '../skills/commands.js';

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
 * A file a person posted, as the adapter describes it. `download` is the adapter's own fetch of
 * the platform's copy (Discord's CDN, Slack's files host with the bot token); it refuses more
 * than `maxBytes` and any host that is not the platform's (`attachment-fetch.ts`).
 */
export interface InboundAttachment {
  /** The platform's id of the file (cache key). */
  id: string;
  name: string;
  /** As the platform declares it; the bytes are sniffed again before anything trusts it. */
  mimeType?: string | undefined;
  /** Declared size in bytes, when the platform gives it. */
  size?: number | undefined;
  /** A voice message (Discord's voice-message flag, Slack's audio clip). */
  voice?: boolean | undefined;
  download(maxBytes: number, signal?: AbortSignal): Promise<{ ok: true; data: Buffer } | { ok: false; error: string }>;
}

/** A file Warden posts: an image, audio or document a tool made. */
export interface OutboundFile {
  name: string;
  mimeType: string;
  data: Buffer;
  /** Where it is saved in the workspace, named when the platform cannot take the file. */
  path?: string | undefined;
}

/** Where a reply goes: the same conversation (and thread) a message came from, or a user's DM. */
export interface ReplyTarget {
  provider: InboundMessage['provider'];
  channelId: string;
  threadId?: string | undefined;
  /** When set, deliver to this user's DM instead of channelId. */
  dmUserId?: string | undefined;
  /** A native command being answered; the adapter replies to it while it can, else posts to the channel. */
  invocationId?: string | undefined;
}

export interface OutboundMessage {
  text: string;
  /** Long output sent as a file where the platform supports it. */
  attachment?: { name: string; content: string } | undefined;
  /** Files to post with the message (generated images, speech, screenshots). */
  files?: OutboundFile[] | undefined;
  /**
   * The approval whose outcome this is: adapters post it linked to that card where the card is
   * in the same conversation (Discord: a reply to it; Slack: in its thread; web: under it).
   */
  linkedApproval?: string | undefined;
}

/** What the router calls on an adapter; adapters know their platform and nothing of policy. */
export interface ChatAdapter {
  readonly provider: InboundMessage['provider'];
  start(onMessage: (message: InboundMessage) => Promise<void>): Promise<void>;
  send(target: ReplyTarget, message: OutboundMessage): Promise<void>;
  /** Shows a typing/working indicator until the returned function is called. */
  typing(target: ReplyTarget): () => void;
  approvals: ApprovalRenderer;
  stop(): Promise<void>;
  /** Whether the platform connection is up now (`/readyz`); an adapter without it counts as up once started. */
  connected?(): boolean;
  /** Its gateway connections, for a platform that runs several (Discord shards); for `/status`. */
  shards?(): readonly ShardState[];
  /** Follows the agent's skill commands: native registration, the names a native command may carry. */
  setSkillCommands?(specs: readonly SkillCommandSpec[]): void;
  /** `/new`: switches the conversation of `target` to a fresh session and returns its id (web chat). */
  newSession?(target: ReplyTarget): Promise<string>;
  /**
   * A reply streamed into `target` (`reply-stream.ts` drives it); undefined where this target
   * cannot be streamed into (a slash command's own answer). `recipient` is who asked (Slack's
   * native streams name the user and team they stream to).
   */
  streamTo?(target: ReplyTarget, recipient?: { userId?: string | undefined; teamId?: string | undefined }): StreamSurface | undefined;
}

/** One gateway connection of a sharded platform, as `/status` shows it. */
export interface ShardState {
  id: number;
  /** discord.js's status, lower-cased: `ready`, `resuming`, `connecting`, `disconnected`, … */
  status: string;
  /** Last heartbeat round trip; undefined before the first. */
  pingMs: number | undefined;
  /** Times it lost its connection since the adapter started. */
  reconnects: number;
}

/** A button click on an approval card, as an adapter hands it to the router. */
export interface ApprovalClick {
  approvalId: string;
  decision: ApprovalDecision;
  /** Platform user id of whoever clicked. */
  userId: string;
}

/**
 * What the router answers to a click. `resolved` and `already-resolved` carry the request in
 * its final state (status, decidedBy) so the adapter can edit every copy of the card;
 * `not-approver` changes nothing and the clicker gets a private refusal.
 */
export type ClickOutcome =
  | { kind: 'resolved'; request: ApprovalRequest }
  | { kind: 'already-resolved'; request: ApprovalRequest }
  | { kind: 'not-approver' }
  | { kind: 'not-found' };

export type OnApprovalClick = (click: ApprovalClick) => Promise<ClickOutcome>;
