import type { MessageActionPort } from './core/message/actions.js';
import type { Logger } from 'pino';
import type { ApprovalRequester } from '../approvals/types.js';
import type { TurnContext } from '../policy/context.js';
import type { HookApprovalRequest } from '../hooks/types.js';
import type { JsonSchema, ToolContent } from '../models/types.js';
import type { Availability } from '../policy/tool-meta.js';

// A tool's identity (what the policy decides over) lives with the policy; its content types with
// the models that read them. Re-exported: this file is the tool contract's front door.
export { SECTION_IDS, type SectionId, type ToolSource, type ToolMeta, type Availability } from '../policy/tool-meta.js';
export type { JsonSchema, ToolContent } from '../models/types.js';

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
  /**
   * The stored secrets `secrets.grants` hands to this exec command, as environment variables
   * (name → value); absent where no secret store runs. Their values are known secrets: the
   * command's output is scrubbed of them like of every other.
   */
  secretEnv?: ((command: string) => Promise<Record<string, string>>) | undefined;
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
  /** `messageId`: the platform's id of the (first) message posted, where the adapter gives it. */
  send(target: MessageTarget, text: string): Promise<{ ok: true; channelId: string; messageId?: string | undefined } | { ok: false; error: string }>;
  /** The running adapter's message actions (react, pin, read …); undefined where it has none. */
  actions?(provider: string): MessageActionPort | undefined;
}
