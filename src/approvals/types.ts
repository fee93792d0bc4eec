import type { ApprovalVia, ClickOrigin } from './click-origin.js';

export type { ApprovalVia } from './click-origin.js';
import type { BoundFile } from '../exec/content-binding.js';
import type { TurnContext } from '../policy/context.js';

/** The decisions a human can give; a request may narrow the set it offers. */
export const APPROVAL_DECISIONS = ['allow-once', 'allow-conversation', 'allow-timed', 'allow-always', 'deny'] as const;
export type ApprovalDecision = (typeof APPROVAL_DECISIONS)[number];

/** What a request offers by default when it can store a grant (scoped grants are asked for: `scopedGrants`). */
export const DEFAULT_GRANT_DECISIONS: readonly ApprovalDecision[] = ['allow-once', 'allow-always', 'deny'];

/** Decisions that store a grant: until revoked, for this conversation, or for `approvals.timedGrantSec`. */
export const GRANT_DECISIONS: readonly ApprovalDecision[] = ['allow-always', 'allow-conversation', 'allow-timed'];

/** Decisions that let the call run. */
export const isAllow = (d: string): boolean => d === 'allow-once' || (GRANT_DECISIONS as readonly string[]).includes(d);

/** How a request ended: a decision, or no decision in time, or its turn went away. */
export type ApprovalOutcome = ApprovalDecision | 'expired' | 'cancelled' | 'interrupted';

export type ApprovalKind = 'exec' | 'tool';

/** What a tool (exec) or the hook chain asks a human to decide. */
export interface ApprovalRequestInput {
  kind: ApprovalKind;
  tool: string;
  /** One line for the card title. */
  title: string;
  /** Short argument preview (the card body); the full text is kept separately. */
  preview: string;
  /** The complete command or arguments, never truncated silently. */
  fullText: string;
  /** Labelled facts shown on the card: resolved executables, why it missed the allowlist, … */
  facts?: Array<{ label: string; value: string }>;
  allowedDecisions?: ApprovalDecision[];
  /** Overrides the configured expiry for this kind. */
  timeoutMs?: number;
  /**
   * For allow-always: what a grant would bind (tool + argument pattern, `*`-globs) and for how
   * long (no ttlMs = until revoked). Without it and without explicit `allowedDecisions`,
   * allow-always is not offered (a button that silently acts as allow-once is worse than
   * none); a caller that persists allow-always itself (exec allowlist) lists it explicitly.
   */
  grant?: { pattern: string; argPattern?: string; ttlMs?: number; boundFiles?: BoundFile[]; ruleKey?: string };
  /**
   * Besides allow-always, offer "allow for this conversation" and "allow for <timedGrantSec>"
   * (both store a grant bound like allow-always's, scoped to the session or the time).
   */
  scopedGrants?: boolean;
  /** A configured rule asked (`approvals.rules[i]`): its people, quorum, escalation and risk. */
  rule?: ApprovalRuleAsk | undefined;
  /** On expiry: deny (default). `allow` is honoured for hook (`tool`) approvals only. */
  timeoutBehavior?: 'deny' | 'allow';
  /**
   * What the approver's decision rests on besides the text (exec: the content of the scripts
   * the command runs), as JSON. It comes back with the decision (`ApprovalResolution.shown`),
   * so the caller can refuse a call whose inputs changed while the card waited.
   */
  shown?: unknown;
}

/** What a configured rule adds to a request. */
export interface ApprovalRuleAsk {
  /** `approvals.rules[2]`. */
  path: string;
  /** Who may decide (people list: ids, `role:`, `usergroup:`, `group:`); absent: the usual approvers. */
  approvers?: string[] | undefined;
  /** Distinct approvers needed to allow; the requester never counts. */
  quorum: number;
  escalateAfterSec?: number | undefined;
  escalateTo?: string[] | undefined;
}

/** One approver's vote towards a request's quorum. */
export interface ApprovalVote {
  by: string;
  at: number;
}

