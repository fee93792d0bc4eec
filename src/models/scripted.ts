import { setTimeout as sleep } from 'node:timers/promises';
import { ModelCallError, type AssistantMessage, type ModelProvider, type ModelRequest, type ModelResponse, type ProviderApi } from './types.js';

/** One scripted step: an assistant message (text and/or tool calls), or a failure. */
export type ScriptStep =
  | { text?: string; calls?: Array<{ id?: string; name: string; args?: Record<string, unknown>; rawArgs?: string }>; delayMs?: number; error?: undefined }
  | { error: ModelCallError };

export interface ScriptedProvider extends ModelProvider {
  /** Every request received, in order (the messages array is copied). */
  readonly requests: ModelRequest[];
  push(...steps: Array<ScriptStep | ((request: ModelRequest) => ScriptStep)>): void;
}

/**
 * A provider for fast unit tests of the turn loop: answers from a script, or from `fallback`
 * when the script is empty. It honours the abort signal and streams text deltas like a real one.
 */
export function createScriptedProvider(
  script: Array<ScriptStep | ((request: ModelRequest) => ScriptStep)> = [],
  options: { name?: string; api?: ProviderApi; fallback?: (request: ModelRequest) => ScriptStep } = {},
): ScriptedProvider {
  const queue = [...script];
  const requests: ModelRequest[] = [];
  let callCounter = 0;
  return {
    name: options.name ?? 'scripted',
    api: options.api ?? 'anthropic',
    requests,
    push: (...steps) => queue.push(...steps),
    async complete(request, signal): Promise<ModelResponse> {
      requests.push({ ...request, messages: [...request.messages] });
      const next = queue.shift() ?? options.fallback ?? ((): ScriptStep => ({ text: 'ok' }));
      const step: ScriptStep = typeof next === 'function' ? next(request) : next;
      if (step.error) throw step.error;
      if (step.delayMs) await sleep(step.delayMs, undefined, { signal });
      signal.throwIfAborted();
      const content: AssistantMessage['content'] = [];
      if (step.text) {
        for (const piece of step.text.match(/.{1,8}/gs) ?? []) request.onTextDelta?.(piece);
        content.push({ type: 'text', text: step.text });
      }
      for (const call of step.calls ?? []) {
        const id = call.id ?? `call_${++callCounter}`;
        if (call.rawArgs !== undefined) {
          let args: Record<string, unknown> | undefined;
          try {
            args = JSON.parse(call.rawArgs) as Record<string, unknown>;
          } catch {
            args = undefined;
          }
          content.push({ type: 'toolCall', id, name: call.name, args, rawArgs: call.rawArgs, ...(args ? {} : { argsError: 'arguments are not valid JSON' }) });
        } else content.push({ type: 'toolCall', id, name: call.name, args: call.args ?? {} });
      }
      const chars = JSON.stringify(request.messages).length + request.system.length;
      return {
        message: { role: 'assistant', content },
        stopReason: content.some((p) => p.type === 'toolCall') ? 'toolUse' : 'end',
        usage: { inputTokens: Math.ceil(chars / 4), outputTokens: Math.ceil((step.text ?? '').length / 4) },
      };
    },
  };
}

export { ModelCallError };
