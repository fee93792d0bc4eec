import type { AgentSessionsApi } from '../sessions.js';
import type { WardenConfig } from '../../config/index.js';
import type { SurfaceOptions } from '../../policy/surface.js';
import { eraseArgs, type ToolImplementation } from '../../tools/types.js';
import { createAgentsListTool } from './agents-list.js';
import { createSessionsHistoryTool, createSessionsListTool } from './sessions-read.js';
import { createSessionsSearchTool } from './sessions-search.js';
import { createSessionsSendTool } from './sessions-send.js';
import { createSessionsSpawnTool, createSessionsYieldTool, createSubagentsTool } from './sessions-spawn.js';
import { sessionAccessFor } from './visibility.js';

export const SESSION_TOOL_IDS = ['sessions_list', 'sessions_history', 'sessions_search', 'sessions_send', 'sessions_spawn', 'sessions_yield', 'subagents', 'agents_list'] as const;
export type SessionToolId = (typeof SESSION_TOOL_IDS)[number];

/** Every session tool over one sessions service, by id. */
export function createSessionTools(deps: { config: WardenConfig; sessions: AgentSessionsApi; surfaceOptions: SurfaceOptions }): Record<SessionToolId, ToolImplementation> {
  const { sessions } = deps;
  const access = sessionAccessFor(deps.config);
  return {
    sessions_list: eraseArgs(createSessionsListTool(sessions, access)),
    sessions_history: eraseArgs(createSessionsHistoryTool(sessions, access)),
    sessions_search: eraseArgs(createSessionsSearchTool(sessions, access)),
    sessions_send: eraseArgs(createSessionsSendTool(deps, access)),
    sessions_spawn: eraseArgs(createSessionsSpawnTool(deps)),
    sessions_yield: eraseArgs(createSessionsYieldTool(sessions)),
    subagents: eraseArgs(createSubagentsTool(sessions)),
    agents_list: eraseArgs(createAgentsListTool(sessions)),
  };
}
