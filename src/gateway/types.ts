import type { ApprovalRenderer } from '../approvals/types.js';
import type { ChatType } from '../policy/context.js';

/** A message from any platform, normalised by its adapter. */
export interface InboundMessage {
  provider: 'discord' | 'slack' | 'web';
  chatType: ChatType;
  /** Discord guild id or Slack team id. */
  guildId?: string | undefined;
  /** The conversation: guild channel, DM channel, or (for threads) the parent channel. */
  channelId: string;
  channelName?: string | undefined;
  threadId?: string | undefined;
  senderId: string;
  senderName?: string | undefined;
  text: string;
  mentionsBot: boolean;
  /** Platform message id, for replies and de-duplication. */
  messageId: string;
  receivedAt: number;
}

/** Where a reply goes: the same conversation (and thread) a message came from, or a user's DM. */
export interface ReplyTarget {
  provider: InboundMessage['provider'];
  channelId: string;
  threadId?: string | undefined;
  /** When set, deliver to this user's DM instead of channelId. */
  dmUserId?: string | undefined;
}

export interface OutboundMessage {
  text: string;
  /** Long output sent as a file where the platform supports it. */
  attachment?: { name: string; content: string } | undefined;
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
}
