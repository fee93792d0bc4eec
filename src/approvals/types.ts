/** The decisions a human can give; a request may narrow the set it offers. */
export const APPROVAL_DECISIONS = ['allow-once', 'allow-always', 'deny'] as const;
export type ApprovalDecision = (typeof APPROVAL_DECISIONS)[number];

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
  grant?: { pattern: string; argPattern?: string; ttlMs?: number };
  /** On expiry: deny (default). `allow` is honoured for hook (`tool`) approvals only. */
  timeoutBehavior?: 'deny' | 'allow';
}

/** A stored, addressable request as adapters render it. */
export interface ApprovalRequest extends Required<Pick<ApprovalRequestInput, 'kind' | 'tool' | 'title' | 'preview' | 'fullText'>> {
  id: string;
  agentId: string;
  sessionKey: string;
  provider: string;
  channelId?: string | undefined;
  threadId?: string | undefined;
  requesterId?: string | undefined;
  facts: Array<{ label: string; value: string }>;
  allowedDecisions: ApprovalDecision[];
  createdAt: number;
  expiresAt: number;
  status: 'pending' | ApprovalOutcome;
  decidedBy?: string | undefined;
  decidedAt?: number | undefined;
}

export interface ApprovalResolution {
  id: string;
  outcome: ApprovalOutcome;
  decidedBy?: string | undefined;
  /** Set when an allow-always decision stored a grant. */
  grantId?: string | undefined;
  /** The request's `timeoutBehavior` after the kind rule (only `tool` requests may allow). */
  timeoutBehavior?: 'deny' | 'allow' | undefined;
}

/** Given to a running tool call so it can wait for a human; resolves when decided or expired. */
export interface ApprovalRequester {
  request(input: ApprovalRequestInput, signal?: AbortSignal): Promise<ApprovalResolution>;
}

/** Adapters implement this to show a request and to update it when it ends. */
export interface ApprovalRenderer {
  provider: string;
  show(request: ApprovalRequest): Promise<void>;
  update(request: ApprovalRequest): Promise<void>;
}

/** Who decides: the platform the click came from and the user's platform id. */
export interface ApprovalActor {
  provider: string;
  userId: string;
}

/** Where a request comes from: the turn whose call is waiting. */
export interface ApprovalRequestContext {
  agentId: string;
  sessionKey: string;
  provider: string;
  channelId?: string | undefined;
  threadId?: string | undefined;
  requesterId?: string | undefined;
}

/**
 * What `resolve` answers. Only `resolved` changed anything; every other value leaves the
 * request as it was (a second click reports who decided what).
 */
export type ResolveResult =
  | { kind: 'resolved'; request: ApprovalRequest; grant?: Grant | undefined }
  | { kind: 'already-resolved'; request: ApprovalRequest; outcome: ApprovalOutcome; decidedBy?: string | undefined }
  | { kind: 'not-approver'; reason: string }
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
}

/** What `recover()` found on startup; every pending request lands in exactly one list. */
export interface RecoveryReport {
  /** Past expiry: closed as expired, renderers asked to update their cards. */
  expired: ApprovalRequest[];
  /** Still waited for by a live call (another process): expiry timer armed again. */
  rearmed: ApprovalRequest[];
  /** The waiting call died: closed as interrupted and reported to its session. */
  interrupted: ApprovalRequest[];
}
