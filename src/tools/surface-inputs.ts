import path from 'node:path';
import type { WardenConfig } from '../config/schema/index.js';
import type { PluginToolMeta } from '../plugins/manifest.js';
import { createPluginRuntime, loadedPluginRuntime, type PluginRuntime } from '../plugins/runtime.js';
import type { SurfaceOptions } from '../policy/surface.js';
import type { Availability } from './types.js';
import { coreAvailability } from './core/index.js';

/**
 * What the surface function is handed about this process, built in one place so the running
 * bot, its chat commands and every CLI command offer the model the same candidates:
 * - the plugin tools the plugins declare (core tools come from the catalog inside the policy);
 * - whether each tool can run here: a core tool asks the registry of `tools/core/index.ts`; a
 *   plugin tool asks the plugin runtime, which builds it for the turn with the plugin's factory
 *   (before `loadPluginRuntime` ran: unavailable, "plugin runtime not loaded").
 *
 * The policy never fetches any of this itself (it imports no tool implementation).
 */
export interface SurfaceInputs extends SurfaceOptions {
  plugins: readonly PluginToolMeta[];
  /** Plugins or tools left out, and why; `warden tools` prints them as warnings. */
  problems: readonly string[];
  /** The loaded plugin runtime, when there is one. */
  runtime?: PluginRuntime | undefined;
}

const manifestsOnly = new WeakMap<WardenConfig, Map<string, SurfaceInputs>>();
const withRuntime = new WeakMap<PluginRuntime, SurfaceInputs>();

/**
 * The surface inputs for a config whose relative paths resolve against `baseDir` (the config
 * file's folder). They are built once per config (and once more when its plugin runtime has
 * loaded): the plugin list keeps its identity turn after turn, which the policy's candidate
 * cache relies on.
 */
export function surfaceInputs(config: WardenConfig, baseDir: string): SurfaceInputs {
  const dir = path.resolve(baseDir);
  const runtime = loadedPluginRuntime(config, dir);
  if (runtime) {
    let inputs = withRuntime.get(runtime);
    if (!inputs) {
      inputs = {
        plugins: runtime.tools,
        problems: runtime.allDiagnostics().filter((d) => d.level === 'error').map((d) => d.message),
        runtime,
        implemented: (id: string, ctx): Availability | undefined => (runtime.isPluginTool(id) ? runtime.availability(id, ctx) : coreAvailability(id, config)),
      };
      withRuntime.set(runtime, inputs);
    }
    return inputs;
  }
  let byDir = manifestsOnly.get(config);
  if (!byDir) manifestsOnly.set(config, (byDir = new Map()));
  let inputs = byDir.get(dir);
  if (!inputs) {
    // Discovery only: plugin tools are candidates, unavailable until the runtime has loaded.
    const discovered = createPluginRuntime(config, dir);
    inputs = {
      plugins: discovered.tools,
      problems: discovered.allDiagnostics().filter((d) => d.level === 'error' && d.phase !== 'load').map((d) => d.message),
      implemented: (id: string): Availability | undefined => (discovered.isPluginTool(id) ? discovered.availability(id) : coreAvailability(id, config)),
    };
    byDir.set(dir, inputs);
  }
  return inputs;
}
