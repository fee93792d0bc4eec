import type { WardenConfig } from '../config/index.js';
import { knownAgentIds } from '../policy/steps.js';
import { resolveToolSurface, type SurfaceOptions } from '../policy/surface.js';
import { CORE_IMPLEMENTATIONS } from './core-tools.js';
import { WEB_LOCAL_USER } from '../gateway/approval-clicks.js';
import { buildTurnContext, modelFor } from '../turn/turn-context.js';

/**
 * The core tools worth loading ahead of their first call: those some turn of this process can
 * call, when a model is configured. The model's tools are at most what an owner gets in a direct
 * message on a running platform, per agent (channel, sender and subagent steps only take tools
 * away), and `/exec` (which runs with or without a model). Anything else loads on first use, so
 * an idle bot does not hold the browser, the PDF reader or the HTML extractor; and a bot without
 * a model preloads nothing: its only tool call is an owner's `/exec`, which loads exec then (a
 * few hundred milliseconds, once) instead of holding the exec runner and its process library
 * (some 1.7 MB) through a wait that may never end.
 */
export function toolsToPreload(config: WardenConfig, providers: readonly string[], inputs: SurfaceOptions): string[] {
  const ids = new Set<string>();
  for (const agentId of knownAgentIds(config)) {
    if (modelFor(config, agentId) === undefined) continue;
    ids.add('exec');
    for (const provider of providers) {
      const owner = provider === 'web' ? WEB_LOCAL_USER : (config.owners as Record<string, readonly string[] | undefined>)[provider]?.[0];
      const turn = buildTurnContext(config, { agentId, conversation: { provider, chat: 'dm', channelId: provider === 'web' ? 'web' : undefined }, sender: { id: owner } });
      for (const id of resolveToolSurface(config, turn, inputs).tools) ids.add(id);
    }
  }
  return [...ids].filter((id) => Object.hasOwn(CORE_IMPLEMENTATIONS, id) && CORE_IMPLEMENTATIONS[id]!.availability(config).ok);
}
