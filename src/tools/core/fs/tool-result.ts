import type { ToolContent, ToolResult } from '../../types.js';
import type { GuardError } from './workspace.js';

/** A successful result: what the model reads, and details kept for the transcript only. */
export function textResult(text: string, details?: unknown, extra: ToolContent[] = []): ToolResult {
  return { content: [{ type: 'text', text }, ...extra], details };
}

/** An error the model should see and can act on; never thrown. */
export function errorResult(message: string, details?: unknown): ToolResult {
  return { content: [{ type: 'text', text: message }], details, isError: true };
}

/** Turns a guard refusal into an error result carrying its code. */
export function guardResult(err: GuardError, details: Record<string, unknown> = {}): ToolResult {
  return errorResult(err.message, { ...details, code: err.code });
}
