import type { ApprovalDecision } from '../approvals/types.js';
import type { ToolContent } from '../models/types.js';

/**
 * OpenClaw's 42 typed hook names (`src/plugins/hook-types.ts` of openclaw 2026.9.6). A plugin
 * may register any of them; Warden emits those in HOOK_NAMES and reports the others as
 * registered but never emitted (NOT_EMITTED says why).
 */
export const OPENCLAW_HOOK_NAMES = [
  'before_model_resolve', 'agent_turn_prepare', 'before_prompt_build', 'before_agent_reply', 'model_call_started',
  'model_call_ended', 'llm_input', 'llm_output', 'before_agent_finalize', 'agent_end', 'before_compaction',
  'after_compaction', 'before_reset', 'inbound_claim', 'channel_pairing_requested', 'message_received',
  'message_sending', 'reply_payload_sending', 'message_sent', 'before_tool_call', 'after_tool_call',
  'tool_result_persist', 'before_message_write', 'session_start', 'session_end', 'subagent_delivery_target',
  'subagent_spawned', 'subagent_progress', 'subagent_ended', 'gateway_start', 'gateway_stop',
  'heartbeat_prompt_contribution', 'cron_reconciled', 'cron_changed', 'skill_proposal_evaluate',
  'skill_proposal_changed', 'skill_changed', 'before_dispatch', 'reply_dispatch', 'before_install',
  'before_agent_run', 'resolve_exec_env',
] as const;
export type OpenClawHookName = (typeof OPENCLAW_HOOK_NAMES)[number];

/** The hooks Warden emits (semantics §5), with OpenClaw's names and payloads. */
export const HOOK_NAMES = [
  'before_model_resolve',
  'before_prompt_build',
  'model_call_started',
  'model_call_ended',
  'agent_end',
  'before_compaction',
  'after_compaction',
  'before_tool_call',
  'after_tool_call',
  'tool_result_persist',
  'message_received',
  'message_sending',
  'message_sent',
  'session_start',
  'session_end',
  'subagent_spawned',
  'subagent_ended',
  'gateway_start',
  'gateway_stop',
  'cron_changed',
  'skill_changed',
  'resolve_exec_env',
] as const;
export type HookName = (typeof HOOK_NAMES)[number];

/** OpenClaw hooks with no place in Warden, and why; registering one is a warning, not an error. */
export const NOT_EMITTED: Readonly<Record<Exclude<OpenClawHookName, HookName>, string>> = {
  agent_turn_prepare: 'Warden has no turn-preparation phase apart from before_prompt_build (use its prependContext)',
  before_agent_reply: 'no plugin answers in place of the agent',
  llm_input: 'use model_call_started',
  llm_output: 'use model_call_ended or agent_end',
  before_agent_finalize: 'a turn ends when the model answers; there is no revision pass',
  before_reset: 'Warden has no session reset',
  inbound_claim: 'every routed message goes to its session; plugins do not claim conversations',
  channel_pairing_requested: 'Warden has no pairing: owners and approvers are platform ids in the config',
  reply_payload_sending: 'replies are text; use message_sending',
  before_message_write: 'use tool_result_persist for tool results; other transcript entries are not rewritten',
  subagent_delivery_target: 'subagent results always go back to the session that spawned them',
  subagent_progress: 'use subagent_spawned and subagent_ended',
  heartbeat_prompt_contribution: 'Warden has no heartbeat runs',
  cron_reconciled: 'use cron_changed',
  skill_proposal_evaluate: 'Warden has no skill workshop',
  skill_proposal_changed: 'Warden has no skill workshop',
  before_dispatch: 'no plugin dispatches a message in place of the router',
  reply_dispatch: 'no plugin dispatches a reply in place of the router',
  before_install: 'Warden installs nothing; plugins are npm packages or folders the operator names',
  before_agent_run: 'use before_tool_call and tool policy to gate what a turn can do',
};

