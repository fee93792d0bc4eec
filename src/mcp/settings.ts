import path from 'node:path';
import type { McpServerConfig, WardenConfig } from '../config/schema/index.js';
import type { ApprovalRule } from './approval.js';
import { DEFAULT_MAX_TOOLS } from './catalog.js';
import { redactArgv, redactText } from '../redact/redact.js';
import { namesPrivateHost } from './private-host.js';
import { assignServerNames } from './names.js';

/**
 * `mcp.servers` resolved: one entry per declared server, with its safe name (assigned over
 * every declared server in declaration order, so enabling one never renames another), how it
 * is reached, and its limits. Pure.
 */

export interface StdioLaunch {
  kind: 'stdio';
  command: string;
  args: string[];
  /** The operator's variables only; the child's base environment is added at spawn (env.ts). */
  env: Record<string, string>;
  cwd: string;
}

export interface HttpLaunch {
  kind: 'http';
  url: string;
  headers: Record<string, string>;
  allowPrivateNetwork: boolean;
}

export interface ServerSettings {
  /** The name in `mcp.servers`. */
  name: string;
  /** The id prefix: `<safeName>__<tool>`. */
  safeName: string;
  enabled: boolean;
  launch: StdioLaunch | HttpLaunch;
  timeoutMs: number;
  connectTimeoutMs: number;
  toolsAllow?: readonly string[] | undefined;
  toolsDeny?: readonly string[] | undefined;
  maxTools: number;
  parallel: boolean;
  /** The approval setting for one of the server's tools (by the server's name for it). */
  approval: (tool: string) => ApprovalRule;
  /** Changes when how the server is started or filtered changes (a reload restarts it then); timeouts and approvals apply live. */
  fingerprint: string;
}

export const DEFAULT_TIMEOUT_SEC = 60;
export const DEFAULT_CONNECT_TIMEOUT_SEC = 30;

export function serverSettings(config: Pick<WardenConfig, 'mcp'>, baseDir: string): ServerSettings[] {
  const servers = config.mcp?.servers ?? {};
  const names = assignServerNames(Object.keys(servers));
  return Object.entries(servers).map(([name, server]) => settingsOf(name, names.get(name)!, server, baseDir));
}

function settingsOf(name: string, safeName: string, server: McpServerConfig, baseDir: string): ServerSettings {
  const launch: StdioLaunch | HttpLaunch =
    server.url !== undefined
      ? { kind: 'http', url: server.url, headers: { ...server.headers }, allowPrivateNetwork: server.allowPrivateNetwork ?? namesPrivateHost(server.url) }
      : { kind: 'stdio', command: server.command!, args: [...(server.args ?? [])], env: { ...server.env }, cwd: path.resolve(baseDir, server.cwd ?? '.') };
  const key = `mcp.servers.${name}`;
  return {
    name,
    safeName,
    enabled: server.enabled !== false,
    launch,
    timeoutMs: Math.round((server.timeoutSec ?? DEFAULT_TIMEOUT_SEC) * 1000),
    connectTimeoutMs: Math.round((server.connectTimeoutSec ?? DEFAULT_CONNECT_TIMEOUT_SEC) * 1000),
    toolsAllow: server.toolsAllow,
    toolsDeny: server.toolsDeny,
    maxTools: server.maxTools ?? DEFAULT_MAX_TOOLS,
    parallel: server.supportsParallelToolCalls === true,
    approval: (tool) => {
      const own = server.tools?.[tool]?.approval;
      if (own) return { mode: own, source: `${key}.tools.${tool}.approval` };
      if (server.approval) return { mode: server.approval, source: `${key}.approval` };
      return { mode: 'auto', source: 'default' };
    },
    fingerprint: JSON.stringify([safeName, launch, server.toolsAllow, server.toolsDeny, server.maxTools, server.enabled]),
  };
}

/** How the server is reached, for logs and `warden mcp list`: no header values, no URL query, secrets in args hidden. */
export function describeLaunch(launch: StdioLaunch | HttpLaunch): string {
  if (launch.kind === 'http') {
    const u = new URL(launch.url);
    const headers = Object.keys(launch.headers);
    return `http ${u.origin}${u.pathname}${headers.length ? ` (headers: ${headers.join(', ')})` : ''}`;
  }
  return `stdio ${[redactText(launch.command), ...redactArgs(launch.args, launch.command)].join(' ')}`;
}

/** An argument list as logs and `warden mcp list` show it: the one config redaction (redact/redact.ts). */
export function redactArgs(args: readonly string[], command?: string): string[] {
  return redactArgv(args, command);
}
