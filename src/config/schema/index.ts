import { secretsConfig } from './secrets.js';
import * as z from 'zod';
import { lazySchema, once } from './lazy.js';
import { messageActionsConfig } from './message-actions.js';
import { channelsConfig } from './channels.js';
import { execConfig, execOverrides } from './exec.js';
import { checkMediaProviders, mediaConfig } from './media.js';
import { mediaUnderstandingConfig } from './media-understanding.js';
import { agentToAgentConfig, crossContextConfig, sessionsToolsConfig } from './cross-context.js';
import { elevatedConfig } from './elevated.js';
import { toolSearchConfig } from './tool-search.js';
import { mcpConfig } from './mcp.js';
import { webToolsConfig } from './web.js';
import { gatewayConfig } from './gateway.js';
import { bindingsConfig, checkBindings } from './bindings.js';
import { opsConfig } from './ops.js';
import { storeConfig } from './store.js';
import { accessGroupsConfig } from './access-groups.js';
import { rateLimitConfig } from './access.js';
import { budgetsConfig } from './budgets.js';
import { approvalRuleConfig } from './approval-rules.js';
import {
  byProviderEntry,
  profileId,
  rejectAllowWithAlsoAllow,
  toolList,
  toolPolicyConfig,
  toolsBySender,
} from './policy.js';

const userIds = once(() => z.array(z.string().min(1)));

/** Platform user ids per chat provider. */
export const idsByProvider = lazySchema(() => z.strictObject({
  discord: userIds().optional(),
  slack: userIds().optional(),
  web: userIds().optional(),
}));
export type IdsByProvider = z.infer<typeof idsByProvider>;

export const approvalsConfig = lazySchema(() => z.strictObject({
  /** Who may decide approvals; default: the owners of each provider. */
  approvers: idsByProvider.optional(),
  /** Where approval cards are posted. */
  target: z.enum(['channel', 'dm', 'both']).default('channel'),
  exec: z.strictObject({ timeoutSec: z.number().int().positive().default(1800) }).default({ timeoutSec: 1800 }),
  /**
   * How long a tool call waits inside its turn for a decision before it is deferred: the tool
   * answers "pending approval", the turn ends and the conversation takes new messages; the call
   * runs when an approver decides, its result is posted under the card and the agent gets a
   * follow-up turn. 5 s lets an approver who watches the channel answer within the turn (one
   * turn, no follow-up) while nobody waits long for the conversation to move; 0 defers at once.
   */
  waitSec: z.number().min(0).max(600).default(5),
  /**
   * Which tool calls ask a person first, by tool, arguments and conversation (see
   * approval-rules.ts); the first matching rule decides. Exec keeps its own verdict besides.
   */
  rules: z.array(approvalRuleConfig).max(1000).optional(),
  /** How long an "Allow for …" grant (a card's timed button) lasts: 1 h by default. */
  timedGrantSec: z.number().int().min(60).max(30 * 86_400).default(3600),
  /** Approvals requested by before_tool_call hooks. */
  hook: z
    .strictObject({
      timeoutSec: z.number().int().positive().max(600).default(120),
    })
    .default({ timeoutSec: 120 }),
}));
export type ApprovalsConfig = z.infer<typeof approvalsConfig>;

const modelRef = once(() => z.string().regex(/^[a-z0-9][a-z0-9._-]*\/.+$/i, 'expected "provider/model", e.g. "anthropic/claude-sonnet-4-5"'));

const MODEL_APIS = ['anthropic', 'openai', 'gemini'] as const;

