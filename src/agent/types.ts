import type { WardenConfig } from '../config/index.js';
import type { HookBus } from '../hooks/bus.js';
import type { ResolvedModel } from '../models/registry.js';
import type { AgentSessions, SubagentRunView } from './sessions.js';
import type { SubagentRunStore } from './subagent-runs.js';
import type { SessionContextStore } from '../turn/session-contexts.js';
import type { ImagePart, Message, Usage } from '../models/types.js';
import type { TurnContext } from '../policy/context.js';
import type { JsonSchema, ToolFile, ToolResult } from '../tools/types.js';
import type { UsageService } from '../usage/service.js';
import type { BatchResult, BatchStep, SqlValue } from '../store/db.js';

/** What the router hands over for one queued message. */
export interface TurnRequest {
  sessionKey: string;
  /** The policy context of this turn (provider, chat, sender, model, depth, …). */
  turn: TurnContext;
  input: TurnInput;
  /** Fires on `/stop` (or shutdown): the model call and running tools are aborted. */
  signal: AbortSignal;
  /**
   * Streams the reply as it is written, for platforms that edit a message in place. Deltas of
   * one model round are never taken back; text of rounds that end in tool calls is streamed
   * too. The complete reply is always in `TurnOutcome.reply`.
   */
  onTextDelta?: ((delta: string) => void) | undefined;
  /** Progress for typing indicators and logs; never needed for correctness. */
  onEvent?: ((event: TurnEvent) => void) | undefined;
  /**
   * The run this turn belongs to for loop detection. A turn a person's message starts gets a
   * new one; a turn its run starts itself (a subagent, a messaged session, the turn finished
   * subagents start) continues the run that started it, so a loop cannot restart its count there.
   */
  runId?: string | undefined;
  /**
   * The turn's calls may defer their approvals (`approvals.waitSec`): an undecided call answers
   * "pending" and the turn ends; the gateway posts the result and starts a follow-up turn. Set
   * for turns the gateway runs from a conversation's queue; others (subagents) wait inline.
   */
  deferApprovals?: boolean | undefined;
  /**
   * What the turn starts from, read in the write that took the session's lease (`TurnStartRead`):
   * used instead of reading again while still fresh.
   */
  start?: TurnStart | undefined;
  /**
   * The incoming message is already in the transcript, written with its place (`seq`, when
   * known: the place's write returned it; unknown for a place taken over from an instance that
   * died): the turn does not write it again.
   */
  written?: { seq?: number | undefined } | undefined;
  /**
   * The message's place carries it (another instance that takes the place over runs it again):
   * not written as the turn starts, only with the model's first answer, as the place is not
   * marked by such a write (see `TurnStartRead.write` for the write that marks it).
   */
  rerunnable?: boolean | undefined;
}

/**
 * A turn's first read — the session's transcript and whether subagent results wait — as batch
 * steps that another write carries: the place that takes the session's lease, so a message on
 * an idle conversation starts in one round trip. `read` makes the steps' results what the
 * turn starts from (one more read only where a summary leaves entries between).
 */
export interface TurnStartRead {
  steps: readonly BatchStep[];
  read(results: readonly BatchResult[]): Promise<TurnStart>;
  /**
   * With `startRead`'s `incoming`: the message's write, as steps guarded by the place's
   * condition (they write only where the place took the lease), to run before `steps`.
   */
  write?: ((guard: { sql: string; params: SqlValue[] }) => readonly BatchStep[]) | undefined;
  /** The written message's seq from `write`'s results; undefined when it was not written. */
  writtenSeq?: ((results: readonly BatchResult[]) => number | undefined) | undefined;
}

export interface TurnStart {
  entries: TranscriptEntry[];
  resultsWaiting: boolean;
  /** False once the session was written through this process's transcript store after the read: the turn reads again. */
  fresh(): boolean;
}

export interface TurnInput {
  text: string;
  /** Images attached to the message (vision models only). */
  images?: ImagePart[] | undefined;
  /**
   * Whose words these are. Text from someone other than the session's own user (a message
   * relayed from another user or session) is wrapped as untrusted data.
   */
  origin?: 'user' | 'otherUser' | 'session' | 'subagent' | undefined;
  senderName?: string | undefined;
}

export type TurnEvent =
  | { type: 'modelCall'; round: number }
  | { type: 'toolCall'; round: number; tool: string; toolCallId: string }
  /** `files`: what the tool made for the people in the conversation, posted with the reply. */
  | { type: 'toolResult'; round: number; tool: string; toolCallId: string; isError: boolean; files?: ToolFile[] | undefined }
  | { type: 'retry'; attempt: number; delayMs: number; reason: string }
  | { type: 'compacted'; removedMessages: number };

