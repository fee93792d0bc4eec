import { leanFetch } from '../net/lean-fetch.js';
import Anthropic from '@anthropic-ai/sdk';
import type { MessageParam, RawMessageStreamEvent, ContentBlockParam, ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages/messages';
import { parseToolArgs } from './errors.js';
import type { AssistantMessage, Message, ModelProvider, ModelRequest, ModelResponse, StopReason, TextPart, ToolCallPart } from './types.js';
import { collectStream } from './stream.js';
import { usageFromAnthropic } from './usage.js';

export interface ClientOptions {
  name: string;
  apiKey: string | undefined;
  baseUrl?: string | undefined;
  timeoutMs: number;
}

/** Anthropic Messages API. Always streams; tool-call JSON is parsed here, so a malformed one becomes `argsError`. */
export function createAnthropicProvider(options: ClientOptions): ModelProvider {
  const client = new Anthropic({
    apiKey: options.apiKey ?? null,
    baseURL: options.baseUrl ?? null,
    timeout: options.timeoutMs,
    // Retries are ours (retry.ts), so that Retry-After, jitter and the chat message are consistent across providers.
    maxRetries: 0,
    // undici's request under a web Response: the same exchange for less CPU (see lean-fetch.ts).
    fetch: leanFetch(),
  });
  return {
    name: options.name,
    api: 'anthropic',
    async complete(request, signal) {
      return collectStream(
        () =>
          client.messages.create(
            {
              model: request.model,
              system: request.system,
              max_tokens: request.maxOutputTokens,
              messages: toAnthropicMessages(request.messages),
              ...(request.tools.length > 0
                ? {
                    tools: request.tools.map((t) => ({
                      name: t.name,
                      description: t.description,
                      input_schema: t.parameters as Anthropic.Tool.InputSchema,
                    })),
                  }
                : {}),
              stream: true,
            },
            { signal },
          ),
        new StreamAccumulator(),
        request,
        signal,
      );
    },
  };
}

/** Folds Messages stream events into one response; returns each text delta for streaming. */
class StreamAccumulator {
  private blocks: Array<{ kind: 'text'; text: string } | { kind: 'tool'; id: string; name: string; json: string }> = [];
  private stop: string | null = null;
  /** message_start carries the prompt's usage; message_delta the final output count (cumulative). */
  private usage: Record<string, unknown> = {};

  add(event: RawMessageStreamEvent): string | undefined {
    switch (event.type) {
      case 'message_start':
        this.usage = { ...event.message.usage };
        return undefined;
      case 'content_block_start': {
        const block = event.content_block;
        if (block.type === 'text') this.blocks[event.index] = { kind: 'text', text: block.text };
        else if (block.type === 'tool_use') this.blocks[event.index] = { kind: 'tool', id: block.id, name: block.name, json: '' };
        return block.type === 'text' && block.text ? block.text : undefined;
      }
      case 'content_block_delta': {
        const block = this.blocks[event.index];
        if (event.delta.type === 'text_delta' && block?.kind === 'text') {
          block.text += event.delta.text;
          return event.delta.text;
        }
        if (event.delta.type === 'input_json_delta' && block?.kind === 'tool') block.json += event.delta.partial_json;
        return undefined;
      }
      case 'message_delta':
        this.stop = event.delta.stop_reason;
        // Later fields win; a field the delta leaves null keeps what message_start said.
        for (const [k, v] of Object.entries(event.usage)) if (v !== null && v !== undefined) this.usage[k] = v;
        return undefined;
      default:
        return undefined;
    }
  }

  finish(): ModelResponse {
    const content: AssistantMessage['content'] = [];
    for (const block of this.blocks) {
      if (!block) continue;
      if (block.kind === 'text') {
        if (block.text) content.push({ type: 'text', text: block.text });
        continue;
      }
      const parsed = parseToolArgs(block.json);
      const call: ToolCallPart = { type: 'toolCall', id: block.id, name: block.name };
      if ('args' in parsed) call.args = parsed.args;
      else Object.assign(call, { argsError: parsed.error, rawArgs: block.json });
      content.push(call);
    }
    return {
      message: { role: 'assistant', content },
      stopReason: stopReason(this.stop),
      usage: usageFromAnthropic(this.usage),
    };
  }
}

function stopReason(reason: string | null): StopReason {
  if (reason === 'end_turn' || reason === 'stop_sequence') return 'end';
  if (reason === 'tool_use') return 'toolUse';
  if (reason === 'max_tokens') return 'maxTokens';
  return 'other';
}

const textOrImage = (part: TextPart | { type: 'image'; data: string; mimeType: string }) =>
  part.type === 'text'
    ? ({ type: 'text', text: part.text } as const)
    : ({
        type: 'image',
        source: { type: 'base64', media_type: part.mimeType as 'image/png', data: part.data },
      } as const);

/**
 * Anthropic wants strictly alternating user/assistant turns, with tool results as blocks of
 * the following user turn; consecutive user-side messages are merged into one.
 */
export function toAnthropicMessages(messages: Message[]): MessageParam[] {
  const out: MessageParam[] = [];
  const pushUser = (blocks: ContentBlockParam[]) => {
    const last = out[out.length - 1];
    if (last?.role === 'user' && Array.isArray(last.content)) last.content.push(...blocks);
    else out.push({ role: 'user', content: blocks });
  };
  for (const message of messages) {
    if (message.role === 'user') {
      pushUser(message.content.map(textOrImage));
    } else if (message.role === 'toolResult') {
      const block: ToolResultBlockParam = {
        type: 'tool_result',
        tool_use_id: message.toolCallId,
        content: message.content.map(textOrImage),
        ...(message.isError ? { is_error: true } : {}),
      };
      pushUser([block]);
    } else {
      const blocks: ContentBlockParam[] = message.content.map((part) =>
        part.type === 'text' ? { type: 'text', text: part.text } : { type: 'tool_use', id: part.id, name: part.name, input: part.args ?? {} },
      );
      if (blocks.length === 0) blocks.push({ type: 'text', text: '(no reply)' });
      out.push({ role: 'assistant', content: blocks });
    }
  }
  return out;
}
