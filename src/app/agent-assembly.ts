// The agent as startup builds it: the turn loop when a model is configured, and the skills view
// the gateway shows. The turn loop's modules (the agent, the model registry, ...) load only for a
// config with a model: `loadAgentRuntime` before `createAgent`, at start and before a reload's swap.
import type { WardenAgentRuntime } from '../agent/runtime.js';
import type { ToolExecutor } from '../agent/index.js';
import type { WardenConfig } from '../config/index.js';
import type { TurnContext } from '../policy/context.js';
import { listSkills } from '../skills/index.js';
import type { SkillsView } from '../gateway/commands.js';
import type { AgentInputs } from './agent-runtime.js';

/** Whether a config gives any agent a model (the default or an agent's own). */
export const anyModel = (config: WardenConfig): boolean => config.models.default !== undefined || config.agents.list.some((a) => a.model !== undefined);

let runtimeModule: typeof import('./agent-runtime.js') | undefined;

/** Loads the turn loop's modules when `config` has a model (once per process); nothing otherwise. */
export async function loadAgentRuntime(config: WardenConfig): Promise<void> {
  if (anyModel(config)) runtimeModule ??= await import('./agent-runtime.js');
}

function loadedRuntime(): typeof import('./agent-runtime.js') {
  if (!runtimeModule) throw new Error('the agent runtime is not loaded: await loadAgentRuntime(config) first');
  return runtimeModule;
}

/** The turn loop when a model is configured (after `loadAgentRuntime(config)`); else commands only. */
export function createAgent(inputs: AgentInputs): WardenAgentRuntime | undefined {
  if (!anyModel(inputs.config)) return undefined;
  return loadedRuntime().buildAgentRuntime(inputs);
}

/** A reload's config, models and tools for the running agent (its modules are loaded: it runs). */
export function reconfigureAgent(agent: WardenAgentRuntime, config: WardenConfig, env: NodeJS.ProcessEnv, tools: ToolExecutor): void {
  loadedRuntime().reconfigureAgentRuntime(agent, config, env, tools);
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
