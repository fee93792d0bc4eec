/**
 * Warden's library entry: the decisions the CLI prints, as pure functions for embedding and
 * benchmarks.
 */
export { resolveToolSurface, inheritFrom, type SurfaceOptions, type SurfaceResult, type ExplainStep } from './policy/surface.js';
export { surfaceInputs, type SurfaceInputs } from './app/surface-inputs.js';
export { buildTurnContext, type ContextInput, type Conversation } from './turn/turn-context.js';
export { isOwner } from './policy/owners.js';
export { resolveChannelScope, scopeChain, slugify, type ResolvedScope, type ScopeNode } from './policy/channel-scope.js';
export { matchSender, type SenderIdentity } from './policy/sender.js';
export { matchByProvider } from './policy/by-provider.js';
export { decide, compilePolicy, pickPolicy, type ToolPolicy, type PolicyEntry, type Verdict } from './policy/policy.js';
export { toolEntryProblem } from './config/tool-glob.js';
export { SUBAGENT_DENY_ALWAYS, SUBAGENT_DENY_LEAF, subagentRole } from './policy/subagent.js';
export { STEP_LABELS, defaultAgentId, knownAgentIds } from './policy/steps.js';
export type { TurnContext, InheritedPolicy, ChatProvider, ChatType } from './policy/context.js';
export { CORE_TOOLS, CORE_GROUPS, OWNER_ONLY_TOOLS, SECTION_LABELS, profileAllowlist, coreTool } from './policy/catalog.js';
export { normalizeToolName, TOOL_ALIASES } from './policy/tool-names.js';
export { loadPluginTools, type PluginLoadResult } from './plugins/manifest.js';
export { discoverPlugins, type DiscoveredPlugin, type PluginDiagnostic } from './plugins/discover.js';
export { createPluginRuntime, loadPluginRuntime, PluginRuntime, type PluginRecord } from './plugins/runtime.js';
export { loadConfig, parseConfig, ConfigError, type WardenConfig } from './config/index.js';
export { checkExec, type CheckExecOptions } from './app/exec-check.js';
export { buildSkillsPrompt, listSkills, takeSkillSnapshot, SessionSkillSnapshots, type SkillsPrompt, type SkillListing, type SkillSnapshot } from './skills/index.js';
export { ToolInvoker, loopDetectionEnabled, type InvokeRequest, type InvokeOutcome, type ToolInvokerOptions } from './tools/invoke/chain.js';
export { HookBus, HOOK_NAMES, OPENCLAW_HOOK_NAMES, NOT_EMITTED, type HookName, type HookOptions } from './hooks/index.js';
export { ApprovalService, type ResolveResult, type Grant, type RecoveryReport } from './approvals/index.js';
export { openStore, resolveDataDir, type Store, type Migration, type FeatureMigrations } from './store/index.js';
export { openWardenStore, WARDEN_MIGRATIONS } from './app/migrations.js';
export { createAgentRuntime, DbTranscriptStore, type AgentRuntime, type TurnRequest, type TurnOutcome, type ToolExecutor } from './agent/index.js';
export { projectTools, projectSchema, type ProjectionTarget, type ProjectionResult } from './models/projection/index.js';
export { Gateway, type GatewayOptions } from './gateway/gateway.js';
export { routeMessage, type Route, type RouteDecision } from './gateway/router.js';
export { sessionKeyFor, parseSessionKey } from './policy/session-key.js';
export type { InboundMessage, ChatAdapter, ReplyTarget, OutboundMessage, ApprovalClick, ClickOutcome, OnApprovalClick } from './gateway/types.js';
