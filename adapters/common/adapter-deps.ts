import type { OnApprovalClick } from '../../src/gateway/types.js';
import type { ApprovalCardStore } from '../../src/gateway/approval-card-store.js';
import type { SecretPromptHandlers } from './secret-prompt.js';
import type { PairingClickHandler } from './pairing-card.js';
import type { UserQuestionHandlers } from './ask-user-prompt.js';
import type { PollStore } from '../../src/tools/core/message/polls.js';

/**
 * What the router gives a platform adapter besides its own `channels.<platform>` config.
 *
 * The click contract: an adapter acknowledges a button click at once (Discord: deferred update;
 * Slack: `ack()`), then calls `onApprovalClick({approvalId, decision, userId})` and acts on the
 * answer. `not-approver` and `not-found` get a private (ephemeral) reply and change nothing;
 * `resolved` edits every copy of the card to the outcome and who decided, without buttons;
 * `already-resolved` gets a private "already resolved: … by …" and brings stale copies to the
 * final state. The router need not call `approvals.update` after a click, but may: updates are
 * idempotent. It must call it when a request ends any other way (expiry, `/approve`, the CLI).
 */
export interface AdapterDeps {
  /** Called for every click on an approval button; the router decides and answers. */
  onApprovalClick: OnApprovalClick;
  /** Platform user ids of the approvers (`approvals.approvers.<platform>`, else the owners). */
  approvers: string[];
  /** `approvals.target`: the originating channel, each approver's DM, or both. */
  approvalsTarget: 'channel' | 'dm' | 'both';
  /** Where card copies are remembered; in memory when omitted. */
  cards?: ApprovalCardStore | undefined;
  /** The secrets tool's private prompt: button clicks and modal submissions (secret-prompt.ts); absent: no prompt offered. */
  secretPrompts?: SecretPromptHandlers | undefined;
  /** Clicks on the owners' pairing card (pairing-card.ts); absent: no card is offered. */
  pairingClicks?: PairingClickHandler | undefined;
  /** The ask_user tool's buttons and free-text form (ask-user-prompt.ts); absent: no questions offered. */
  userQuestions?: UserQuestionHandlers | undefined;
  /**
   * Deliveries every instance sharing the store has seen (a platform's retry may reach another
   * instance than its first try); absent: this process's memory alone decides (one instance).
   */
  deliveries?: DeliveryLog | undefined;
  /** Where polls posted as buttons keep their votes (Slack); absent: a Slack poll falls back to numbered reactions. */
  polls?: PollStore | undefined;
}

/** What a platform delivered before, across instances: true when none of `keys` was seen; every key is remembered. */
export interface DeliveryLog {
  firstTime(keys: readonly string[]): Promise<boolean>;
}

/** Where a card goes, from the request and `approvals.target`; DMs are deduplicated. */
export function cardDestinations(
  request: { provider: string; channelId?: string | undefined; threadId?: string | undefined; approvers?: readonly string[] | undefined },
  provider: string,
  deps: Pick<AdapterDeps, 'approvers' | 'approvalsTarget'>,
): { channel?: { channelId: string; threadId?: string | undefined }; dmUserIds: string[] } {
  const fromHere = request.provider === provider && request.channelId !== undefined;
  const wantsChannel = deps.approvalsTarget !== 'dm';
  const wantsDm = deps.approvalsTarget !== 'channel' || !fromHere;
  return {
    ...(wantsChannel && fromHere ? { channel: { channelId: request.channelId!, threadId: request.threadId } } : {}),
    // A request from another platform (or none) can only reach approvers here by DM.
    // A scope's own approvers (ids of the request's platform) replace the platform's list.
    // Only plain user ids can be DMed: a rule's `role:`, `usergroup:` or `group:` entry names no one inbox.
    dmUserIds: wantsDm ? [...new Set(request.approvers !== undefined ? (request.provider === provider ? request.approvers.filter(plainUserId) : []) : deps.approvers)] : [],
  };
}

const plainUserId = (entry: string): boolean => entry !== '*' && !entry.includes(':');
