// The agent as startup builds it: the turn loop when a model is configured, and the skills view
// the gateway shows.
import type { ToolExecutor } from '../agent/index.js';
import type { AgentDeps } from '../agent/types.js';
import { createAgentRuntime, type WardenAgentRuntime } from '../agent/runtime.js';
import { DbTranscriptStore } from '../agent/transcript.js';
import { SubagentRunStore } from '../agent/subagent-runs.js';
import { SessionContextStore } from '../turn/session-contexts.js';
import type { SubagentRunView } from '../agent/sessions.js';
import type { WardenConfig } from '../config/index.js';
import { createModelRegistry } from '../models/registry.js';
import type { TurnContext } from '../policy/context.js';
import { listSkills } from '../skills/index.js';
import type { Store } from '../store/index.js';
import { timedTranscripts } from '../agent/timed-transcripts.js';
import { HookBus } from '../hooks/bus.js';
import type { SkillsView } from '../gateway/commands.js';

/** The turn loop when a model is configured; else commands only. */
export function createAgent(
  config: WardenConfig,
  env: NodeJS.ProcessEnv,
  tools: ToolExecutor,
  store: Store,
  sessionContexts: SessionContextStore,
  announce: (parentKey: string, run: SubagentRunView) => void,
  skillsCatalog: (turn: TurnContext, sessionKey: string) => string,
  hooks?: HookBus,
  ownership?: AgentDeps['ownership'],
  usage?: AgentDeps['usage'],
): WardenAgentRuntime | undefined {
  const anyModel = config.models.default !== undefined || config.agents.list.some((a) => a.model !== undefined);
  if (!anyModel) return undefined;
  return createAgentRuntime({
    config,
    models: createModelRegistry(config, env),
    tools,
    transcripts: timedTranscripts(new DbTranscriptStore(store.db)),
    subagentRuns: new SubagentRunStore(store.db),
    sessionContexts,
    announce,
    skillsCatalog,
    hooks,
    ownership,
    usage,
  });
}

export function skillsFor(config: WardenConfig, baseDir: string, env: NodeJS.ProcessEnv, pluginSkillDirs: readonly string[] = []) {
  return (context: TurnContext): SkillsView | undefined => {
    const listing = listSkills(config, context.agentId, { baseDir, env, pluginSkillDirs });
    if (!listing.ok) return { eligible: [], ineligible: [{ name: '(skills)', why: listing.error }] };
    return {
      eligible: listing.value.eligible.map((s) => ({ name: s.name, description: s.description })),
      ineligible: listing.value.ineligible.map((s) => ({ name: s.name, why: s.why })),
    };
  };
}