/** A stored, addressable request as adapters render it. */
export interface ApprovalRequest extends Required<Pick<ApprovalRequestInput, 'kind' | 'tool' | 'title' | 'preview' | 'fullText'>> {
  id: string;
  agentId: string;
  sessionKey: string;
  provider: string;
  channelId?: string | undefined;
  threadId?: string | undefined;
  /** The asking turn's Discord guild / Slack team: a click must come from the same one (click-origin.ts). */
  guildId?: string | undefined;
  requesterId?: string | undefined;
  /**
   * Who may decide this request when a guild, team or channel scope names its own approvers
   * (`approvals.approvers` there, fixed when asked); absent: the platform's approvers decide.
   */
  approvers?: string[] | undefined;
  /** The requester's display name, for the card and `/approvals`. */
  requesterName?: string | undefined;
  /** Who made the call: the agent in a turn for the requester, or the requester by a command (`/exec`). */
  via?: 'agent' | 'command' | undefined;
  facts: Array<{ label: string; value: string }>;
  allowedDecisions: ApprovalDecision[];
  createdAt: number;
  expiresAt: number;
  status: 'pending' | ApprovalOutcome;
  decidedBy?: string | undefined;
  decidedAt?: number | undefined;
  /** The rule that asked (`approvals.rules[2]`), when one did. */
  rule?: string | undefined;
  /** Approvers needed to allow (1 when absent). */
  quorum?: number | undefined;
  /** Votes to allow so far, in order (quorum requests). */
  votes?: ApprovalVote[] | undefined;
  /** Why an approver denied, as they typed it ("Deny with reason"). */
  denyReason?: string | undefined;
  /** When the card was escalated to `escalateTo` (undecided after `escalateAfterSec`). */
  escalatedAt?: number | undefined;
  /** Where it was escalated to (the rule's `escalateTo`). */
  escalateTo?: string[] | undefined;
  /** When it escalates, if it still waits then. */
  escalateAt?: number | undefined;
  /** How long an "Allow for …" grant of this card lasts (when the card offers one). */
  timedGrantSec?: number | undefined;
}

export interface ApprovalResolution {
  id: string;
  outcome: ApprovalOutcome;
  decidedBy?: string | undefined;
  /** Set when an allow-always decision stored a grant. */
  grantId?: string | undefined;
  /** The request's `timeoutBehavior` after the kind rule (only `tool` requests may allow). */
  timeoutBehavior?: 'deny' | 'allow' | undefined;
  /** The request's `shown` as stored when it was asked. */
  shown?: unknown;
  /** The approver's reason for a deny, when they gave one. */
  denyReason?: string | undefined;
}

/** No decision within `approvals.waitSec`: the call goes on without its turn once one comes. */
export interface PendingApproval {
  id: string;
  pending: true;
  expiresAt: number;
}

export const isPending = (r: ApprovalResolution | PendingApproval): r is PendingApproval => 'pending' in r && r.pending === true;

/** Given to a running tool call so it can wait for a human; resolves when decided or expired. */
export interface ApprovalRequester {
  request(input: ApprovalRequestInput, signal?: AbortSignal): Promise<ApprovalResolution>;
  /**
   * Present when the call may go on without its turn (a deferred call, see `DeferredCallSpec`):
   * waits `approvals.waitSec` for a decision, then answers `pending` and the call is resumed
   * by whoever sees the decision. Callers prefer it when present.
   */
  requestOrDefer?(input: ApprovalRequestInput, signal?: AbortSignal): Promise<ApprovalResolution | PendingApproval>;
}

/**
 * A tool call that waits for an approval without holding its turn: what is needed to run it
 * (or report its refusal) once an approver decides, in any process, after a restart too. The
 * call runs as the original requester under the original turn's context, with the surface the
 * turn had as its ceiling.
 */
export interface DeferredCallSpec {
  tool: string;
  /** The arguments as the model (or the command) gave them; the whole call chain runs again on them. */
  args: Record<string, unknown>;
  toolCallId: string;
  /** `turn`: the result is posted and the agent gets a follow-up turn; `command` (`/exec`): posted only. */
  origin: 'turn' | 'command';
  /** The original turn's policy context (conversation, sender, owner status, model, ceiling). */
  turn: TurnContext;
  /** The tool ids on the original turn's surface: nothing outside them runs later. */
  surface: string[];
}

export type DeferredCallState = 'waiting' | 'deferred' | 'running' | 'done' | 'lost';

/** A stored deferred call. `waiting`: its turn still waits (`approvals.waitSec`); `deferred`: it waits for a decision alone. */
export interface DeferredCall extends DeferredCallSpec {
  approvalId: string;
  agentId: string;
  sessionKey: string;
  state: DeferredCallState;
  /** The process holding it: the waiting turn's (`waiting`) or the runner's (`running`). */
  owner?: { instance: string; pid: number } | undefined;
  createdAt: number;
  claimedAt?: number | undefined;
  finishedAt?: number | undefined;
  /** How it ended, for `done` and `lost`. */
  result?: { outcome: string; text: string } | undefined;
}

/** Adapters implement this to show a request and to update it when it ends. */
export interface ApprovalRenderer {
  provider: string;
  show(request: ApprovalRequest): Promise<void>;
  update(request: ApprovalRequest): Promise<void>;
  /** Posts the card (or a DM) to the request's `escalateTo`, linking the original. */
  escalate?(request: ApprovalRequest): Promise<void>;
}

/**
 * Who decides: the platform the click came from, the user's platform id, and the memberships
 * the platform reported with the click (Discord roles from the interaction's member; Slack
 * user groups from the membership lookup). Absent memberships never match a `role:` entry.
 */