/**
 * How a turn ended. `reply` is always the text to post in the chat: the model's answer, the
 * partial answer of a stopped turn, or a plain error message after the last retry.
 */
export type TurnOutcome =
  | { status: 'completed'; reply: string; rounds: number; usage: Usage }
  | { status: 'aborted'; reply: string; rounds: number; usage: Usage }
  | { status: 'failed'; reply: string; rounds: number; usage: Usage; error: TurnFailure };

export interface TurnFailure {
  /** `model` = the provider failed after its retries; `config` = no usable model or key; `tools` = the empty-allowlist guard. */
  kind: 'model' | 'config' | 'tools' | 'rounds' | 'budget';
  message: string;
}

/** A tool as the loop offers it to the model: id, description and (unprojected) JSON schema. */
export interface ToolDefinition {
  id: string;
  description: string;
  parameters: JsonSchema;
}

/** The tools a turn may use, decided by the policy for this turn's context. */
export type ToolSurface =
  /**
   * `turn`: the context the surface was resolved for when the executor added run inputs
   * (`before_prompt_build` toolsAllow); the turn's calls carry it, so a tool that recomputes
   * the surface (sessions_spawn's ceiling) sees the same one.
   */
  | {
      ok: true;
      tools: ToolDefinition[];
      turn?: TurnContext | undefined;
      /** What before_prompt_build handlers added to the prompt of this run (the turn applies it). */
      prompt?: PromptAdditions | undefined;
    }
  /** The empty-allowlist guard or a config problem: the turn fails with this message. */
  | { ok: false; message: string };

/** before_prompt_build's merged result: the turn puts it into the system prompt and the user's message. */
export interface PromptAdditions {
  systemPrompt?: string | undefined;
  prependContext: string[];
  appendContext: string[];
  prependSystemContext?: string[] | undefined;
  appendSystemContext?: string[] | undefined;
}

/** What the turn tells the surface about the run it is for (before_prompt_build's event). */
export interface SurfaceRun {
  prompt: string;
  messages: unknown[];
  runId?: string | undefined;
}

export interface ToolCallRequest {
  toolCallId: string;
  tool: string;
  args: Record<string, unknown>;
}

export interface ToolCallScope {
  sessionKey: string;
  turn: TurnContext;
  signal: AbortSignal;
  /** The ids on this turn's surface: the call-time gate refuses anything else. */
  surface: readonly string[];
  /**
   * The run the call counts toward for loop detection (see `TurnRequest.runId`). Absent for a
   * call a person made — `/exec`, a skill command, an approval decision — which is never counted.
   */
  runId?: string | undefined;
  /** Who made the call: the model (default) or a person through a command (`/exec`). */
  via?: 'agent' | 'command' | undefined;
  /** The call's approvals may defer it instead of holding the caller (see `TurnRequest.deferApprovals`). */
  deferApprovals?: boolean | undefined;
}

/**
 * The narrow seam between the loop and the governed call path (validation, loop detection,
 * hooks, approval, execute, normalise/truncate). It must not throw for a tool's failure:
 * errors come back as `isError` results. It may throw an AbortError when the signal fires.
 */
export interface ToolExecutor {
  surface(turn: TurnContext, sessionKey: string, run?: SurfaceRun): Promise<ToolSurface> | ToolSurface;
  execute(call: ToolCallRequest, scope: ToolCallScope): Promise<ToolResult>;
}

/** A stored transcript entry: one model-visible message, or a compaction summary. */
export interface TranscriptEntry {
  /** Increasing within a session (the store's row id). */
  seq: number;
  message: Message;
  /** A summary stands for every entry up to `coversThroughSeq` in what the model sees. */
  kind: 'message' | 'summary';
  coversThroughSeq?: number | undefined;
  createdAt: number;
  /**
   * The person whose message a user entry is (a shared channel session holds several). In a
   * later turn of someone else it is shown to the model as untrusted data from that person.
   */
  sender?: MessageSender | undefined;
}

export interface MessageSender {
  id: string;
  name?: string | undefined;
}

export type TranscriptAppend = Pick<TranscriptEntry, 'message' | 'kind' | 'coversThroughSeq' | 'sender'> & {
  /**
   * A message written over the session's entry with this seq (same seq, same place in the
   * transcript) instead of as a new one: the incoming message written with its place, once the
   * turn knows what the model was shown of it (a plugin's added context).
   */
  rewrites?: number | undefined;
};

/**
 * Where a session's conversation lives. Append-only: compaction appends a summary entry
 * that covers everything up to a point; older entries stay for `sessions_history`.
 */
