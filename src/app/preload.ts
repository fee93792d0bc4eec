import type { WardenConfig } from '../config/index.js';
import { knownAgentIds } from '../policy/steps.js';
import { resolveToolSurface, type SurfaceOptions } from '../policy/surface.js';
import { CORE_IMPLEMENTATIONS } from './core-tools.js';
import { WEB_LOCAL_USER } from '../gateway/approval-clicks.js';
import { buildTurnContext, modelFor } from '../turn/turn-context.js';

/**
 * The core tools worth loading ahead of their first call: those some turn of this process can
 * call. `/exec` runs with or without a model; the model's tools are at most what an owner gets
 * in a direct message on a running platform, per agent (channel, sender and subagent steps only
 * take tools away). Anything else loads on first use, so an idle bot without a model does not
 * hold the browser, the PDF reader or the HTML extractor.
 */
export function toolsToPreload(config: WardenConfig, providers: readonly string[], inputs: SurfaceOptions): string[] {
  const ids = new Set<string>(['exec']);
  for (const agentId of knownAgentIds(config)) {
    if (modelFor(config, agentId) === undefined) continue;
    for (const provider of providers) {
      const owner = provider === 'web' ? WEB_LOCAL_USER : (config.owners as Record<string, readonly string[] | undefined>)[provider]?.[0];
      const turn = buildTurnContext(config, { agentId, conversation: { provider, chat: 'dm', channelId: provider === 'web' ? 'web' : undefined }, sender: { id: owner } });
      for (const id of resolveToolSurface(config, turn, inputs).tools) ids.add(id);
    }
  }
  return [...ids].filter((id) => Object.hasOwn(CORE_IMPLEMENTATIONS, id) && CORE_IMPLEMENTATIONS[id]!.availability(config).ok);
}