export interface ApprovalActor {
  provider: string;
  userId: string;
  roleIds?: readonly string[] | undefined;
  usergroupIds?: readonly string[] | undefined;
  /**
   * How the decision arrived (click-origin.ts, `actorOriginRefusal`): a typed `/approve`
   * decides by id wherever an approver types it; a button or form is checked against the card's
   * places, and one whose adapter reported no conversation (`origin: null`) is refused. Required,
   * and read fail-closed: an actor without it is taken for a click with no origin.
   */
  via: ApprovalVia;
}


/** Extra input of a decision: the reason typed into "Deny with reason". */
export interface DecisionInput {
  reason?: string | undefined;
}

/** Where a request comes from: the turn whose call is waiting. */
export interface ApprovalRequestContext {
  agentId: string;
  sessionKey: string;
  provider: string;
  channelId?: string | undefined;
  threadId?: string | undefined;
  /** Where the call was made, for a scope's own approvers (`scopedApprovers`). */
  guildId?: string | undefined;
  guildName?: string | undefined;
  channelName?: string | undefined;
  requesterId?: string | undefined;
  requesterName?: string | undefined;
  via?: 'agent' | 'command' | undefined;
}

/**
 * What `resolve` answers. Only `resolved` changed anything; every other value leaves the
 * request as it was (a second click reports who decided what).
 */
export type ResolveResult =
  | { kind: 'resolved'; request: ApprovalRequest; grant?: Grant | undefined }
  /** A vote towards the quorum was recorded; the request still waits for more. */
  | { kind: 'counted'; request: ApprovalRequest }
  | { kind: 'already-resolved'; request: ApprovalRequest; outcome: ApprovalOutcome; decidedBy?: string | undefined }
  /** `wrongConversation`: the clicker may decide, but not from where the click came. */
  | { kind: 'not-approver'; reason: string; wrongConversation?: boolean | undefined }
  | { kind: 'not-found'; id: string }
  | { kind: 'decision-not-allowed'; decision: string; allowed: ApprovalDecision[] };

/** An allow-always grant: calls of `tool` by `agentId` matching the patterns skip the human. */
export interface Grant {
  id: string;
  agentId: string;
  tool: string;
  /** `*`-glob over the call's target (the tool name, an executable path, …); `\*` is a literal star. */
  pattern: string;
  /** `*`-glob over the call's argument text; undefined = any arguments. */
  argPattern?: string | undefined;
  approvalId?: string | undefined;
  createdBy: string;
  createdAt: number;
  expiresAt?: number | undefined;
  revokedAt?: number | undefined;
  revokedBy?: string | undefined;
  lastUsedAt?: number | undefined;
  /** "Allow for this conversation": the grant covers calls in this session only. */
  sessionKey?: string | undefined;
  /** The rule the grant was given under (its key): it covers calls under that rule only; absent: calls under no rule. */
  ruleKey?: string | undefined;
  /**
   * The files the approved call's arguments named, by content (undefined: a grant from before
   * binding, which covers only calls that name no file). A call whose files differ asks again.
   */
  boundFiles?: BoundFile[] | undefined;
}

/** What `recover()` found on startup; every pending request lands in exactly one list. */
export interface RecoveryReport {
  /** Past expiry: closed as expired, renderers asked to update their cards. */
  expired: ApprovalRequest[];
  /** Still waited for by a live call (another process): expiry timer armed again. */
  rearmed: ApprovalRequest[];
  /** The waiting call died: closed as interrupted and reported to its session. */
  interrupted: ApprovalRequest[];
  /** Its call was deferred (or its turn died while waiting): still pending and decidable, cards refreshed. */
  deferred: ApprovalRequest[];
}

// The approval events on the diagnostics bus (events/events.ts knows no feature; features add theirs).
declare module '../events/events.js' {
  interface WardenEvents {
    'approval.requested': { request: ApprovalRequest };
    'approval.resolved': { request: ApprovalRequest };
    /** One approver's vote was counted towards a quorum; the request still waits. */
    'approval.counted': { request: ApprovalRequest };
    /** Undecided after its rule's `escalateAfterSec`: the card went to `escalateTo` too. */
    'approval.escalated': { request: ApprovalRequest };
    'approval.expired': { request: ApprovalRequest };
    /** No decision within `approvals.waitSec`: the call's turn went on, the call waits alone. */
    'approval.deferred': { request: ApprovalRequest };
    /** A request left `pending`, however (decision, expiry, cancel, interruption, another process). */
    'approval.closed': { request: ApprovalRequest };
    /**
     * The call waiting for this request died (its process went away). The router reports it to
     * `request.sessionKey`; the request is closed and the call did not run.
     */
    'approval.interrupted': { request: ApprovalRequest; message: string };
  }
}