export interface TranscriptStore {
  /** What the model should see: the latest summary (if any) first, then the entries it does not cover. */
  load(sessionKey: string): Promise<TranscriptEntry[]>;
  /**
   * Writes `entries` and the session's activity time (its row created on first use), all or
   * none. `touch: false` leaves the activity time as it is: a turn writes it once, with its
   * message, and not again with the answer and the rounds after (see `runTurn`).
   */
  append(sessionKey: string, entries: TranscriptAppend[], options?: { touch?: boolean }): Promise<TranscriptEntry[]>;
  /** Entries for `sessions_history`, newest last, including those folded into summaries. */
  history(sessionKey: string, options: { limit: number; beforeSeq?: number | undefined }): Promise<TranscriptEntry[]>;
  sessions(): Promise<Array<{ sessionKey: string; entries: number; updatedAt: number }>>;
  /**
   * `load` as batch steps another write carries (see `TurnStartRead`); absent where the store
   * cannot say it that way. `read` gives what `load` would have, and whether it is still fresh.
   */
  loadSteps?(sessionKey: string): { steps: readonly BatchStep[]; read(results: readonly BatchResult[]): Promise<{ entries: TranscriptEntry[]; fresh(): boolean }> };
  /**
   * `append` of one entry as steps another write carries under its guard (see
   * `TurnStartRead.write`); absent where the store cannot say it that way. Counted as a write
   * when asked for (before `loadSteps` of the same write, whose read then sees it).
   */
  guardedAppend?(
    sessionKey: string,
    entry: TranscriptAppend,
  ): { steps(guard: { sql: string; params: SqlValue[] }): readonly BatchStep[]; seq(results: readonly BatchResult[]): number | undefined };
  /**
   * `sessions_search`: a page of entries matching every word of `terms`, best first, among
   * `sessionKeys` only (the caller decided visibility). Absent on a store without an index.
   */
  search?(options: { sessionKeys: readonly string[]; terms: readonly string[]; limit: number; offset: number }): Promise<TranscriptSearchHit[]>;
}

/** One matching entry: its seq, session, who said it, its indexed text. */
export interface TranscriptSearchHit {
  seq: number;
  sessionKey: string;
  role: string;
  text: string;
  createdAt: number;
}

/** Resolves `provider/model` to an adapter and its settings; errors as values (missing key, unknown provider). */
export type ModelResolver = (ref: string) => ResolvedModel;

export interface AgentDeps {
  config: WardenConfig;
  /**
   * On a store several instances share: the instance id runs are recorded under, and whether a
   * run's owner is gone (its instance's lease ran out; a pid means nothing on another host).
   */
  ownership?: { instanceId: string; isOwnerGone(owner: { pid: number; instance: string }): boolean } | undefined;
  models: ModelResolver;
  tools: ToolExecutor;
  transcripts: TranscriptStore;
  /** Subagent runs on the store, so a restart finds them (and their results) again. */
  subagentRuns: SubagentRunStore;
  /** The conversation each session was created by (what `sessions_send` runs a turn under). */
  sessionContexts: Pick<SessionContextStore, 'get'>;
  /** The `<available_skills>` block for a turn (the skills snapshot); absent until skills exist. */
  skillsCatalog?: ((turn: TurnContext, sessionKey: string) => string) | undefined;
  /** The sessions service, when the tool layer was built before the runtime (it needs it); created otherwise. */
  sessions?: AgentSessions | undefined;
  /** Starts a parent turn when one of its subagents finished (the router enqueues it); otherwise results wait for the parent's next turn. */
  announce?: ((parentKey: string, run: SubagentRunView) => void) | undefined;
  /** Parallel tool calls per round; results still go back in call order. Default 4. */
  toolConcurrency?: number | undefined;
  /** Plugin hooks: before_model_resolve, model calls, compaction, agent_end, subagents. */
  hooks?: HookBus | undefined;
  /** Usage accounting and budgets: every model call of a turn is admitted and recorded through it (src/usage). */
  usage?: Pick<UsageService, 'wrap'> | undefined;
}

/** What the router holds: one runtime per process, one `runTurn` per queued message. */
export interface AgentRuntime {
  /** Never throws for a model or tool failure; the outcome says what to post. */
  runTurn(request: TurnRequest): Promise<TurnOutcome>;
  /** A turn's first read of `sessionKey` as steps another write can carry (see `TurnStartRead`); absent or undefined: the turn reads itself. */
  startRead?(sessionKey: string, incoming?: TranscriptAppend): TurnStartRead | undefined;
}
