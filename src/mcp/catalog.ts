import type { JsonSchema } from '../tools/types.js';
import { prepareInputSchema } from './schema.js';
import { starPartsMatch } from '../util/star-glob.js';

/**
 * A server's `tools/list` answer as Warden keeps it: the tools the server's filter keeps
 * (`toolsAllow`, then `toolsDeny`, OpenClaw's include-then-exclude with `*` globs), each with a
 * prepared schema, a bounded description and its annotations, sorted by name and cut at
 * `maxTools`. What is left out is said in `diagnostics`. Pure.
 */

/** The MCP tool annotations that feed the approval policy (all hints, as the spec says). */
export interface McpAnnotations {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export interface McpTool {
  /** The server's own name for the tool (what `tools/call` sends). */
  name: string;
  title?: string | undefined;
  description: string;
  parameters: JsonSchema;
  annotations: McpAnnotations;
}

export interface CatalogOptions {
  /** The server's config name, for the texts. */
  server: string;
  toolsAllow?: readonly string[] | undefined;
  toolsDeny?: readonly string[] | undefined;
  maxTools: number;
}

export const MAX_DESCRIPTION_CHARS = 2_000;
export const DEFAULT_MAX_TOOLS = 1_000;

/** OpenClaw's MCP tool-filter glob: exact text, `*` for any run of characters. */
export function matchesToolPattern(pattern: string, name: string): boolean {
  const p = pattern.trim();
  if (!p) return false;
  return starPartsMatch(p.split('*'), name);
}

export function keptByFilter(name: string, allow: readonly string[] | undefined, deny: readonly string[] | undefined): boolean {
  if (allow && allow.length > 0 && !allow.some((p) => matchesToolPattern(p, name))) return false;
  return !(deny ?? []).some((p) => matchesToolPattern(p, name));
}

const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g;

function text(value: unknown, max: number): string | undefined {
  if (typeof value !== 'string') return undefined;
  const cleaned = value.replace(CONTROL, '').trim();
  if (!cleaned) return undefined;
  return cleaned.length > max ? `${cleaned.slice(0, max - 1)}…` : cleaned;
}

function annotationsOf(raw: unknown): McpAnnotations {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return {};
  const out: McpAnnotations = {};
  for (const key of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) {
    const v = (raw as Record<string, unknown>)[key];
    if (typeof v === 'boolean') out[key] = v;
  }
  return out;
}

export function buildCatalog(listed: readonly unknown[], options: CatalogOptions): { tools: McpTool[]; diagnostics: string[] } {
  const diagnostics: string[] = [];
  const byName = new Map<string, McpTool>();
  for (const raw of listed) {
    if (!raw || typeof raw !== 'object') continue;
    const t = raw as Record<string, unknown>;
    const name = typeof t.name === 'string' ? t.name.trim() : '';
    if (!name || name.length > 256) {
      diagnostics.push(`a tool of MCP server ${options.server} has ${name ? 'a name longer than 256 characters' : 'no name'}; left out`);
      continue;
    }
    if (!keptByFilter(name, options.toolsAllow, options.toolsDeny)) continue;
    if (byName.has(name)) {
      diagnostics.push(`MCP server ${options.server} lists tool ${name} twice; the first is kept`);
      continue;
    }
    const schema = prepareInputSchema(t.inputSchema);
    if (!schema.ok) {
      diagnostics.push(`tool ${name} of MCP server ${options.server} left out: ${schema.why}`);
      continue;
    }
    const annotations = t.annotations as Record<string, unknown> | undefined;
    const title = text(t.title, 200) ?? text(annotations?.title, 200);
    byName.set(name, {
      name,
      ...(title ? { title } : {}),
      description: text(t.description, MAX_DESCRIPTION_CHARS) ?? `Tool ${name} of MCP server ${options.server}.`,
      parameters: schema.schema,
      annotations: annotationsOf(annotations),
    });
  }
  let tools = [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  if (tools.length > options.maxTools) {
    diagnostics.push(`MCP server ${options.server} offers ${tools.length} tools; the first ${options.maxTools} by name are used (mcp.servers.${options.server}.maxTools)`);
    tools = tools.slice(0, options.maxTools);
  }
  return { tools, diagnostics };
}
