import type { WardenConfig } from '../config/schema/index.js';
import { McpManager, type McpManagerOptions } from './manager.js';
import { bindMcpManager, mcpManagerFor } from './registry.js';

/** Creates, binds and starts the manager of a config (no servers: undefined). Connecting runs in the background. */
export function startMcp(config: WardenConfig, baseDir: string, options: McpManagerOptions = {}): McpManager | undefined {
  if (Object.keys(config.mcp?.servers ?? {}).length === 0) return undefined;
  const existing = mcpManagerFor(config);
  if (existing) return existing;
  const manager = new McpManager(config, baseDir, options);
  bindMcpManager(config, manager);
  manager.start();
  return manager;
}