/** Handlers run one after another by priority and their results merge. */
export const MODIFYING_HOOKS = ['before_model_resolve', 'before_prompt_build', 'before_tool_call', 'message_sending', 'resolve_exec_env'] as const;
/** Handlers run synchronously, in priority order; a handler returning a Promise is ignored. */
export const SYNC_HOOKS = ['tool_result_persist'] as const;
export type ModifyingHookName = (typeof MODIFYING_HOOKS)[number];
export type SyncHookName = (typeof SYNC_HOOKS)[number];
export type VoidHookName = Exclude<HookName, ModifyingHookName | SyncHookName>;
/** Hooks whose handler errors and timeouts block what they guard (reference §5.5); every other hook fails open. */
export const FAIL_CLOSED_HOOKS: readonly HookName[] = ['before_tool_call'];
/**
 * Hooks whose result can stop or hold what Warden is about to do: before_tool_call blocks a call
 * or asks an approver, message_sending cancels a message. A plugin that declares one (or declares
 * nothing) is a policy plugin: if it cannot load, Warden does not start without it.
 */
export const POLICY_HOOKS: readonly HookName[] = ['before_tool_call', 'message_sending'];
/** Hooks that inject text into the model's prompt (`plugins.entries.<id>.hooks.allowPromptInjection: false` refuses them). */
export const PROMPT_INJECTION_HOOKS: readonly HookName[] = ['before_prompt_build'];
/** Hooks that see a conversation's messages; a plugin needs `hooks.allowConversationAccess: true` (OpenClaw's rule for non-bundled plugins). */
export const CONVERSATION_HOOKS: readonly HookName[] = ['before_model_resolve', 'before_prompt_build', 'agent_end'];

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
  /** The user's message of this run (empty for a command). */
  prompt: string;
  /** The session's messages prepared for this run (model-facing shape). */
  messages: unknown[];
  agentId: string;
  sessionKey: string;
  provider: string;
  /** Tool ids on the surface before this hook. */
  tools: string[];
}

export interface BeforePromptBuildResult {
  /** Replaces Warden's persona and rules (the untrusted-content rule and the tool list stay). */
  systemPrompt?: string;
  /** Put before / after the user's message of this run. */
  prependContext?: string;
  appendContext?: string;
  /** Put before / after the system prompt. */
  prependSystemContext?: string;
  appendSystemContext?: string;
  /** Restricts the turn's callable tools; lists from several handlers intersect. */
  toolsAllow?: string[];
}

export interface BeforeModelResolveEvent {
  /** The user's message of this run. */
  prompt: string;
  attachments?: Array<{ kind: 'image' | 'video' | 'audio' | 'document' | 'other'; mimeType?: string }>;
}

export interface BeforeModelResolveResult {
  /** A model id (`gpt-5-mini`) or a whole `provider/model` ref. */
  modelOverride?: string;
  providerOverride?: string;
}

export interface ModelCallStartedEvent {
  runId: string;
  callId: string;
  sessionKey?: string | undefined;
  provider: string;
  model: string;
  api?: string | undefined;
}

export interface ModelCallEndedEvent extends ModelCallStartedEvent {
  durationMs: number;
  outcome: 'completed' | 'error';
  errorCategory?: string | undefined;
  failureKind?: 'aborted' | 'timeout' | undefined;
}

export interface AgentEndEvent {
  runId?: string | undefined;
  /** The messages this run added to the transcript. */
  messages: unknown[];
  success: boolean;
  error?: string | undefined;
  durationMs?: number | undefined;
}

export interface BeforeCompactionEvent {
  messageCount: number;
  compactingCount?: number | undefined;
  tokenCount?: number | undefined;
}

export interface AfterCompactionEvent {
  messageCount: number;
  tokenCount?: number | undefined;
  compactedCount: number;
}

export interface MessageReceivedEvent {
  /** The sender's platform id. */
  from: string;
  content: string;
  timestamp?: number | undefined;
  threadId?: string | undefined;
  messageId?: string | undefined;
  senderId?: string | undefined;
  sessionKey?: string | undefined;
}

export interface MessageSendingEvent {
  /** The conversation it goes to: a channel id, or `dm:<userId>`. */
  to: string;
  content: string;
  replyToId?: string | undefined;
  threadId?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
}

export interface MessageSendingResult {
  /** Replaces the text; the next handler sees the replaced text. */
  content?: string;
  /** Drops the message; later handlers do not run. */
  cancel?: boolean;
  cancelReason?: string;
}

export interface MessageSentEvent {
  to: string;
  content: string;
  success: boolean;
  messageId?: string | undefined;
  sessionKey?: string | undefined;
  error?: string | undefined;
}

export interface SessionStartEvent {
  /** Warden keeps no separate session id: the session key. */
  sessionId: string;
  sessionKey?: string | undefined;
  /** Set when the session already had a transcript (it continues after a restart). */
  resumedFrom?: string | undefined;
}

