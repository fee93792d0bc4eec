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
  /** For allow-always: what a grant would bind (tool + argument pattern). */
  grant?: { pattern: string; argPattern?: string };
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
