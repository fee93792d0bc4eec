import { isAbortError, type ToolCallPart, type ToolResultMessage } from '../models/types.js';
import type { TurnContext } from '../policy/context.js';
import { isWrappedUntrusted, wrapUntrusted } from '../tools/untrusted.js';
import type { ToolFile, ToolResult } from '../tools/types.js';
import { capToolResult } from './context-budget.js';
import type { ToolExecutor } from './types.js';

/**
 * Runs `fn` over `items` with at most `limit` in flight; results keep the input order, which
 * is the order the model must see its tool results in.
 */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, worker));
  return results;
}

export interface ToolRoundContext {
  executor: ToolExecutor;
  sessionKey: string;
  turn: TurnContext;
  signal: AbortSignal;
  /** Wire name → catalog id for this turn's projected tools. */
  idByWireName: ReadonlyMap<string, string>;
  concurrency: number;
  resultCapChars: number;
  /** The turn's loop-detection run, carried on every call. */
  runId?: string | undefined;
  /** Approvals may defer the calls (`TurnRequest.deferApprovals`). */
  deferApprovals?: boolean | undefined;
  onStart?: (call: ToolCallPart, id: string) => void;
  onDone?: (call: ToolCallPart, result: ToolResultMessage, files?: ToolFile[]) => void;
}

const errorResult = (call: ToolCallPart, text: string): ToolResultMessage => ({
  role: 'toolResult',
  toolCallId: call.id,
  toolName: call.name,
  content: [{ type: 'text', text }],
  isError: true,
});

export const ABORTED_RESULT_TEXT = 'Not run: the turn was stopped by the user.';

/**
 * Executes one round of tool calls. Unknown names and unparsable arguments become error
 * results the model can correct; a tool's own failure comes back from the executor as a
 * result. Everything a tool returns is wrapped as untrusted data unless the tool did so.
 */
export async function runToolCalls(calls: readonly ToolCallPart[], ctx: ToolRoundContext): Promise<ToolResultMessage[]> {
  const surface = [...ctx.idByWireName.values()];
  return mapLimit(calls, ctx.concurrency, async (call) => {
    if (ctx.signal.aborted) return errorResult(call, ABORTED_RESULT_TEXT);
    const id = ctx.idByWireName.get(call.name);
    if (id === undefined) {
      const result = errorResult(
        call,
        `Unknown tool "${call.name}". Tools available this turn: ${surface.length > 0 ? [...ctx.idByWireName.keys()].join(', ') : 'none'}. Call one of these, or answer without a tool.`,
      );
      ctx.onDone?.(call, result);
      return result;
    }
    if (call.args === undefined) {
      const result = errorResult(call, `Invalid arguments for ${call.name}: ${call.argsError ?? 'missing'}. Send the arguments again as one JSON object that matches the tool's schema.`);
      ctx.onDone?.(call, result);
      return result;
    }
    ctx.onStart?.(call, id);
    let raw: ToolResult;
    try {
      raw = await ctx.executor.execute({ toolCallId: call.id, tool: id, args: call.args }, { sessionKey: ctx.sessionKey, turn: ctx.turn, signal: ctx.signal, surface, ...(ctx.runId !== undefined ? { runId: ctx.runId } : {}), ...(ctx.deferApprovals ? { deferApprovals: true } : {}) });
    } catch (err) {
      if (isAbortError(err) || ctx.signal.aborted) return errorResult(call, ABORTED_RESULT_TEXT);
      // The executor contract says it does not throw; if it does, the model still gets an answer.
      raw = { content: [{ type: 'text', text: JSON.stringify({ status: 'error', tool: id, error: (err as Error).message }) }], isError: true };
    }
    const result: ToolResultMessage = {
      role: 'toolResult',
      toolCallId: call.id,
      toolName: call.name,
      // Cap first, so the closing tag of the wrapper is never cut off.
      content: capToolResult(raw.content, ctx.resultCapChars).map((p) =>
        p.type === 'text' && !isWrappedUntrusted(p.text) ? { type: 'text', text: wrapUntrusted(`tool:${id}`, p.text) } : p,
      ),
      isError: raw.isError === true,
    };
    ctx.onDone?.(call, result, raw.isError === true ? undefined : raw.files);
    return result;
  });
}
