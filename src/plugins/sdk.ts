/**
 * The plugin API, as a plugin author sees it: `import type { WardenPluginApi } from 'warden/plugin'`.
 *
 * A plugin is a folder (or an installed npm package) with a `warden.plugin.json` or
 * `openclaw.plugin.json` manifest and an entry module that exports `register(api)` (a named
 * export, the default export, or a default object `{ register }`). Plugins are trusted code that
 * runs inside Warden's process; what they register still passes Warden's policy: their tools
 * reach the model only through the tool policy and every call passes the wrapper chain.
 *
 * The shapes follow OpenClaw's plugin SDK where OpenClaw has one (reference §9), so a tool
 * plugin written for OpenClaw registers the same way.
 */
import type {
  HookApprovalRequest,
  HookHandler,
  HookToolContext,
  OpenClawHookName,
} from '../hooks/types.js';
import type { JsonSchema } from '../tools/types.js';

export type {
  AfterCompactionEvent,
  AfterToolCallEvent,
  AgentEndEvent,
  BeforeCompactionEvent,
  BeforeModelResolveEvent,
  BeforeModelResolveResult,
  BeforePromptBuildEvent,
  BeforePromptBuildResult,
  BeforeToolCallEvent,
  BeforeToolCallResult,
  CronChangedEvent,
  GatewayStartEvent,
  GatewayStopEvent,
  HookAgentContext,
  HookApprovalRequest,
  HookConversation,
  HookGatewayContext,
  HookHandler,
  HookMessageContext,
  HookName,
  HookSessionContext,
  HookSignatures,
  HookSkillContext,
  HookSubagentContext,
  HookToolContext,
  MessageReceivedEvent,
  MessageSendingEvent,
  MessageSendingResult,
  MessageSentEvent,
  ModelCallEndedEvent,
  ModelCallStartedEvent,
  OpenClawHookName,
  PersistedToolMessage,
  ResolveExecEnvEvent,
  SessionEndEvent,
  SessionStartEvent,
  SkillChangedEvent,
  SubagentEndedEvent,
  SubagentSpawnedEvent,
  ToolResultPersistEvent,
} from '../hooks/types.js';
export type { JsonSchema, ToolContent } from '../tools/types.js';
export type { LinearCompile, LinearFlags, LinearRegex } from '../util/linear-regex.js';
import type { LinearCompile, LinearFlags } from '../util/linear-regex.js';

/**
 * What a tool factory is told about the turn it builds tools for (reference §9.5). Warden
 * derives every field from the turn's policy context — the same one the tool policy uses — so
 * nothing here can be set by a plugin or by the model.
 */
export interface PluginToolContext {
  agentId: string;
  /** The conversation's session key (a subagent's turn: its own conversation's). */
  sessionKey: string;
  /** The chat platform (`discord`, `slack`, `web`); OpenClaw's `messageChannel`. */
  messageChannel: string;
  provider: string;
  chat: 'dm' | 'channel' | 'thread';
  /** Discord guild or Slack team. */
  guildId?: string | undefined;
  /** The platform's channel id (a thread's parent channel). */
  channelId?: string | undefined;
  channelName?: string | undefined;
  threadId?: string | undefined;
  /** The sender's platform id; OpenClaw's `requesterSenderId`. */
  requesterSenderId?: string | undefined;
  senderId?: string | undefined;
  /** From `owners` in the config, never from the message. */
  senderIsOwner: boolean;
  /** The agent's workspace (absolute). */
  workspaceDir: string;
  /** Whether exec runs in the bubblewrap sandbox for this turn. */
  sandboxed: boolean;
  /** The model answering this turn, when one is configured. */
  activeModel?: { provider: string; modelId: string; modelRef: string } | undefined;
  /** 0 for a conversation's own turn, n for an n-th level subagent. */
  spawnDepth: number;
  /** Where a reply to this turn goes. */
  deliveryContext: { channel: string; to?: string | undefined; threadId?: string | undefined };
}

