/**
 * The provider-neutral conversation every model adapter speaks. Adapters translate it to and
 * from their SDK's wire shapes; the turn loop, the transcript and compaction only see these.
 */

export type TextPart = { type: 'text'; text: string };
export type ImagePart = { type: 'image'; data: string; mimeType: string };

/**
 * A tool call as the model produced it. `args` is set when the arguments parsed to a JSON
 * object; otherwise `argsError` says why not and `rawArgs` keeps what the model sent, so the
 * loop can hand the model an error result it can recover from.
 */
export interface ToolCallPart {
  type: 'toolCall';
  id: string;
  name: string;
  args?: Record<string, unknown> | undefined;
  argsError?: string | undefined;
  rawArgs?: string | undefined;
}

export type UserMessage = { role: 'user'; content: Array<TextPart | ImagePart> };
export type AssistantMessage = { role: 'assistant'; content: Array<TextPart | ToolCallPart> };
/** The result of one tool call; adapters group consecutive ones as their API requires. */
export type ToolResultMessage = {
  role: 'toolResult';
  toolCallId: string;
  toolName: string;
  content: Array<TextPart | ImagePart>;
  isError: boolean;
};
export type Message = UserMessage | AssistantMessage | ToolResultMessage;

/** A tool as sent to a model: its schema already projected for that provider and model. */
export interface ModelTool {
  /** The name on the wire (after provider name rules). */
  name: string;
  description: string;
  parameters: JsonSchema;
}

export interface ModelRequest {
  /** The model id without the provider prefix. */
  model: string;
  system: string;
  messages: Message[];
  tools: ModelTool[];
  maxOutputTokens: number;
  /**
   * When set, the adapter streams and calls this with each text delta as it arrives. A delta
   * is never taken back: retries only happen before the first delta.
   */
  onTextDelta?: ((delta: string) => void) | undefined;
}

export type StopReason = 'end' | 'toolUse' | 'maxTokens' | 'other';

/**
 * Tokens one call used, as the provider reported them, in one meaning for every API:
 * `inputTokens` counts every prompt token (cached ones included), `outputTokens` every generated
 * token (reasoning included). The parts are subsets of those totals, absent when not reported.
 */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  /** Prompt tokens read from the provider's cache (billed at the cache-read price). */
  cachedInputTokens?: number | undefined;
  /** Prompt tokens written to the provider's cache (Anthropic; billed at the cache-write price). */
  cacheWriteTokens?: number | undefined;
  /** Output tokens spent on reasoning (thinking) the reply does not show. */
  reasoningTokens?: number | undefined;
}

export interface ModelResponse {
  message: AssistantMessage;
  stopReason: StopReason;
  usage: Usage;
}

/** The wire dialect an adapter speaks; `openai` also covers Ollama, vLLM, llama.cpp, LM Studio. */
export type ProviderApi = 'anthropic' | 'openai' | 'gemini';

/**
 * One configured provider. `complete` throws only `ModelCallError` (or an AbortError when the
 * signal fires); retries are the caller's business (see `retry.ts`), adapters never retry.
 */
export interface ModelProvider {
  /** Provider name as written before the slash in `provider/model`. */
  readonly name: string;
  readonly api: ProviderApi;
  complete(request: ModelRequest, signal: AbortSignal): Promise<ModelResponse>;
}

/** Why a call failed, in terms a retry policy and a chat message can use. */
export type ModelErrorKind = 'rateLimited' | 'server' | 'timeout' | 'network' | 'auth' | 'badRequest' | 'notFound' | 'other';

export class ModelCallError extends Error {
  override readonly name = 'ModelCallError';
  constructor(
    readonly kind: ModelErrorKind,
    message: string,
    readonly details: {
      status?: number | undefined;
      /** From Retry-After / retry-after-ms, when the server sent one. */
      retryAfterMs?: number | undefined;
      /** True once any text delta reached the caller; such a call is never retried. */
      streamed?: boolean | undefined;
      cause?: unknown;
    } = {},
  ) {
    super(message);
  }

  get retryable(): boolean {
    if (this.details.streamed) return false;
    return this.kind === 'rateLimited' || this.kind === 'server' || this.kind === 'timeout' || this.kind === 'network';
  }
}

export const isAbortError = (err: unknown): boolean =>
  err instanceof Error && (err.name === 'AbortError' || err.name === 'APIUserAbortError');

/** A JSON schema, as tools declare their arguments and providers receive them. */
export type JsonSchema = { [key: string]: unknown };

export type ToolContent =
  | { type: 'text'; text: string }
  | { type: 'image'; data: string; mimeType: string };
