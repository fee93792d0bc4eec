import path from 'node:path';
import type { WardenConfig } from '../config/schema/index.js';
import { loadPluginTools, type PluginToolMeta } from '../plugins/manifest.js';
import type { SurfaceOptions } from '../policy/surface.js';
import type { Availability } from './types.js';
import { coreAvailability } from './core/index.js';

/**
 * What the surface function is handed about this process, built in one place so the running
 * bot, its chat commands and every CLI command offer the model the same candidates:
 * - the plugin tools the manifests under `plugins.paths` declare (core tools come from the
 *   catalog inside the policy);
 * - whether each tool can run here: a core tool asks the registry of `tools/core/index.ts`;
 *   a plugin tool is unavailable until a plugin runtime registers its implementation.
 *
 * The policy never fetches any of this itself (it imports no tool implementation).
 */
export interface SurfaceInputs extends SurfaceOptions {
  plugins: readonly PluginToolMeta[];
  /** Manifests or tools left out, and why; `warden tools` prints them as warnings. */
  problems: readonly string[];
}

const cache = new WeakMap<WardenConfig, Map<string, SurfaceInputs>>();

/**
 * The surface inputs for a config whose relative paths resolve against `baseDir` (the config
 * file's folder). Manifests are read once per config object: the plugin list keeps its identity
 * turn after turn, which the policy's candidate cache relies on.
 */
export function surfaceInputs(config: WardenConfig, baseDir: string): SurfaceInputs {
  const dir = path.resolve(baseDir);
  let byDir = cache.get(config);
  if (!byDir) cache.set(config, (byDir = new Map()));
  let inputs = byDir.get(dir);
  if (!inputs) {
    const loaded = loadPluginTools(config, dir);
    const pluginIds = new Set(loaded.tools.map((t) => t.id));
    inputs = {
      plugins: loaded.tools,
      problems: loaded.problems,
      implemented: (id: string): Availability | undefined => (pluginIds.has(id) ? undefined : coreAvailability(id, config)),
    };
    byDir.set(dir, inputs);
  }
  return inputs;
}