/** What a tool returns: OpenClaw's `{content, details}`; anything else is turned into text. */
export interface PluginToolResult {
  content: Array<{ type: 'text'; text: string } | { type: 'image'; data: string; mimeType: string }>;
  /** Stored with the result, never shown to the model. */
  details?: unknown;
}

/** A tool as a plugin defines it (OpenClaw's agent tool shape). */
export interface PluginTool<Params = Record<string, unknown>> {
  /** Must be listed in the manifest's `contracts.tools`. */
  name: string;
  label?: string;
  /** What the model reads about the tool. */
  description: string;
  /** JSON Schema of the arguments (an object schema); the call chain validates every call against it. */
  parameters: JsonSchema;
  /**
   * Runs one call, after the tool policy, the owner guard, argument validation, loop detection,
   * trusted policies, before_tool_call hooks and any approval. Throw on failure: the model gets
   * `{status: "error", tool, error}`. `signal` aborts on /stop, shutdown and the call's timeout.
   */
  execute(toolCallId: string, params: Params, signal?: AbortSignal, onUpdate?: (partial: PluginToolResult) => void): Promise<PluginToolResult | unknown> | PluginToolResult | unknown;
}

/** Builds the plugin's tools for one turn; `null` leaves them out of that turn. */
export type PluginToolFactory = (ctx: PluginToolContext) => PluginTool | PluginTool[] | null | undefined;

export interface RegisterToolOptions {
  /** The tool names a factory may produce (each in `contracts.tools`); a plain tool names itself. */
  name?: string;
  names?: string[];
  /** Built only when an allowlist names the tool, the plugin id, `group:plugins` or `*`. */
  optional?: boolean;
}

export interface PluginHookOptions {
  /** Higher runs first; ties keep registration order. Default 0. */
  priority?: number;
  /**
   * Per-handler limit in ms (at most 600,000). `plugins.entries.<id>.hooks.timeouts.<hook>` and
   * `.hooks.timeoutMs` in the config beat it. A timeout counts as the handler failing.
   */
  timeoutMs?: number;
  /** before_tool_call / after_tool_call only: the tools this handler sees. */
  toolMatcher?: readonly string[];
  /** OpenClaw's name for `toolMatcher`. */
  matcher?: readonly string[];
}

/** What a trusted tool policy decides about one call (reference §5.4). */
export interface TrustedToolPolicyDecision {
  /** `false` blocks the call, like `block: true`. */
  allow?: boolean;
  block?: boolean;
  blockReason?: string;
  /** Replaces the call's params for later policies, hooks and the tool. */
  params?: Record<string, unknown>;
  requireApproval?: HookApprovalRequest;
}

/** A policy consulted for every call before the before_tool_call hooks; its id must be in `contracts.trustedToolPolicies`. */
export interface TrustedToolPolicyRegistration {
  id: string;
  description: string;
  /** Tool names it applies to; absent = every tool. */
  matcher?: readonly string[];
  evaluate(
    event: { toolName: string; params: Record<string, unknown>; toolCallId?: string | undefined; runId?: string | undefined },
    ctx: HookToolContext,
  ): TrustedToolPolicyDecision | void | Promise<TrustedToolPolicyDecision | void>;
}

/** What a plugin's chat command is told; everything comes from the routed message. */
export interface PluginCommandContext {
  /** Everything after the command word, trimmed. */
  args: string;
  /** The whole command as typed (`/incident open db is down`). */
  commandBody: string;
  agentId: string;
  sessionKey: string;
  /** The chat platform. */
  channel: string;
  channelId?: string | undefined;
  threadId?: string | undefined;
  senderId?: string | undefined;
  senderIsOwner: boolean;
  /** The plugin's validated config. */
  config: Record<string, unknown>;
  /**
   * The tools of this conversation, for this sender: the same surface `/tools` shows. `call`
   * goes through the whole call chain (hooks, approvals, …) like a model's call.
   */
  tools: {
    list(): string[];
    call(name: string, args: Record<string, unknown>): Promise<{ content: PluginToolResult['content']; isError: boolean }>;
  };
}

