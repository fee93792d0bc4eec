import { runTurn } from './turn.js';
import type { AgentDeps, AgentRuntime } from './types.js';

/** The runtime the router holds: its dependencies bound once, one `runTurn` per queued message. */
export function createAgentRuntime(deps: AgentDeps): AgentRuntime {
  return { runTurn: (request) => runTurn(deps, request) };
}
