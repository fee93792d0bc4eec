import { randomUUID } from 'node:crypto';
import OpenAI from 'openai';
import type { ChatCompletionChunk, ChatCompletionContentPart, ChatCompletionMessageParam } from 'openai/resources/chat/completions/completions';
import type { ClientOptions } from './anthropic.js';
import { parseToolArgs } from './errors.js';
import type { AssistantMessage, Message, ModelProvider, ModelResponse, StopReason, ToolCallPart, Usage } from './types.js';
import { collectStream } from './stream.js';
import { leanFetch } from '../net/lean-fetch.js';
import { usageFromOpenAI } from './usage.js';

/**
 * OpenAI Chat Completions, and every server that speaks it (Ollama, vLLM, llama.cpp, LM Studio)
 * through `baseUrl`. A local server may need no key; the SDK still wants a string.
 */
export function createOpenAIProvider(options: ClientOptions): ModelProvider {
  const client = new OpenAI({
    apiKey: options.apiKey ?? 'none',
    baseURL: options.baseUrl ?? null,
    timeout: options.timeoutMs,
    maxRetries: 0,
    // undici's request under a web Response: the same exchange for less CPU (see lean-fetch.ts).
    fetch: leanFetch(),
  });
  // Compatible servers know the older `max_tokens`; OpenAI's reasoning models only `max_completion_tokens`.
  const official = options.baseUrl === undefined;
  return {
    name: options.name,
    api: 'openai',
    async complete(request, signal) {
      return collectStream(
        () =>
          client.chat.completions.create(
            {
              model: request.model,
              messages: toOpenAIMessages(request.system, request.messages),
              ...(official ? { max_completion_tokens: request.maxOutputTokens } : { max_tokens: request.maxOutputTokens }),
              ...(request.tools.length > 0
                ? {
                    tools: request.tools.map((t) => ({
                      type: 'function' as const,
                      function: { name: t.name, description: t.description, parameters: t.parameters },
                    })),
                  }
                : {}),
              stream: true,
              stream_options: { include_usage: true },
            },
            { signal },
          ),
        new ChunkAccumulator(),
        request,
        signal,
      );
    },
  };
}

class ChunkAccumulator {
  private text = '';
  private calls: Array<{ id: string; name: string; args: string }> = [];
  private finish_: string | null = null;
  private usage: Usage = { inputTokens: 0, outputTokens: 0 };

  add(chunk: ChatCompletionChunk): string | undefined {
    if (chunk.usage) this.usage = usageFromOpenAI(chunk.usage);
    const choice = chunk.choices[0];
    if (!choice) return undefined;
    if (choice.finish_reason) this.finish_ = choice.finish_reason;
    for (const tc of choice.delta.tool_calls ?? []) {
      const slot = (this.calls[tc.index] ??= { id: '', name: '', args: '' });
      if (tc.id) slot.id = tc.id;
      if (tc.function?.name) slot.name += tc.function.name;
      if (tc.function?.arguments) slot.args += tc.function.arguments;
    }
    const delta = choice.delta.content;
    if (delta) this.text += delta;
    return delta ?? undefined;
  }

  finish(): ModelResponse {
    const content: AssistantMessage['content'] = [];
    if (this.text) content.push({ type: 'text', text: this.text });
    this.calls.forEach((c, i) => {
      if (!c) return;
      const parsed = parseToolArgs(c.args);
      // Some compatible servers omit ids; the loop needs one to pair the result.
      const call: ToolCallPart = { type: 'toolCall', id: c.id || `call_${randomUUID().slice(0, 8)}_${i}`, name: c.name };
      if ('args' in parsed) call.args = parsed.args;
      else Object.assign(call, { argsError: parsed.error, rawArgs: c.args });
      content.push(call);
    });
    return { message: { role: 'assistant', content }, stopReason: stopReason(this.finish_, this.calls.length > 0), usage: this.usage };
  }
}

function stopReason(reason: string | null, hasCalls: boolean): StopReason {
  if (reason === 'tool_calls' || reason === 'function_call' || (hasCalls && reason === 'stop')) return 'toolUse';
  if (reason === 'stop') return 'end';
  if (reason === 'length') return 'maxTokens';
  return hasCalls ? 'toolUse' : 'other';
}

const imageUrl = (data: string, mimeType: string): ChatCompletionContentPart => ({
  type: 'image_url',
  image_url: { url: `data:${mimeType};base64,${data}` },
});

/** Tool messages carry text only: images a tool returned follow as a user message. */
export function toOpenAIMessages(system: string, messages: Message[]): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [{ role: 'system', content: system }];
  const pendingImages: ChatCompletionContentPart[] = [];
  const flushImages = () => {
    if (pendingImages.length === 0) return;
    out.push({ role: 'user', content: [{ type: 'text', text: 'Images returned by the tool calls above:' }, ...pendingImages.splice(0)] });
  };
  for (const message of messages) {
    if (message.role !== 'toolResult') flushImages();
    if (message.role === 'user') {
      const onlyText = message.content.every((p) => p.type === 'text');
      out.push({
        role: 'user',
        content: onlyText
          ? message.content.map((p) => (p.type === 'text' ? p.text : '')).join('\n')
          : message.content.map((p) => (p.type === 'text' ? { type: 'text' as const, text: p.text } : imageUrl(p.data, p.mimeType))),
      });
    } else if (message.role === 'assistant') {
      const text = message.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
      const calls = message.content.flatMap((p) => (p.type === 'toolCall' ? [p] : []));
      out.push({
        role: 'assistant',
        content: text || null,
        ...(calls.length > 0
          ? {
              tool_calls: calls.map((c) => ({
                id: c.id,
                type: 'function' as const,
                function: { name: c.name, arguments: c.rawArgs ?? JSON.stringify(c.args ?? {}) },
              })),
            }
          : {}),
      });
    } else {
      const text = message.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n');
      for (const p of message.content) if (p.type === 'image') pendingImages.push(imageUrl(p.data, p.mimeType));
      out.push({ role: 'tool', tool_call_id: message.toolCallId, content: text || (message.isError ? 'error' : 'ok') });
    }
  }
  flushImages();
  return out;
}