export type PluginCommandResult = string | { text: string };
export type PluginCommandHandler = (ctx: PluginCommandContext) => PluginCommandResult | Promise<PluginCommandResult>;

export interface PluginCommandDefinition {
  /** Without the slash; letters, digits, `-` and `_`; not one of Warden's own commands. */
  name: string;
  description?: string;
  /** Only owners may run it; anyone else gets a refusal and nothing runs. */
  ownerOnly?: boolean;
  handler: PluginCommandHandler;
}

export interface PluginLogger {
  debug(msg: string, ...rest: unknown[]): void;
  info(msg: string, ...rest: unknown[]): void;
  warn(msg: string, ...rest: unknown[]): void;
  error(msg: string, ...rest: unknown[]): void;
  /** The underlying pino logger, for structured fields: `api.logger.child({ plugin })`. */
  child(bindings: Record<string, unknown>): unknown;
}

/** Hook names a plugin may register: OpenClaw's 42 (those Warden never emits are reported, not refused). */
export type PluginHookName = OpenClawHookName;

/** The handler type of a hook Warden emits; other OpenClaw hooks take any function. */
export type PluginHookHandler<K extends PluginHookName> = K extends import('../hooks/types.js').HookName ? HookHandler<K> : (event: never, ctx: never) => unknown;

/** The `api` handed to `register(api)`. Registration happens while `register` runs; later calls are refused. */
export interface WardenPluginApi {
  /** The manifest's id (lower-case). */
  readonly id: string;
  readonly name: string;
  readonly version?: string | undefined;
  readonly description?: string | undefined;
  /** The entry module's path. */
  readonly source: string;
  /** The plugin's folder. */
  readonly rootDir: string;
  /** `plugins.entries.<id>.config`, validated against the manifest's `configSchema` (defaults applied). */
  readonly config: Record<string, unknown>;
  /** OpenClaw's name for `config`. */
  readonly pluginConfig: Record<string, unknown>;
  /** A pino child logger named after the plugin. */
  readonly logger: PluginLogger;
  /** A plain tool, or a factory run with each turn's context. Names must be in `contracts.tools`. */
  registerTool(tool: PluginTool | PluginToolFactory, opts?: RegisterToolOptions): void;
  on<K extends PluginHookName>(hook: K, handler: PluginHookHandler<K>, opts?: PluginHookOptions): void;
  /** A folder of skill folders (each with a SKILL.md), relative to the plugin; the lowest-precedence skill root. */
  registerSkillsDir(dir: string): void;
  registerTrustedToolPolicy(policy: TrustedToolPolicyRegistration): void;
  /** A chat command (`/name args`), answered without the model, through the same gates as Warden's commands. */
  registerCommand(name: string, handler: PluginCommandHandler): void;
  registerCommand(definition: PluginCommandDefinition): void;
  /** A path relative to the plugin's folder, made absolute. */
  resolvePath(input: string): string;
  /**
   * A regular expression (JavaScript syntax and meaning) compiled for Warden's linear-time
   * engine. Use it for any pattern matched against text the model wrote: V8's own engine
   * backtracks, and one bad pattern on a long command blocks every conversation. Lookarounds and
   * backreferences are refused with the reason; `test` answers `too-long` past the pattern's budget.
   */
  compileRegex(source: string, flags?: LinearFlags): LinearCompile;
}

/** What an entry module may export as default: `register`, or an object carrying it. */
export interface WardenPluginDefinition {
  id?: string;
  name?: string;
  description?: string;
  register(api: WardenPluginApi): void | Promise<void>;
}

/** Identity helper for a typed default export: `export default definePlugin({ register(api) { … } })`. */
export function definePlugin<T extends WardenPluginDefinition>(definition: T): T {
  return definition;
}