export interface SessionEndEvent {
  sessionId: string;
  sessionKey?: string | undefined;
  messageCount: number;
  durationMs?: number | undefined;
  reason?: 'shutdown' | 'deleted' | 'unknown' | undefined;
}

export interface SubagentSpawnedEvent {
  childSessionKey: string;
  agentId: string;
  label?: string | undefined;
  mode: 'run' | 'session';
  threadRequested: boolean;
  runId: string;
  resolvedModel?: string | undefined;
  resolvedProvider?: string | undefined;
}

export interface SubagentEndedEvent {
  targetSessionKey: string;
  targetKind: 'subagent';
  reason: string;
  runId?: string | undefined;
  endedAt?: number | undefined;
  outcome?: 'ok' | 'error' | 'timeout' | 'killed' | undefined;
  error?: string | undefined;
}

export interface GatewayStartEvent {
  /** The web chat's port when it runs, else 0. */
  port: number;
}

export interface GatewayStopEvent {
  reason?: string | undefined;
}

export interface CronChangedEvent {
  action: 'added' | 'updated' | 'removed' | 'started' | 'finished';
  jobId: string;
  job?: { id: string; agentId: string; name: string; enabled: boolean; message: string; schedule: unknown; createdBy: string } | undefined;
  agentId?: string | undefined;
  status?: 'ok' | 'error' | 'interrupted' | undefined;
  error?: string | undefined;
  runId?: string | undefined;
}

export interface SkillChangedEvent {
  action: 'created' | 'updated' | 'removed';
  /** Where the skill lives: Warden's root kinds (`workspace`, `managed`, `bundled`, …). */
  source: string;
  occurredAt: string;
  before?: { name: string; description?: string | undefined; skillFile: string; skillDir: string; source: string } | undefined;
  after?: { name: string; description?: string | undefined; skillFile: string; skillDir: string; source: string } | undefined;
}

export interface ResolveExecEnvEvent {
  sessionKey?: string | undefined;
  toolName: 'exec';
  host: 'gateway' | 'sandbox';
}

/** Where a conversation happens, in Warden's terms (OpenClaw's contexts have no such object). */
export interface HookConversation {
  provider: string;
  chat: 'dm' | 'channel' | 'thread';
  guildId?: string | undefined;
  guildName?: string | undefined;
  channelId?: string | undefined;
  channelName?: string | undefined;
  threadId?: string | undefined;
}

/** OpenClaw's agent context, as Warden fills it: derived from the turn, never from a plugin. */
export interface HookAgentContext {
  runId?: string | undefined;
  agentId?: string | undefined;
  sessionKey?: string | undefined;
  sessionId?: string | undefined;
  workspaceDir?: string | undefined;
  modelProviderId?: string | undefined;
  modelId?: string | undefined;
  /** The chat platform (`discord`, `slack`, `web`). */
  messageProvider?: string | undefined;
  channel?: string | undefined;
  /** OpenClaw's meaning: the chat platform, not the platform's channel id (see `conversation`). */
  channelId?: string | undefined;
  senderId?: string | undefined;
  /** Warden: whether the sender is an owner (from `owners`). */
  senderIsOwner?: boolean | undefined;
  trigger?: 'user' | 'cron' | 'session' | 'subagent' | undefined;
  conversation?: HookConversation | undefined;
}

export interface HookToolContext extends HookAgentContext {
  toolName: string;
  toolCallId?: string | undefined;
  /** Who asked for the turn, as the host resolved it. */
  requester?: { channel?: string | undefined; senderId?: string | undefined; senderIsOwner?: boolean | undefined } | undefined;
  /** Aborts when the call is cancelled (not when the hook times out). */
  abortSignal?: AbortSignal | undefined;
}

export interface HookMessageContext {
  /** The chat platform (`discord`, `slack`, `web`), as in OpenClaw. */
  channelId: string;
  /** The platform's channel (or `dm:<userId>`). */
  conversationId?: string | undefined;
  sessionKey?: string | undefined;
  senderId?: string | undefined;
  messageId?: string | undefined;
  conversation?: HookConversation | undefined;
}

export interface HookSessionContext {
  agentId?: string | undefined;
  sessionId: string;
  sessionKey?: string | undefined;
}