/** `models.providers.<name>`: where a provider is reached and how its models behave. */
export const modelProviderConfig = lazySchema(() => z.strictObject({
  /** Wire dialect; default: the provider name when it is anthropic, openai or gemini. */
  api: z.enum(MODEL_APIS).optional(),
  /** For OpenAI-compatible servers (Ollama, vLLM, llama.cpp, LM Studio) or a proxy. */
  baseUrl: z.url().optional(),
  /** Environment variable holding the key; default ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY. */
  apiKeyEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name').optional(),
  contextWindow: z.number().int().positive().optional(),
  maxOutputTokens: z.number().int().positive().optional(),
  /** JSON-schema keywords this provider's models reject; stripped from tool schemas. */
  unsupportedSchemaKeywords: z.array(z.string().min(1)).optional(),
  /** `false` for models that cannot call tools (some local models): their turns get no tools. */
  supportsTools: z.boolean().optional(),
  /**
   * The provider's models as OpenClaw declares them (`models.providers.<id>.models[]`, `id`
   * without the provider prefix). Warden reads `input`: a model listed without "image" gets
   * images as saved files, not image parts. A model not listed is taken to read images.
   * OpenClaw's other documented entry keys are accepted so a pasted entry parses, and not read.
   */
  models: z
    .array(
      z.strictObject({
        id: z.string().min(1),
        name: z.string().optional(),
        input: z.array(z.enum(['text', 'image'])).optional(),
        api: z.string().min(1).optional(),
        reasoning: z.boolean().optional(),
        cost: z.record(z.string(), z.number()).optional(),
        contextWindow: z.number().int().positive().optional(),
        contextTokens: z.number().int().positive().optional(),
        maxTokens: z.number().int().positive().optional(),
        headers: z.record(z.string(), z.string()).optional(),
        compat: z.record(z.string(), z.unknown()).optional(),
      }),
    )
    .optional(),
}));

/** Every key is optional here; `src/models/settings.ts` applies the defaults it documents. */
export const modelsConfig = lazySchema(() => z
  .strictObject({
    default: modelRef().optional(),
    providers: z.record(z.string().regex(/^[a-z0-9][a-z0-9._-]*$/i, 'provider name: letters, digits, ".", "-", "_"'), modelProviderConfig).optional(),
    /** Tokens a model may read when its provider sets none (default 128000). */
    contextWindow: z.number().int().positive().optional(),
    /** Tokens a reply may have when its provider sets none (default 4096). */
    maxOutputTokens: z.number().int().positive().optional(),
    /** One model request, in milliseconds (default 120000). */
    timeoutMs: z.number().int().positive().optional(),
    retry: z
      .strictObject({
        /** Tries per model call, the first included (default 4). */
        attempts: z.number().int().min(1).max(10).optional(),
        baseDelayMs: z.number().int().min(0).optional(),
        maxDelayMs: z.number().int().min(0).optional(),
      })
      .optional(),
  })
  .superRefine((models, ctx) => {
    for (const [name, entry] of Object.entries(models.providers ?? {})) {
      if (entry.api === undefined && !(MODEL_APIS as readonly string[]).includes(name)) {
        ctx.addIssue({
          code: 'custom',
          path: ['providers', name, 'api'],
          message: `provider "${name}" needs api: one of ${MODEL_APIS.join(', ')} (e.g. api: openai with baseUrl for Ollama)`,
        });
      }
    }
  }));
export type ModelsConfig = z.infer<typeof modelsConfig>;

/** The `tools` block an agent may carry: the global block minus the global-only sections. */
const agentToolsFields = once(() => ({
  profile: profileId().optional(),
  allow: toolList().optional(),
  alsoAllow: toolList().optional(),
  deny: toolList().optional(),
  byProvider: z.record(z.string().min(1), byProviderEntry).optional(),
  toolsBySender: toolsBySender.optional(),
  loopDetection: z.strictObject({ enabled: z.boolean() }).optional(),
  /** An agent's elevated block can only narrow the global one. */
  elevated: elevatedConfig.optional(),
  /** An agent's own message actions replace the global `tools.message.actions` for its turns. */
  message: z.strictObject({ crossContext: crossContextConfig.optional(), actions: messageActionsConfig.optional() }).optional(),
}));

export const agentToolsConfig = lazySchema(() => z.strictObject({ ...agentToolsFields(), exec: execOverrides.optional() }).superRefine(rejectAllowWithAlsoAllow));

export const agentEntry = lazySchema(() => z.strictObject({
  id: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_-]*$/i, 'agent id: letters, digits, "-" and "_"'),
  name: z.string().optional(),
  default: z.boolean().optional(),
  workspace: z.string().optional(),
  model: modelRef().optional(),
  tools: agentToolsConfig.optional(),
}));
export type AgentEntry = z.infer<typeof agentEntry>;

