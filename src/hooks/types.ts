import type { ApprovalDecision } from '../approvals/types.js';
import type { ToolContent } from '../tools/types.js';

/** The typed hook names (semantics §5; a subset of OpenClaw's 42). */
export const HOOK_NAMES = [
  'before_prompt_build',
  'before_tool_call',
  'after_tool_call',
  'tool_result_persist',
  'message_received',
  'message_sending',
  'message_sent',
  'session_start',
  'session_end',
  'agent_end',
  'subagent_spawned',
  'subagent_ended',
  'gateway_start',
  'gateway_stop',
] as const;
export type HookName = (typeof HOOK_NAMES)[number];

/** Handlers run one after another by priority and their results merge. */
export const MODIFYING_HOOKS = ['before_prompt_build', 'before_tool_call', 'message_sending'] as const;
/** Handlers run synchronously, in priority order; a handler returning a Promise is ignored. */
export const SYNC_HOOKS = ['tool_result_persist'] as const;
export type ModifyingHookName = (typeof MODIFYING_HOOKS)[number];
export type SyncHookName = (typeof SYNC_HOOKS)[number];
export type VoidHookName = Exclude<HookName, ModifyingHookName | SyncHookName>;

/** Who is calling and where; every tool hook event carries it. */
export interface HookCallSite {
  agentId: string;
  sessionKey: string;
  provider: string;
  senderId?: string | undefined;
  runId?: string | undefined;
}

/** What `before_tool_call` may ask of a human before the call runs. */
export interface HookApprovalRequest {
  title: string;
  description: string;
  severity?: 'info' | 'warning' | 'critical';
  /** Narrows allow-once / allow-always / deny. */
  allowedDecisions?: ApprovalDecision[];
  /** Default `approvals.hook.timeoutSec` (120 s); at most 600 s. */
  timeoutMs?: number;
  /** On expiry: deny (default) or, for hook approvals only, allow. */
  timeoutBehavior?: 'deny' | 'allow';
  /** Replaces "Approval timed out" in the result the model reads. */
  timeoutReason?: string;
}

export interface BeforeToolCallEvent extends HookCallSite {
  toolName: string;
  toolCallId: string;
  params: Record<string, unknown>;
}

export interface BeforeToolCallResult {
  /** Shallow-merged over the call's params (the last handler that sets it wins). */
  params?: Record<string, unknown>;
  /** Stops the chain; the call does not run. */
  block?: boolean;
  blockReason?: string;
  /** The first handler that asks wins; later params are ignored once asked. */
  requireApproval?: HookApprovalRequest;
}

export interface AfterToolCallEvent extends HookCallSite {
  toolName: string;
  toolCallId: string;
  params: Record<string, unknown>;
  /** What the model will read (already normalised). */
  content: ToolContent[];
  isError: boolean;
  error?: string | undefined;
  durationMs: number;
}

/** The tool-result message as it is about to be written to the transcript. */
export interface PersistedToolMessage {
  role: 'tool';
  tool: string;
  toolCallId: string;
  content: ToolContent[];
  details?: unknown;
  isError: boolean;
}

export interface ToolResultPersistEvent {
  toolName: string;
  toolCallId: string;
  message: PersistedToolMessage;
  /** True for results Warden made up (blocked, denied, expired), false for a real execution. */
  isSynthetic: boolean;
}

export interface BeforePromptBuildEvent {
  agentId: string;
  sessionKey: string;
  provider: string;
  /** Tool ids on the surface before this hook. */
  tools: string[];
  prompt?: string | undefined;
}

export interface BeforePromptBuildResult {
  systemPrompt?: string;
  prependContext?: string;
  appendContext?: string;
  /** Restricts the turn's callable tools; lists from several handlers intersect. */
  toolsAllow?: string[];
}

export interface MessageEvent {
  provider: string;
  sessionKey?: string | undefined;
  channelId?: string | undefined;
  threadId?: string | undefined;
  senderId?: string | undefined;
  text: string;
}

export interface MessageSendingResult {
  text?: string;
  /** Drops the message; later handlers do not run. */
  cancel?: boolean;
}

export interface MessageSentEvent extends MessageEvent {
  success: boolean;
  error?: string | undefined;
}

export interface SessionEvent {
  agentId: string;
  sessionKey: string;
  reason?: string | undefined;
}

export interface AgentEndEvent {
  agentId: string;
  sessionKey: string;
  success: boolean;
  error?: string | undefined;
  durationMs: number;
}

export interface SubagentEvent {
  parentSessionKey: string;
  childSessionKey: string;
  agentId: string;
  outcome?: string | undefined;
}

export interface GatewayEvent {
  reason?: string | undefined;
}

/** Event and result type of each hook. */
export interface HookSignatures {
  before_prompt_build: { event: BeforePromptBuildEvent; result: BeforePromptBuildResult | void };
  before_tool_call: { event: BeforeToolCallEvent; result: BeforeToolCallResult | void };
  after_tool_call: { event: AfterToolCallEvent; result: void };
  tool_result_persist: { event: ToolResultPersistEvent; result: { message?: PersistedToolMessage } | void };
  message_received: { event: MessageEvent; result: void };
  message_sending: { event: MessageEvent; result: MessageSendingResult | void };
  message_sent: { event: MessageSentEvent; result: void };
  session_start: { event: SessionEvent; result: void };
  session_end: { event: SessionEvent; result: void };
  agent_end: { event: AgentEndEvent; result: void };
  subagent_spawned: { event: SubagentEvent; result: void };
  subagent_ended: { event: SubagentEvent; result: void };
  gateway_start: { event: GatewayEvent; result: void };
  gateway_stop: { event: GatewayEvent; result: void };
}

export type HookHandler<K extends HookName> = (
  event: HookSignatures[K]['event'],
) => K extends SyncHookName ? HookSignatures[K]['result'] : HookSignatures[K]['result'] | Promise<HookSignatures[K]['result']>;

export interface HookOptions {
  /** Higher runs first; ties keep registration order. Default 0. */
  priority?: number;
  /** Per-handler limit; a timeout counts as a handler error. */
  timeoutMs?: number;
  /** Only for before_tool_call / after_tool_call: canonical tool names this handler sees. */
  toolMatcher?: readonly string[];
  /** Who registered it (a plugin id); stamped on approvals it requests, used in logs. */
  owner?: string;
}

/** Default per-handler timeouts in ms (reference §5.5); void hooks not listed there get 30 s. */
export const DEFAULT_HOOK_TIMEOUT_MS: Readonly<Record<HookName, number>> = {
  before_prompt_build: 15_000,
  before_tool_call: 15_000,
  message_sending: 15_000,
  tool_result_persist: 0,
  after_tool_call: 30_000,
  message_received: 30_000,
  message_sent: 30_000,
  session_start: 30_000,
  session_end: 30_000,
  agent_end: 30_000,
  subagent_spawned: 30_000,
  subagent_ended: 30_000,
  gateway_start: 30_000,
  gateway_stop: 5_000,
};
