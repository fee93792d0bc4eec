import type { WardenConfig } from '../config/schema/index.js';
import { normalizeToolName } from './tool-names.js';
import type { TurnContext } from './context.js';
import type { FilterDecision } from './prefilters.js';

/**
 * The HTTP tools API's default deny list. OpenClaw's `DEFAULT_GATEWAY_HTTP_TOOL_DENY`
 * (src/security/dangerous-tools.ts) names tools by OpenClaw's ids; each maps here to the
 * Warden tools that do the same, so the list removes what it means to remove: a tool that runs
 * commands, writes files, orchestrates sessions, schedules, reconfigures the gateway or relays
 * to a node. Names with no Warden equivalent map to nothing.
 */
export const OPENCLAW_HTTP_DENY: Readonly<Record<string, readonly string[]>> = Object.freeze({
  exec: ['exec', 'process'],
  spawn: ['exec', 'process'],
  shell: ['exec', 'process'],
  terminal: ['exec', 'process'],
  fs_write: ['write', 'edit', 'apply_patch'],
  fs_delete: ['write', 'edit', 'apply_patch'],
  fs_move: ['write', 'edit', 'apply_patch'],
  apply_patch: ['apply_patch'],
  portal: [],
  sessions_spawn: ['sessions_spawn', 'subagents'],
  sessions_send: ['sessions_send'],
  // Each also names the Warden tool it was mapped to before Warden had its own (kept: removing it
  // from the HTTP deny list would widen the HTTP surface).
  conversations_list: ['conversations_list', 'sessions_list'],
  conversations_send: ['conversations_send', 'sessions_send'],
  conversations_turn: ['conversations_turn', 'sessions_send'],
  automations: ['cron'],
  gateway: ['gateway'],
  plugins: [],
  nodes: ['nodes'],
  computer: [],
  mobile_ui: [],
  openclaw: ['gateway'],
});

/** The Warden tools the HTTP API denies by default, each with the OpenClaw names that put it there. */
export function httpDenyTable(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [openclaw, tools] of Object.entries(OPENCLAW_HTTP_DENY)) for (const t of tools) out.set(t, [...(out.get(t) ?? []), openclaw]);
  return out;
}

export const HTTP_DENY_FILTER = 'gateway.http default deny';
export const HTTP_PROVIDER = 'http';
const TABLE = httpDenyTable();

/**
 * Whether the HTTP surface keeps `tool`: off the default deny list, or named in
 * `gateway.http.tools.allow` (by its Warden name, an alias, or an OpenClaw name that maps to it
 * alone). Other providers keep everything.
 */
export function httpDenyFilter(toolId: string, ctx: Pick<TurnContext, 'provider'>, config: Pick<WardenConfig, 'gateway'>): FilterDecision {
  if (ctx.provider.trim().toLowerCase() !== HTTP_PROVIDER) return { kept: true, rule: 'not the HTTP surface' };
  const origins = TABLE.get(toolId);
  if (!origins) return { kept: true, rule: 'not on the default HTTP deny list' };
  const allow = (config.gateway?.http?.tools?.allow ?? []).map(normalizeToolName);
  if (allow.includes(toolId)) return { kept: true, rule: `re-enabled by gateway.http.tools.allow = "${toolId}"`, key: 'gateway.http.tools.allow' };
  return {
    kept: false,
    rule: `on the default HTTP deny list (OpenClaw's DEFAULT_GATEWAY_HTTP_TOOL_DENY: ${origins.join(', ')}); re-enable with gateway.http.tools.allow`,
    key: 'gateway.http.tools.allow',
  };
}
