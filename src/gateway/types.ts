import type { ClickOrigin } from '../approvals/click-origin.js';
import type { MessageActionPort } from '../tools/core/message/actions.js';
import type { PairingCardRequest } from './pairing-decision.js';
import type { StreamSurface } from './reply-stream.js';
import type { ApprovalDecision, ApprovalRenderer, ApprovalRequest } from '../approvals/types.js';
import type { AttachmentRef, InboundAttachment, InboundMessage } from '../policy/inbound.js';
import type { ShardState } from '../ops/adapter-text.js';
import type { SkillCommandSpec } from '../skills/commands.js';

// The inbound message is what the policy's session keys and scopes read; adapters' shard states
// are what ops reports. Both are defined there and re-exported as part of the adapter contract.
export type { AttachmentRef, InboundAttachment, InboundMessage } from '../policy/inbound.js';
export type { ShardState } from '../ops/adapter-text.js';

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

/** What a post became on the platform. */
export interface SentMessage {
  /** The platform's id of the first message posted (Discord snowflake, Slack ts). */
  messageId?: string | undefined;
}

/** What the router calls on an adapter; adapters know their platform and nothing of policy. */
export interface ChatAdapter {
  readonly provider: InboundMessage['provider'];
  start(onMessage: (message: InboundMessage) => Promise<void>): Promise<void>;
  /** Posts `message`; where the platform gives it, resolves to the id of the first message posted (conversations_turn anchors its wait there). */
  send(target: ReplyTarget, message: OutboundMessage): Promise<void | SentMessage>;
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
  /** Memberships a message does not carry (Slack user groups), looked up and cached by the adapter. */
  memberships?: MembershipResolver | undefined;
  /**
   * A file of a message another instance received (recorded as plain data), fetched again by
   * this adapter as one of its own messages' files: the same file hosts, token and limits.
   */
  attachmentFrom?(ref: AttachmentRef): InboundAttachment;
  /** `/new`: switches the conversation of `target` to a fresh session and returns its id (web chat). */
  newSession?(target: ReplyTarget): Promise<string>;
  /**
   * A reply streamed into `target` (`reply-stream.ts` drives it); undefined where this target
   * cannot be streamed into (a slash command's own answer). `recipient` is who asked (Slack's
   * native streams name the user and team they stream to).
   */
  streamTo?(target: ReplyTarget, recipient?: { userId?: string | undefined; teamId?: string | undefined }): StreamSurface | undefined;
  /**
   * The secrets tool's private prompt for `prompt.requesterId`, from the conversation `target`:
   * a button only they can use, opening a modal (Discord: in their DM; Slack: an ephemeral
   * message). Absent where the platform has none.
   */
  askSecret?(target: ReplyTarget, prompt: { id: string; name: string; reason: string; requesterId: string }): Promise<void>;
  /**
   * A new DM pairing request: a card with Approve/Deny buttons in each listed owner's DM. A
   * click is decided by `decidePairing` (pairing-decision.ts), the function `/pair` uses.
   * Absent where the platform has no such card (`/pair <code>` still works).
   */
  askPairing?(request: PairingCardRequest): Promise<void>;
  /**
   * The ask_user tool's questions, posted in the conversation `target`: one message per
   * question with a button per option and an "Other…" button opening a free-text form. Anyone
   * sees them; the app decides who may answer. Absent where the platform has none.
   */
  askUser?(target: ReplyTarget, prompt: UserQuestionPrompt): Promise<void>;
  /**
   * The message tool's actions on this platform (react, threads, pins, polls, edit/delete of the
   * bot's own messages, read, download): done only after the tool's gate, with the checks only
   * the platform can make. Absent where the platform has none (the web chat).
   */
  messageActions?: MessageActionPort | undefined;
}

/** One ask_user prompt as the adapters render it. */
export interface UserQuestionPrompt {
  /** The pending prompt's id (random; it names nothing). */
  id: string;
  /** The platform user who may answer (mentioned on the prompt). */
  requesterId: string;
  questions: Array<{ header: string; question: string; options: Array<{ label: string; description?: string | undefined }> }>;
}

/** A sender's memberships the platform does not send with the message (Slack user groups). */
export interface MembershipResolver {
  /** The user group ids of `userId`; undefined when they could not be looked up (never matches: fail closed). */
  usergroupsOf(userId: string, teamId?: string): Promise<readonly string[] | undefined>;
}

/** A button click on an approval card, as an adapter hands it to the router. */
export interface ApprovalClick {
  approvalId: string;
  decision: ApprovalDecision;
  /** Platform user id of whoever clicked. */
  userId: string;
  /** The clicker's Discord roles, from the interaction's member (a `role:` approver entry reads them). */
  roleIds?: readonly string[] | undefined;
  /** The clicker's Slack user groups, from the membership lookup (absent: `usergroup:` entries never match). */
  usergroupIds?: readonly string[] | undefined;
  /** "Deny with reason": what the approver typed. */
  reason?: string | undefined;
  /**
   * The conversation the click came from, as the platform reported the interaction (its
   * channel, guild/team, thread; a modal: the click that opened it). Every adapter sets it; a
   * click without it is refused.
   */
  origin?: ClickOrigin | undefined;
}

/**
 * What the router answers to a click. `resolved` and `already-resolved` carry the request in
 * its final state (status, decidedBy) so the adapter can edit every copy of the card;
 * `not-approver` changes nothing and the clicker gets a private refusal.
 */
export type ClickOutcome =
  | { kind: 'resolved'; request: ApprovalRequest }
  | { kind: 'already-resolved'; request: ApprovalRequest }
  /** `text`: why, when it is not the clicker (a click from a conversation the card is not in). */
  | { kind: 'not-approver'; text?: string | undefined }
  | { kind: 'not-found' };

export type OnApprovalClick = (click: ApprovalClick) => Promise<ClickOutcome>;

export type { ClickOrigin } from '../approvals/click-origin.js';