export const agentsConfig = lazySchema(() => z
  .strictObject({
    defaults: z
      .strictObject({
        workspace: z.string().default('./workspace'),
        maxToolRounds: z.number().int().positive().default(10),
        subagents: z
          .strictObject({ maxSpawnDepth: z.number().int().min(1).default(1) })
          .default({ maxSpawnDepth: 1 }),
      })
      .default({ workspace: './workspace', maxToolRounds: 10, subagents: { maxSpawnDepth: 1 } }),
    list: z.array(agentEntry).default([]),
  })
  .superRefine((agents, ctx) => {
    const seen = new Set<string>();
    agents.list.forEach((agent, i) => {
      if (seen.has(agent.id)) ctx.addIssue({ code: 'custom', path: ['list', i, 'id'], message: `duplicate agent id "${agent.id}"` });
      seen.add(agent.id);
    });
    const defaults = agents.list.filter((a) => a.default);
    if (defaults.length > 1) ctx.addIssue({ code: 'custom', path: ['list'], message: 'more than one agent has default: true' });
  }));

const ssrfOptOuts = once(() => ({
  /** Un-blocks 198.18.0.0/15, used by fake-IP proxies. */
  allowRfc2544BenchmarkRange: z.boolean().optional(),
  /** Un-blocks fc00::/7 (never the metadata address fd00:ec2::254). */
  allowIpv6UniqueLocalRange: z.boolean().optional(),
}));

/**
 * The message tool posts in the current conversation; anywhere else only to these targets
 * (`discord:<channelId>`, `slack:#name`, `slack:<channelId>`, `*` for any), unless an owner asks.
 */
export const messageToolConfig = lazySchema(() => z.strictObject({
  allowedTargets: z.array(z.string().regex(/^(\*|(discord|slack|web):\S+)$/, 'expected "provider:channel" (e.g. "slack:#announcements") or "*"')).default([]),
  crossContext: crossContextConfig.optional(),
  /** Which actions the tool may take (OpenClaw's `tools.message.actions`); default `send` only. */
  actions: messageActionsConfig.optional(),
}));

/** A browser profile name doubles as a folder name under the data dir, so it is kept plain. */
const browserProfileName = once(() => z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,31}$/, 'profile names are 1–32 characters: a-z, 0-9, "-" and "_", starting with a letter or digit'));

export const browserConfig = lazySchema(() => z.strictObject({
  /** false: the browser tool refuses every action. */
  enabled: z.boolean().default(true),
  /** Run Chromium without a window (default true); a profile may override it. */
  headless: z.boolean().default(true),
  /** The profile used when a call names none. */
  defaultProfile: browserProfileName().default('warden'),
  /**
   * Extra profiles besides the default one, each its own Chromium with its own user-data dir
   * under `<dataDir>/browser/<name>/user-data`.
   */
  profiles: z.record(browserProfileName(), z.strictObject({ headless: z.boolean().optional() })).default({}),
  /** A profile's Chromium is closed after this many seconds without a call. */
  idleTimeoutSec: z.number().int().positive().max(86_400).default(300),
  ssrfPolicy: z
    .strictObject({
      /** Reach private, loopback and link-local networks; cloud metadata stays blocked. Default false. */
      allowPrivateNetwork: z.boolean().optional(),
      /** When non-empty, navigation only to these hosts: exact names or `*.example.com`. */
      hostnameAllowlist: z.array(z.string().min(1)).optional(),
      /** Exact names that may resolve to private addresses (not loopback, not metadata). */
      allowedHostnames: z.array(z.string().min(1)).optional(),
      ...ssrfOptOuts(),
    })
    .optional(),
}));

export const toolsConfig = lazySchema(() => z
  .strictObject({
    ...agentToolsFields(),
    web: webToolsConfig.optional(),
    message: messageToolConfig.optional(),
    /** Inbound media understanding: transcripts and descriptions of attachments. */
    media: mediaUnderstandingConfig.optional(),
    sessions: sessionsToolsConfig.optional(),
    agentToAgent: agentToAgentConfig.optional(),
    toolSearch: toolSearchConfig.optional(),
    subagents: z.strictObject({ tools: toolPolicyConfig.optional() }).optional(),
    sandbox: z.strictObject({ tools: toolPolicyConfig.optional() }).optional(),
    exec: execConfig.optional(),
  })
  .superRefine(rejectAllowWithAlsoAllow));
