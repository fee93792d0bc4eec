import { mkdirSync } from 'node:fs';
import type { WardenConfig } from '../config/index.js';
import { agentWorkspace } from '../exec/agent-workspace.js';
import { knownAgentIds } from '../policy/steps.js';

/**
 * Creates every agent's workspace that does not exist yet: a fresh checkout (or a fresh node)
 * has none, and the file and exec tools work inside it (exec refuses a workdir that does not
 * exist). `warden start` and `warden node` both call this. Errors as values, naming the folder.
 */
export function createAgentWorkspaces(config: WardenConfig, baseDir: string): { ok: true } | { ok: false; error: string } {
  for (const agentId of knownAgentIds(config)) {
    const workspace = agentWorkspace(config, agentId, baseDir);
    try {
      mkdirSync(workspace, { recursive: true });
    } catch (err) {
      return { ok: false, error: `workspace ${workspace} of agent ${agentId} cannot be created: ${(err as Error).message}` };
    }
  }
  return { ok: true };
}
