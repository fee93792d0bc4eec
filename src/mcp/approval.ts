import type { McpApprovalMode } from '../config/schema/mcp.js';
import type { ToolApprovalRequest } from '../tools/types.js';
import type { McpAnnotations } from './catalog.js';

/**
 * Whether a call of an MCP tool asks an approver first, from the tool's annotations and the
 * operator's setting (`mcp.servers.<s>.tools.<t>.approval`, else `mcp.servers.<s>.approval`,
 * else `auto`):
 * - `always` asks, `never` does not;
 * - `auto` follows the annotations as OpenClaw's MCP approval does: a tool marked
 *   `destructiveHint: true` asks; one marked `readOnlyHint: true` does not; any other asks unless
 *   it is marked both non-destructive and closed-world (`destructiveHint: false`,
 *   `openWorldHint: false`). The spec's defaults for a tool that says nothing are destructive
 *   and open-world, so an unannotated tool asks (fail closed).
 * Annotations are the server's claims: for a server you do not trust, set `approval: always`.
 * Pure.
 */

export interface ApprovalRule {
  mode: McpApprovalMode;
  /** The config key the mode comes from, or `default` when none is set. */
  source: string;
}

export interface ApprovalDecision {
  ask: boolean;
  /** Why, as the card and `warden mcp tools` say it. */
  why: string;
}

export function approvalDecision(annotations: McpAnnotations, rule: ApprovalRule): ApprovalDecision {
  const at = rule.source === 'default' ? 'approval: auto (the default)' : `${rule.source} = ${rule.mode}`;
  if (rule.mode === 'always') return { ask: true, why: `${at}: every call asks` };
  if (rule.mode === 'never') return { ask: false, why: `${at}: no call asks` };
  if (annotations.destructiveHint === true) return { ask: true, why: `${at}: the server marks the tool destructive (destructiveHint: true)` };
  if (annotations.readOnlyHint === true) return { ask: false, why: `${at}: the server marks the tool read-only (readOnlyHint: true)` };
  if (annotations.destructiveHint === false && annotations.openWorldHint === false) {
    return { ask: false, why: `${at}: the server marks the tool non-destructive and closed-world` };
  }
  return { ask: true, why: `${at}: the server does not mark the tool read-only${annotations.destructiveHint === false ? ' (it may reach the outside world)' : ''}` };
}

/** The annotations as the card shows them: `destructiveHint: true, openWorldHint: false`, or `none`. */
export function describeAnnotations(annotations: McpAnnotations): string {
  const set = Object.entries(annotations).map(([k, v]) => `${k}: ${String(v)}`);
  return set.length > 0 ? set.join(', ') : 'none';
}

export function approvalRequest(
  call: { id: string; server: string; tool: string; transport: string; annotations: McpAnnotations },
  decision: ApprovalDecision,
): ToolApprovalRequest {
  return {
    title: `MCP tool ${call.id}`,
    description: `Call ${call.tool} on MCP server ${call.server}.`,
    severity: call.annotations.destructiveHint === true ? 'critical' : 'warning',
    facts: [
      { label: 'MCP server', value: `${call.server} (${call.transport})` },
      { label: 'Annotations', value: describeAnnotations(call.annotations) },
      { label: 'Why asked', value: decision.why },
    ],
  };
}