export type ToolsConfig = z.infer<typeof toolsConfig>;

export const skillsConfig = lazySchema(() => z.strictObject({
  /** Extra skill roots, lowest precedence. */
  extraDirs: z.array(z.string()).default([]),
  /** Bundled skills allowed by name; absent = all bundled skills. */
  allowBundled: z.array(z.string()).optional(),
  limits: z
    .strictObject({
      maxSkillsInPrompt: z.number().int().positive().default(150),
      maxSkillsPromptChars: z.number().int().positive().default(18_000),
    })
    .default({ maxSkillsInPrompt: 150, maxSkillsPromptChars: 18_000 }),
  entries: z
    .record(
      z.string(),
      z.strictObject({ enabled: z.boolean().optional(), env: z.record(z.string(), z.string()).optional(), apiKey: z.string().optional() }),
    )
    .default({}),
}));

/** Per-plugin hook settings (OpenClaw's `plugins.entries.<id>.hooks`). */
const pluginHooksConfig = once(() => z.strictObject({
  /** `false` refuses the plugin's prompt-injecting hooks (before_prompt_build). */
  allowPromptInjection: z.boolean().optional(),
  /** `true` lets the plugin register hooks that read conversations (before_model_resolve, before_prompt_build, agent_end). */
  allowConversationAccess: z.boolean().optional(),
  /** Per-handler timeout for every hook of the plugin, in ms (beats the registration's). */
  timeoutMs: z.number().int().positive().max(600_000).optional(),
  /** Per-hook timeouts in ms (beat `timeoutMs`). */
  timeouts: z.record(z.string(), z.number().int().positive().max(600_000)).optional(),
}));

export const pluginsConfig = lazySchema(() => z.strictObject({
  /** `false` loads no plugin at all. */
  enabled: z.boolean().default(true),
  /** Folders holding plugin folders (each with a `warden.plugin.json` or `openclaw.plugin.json`), or plugin folders. */
  paths: z.array(z.string()).default([]),
  /** Installed npm packages that are plugins, resolved from the config file's folder (`node_modules`). */
  load: z.array(z.string().min(1)).default([]),
  /** Plugin ids that may load; absent = every discovered plugin that is not disabled. */
  allow: z.array(z.string()).optional(),
  deny: z.array(z.string()).default([]),
  /**
   * Per plugin: `enabled: false` keeps it out; `config` is handed to the plugin after its
   * manifest's `configSchema` validated it; `hooks` limits what its hooks may do.
   */
  entries: z
    .record(
      z.string(),
      z.strictObject({
        enabled: z.boolean().optional(),
        config: z.record(z.string(), z.unknown()).optional(),
        hooks: pluginHooksConfig().optional(),
        /**
         * What happens when this plugin is a policy plugin (its manifest declares before_tool_call,
         * message_sending or a trusted tool policy, or declares no contracts.hooks) and cannot load:
         * `stop` (default) refuses the start, the reload or the command; `remove-guarded-tools`
         * runs without the tools its manifest's contracts.guardedTools names (every tool when it
         * names none). A security rule never disappears silently.
         */
        onLoadFailure: z.enum(['stop', 'remove-guarded-tools']).optional(),
      }),
    )
    .default({}),
}));

/** How conversations queue: one turn at a time each, in order. */
export const sessionsConfig = lazySchema(() => z.strictObject({
  /** Messages that may wait behind a conversation's running turn; the next one gets a "busy" reply. */
  maxQueued: z.number().int().min(1).max(1000).default(32),
  /** On shutdown, how long running turns may finish before they are aborted. */
  shutdownGraceSec: z.number().int().min(0).max(600).default(10),
}));

export const cronConfig = lazySchema(() => z.strictObject({
  /**
   * Jobs running at once. A job's run is a model turn (API calls, tool work) in its own
   * conversation: three keep a morning burst of schedules moving without several long turns
   * competing for one provider's rate limit or the host's two or four cores. A run waiting on a
   * person (an approval card) gives its place back, so it never holds the others up.
   */
  maxConcurrent: z.number().int().min(1).max(32).default(3),
  /** Runs kept per job in the history (`/cron list`, the cron tool's `runs`); older ones are dropped. */
  keepRuns: z.number().int().min(1).max(10_000).default(50),
}));

