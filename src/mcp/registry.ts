import type { WardenConfig } from '../config/schema/index.js';
import { CORE_TOOLS } from '../policy/catalog.js';
import { META_TOOL_IDS } from '../agent/tool-search/ids.js';
import type { McpManager, McpManagerOptions } from './manager.js';

/**
 * Which MCP manager serves a config: the one `warden start` runs (rebound to each reloaded
 * config) or the one a CLI command connected. `surfaceInputs` looks it up here, as it looks up
 * the plugin runtime, so the bot, its sessions and subagents, `/tools` and every CLI command
 * hand the surface function the same MCP candidates.
 */
const bound = new WeakMap<WardenConfig, McpManager>();

export function bindMcpManager(config: WardenConfig, manager: McpManager): void {
  bound.set(config, manager);
}

export function mcpManagerFor(config: WardenConfig): McpManager | undefined {
  return bound.get(config);
}

/** Names an MCP tool never takes: the core tools, Tool Search's, and the plugin tools given. */
export function reservedToolNames(pluginTools: () => Iterable<{ id: string }>): () => string[] {
  return () => [...CORE_TOOLS.map((t) => t.id), ...META_TOOL_IDS, ...[...pluginTools()].map((t) => t.id)];
}

/**
 * For a one-shot command (`warden tools`, `invoke`, `mcp`, `doctor`), which has no running
 * connections: connects the servers and waits until each has connected or failed, at most
 * `waitMs` (a server still connecting then is reported as connecting). The caller stops it.
 */
export async function connectMcpForCommand(config: WardenConfig, baseDir: string, options: McpManagerOptions & { waitMs?: number | undefined } = {}): Promise<McpManager | undefined> {
  if (Object.keys(config.mcp?.servers ?? {}).length === 0) return undefined;
  const { startMcp } = await import('./start.js');
  const manager = startMcp(config, baseDir, options);
  if (!manager) return undefined;
  await manager.ready(options.waitMs ?? commandWaitMs(config));
  return manager;
}

/** A command waits for the slowest server's connect timeout, at most 15 s. */
export function commandWaitMs(config: WardenConfig): number {
  const longest = Math.max(0, ...Object.values(config.mcp?.servers ?? {}).map((s) => (s.connectTimeoutSec ?? 30) * 1000));
  return Math.min(15_000, longest);
}
