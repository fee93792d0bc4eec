import type { Logger } from 'pino';
import type { WardenConfig } from '../config/schema/index.js';
import type { CronJobs } from '../cron/jobs.js';
import type { CronScheduler } from '../cron/scheduler.js';
import type { Store } from '../store/store.js';
import type { AgentSessionsApi } from '../agent/sessions.js';
import type { ApprovalRequester } from '../approvals/types.js';
import type { ProfileId } from '../config/schema/policy.js';
import type { TurnContext } from '../policy/context.js';
import type { HookApprovalRequest } from '../hooks/types.js';

export const SECTION_IDS = [
  'fs',
  'runtime',
  'web',
  'memory',
  'sessions',
  'ui',
  'messaging',
  'automation',
  'nodes',
  'agents',
  'media',
] as const;
export type SectionId = (typeof SECTION_IDS)[number];

/**
 * Where a tool comes from; plugin and MCP tools join groups by their origin. An MCP `placeholder`
 * stands for the tools of a server that has not listed them yet (`<server>__*`): it is never
 * available, so `/tools` can say why the server's tools are missing.
 */
export type ToolSource = { kind: 'core' } | { kind: 'plugin'; pluginId: string } | { kind: 'mcp'; server: string; placeholder?: true };

/** What the policy knows about a tool: identity and membership, never its implementation. */
export interface ToolMeta {
  id: string;
  label: string;
  description: string;
  section: SectionId | 'plugins';
  profiles: readonly ProfileId[];
  /** Member of `group:warden` (alias `group:openclaw`). */
  inWardenGroup: boolean;
  /** Only owners may see or call it (cron, gateway, nodes). */
  ownerOnly: boolean;
  source: ToolSource;
}

export type JsonSchema = { [key: string]: unknown };

export type ToolContent =
  | { type: 'text'; text: string }
  | { type: 'image'; data: string; mimeType: string };

/** The normalised shape every call returns. `details` is stored, never shown to the model. */
export interface ToolResult {
  content: ToolContent[];
  details?: unknown;
  isError?: boolean;
  /**
   * Files for the people in the conversation (a generated image, speech, a screenshot): posted
   * with the turn's reply as attachments. Never shown to the model.
   */
  files?: ToolFile[] | undefined;
}

/** A file a tool made, for the chat; `path` (workspace-relative) is named when it cannot be posted. */
export interface ToolFile {
  name: string;
  mimeType: string;
  data: Buffer;
  path?: string | undefined;
}

/** Why a tool cannot be offered on this machine or in this configuration. */
export type Availability = { ok: true } | { ok: false; why: string };

/** What a tool's execute() receives besides its arguments. */
export interface ToolCallContext {
  toolCallId: string;
  signal: AbortSignal;
  turn: TurnContext;
  sessionKey: string;
  workspaceDir: string;
  log: Logger;
  /** Asks a human (approval card) and waits; used by exec for on-miss commands. */
  approvals: ApprovalRequester;
  /** The loop-detection run of the calling turn; the turns a tool starts (subagents, sends) continue it. */
  runId?: string | undefined;
  /** Variables plugins add to exec's environment (resolve_exec_env); absent without such hooks. */
  resolveExecEnv?: ((host: 'gateway' | 'sandbox') => Promise<Record<string, string>>) | undefined;
}

/** A runnable tool. Its id must exist in the catalog (or be declared by a plugin). */
export interface ToolImplementation<Args = Record<string, unknown>> {
  id: string;
  /** What the model reads about the tool; core tools take the catalog's. */
  description?: string | undefined;
  /** JSON schema of the arguments; validated before execute is called. */
  parameters: JsonSchema;
  /** Prerequisites of this machine/config (Chromium for the browser, a model for image). */
  availability?: () => Availability;
  /**
   * The tool's own approval rule (an MCP tool's annotations): asked by the call chain after
   * the trusted policies, before the hooks; undefined = this call needs no approval.
   */
  approval?: ((args: Args) => ToolApprovalRequest | undefined) | undefined;
  execute(args: Args, ctx: ToolCallContext): Promise<ToolResult | unknown>;
}

/** What a tool asks an approver, with the facts its card shows besides the arguments. */
export interface ToolApprovalRequest extends HookApprovalRequest {
  facts?: Array<{ label: string; value: string }>;
}

/**
 * What a tool factory may need to build an implementation: the config, the store, and the
 * long-lived services of a running Warden. The CLI builds it with only what it has (no
 * scheduler, for instance); a tool must say clearly when a service it needs is absent.
 */
export interface ToolRuntime {
  config: WardenConfig;
  /** Directory relative config paths (workspaces, data dir) resolve against. */
  baseDir: string;
  /** The config file read, when there is one (the sandbox masks it). */
  configFile?: string | undefined;
  store?: Store | undefined;
  cron?: { jobs: CronJobs; scheduler?: CronScheduler | undefined } | undefined;
  /** Sessions and subagents of the running agent (session tools); absent without a model. */
  sessions?: AgentSessionsApi | undefined;
  /** Sends through the running adapters; absent outside `warden start`. */
  messaging?: MessagingService | undefined;
  /** Live state of the running bot; absent outside `warden start`. */
  status?: (() => RuntimeStatus) | undefined;
  /** The owner's control plane (config administration, paired nodes); absent outside `warden start`. */
  control?: ControlPlane | undefined;
}

/** What the owner-only gateway and nodes tools act on in a running Warden. */
export interface ControlPlane {
  admin?: import('../control/config-admin.js').ConfigAdmin | undefined;
  nodes?: import('../control/nodes/hub.js').NodeHub | undefined;
}

/**
 * Erases a tool's argument type for the registry. Sound because the call chain validates the
 * arguments against `parameters` before `execute` runs.
 */
export function eraseArgs<Args>(tool: ToolImplementation<Args>): ToolImplementation {
  return tool as unknown as ToolImplementation;
}

/** What a running Warden reports about itself to the owner-only gateway tool. */
export interface RuntimeStatus {
  startedAt: number;
  adapters: Array<{ provider: string; state: string; detail?: string }>;
  /** Sessions with a turn running or queued. */
  activeSessions?: number;
}

/** Where the message tool may post: a conversation on one of the running adapters. */
export interface MessageTarget {
  provider: string;
  /** Channel id; a `#name` is resolved by the service when it can. */
  channel?: string | undefined;
  threadId?: string | undefined;
  /** Send to this user's DM instead of a channel. */
  userId?: string | undefined;
}

export interface MessagingService {
  providers(): string[];
  send(target: MessageTarget, text: string): Promise<{ ok: true; channelId: string } | { ok: false; error: string }>;
}