export const wardenConfigSchema = z.strictObject({
  owners: idsByProvider.default({}),
  /** Named lists of people (ids, `role:<id>`, `usergroup:<id>`), referenced as `group:<name>` or `accessGroup:<name>`. */
  accessGroups: accessGroupsConfig.default({}),
  /** Rate limits per sender, channel and agent, counted in the store (shared by instances on PostgreSQL). */
  rateLimit: rateLimitConfig.optional(),
  approvals: approvalsConfig.default({ target: 'channel', exec: { timeoutSec: 1800 }, waitSec: 5, timedGrantSec: 3600, hook: { timeoutSec: 120 } }),
  models: modelsConfig.default({}),
  agents: agentsConfig.default({
    defaults: { workspace: './workspace', maxToolRounds: 10, subagents: { maxSpawnDepth: 1 } },
    list: [],
  }),
  tools: toolsConfig.default({}),
  channels: channelsConfig.prefault({}),
  skills: skillsConfig.default({ extraDirs: [], limits: { maxSkillsInPrompt: 150, maxSkillsPromptChars: 18_000 }, entries: {} }),
  plugins: pluginsConfig.default({ enabled: true, paths: [], load: [], deny: [], entries: {} }),
  browser: browserConfig.prefault({}),
  sessions: sessionsConfig.prefault({}),
  cron: cronConfig.prefault({}),
  /** Image generation and speech; each tool is unavailable until its section is set. */
  media: mediaConfig.optional(),
  /** The owner's control plane: the HTTP tools API, paired nodes, config reload. */
  gateway: gatewayConfig.optional(),
  /** Which agent answers where (OpenClaw's bindings): most specific match first, config order within a tier. */
  bindings: bindingsConfig.default([]),
  /** MCP servers whose tools join the surface as `<server>__<tool>` (src/mcp). */
  mcp: mcpConfig.optional(),
  /** The operations listener: liveness, readiness and Prometheus metrics, on loopback by default. */
  ops: opsConfig.prefault({}),
  /** The durable store: embedded SQLite (default) or a PostgreSQL server shared by several instances. */
  store: storeConfig.prefault({}),
  /** Stored secrets: which commands, MCP servers and plugins receive which (docs/secrets.md). */
  secrets: secretsConfig.prefault({}),
  /** Where SQLite and other state live; `WARDEN_DATA_DIR` overrides. */
  dataDir: z.string().default('./data'),
  /** Spending caps per sender, channel, guild, agent or overall (src/usage; docs/usage-and-budgets.md). */
  budgets: budgetsConfig,
})
  .superRefine(checkMediaProviders)
  .superRefine(checkBindings);

export type WardenConfig = z.infer<typeof wardenConfigSchema>;
export type WardenConfigInput = z.input<typeof wardenConfigSchema>;
export { WEB_SEARCH_PROVIDERS, type WebFetchConfig, type WebSearchConfig, type WebSearchProviderId } from './web.js';
export type { MediaUnderstandingConfig, MediaModelEntry, MediaCapability } from './media-understanding.js';
export type { SessionVisibility, AgentToAgentConfig, CrossContextConfig } from './cross-context.js';
export type { ElevatedConfig } from './elevated.js';
export type { BindingEntry, BindingMatch } from './bindings.js';
export type { ToolSearchConfig } from './tool-search.js';
export type { McpApprovalMode, McpConfig, McpServerConfig } from './mcp.js';
export type { OpsConfig } from './ops.js';
export type { StoreConfig } from './store.js';
export type { DmPolicy, GroupPolicy, RateLimitBucket, RateLimitConfig, BotLoopProtection } from './access.js';
export { parseEntry, unknownGroupRefs, type AccessGroupsConfig, type AccessGroupConfig, type ParsedEntry } from './access-groups.js';
export { BUDGET_PERIODS, BUDGET_SCOPES, isTimeZone, type BudgetRule, type BudgetsConfig } from './budgets.js';
export { isLoopbackHost, type GatewayConfig, type GatewayHttpConfig, type GatewayNodesConfig } from './gateway.js';
