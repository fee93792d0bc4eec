/**
 * The agent: one turn of model ↔ tools for a session.
 *
 * The router builds one runtime at startup with `createAgentRuntime(deps)` and calls
 * `runtime.runTurn(request)` for each queued message of a session (one at a time per session):
 *
 * ```ts
 * const stop = new AbortController();            // aborted by /stop
 * const outcome = await runtime.runTurn({
 *   sessionKey, turn, input: { text: message.text },
 *   signal: stop.signal,
 *   onTextDelta: (d) => draft.append(d),          // optional streaming
 * });
 * await adapter.send(target, { text: outcome.reply });
 * ```
 *
 * `runTurn` never throws for model or tool failures. `outcome.status` is `completed`,
 * `aborted` (the partial reply, possibly empty) or `failed`, in which case `outcome.reply` is a
 * plain message for the chat (for example after the last retry of a rate-limited model).
 */
export { createAgentRuntime, type WardenAgentRuntime } from './runtime.js';
export { AgentSessions, type AgentSessionsApi, type SubagentRunView } from './sessions.js';
export { SessionContextStore, type SessionContextRecorder, type StoredSessionContext } from '../turn/session-contexts.js';
export { DbTranscriptStore } from './transcript.js';
export { SubagentRunStore, type SubagentRunRecord, type SubagentStatus } from './subagent-runs.js';
export { buildSystemPrompt, UNTRUSTED_CONTENT_RULE } from './system-prompt.js';
export type {
  AgentDeps,
  AgentRuntime,
  ModelResolver,
  ToolCallRequest,
  ToolCallScope,
  ToolDefinition,
  ToolExecutor,
  ToolSurface,
  TranscriptAppend,
  TranscriptEntry,
  TranscriptStore,
  TurnEvent,
  TurnFailure,
  TurnInput,
  TurnOutcome,
  TurnRequest,
} from './types.js';
