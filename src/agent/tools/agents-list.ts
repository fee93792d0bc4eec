import type { AgentSessionsApi } from '../sessions.js';
import type { ToolImplementation } from '../../tools/types.js';
import { jsonResult } from './result.js';
import { agentsListParameters } from './schemas.js';

/** `agents_list`: the agents sessions_spawn may target. */
export function createAgentsListTool(sessions: AgentSessionsApi): ToolImplementation<Record<string, never>> {
  return {
    id: 'agents_list',
    parameters: agentsListParameters,
    async execute(_args, ctx) {
      return jsonResult({ agents: sessions.agents().map((a) => ({ ...a, current: a.id === ctx.turn.agentId })) });
    },
  };
}
