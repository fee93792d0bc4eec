import path from 'node:path';
import type { WardenConfig } from '../config/schema/index.js';
import type { McpManager } from '../mcp/manager.js';
import { mcpManagerFor } from '../mcp/registry.js';
import type { PluginToolMeta } from '../plugins/manifest.js';
import { createPluginRuntime, loadedPluginRuntime, type PluginRuntime } from '../plugins/runtime.js';
import type { SurfaceOptions } from '../policy/surface.js';
import type { Availability, ToolMeta } from '../tools/types.js';
import { coreAvailability } from './core-tools.js';

/**
 * What the surface function is handed about this process, built in one place so the running
 * bot, its chat commands and every CLI command offer the model the same candidates:
 * - the plugin tools the plugins declare (core tools come from the catalog inside the policy);
 * - the MCP tools of the config's MCP manager (src/mcp), when one runs for it: the tools its
 *   servers listed, and a `<server>__*` placeholder for a server that has listed none yet;
 * - whether each tool can run here: a core tool asks the registry of `app/core-tools.ts`; a
 *   plugin tool asks the plugin runtime, which builds it for the turn with the plugin's factory
 *   (before `loadPluginRuntime` ran: unavailable, "plugin runtime not loaded"); an MCP tool
 *   asks the manager (its server connected, or why not);
 * - and, before all of these, whether a policy plugin that did not load withholds the tool
 *   (`plugins.entries.<id>.onLoadFailure: remove-guarded-tools`, see plugins/load-failure.ts).
 *
 * The policy never fetches any of this itself (it imports no tool implementation).
 */
export interface SurfaceInputs extends SurfaceOptions {
  plugins: readonly ToolMeta[];
  /** Plugins or tools left out, and why; `warden tools` prints them as warnings. */
  problems: readonly string[];
  /** The loaded plugin runtime, when there is one. */
  runtime?: PluginRuntime | undefined;
  /** The MCP manager serving this config, when one runs. */
  readonly mcp?: McpManager | undefined;
}

const manifestsOnly = new WeakMap<WardenConfig, Map<string, SurfaceInputs>>();
const withRuntime = new WeakMap<PluginRuntime, SurfaceInputs>();

/**
 * The surface inputs for a config whose relative paths resolve against `baseDir` (the config
 * file's folder). They are built once per config (and once more when its plugin runtime has
 * loaded): the candidate list keeps its identity turn after turn — and, with MCP servers,
 * until their tools change — which the policy's candidate cache relies on.
 */
export function surfaceInputs(config: WardenConfig, baseDir: string): SurfaceInputs {
  const dir = path.resolve(baseDir);
  const runtime = loadedPluginRuntime(config, dir);
  if (runtime) {
    let inputs = withRuntime.get(runtime);
    if (!inputs) {
      inputs = withMcp(config, {
        tools: () => runtime.tools,
        problems: runtime.allDiagnostics().filter((d) => d.level === 'error').map((d) => d.message),
        runtime,
        withheld: (id) => runtime.withheld(id),
        implemented: (id, ctx) => (runtime.isPluginTool(id) ? runtime.availability(id, ctx) : coreAvailability(id, config)),
      });
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
    inputs = withMcp(config, {
      tools: () => discovered.tools,
      problems: discovered.allDiagnostics().filter((d) => d.level === 'error' && d.phase !== 'load').map((d) => d.message),
      implemented: (id) => (discovered.isPluginTool(id) ? discovered.availability(id) : coreAvailability(id, config)),
    });
    byDir.set(dir, inputs);
  }
  return inputs;
}

interface PluginPart {
  tools: () => readonly PluginToolMeta[];
  problems: readonly string[];
  runtime?: PluginRuntime | undefined;
  withheld?: ((id: string) => Availability | undefined) | undefined;
  implemented: SurfaceOptions['implemented'];
}

/** Plugin inputs plus the MCP manager's tools, read at each use: servers connect, change and fail while Warden runs. */
function withMcp(config: WardenConfig, part: PluginPart): SurfaceInputs {
  let merged: { plugins: readonly ToolMeta[]; mcp: readonly ToolMeta[]; all: readonly ToolMeta[] } | undefined;
  return {
    problems: part.problems,
    runtime: part.runtime,
    get mcp() {
      return mcpManagerFor(config);
    },
    get plugins(): readonly ToolMeta[] {
      const plugins = part.tools();
      const mcp = mcpManagerFor(config)?.tools();
      if (!mcp || mcp.length === 0) return plugins;
      if (merged?.plugins !== plugins || merged.mcp !== mcp) merged = { plugins, mcp, all: [...plugins, ...mcp] };
      return merged.all;
    },
    implemented: (id, ctx): Availability | undefined => part.withheld?.(id) ?? mcpManagerFor(config)?.availability(id) ?? part.implemented(id, ctx),
  };
}

/**
 * What the call chain's rule step reads (`approvals.rules`), with the catalog entries of the
 * plugin and MCP tools these inputs offer: the live bot and `warden invoke` build it here alike.
 */
export function approvalRulesInput(config: WardenConfig, inputs: Pick<SurfaceInputs, 'plugins'>): { config: WardenConfig; meta: (id: string) => ToolMeta | undefined } {
  return { config, meta: (id) => inputs.plugins.find((t) => t.id === id) };
}