export interface HookSubagentContext {
  runId?: string | undefined;
  childSessionKey?: string | undefined;
  requesterSessionKey?: string | undefined;
}

export interface HookGatewayContext {
  port?: number | undefined;
  workspaceDir?: string | undefined;
}

export interface HookSkillContext {
  workspaceDir: string;
  agentId?: string | undefined;
}

/** Event, handler context and result of each hook. */
export interface HookSignatures {
  before_model_resolve: { event: BeforeModelResolveEvent; ctx: HookAgentContext; result: BeforeModelResolveResult | void };
  before_prompt_build: { event: BeforePromptBuildEvent; ctx: HookAgentContext; result: BeforePromptBuildResult | void };
  model_call_started: { event: ModelCallStartedEvent; ctx: HookAgentContext; result: void };
  model_call_ended: { event: ModelCallEndedEvent; ctx: HookAgentContext; result: void };
  agent_end: { event: AgentEndEvent; ctx: HookAgentContext; result: void };
  before_compaction: { event: BeforeCompactionEvent; ctx: HookAgentContext; result: void };
  after_compaction: { event: AfterCompactionEvent; ctx: HookAgentContext; result: void };
  before_tool_call: { event: BeforeToolCallEvent; ctx: HookToolContext; result: BeforeToolCallResult | void };
  after_tool_call: { event: AfterToolCallEvent; ctx: HookToolContext; result: void };
  tool_result_persist: { event: ToolResultPersistEvent; ctx: { agentId?: string | undefined; sessionKey?: string | undefined; toolName?: string; toolCallId?: string }; result: { message?: PersistedToolMessage } | void };
  message_received: { event: MessageReceivedEvent; ctx: HookMessageContext; result: void };
  message_sending: { event: MessageSendingEvent; ctx: HookMessageContext; result: MessageSendingResult | void };
  message_sent: { event: MessageSentEvent; ctx: HookMessageContext; result: void };
  session_start: { event: SessionStartEvent; ctx: HookSessionContext; result: void };
  session_end: { event: SessionEndEvent; ctx: HookSessionContext; result: void };
  subagent_spawned: { event: SubagentSpawnedEvent; ctx: HookSubagentContext; result: void };
  subagent_ended: { event: SubagentEndedEvent; ctx: HookSubagentContext; result: void };
  gateway_start: { event: GatewayStartEvent; ctx: HookGatewayContext; result: void };
  gateway_stop: { event: GatewayStopEvent; ctx: HookGatewayContext; result: void };
  cron_changed: { event: CronChangedEvent; ctx: HookGatewayContext; result: void };
  skill_changed: { event: SkillChangedEvent; ctx: HookSkillContext; result: void };
  resolve_exec_env: { event: ResolveExecEnvEvent; ctx: HookAgentContext; result: Record<string, string> | void };
}

export type HookEvent<K extends HookName> = HookSignatures[K]['event'];
export type HookContext<K extends HookName> = HookSignatures[K]['ctx'];

export type HookHandler<K extends HookName> = (
  event: HookSignatures[K]['event'],
  ctx: HookSignatures[K]['ctx'],
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

/** Longest per-handler limit a registration or the config may set (reference §5.5). */
export const MAX_HOOK_TIMEOUT_MS = 600_000;

/**
 * Default per-handler timeouts in ms: OpenClaw's (reference §5.5) where it sets one. OpenClaw
 * lets the other void hooks run unbounded; Warden bounds them at 30 s so a hung observer
 * cannot hold a shutdown or a turn's bookkeeping. tool_result_persist is synchronous (0: none).
 */
export const DEFAULT_HOOK_TIMEOUT_MS: Readonly<Record<HookName, number>> = {
  before_model_resolve: 15_000,
  before_prompt_build: 15_000,
  before_tool_call: 15_000,
  message_sending: 15_000,
  resolve_exec_env: 15_000,
  tool_result_persist: 0,
  model_call_started: 30_000,
  model_call_ended: 30_000,
  agent_end: 30_000,
  before_compaction: 30_000,
  after_compaction: 30_000,
  after_tool_call: 30_000,
  message_received: 30_000,
  message_sent: 30_000,
  session_start: 30_000,
  session_end: 30_000,
  subagent_spawned: 30_000,
  subagent_ended: 30_000,
  gateway_start: 30_000,
  gateway_stop: 5_000,
  cron_changed: 30_000,
  skill_changed: 30_000,
};
