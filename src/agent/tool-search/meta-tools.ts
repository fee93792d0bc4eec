import type { ToolDefinition } from '../types.js';
import type { ToolResult } from '../../tools/types.js';
import { rankTools, signature, type Searchable } from './rank.js';
import type { ToolSearchSettings } from './settings.js';
import type { MetaToolId } from './ids.js';

/**
 * tool_search, tool_describe and tool_call: the three tools the model gets in place of the
 * schemas Tool Search defers. They only see this turn's authorized catalog (the policy's
 * surface), and tool_call hands the real call to the same wrapper chain as any other call.
 */
export { META_TOOL_IDS, isMetaTool, type MetaToolId } from './ids.js';

const DIRECTORY_CHARS = 4_000;

/** The bounded list of deferred tools the model is told about (names and first sentences). */
function directory(catalog: readonly Searchable[]): string {
  const lines: string[] = [];
  let size = 0;
  for (const tool of [...catalog].sort((a, b) => a.id.localeCompare(b.id))) {
    const line = `${tool.id}: ${tool.description.split(/(?<=\.)\s/)[0]!.slice(0, 120)}`;
    if (size + line.length > DIRECTORY_CHARS) {
      lines.push(`… ${catalog.length - lines.length} more; search to find them`);
      break;
    }
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join('\n');
}

export function metaToolDefinitions(catalog: readonly Searchable[], settings: ToolSearchSettings): ToolDefinition[] {
  return [
    {
      id: 'tool_search',
      description: `Find tools that are not shown directly. Write the query in English (what you want to do). Returns ids, descriptions and input signatures; call one with tool_call.\nTools you can find:\n${directory(catalog)}`,
      parameters: {
        type: 'object',
        properties: {
          query: { type: 'string', minLength: 1, maxLength: 512, description: 'What you want to do, in English.' },
          limit: { type: 'integer', minimum: 1, maximum: settings.maxLimit, description: `How many results (default ${settings.defaultLimit}).` },
        },
        required: ['query'],
        additionalProperties: false,
      },
    },
    {
      id: 'tool_describe',
      description: 'The full description and input schema of one tool found with tool_search.',
      parameters: { type: 'object', properties: { id: { type: 'string', minLength: 1 } }, required: ['id'], additionalProperties: false },
    },
    {
      id: 'tool_call',
      description: 'Call a tool found with tool_search: its id, and its arguments as one object in args.',
      parameters: {
        type: 'object',
        properties: { id: { type: 'string', minLength: 1 }, args: { type: 'object', description: "The tool's arguments." } },
        required: ['id'],
        additionalProperties: false,
      },
    },
  ];
}

const json = (value: unknown, isError = false): ToolResult => ({ content: [{ type: 'text', text: JSON.stringify(value, null, 2) }], details: value, ...(isError ? { isError } : {}) });

export type MetaOutcome = { kind: 'result'; result: ToolResult } | { kind: 'call'; tool: string; args: Record<string, unknown> };

/** Runs tool_search or tool_describe, or turns tool_call into the call it stands for. */
export function runMetaTool(id: MetaToolId, args: Record<string, unknown>, catalog: readonly Searchable[], settings: ToolSearchSettings): MetaOutcome {
  const find = (name: unknown) => (typeof name === 'string' ? catalog.find((t) => t.id === name.trim().toLowerCase()) : undefined);
  const unknown = (name: unknown): MetaOutcome => ({
    kind: 'result',
    result: json({ error: `no tool "${String(name)}" among the tools you can find this turn; use tool_search` }, true),
  });
  if (id === 'tool_search') {
    const query = typeof args.query === 'string' ? args.query : '';
    const limit = Math.min(typeof args.limit === 'number' && args.limit > 0 ? Math.floor(args.limit) : settings.defaultLimit, settings.maxLimit);
    const hits = rankTools(query, catalog, limit);
    return { kind: 'result', result: json(hits.map((t) => ({ id: t.id, description: t.description, input: signature(t.parameters) }))) };
  }
  const tool = find(args.id);
  if (!tool) return unknown(args.id);
  if (id === 'tool_describe') return { kind: 'result', result: json({ id: tool.id, description: tool.description, parameters: tool.parameters }) };
  const callArgs = args.args;
  if (callArgs !== undefined && (typeof callArgs !== 'object' || callArgs === null || Array.isArray(callArgs))) {
    return { kind: 'result', result: json({ error: 'args must be one object with the tool\'s arguments' }, true) };
  }
  return { kind: 'call', tool: tool.id, args: (callArgs as Record<string, unknown> | undefined) ?? {} };
}
