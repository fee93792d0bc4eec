import { isLoopbackHost, type WardenConfig } from '../../config/index.js';
import type { AuditFinding } from '../../config/audit-finding.js';
import { httpDenyTable, OPENCLAW_HTTP_DENY } from '../../policy/http-surface.js';
import { normalizeToolName } from '../../policy/tool-names.js';

/**
 * `warden audit` for the HTTP tools API: a tool taken off the default HTTP deny list is a
 * warning on loopback and critical on any other bind (as OpenClaw's
 * `gateway.tools_invoke_http.dangerous_allow`); a bind beyond loopback is a warning of its own.
 */
export function auditGatewayHttp(config: Pick<WardenConfig, 'gateway'>): AuditFinding[] {
  const http = config.gateway?.http;
  if (!http?.enabled) return [];
  const findings: AuditFinding[] = [];
  const loopback = isLoopbackHost(http.host);
  const denied = httpDenyTable();
  const reenabled = (http.tools?.allow ?? []).map(normalizeToolName).filter((t) => denied.has(t) || Object.hasOwn(OPENCLAW_HTTP_DENY, t));
  if (reenabled.length > 0) {
    findings.push({
      id: 'gateway.http.dangerous-allow',
      severity: loopback ? 'warn' : 'critical',
      message: `gateway.http.tools.allow takes ${reenabled.join(', ')} off the default HTTP deny list, so an HTTP token can ${describe(reenabled)}${loopback ? ' (the API is bound to loopback)' : `, and the API is bound to ${http.host}, beyond loopback`}`,
      fix: loopback
        ? 'remove these entries from gateway.http.tools.allow; if you keep them, treat every gateway.http token as an owner credential'
        : 'remove these entries from gateway.http.tools.allow, or bind gateway.http.host to 127.0.0.1',
    });
  }
  if (!loopback) {
    findings.push({
      id: 'gateway.http.bind',
      severity: 'warn',
      message: `the HTTP tools API listens on ${http.host}:${http.port}, reachable beyond this machine, without TLS`,
      fix: 'bind gateway.http.host to 127.0.0.1 and put a TLS proxy in front of it when other machines need it',
    });
  }
  return findings;
}

function describe(tools: string[]): string {
  const does: string[] = [];
  if (tools.some((t) => ['exec', 'process', 'spawn', 'shell', 'terminal'].includes(t))) does.push('run commands');
  if (tools.some((t) => ['write', 'edit', 'apply_patch', 'fs_write', 'fs_delete', 'fs_move'].includes(t))) does.push('write files');
  if (tools.some((t) => t.startsWith('sessions_') || t === 'subagents' || t.startsWith('conversations_'))) does.push('drive other sessions');
  if (tools.some((t) => ['cron', 'automations', 'gateway', 'openclaw', 'nodes'].includes(t))) does.push('reach the control plane');
  return does.join(', ') || 'use tools the deny list keeps from it';
}
