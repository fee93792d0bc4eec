// The turn loop as startup builds it when a model is configured. Loaded by agent-assembly only
// then (see `loadAgentRuntime`): a bot without a model never loads the agent loop, the model
// registry or the context budgeting.
import type { ToolExecutor } from '../agent/index.js';
import type { AgentDeps } from '../agent/types.js';
import { createAgentRuntime, type WardenAgentRuntime } from '../agent/runtime.js';
import { DbTranscriptStore } from '../agent/transcript.js';
import { SubagentRunStore } from '../agent/subagent-runs.js';
import type { SessionContextStore } from '../turn/session-contexts.js';
import type { SubagentRunView } from '../agent/sessions.js';
import type { WardenConfig } from '../config/index.js';
import { createModelRegistry } from '../models/registry.js';
import type { TurnContext } from '../policy/context.js';
import type { Store } from '../store/index.js';
import { timedTranscripts } from '../agent/timed-transcripts.js';
import type { HookBus } from '../hooks/bus.js';

export interface AgentInputs {
  config: WardenConfig;
  env: NodeJS.ProcessEnv;
  tools: ToolExecutor;
  store: Store;
  sessionContexts: SessionContextStore;
  announce: (parentKey: string, run: SubagentRunView) => void;
  skillsCatalog: (turn: TurnContext, sessionKey: string) => string;
  hooks?: HookBus | undefined;
  ownership?: AgentDeps['ownership'];
  usage?: AgentDeps['usage'];
}

export function buildAgentRuntime(i: AgentInputs): WardenAgentRuntime {
  return createAgentRuntime({
    config: i.config,
    models: createModelRegistry(i.config, i.env),
    tools: i.tools,
    transcripts: timedTranscripts(new DbTranscriptStore(i.store.db)),
    subagentRuns: new SubagentRunStore(i.store.db),
    sessionContexts: i.sessionContexts,
    announce: i.announce,
    skillsCatalog: i.skillsCatalog,
    hooks: i.hooks,
    ownership: i.ownership,
    usage: i.usage,
  });
}

/** A reload's new config, models and tools for the running agent. */
export function reconfigureAgentRuntime(agent: WardenAgentRuntime, config: WardenConfig, env: NodeJS.ProcessEnv, tools: ToolExecutor): void {
  agent.reconfigure({ config, models: createModelRegistry(config, env), tools });
}
