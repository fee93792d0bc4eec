import type { ToolResult } from '../../types.js';

/** Pretty JSON for the model, the value itself kept as details. */
export function jsonResult(value: unknown): ToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }], details: value };
}

export function errorResult(message: string): ToolResult {
  return { content: [{ type: 'text', text: message }], details: { status: 'error', error: message }, isError: true };
}

/** The agent a session key belongs to; a tool only reaches sessions of its own agent. */
export const agentOfKey = (key: string): string | undefined => /^agent:([^:]+):/.exec(key)?.[1];
