import path from 'node:path';
import type { WardenConfig } from '../config/schema/index.js';

// Apart from the exec decision (check.ts) so that what only needs the folder (the start, the
// tool executor, the workspace set-up) does not load the command analysis with it.

/** The agent's workspace directory: its own `workspace`, else `agents.defaults.workspace`. */
export function agentWorkspace(config: WardenConfig, agentId: string, baseDir: string = process.cwd()): string {
  const agent = config.agents.list.find((a) => a.id === agentId);
  return path.resolve(baseDir, agent?.workspace ?? config.agents.defaults.workspace);
}
