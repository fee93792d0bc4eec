import type { WardenConfig } from '../config/schema/index.js';
import type { ServerStatus } from './connection.js';
import { connectMcpForCommand } from './registry.js';

/** The doctor's line for one server: connected with its tool count, or why not (a warning: Warden runs without it). */
export interface McpCheck {
  name: string;
  ok: true;
  warn?: true;
  detail: string;
  fix?: string;
}

export function mcpCheck(s: ServerStatus): McpCheck {
  const name = `mcp ${s.name}`;
  if (s.state === 'connected') {
    return { name, ok: true, detail: `connected (${s.transport}), ${s.tools} tool${s.tools === 1 ? '' : 's'}${s.serverInfo ? `, ${s.serverInfo}` : ''}${s.diagnostics.length ? `; ${s.diagnostics.length} left out` : ''}` };
  }
  if (s.state === 'disabled') return { name, ok: true, detail: 'disabled (enabled: false)' };
  return {
    name,
    ok: true,
    warn: true,
    detail: `${s.state}${s.lastError ? `: ${s.lastError}` : ''} (${s.transport}); its tools are unavailable, Warden keeps retrying`,
    fix: `check mcp.servers.${s.name} (warden mcp list shows the last error)`,
  };
}

/** Connects every configured server as `warden start` would, reports each, and stops them. */
export async function mcpDoctorChecks(config: WardenConfig, baseDir: string): Promise<McpCheck[]> {
  const manager = await connectMcpForCommand(config, baseDir);
  if (!manager) return [];
  try {
    return manager.statuses().map(mcpCheck);
  } finally {
    await manager.stop();
  }
}
