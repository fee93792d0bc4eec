import { CORE_TOOLS, coreGroupName, isCoreToolId, BUNDLE_MCP, PLUGINS_GROUP } from './catalog.js';
import type { ToolMeta } from './tool-meta.js';
import { compileGlob, isGlob } from '../config/tool-glob.js';
import type { PolicyEntry } from './policy.js';

/**
 * Allowlist diagnostics (semantics §3, reference §2.5): warnings, never silent fixes. An entry is
 * judged against the surface entering the pipeline (catalog and plugin tools after the
 * pre-filters), so a tool that is merely not implemented in this build is still "known".
 */

export interface SurfaceIndex {
  /** Ids of the tools entering the pipeline. */
  ids: ReadonlySet<string>;
  tools: readonly ToolMeta[];
  pluginIds: ReadonlySet<string>;
  /** Safe names of the MCP servers with candidates (listed tools or a placeholder). */
  mcpServers: ReadonlySet<string>;
}

export function indexSurface(tools: readonly ToolMeta[]): SurfaceIndex {
  const pluginIds = new Set<string>();
  const mcpServers = new Set<string>();
  for (const t of tools) {
    if (t.source.kind === 'plugin') pluginIds.add(t.source.pluginId);
    else if (t.source.kind === 'mcp') mcpServers.add(t.source.server);
  }
  return { ids: new Set(tools.map((t) => t.id)), tools, pluginIds, mcpServers };
}

type EntryKind = 'any' | 'core' | 'plugin' | 'gated' | 'unknown';

export function classifyEntry(e: PolicyEntry, surface: SurfaceIndex): EntryKind {
  const { name } = e;
  if (e.implicit || e.profile || name === '*') return 'any';
  if (name === PLUGINS_GROUP) return 'plugin';
  // As in OpenClaw: bundle-mcp, and a `<server>__…` entry, name something when that MCP server is declared.
  if (name === BUNDLE_MCP) return surface.mcpServers.size > 0 ? 'plugin' : 'unknown';
  const at = name.indexOf('__');
  if (at > 0 && surface.mcpServers.has(name.slice(0, at))) return 'plugin';
  if (coreGroupName(name)) return 'core';
  if (name.startsWith('group:')) return 'unknown';
  if (isGlob(name)) {
    const test = compileGlob(name);
    let plugin = false;
    for (const t of surface.tools) {
      if (test(t.id)) {
        if (t.source.kind === 'core') return 'core';
        plugin = true;
      }
    }
    if (plugin) return 'plugin';
    return CORE_TOOLS.some((t) => test(t.id)) ? 'gated' : 'unknown';
  }
  if (surface.ids.has(name)) return isCoreToolId(name) ? 'core' : 'plugin';
  if (surface.pluginIds.has(name)) return 'plugin';
  return isCoreToolId(name) ? 'gated' : 'unknown';
}

const GATED = 'shipped core tools unavailable in the current runtime/provider/model/config';
const UNKNOWN = "These entries won't match any tool unless the plugin is enabled.";

/**
 * `tools: <label> allowlist contains unknown entries (a, b). <what to do>`, and for entries that
 * are known core tools not offered here `tools: <label> allowlist names shipped core tools
 * unavailable in … (c)` — never calling a known tool unknown (OpenClaw's one sentence for both
 * contradicted itself). Undefined when every entry names something offered.
 */
export function unknownEntriesWarning(label: string, entries: readonly PolicyEntry[], surface: SurfaceIndex): string | undefined {
  const gated: string[] = [];
  const unknown: string[] = [];
  for (const e of entries) {
    const kind = classifyEntry(e, surface);
    if (kind === 'gated') gated.push(e.raw);
    else if (kind === 'unknown') unknown.push(e.raw);
  }
  if (gated.length === 0 && unknown.length === 0) return undefined;
  if (unknown.length === 0) return `tools: ${label} allowlist names ${GATED} (${gated.join(', ')}).`;
  const unknownPart = `tools: ${label} allowlist contains unknown entries (${unknown.join(', ')}).`;
  if (gated.length === 0) return `${unknownPart} ${UNKNOWN}`;
  return `${unknownPart} They won't match any tool unless the plugin is enabled. It also names ${GATED} (${gated.join(', ')}).`;
}

/**
 * An allowlist naming only plugin tools still removes every core tool (stripping it would fail
 * open); the operator most likely meant alsoAllow.
 */
export function pluginOnlyWarning(label: string, entries: readonly PolicyEntry[], surface: SurfaceIndex): string | undefined {
  let plugin = 0;
  for (const e of entries) {
    const kind = classifyEntry(e, surface);
    if (kind === 'plugin') plugin++;
    else if (kind !== 'unknown') return undefined;
  }
  if (plugin === 0) return undefined;
  return `tools: ${label} allowlist names only plugin tools (${entries.map((e) => e.raw).join(', ')}), so it removes every core tool. Did you mean tools.alsoAllow? alsoAllow adds tools to the profile without removing the others.`;
}
