import { randomUUID } from 'node:crypto';
import { GoogleGenAI, type Content, type GenerateContentResponse, type Part } from '@google/genai';
import type { ClientOptions } from './anthropic.js';
import type { AssistantMessage, Message, ModelProvider, ModelResponse, StopReason, Usage } from './types.js';
import { collectStream } from './stream.js';
import { leanFetch } from '../net/lean-fetch.js';
import { usageFromGemini } from './usage.js';

/** Gemini through @google/genai (Gemini API, key from the environment). Streams. */
export function createGeminiProvider(options: ClientOptions): ModelProvider {
  const client = new GoogleGenAI({
    apiKey: options.apiKey ?? '',
    httpOptions: {
      ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}),
      timeout: options.timeoutMs,
      retryOptions: { attempts: 1 },
      // undici's request under a web Response, as the other adapters (see lean-fetch.ts): less
      // CPU per call, and a redirect to another host is not followed with the key.
      fetch: leanFetch(),
    },
  });
  return {
    name: options.name,
    api: 'gemini',
    async complete(request, signal) {
      return collectStream(
        () =>
          client.models.generateContentStream({
            model: request.model,
            contents: toGeminiContents(request.messages),
            config: {
              systemInstruction: request.system,
              maxOutputTokens: request.maxOutputTokens,
              abortSignal: signal,
              ...(request.tools.length > 0
                ? {
                    tools: [
                      {
                        functionDeclarations: request.tools.map((t) => ({
                          name: t.name,
                          description: t.description,
                          parametersJsonSchema: t.parameters,
                        })),
                      },
                    ],
                  }
                : {}),
            },
          }),
        new ResponseAccumulator(),
        request,
        signal,
      );
    },
  };
}

class ResponseAccumulator {
  private text = '';
  private calls: Array<{ id?: string | undefined; name: string; args: Record<string, unknown> }> = [];
  private finish_: string | undefined;
  private usage: Usage = { inputTokens: 0, outputTokens: 0 };

  add(chunk: GenerateContentResponse): string | undefined {
    if (chunk.usageMetadata) {
      this.usage = usageFromGemini(chunk.usageMetadata);
    }
    const candidate = chunk.candidates?.[0];
    if (!candidate) return undefined;
    if (candidate.finishReason) this.finish_ = candidate.finishReason;
    let delta = '';
    for (const part of candidate.content?.parts ?? []) {
      if (part.thought) continue;
      if (part.text) delta += part.text;
      if (part.functionCall?.name) {
        this.calls.push({ id: part.functionCall.id, name: part.functionCall.name, args: part.functionCall.args ?? {} });
      }
    }
    this.text += delta;
    return delta || undefined;
  }

  finish(): ModelResponse {
    const content: AssistantMessage['content'] = [];
    if (this.text) content.push({ type: 'text', text: this.text });
    this.calls.forEach((c, i) => content.push({ type: 'toolCall', id: c.id ?? `call_${randomUUID().slice(0, 8)}_${i}`, name: c.name, args: c.args }));
    return { message: { role: 'assistant', content }, stopReason: stopReason(this.finish_, this.calls.length > 0), usage: this.usage };
  }
}

function stopReason(reason: string | undefined, hasCalls: boolean): StopReason {
  if (hasCalls) return 'toolUse';
  if (reason === 'STOP') return 'end';
  if (reason === 'MAX_TOKENS') return 'maxTokens';
  return 'other';
}

/** Tool results are `functionResponse` parts of a user turn; consecutive user-side parts share one turn. */
export function toGeminiContents(messages: Message[]): Content[] {
  const out: Content[] = [];
  const push = (role: 'user' | 'model', parts: Part[]) => {
    const last = out[out.length - 1];
    if (last?.role === role) last.parts?.push(...parts);
    else out.push({ role, parts });
  };
  const namesById = new Map<string, string>();
  for (const message of messages) {
    if (message.role === 'user') {
      push(
        'user',
        message.content.map((p) => (p.type === 'text' ? { text: p.text } : { inlineData: { mimeType: p.mimeType, data: p.data } })),
      );
    } else if (message.role === 'assistant') {
      const parts: Part[] = message.content.map((p) => {
        if (p.type === 'text') return { text: p.text };
        namesById.set(p.id, p.name);
        return { functionCall: { id: p.id, name: p.name, args: p.args ?? {} } };
      });
      push('model', parts.length > 0 ? parts : [{ text: '(no reply)' }]);
    } else {
      const text = message.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n');
      const parts: Part[] = [
        {
          functionResponse: {
            id: message.toolCallId,
            name: namesById.get(message.toolCallId) ?? message.toolName,
            response: message.isError ? { error: text } : { output: text },
          },
        },
      ];
      for (const p of message.content) if (p.type === 'image') parts.push({ inlineData: { mimeType: p.mimeType, data: p.data } });
      push('user', parts);
    }
  }
  return out;
}
