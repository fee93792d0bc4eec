import type { WardenConfig } from '../config/index.js';
import { knownAgentIds } from '../policy/steps.js';
import { CORE_IMPLEMENTATIONS } from './core-tools.js';
import { modelFor } from '../turn/turn-context.js';

/**
 * The core tools worth loading ahead of their first call: exec, when a model is configured. A
 * turn's surface needs no implementation (it reads the descriptors, `core-descriptors.ts`), so
 * every other tool loads at its first call and an idle bot, or one whose model has only talked,
 * does not hold the browser, the PDF reader, the HTML extractor or the session tools. exec is
 * the exception because its first load (the exec runner and its process library) takes a few
 * hundred milliseconds a model's first command would otherwise wait for. A bot without a model
 * preloads nothing: its only tool call is an owner's `/exec`, which loads exec then (once)
 * instead of holding the exec runner (some 1.7 MB) through a wait that may never end.
 */
export function toolsToPreload(config: WardenConfig): string[] {
  const withModel = knownAgentIds(config).some((agentId) => modelFor(config, agentId) !== undefined);
  return withModel && CORE_IMPLEMENTATIONS.exec!.availability(config).ok ? ['exec'] : [];
}
