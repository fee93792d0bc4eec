import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import JSON5 from 'json5';
import type { WardenConfig } from '../config/schema/index.js';
import { PROFILE_IDS, type ProfileId } from '../config/schema/policy.js';
import { isGlob } from '../policy/glob.js';
import { isCoreToolId } from '../tools/catalog.js';
import { normalizeToolName } from '../tools/names.js';
import type { ToolMeta } from '../tools/types.js';

/**
 * Plugin manifests (reference §9): which plugins are installed and which tools they declare.
 * Reading only — no plugin code runs here, so a declared tool reaches the surface as a
 * definition and is reported unavailable ("plugin runtime not loaded") until a runtime
 * registers its implementation.
 */

export const MANIFEST_FILES = ['warden.plugin.json', 'openclaw.plugin.json'] as const;
const MAX_MANIFEST_BYTES = 256 * 1024;

/** A plugin tool definition; `optional` tools join the surface only when an allowlist names them. */
export interface PluginToolMeta extends ToolMeta {
  source: { kind: 'plugin'; pluginId: string };
  optional: boolean;
}

export interface LoadedPlugin {
  id: string;
  dir: string;
  manifest: string;
  tools: string[];
}

export interface PluginLoadResult {
  tools: PluginToolMeta[];
  plugins: LoadedPlugin[];
  /** Plugins or tools left out, and why (malformed manifest, name conflict, …). */
  problems: string[];
}

interface Manifest {
  id: string;
  contracts?: { tools?: unknown };
  toolMetadata?: Record<string, { profiles?: unknown; optional?: unknown; description?: unknown }>;
}

/** Discovers plugin folders under `plugins.paths` (relative to `baseDir`) and returns their tools. */
export function loadPluginTools(config: Pick<WardenConfig, 'plugins'>, baseDir: string): PluginLoadResult {
  const result: PluginLoadResult = { tools: [], plugins: [], problems: [] };
  const { allow, deny, entries } = config.plugins;
  const allowed = allow ? new Set(allow.map((id) => id.trim().toLowerCase())) : undefined;
  const denied = new Set(deny.map((id) => id.trim().toLowerCase()));
  const toolOwner = new Map<string, string>();

  for (const dir of discoverPluginDirs(config.plugins.paths, baseDir, result.problems)) {
    const read = readManifest(dir);
    if (!read.ok) {
      result.problems.push(`plugin ${dir}: ${read.error}`);
      continue;
    }
    const { manifest, file } = read;
    const id = manifest.id.trim().toLowerCase();
    if (denied.has(id) || (allowed && !allowed.has(id)) || entryFor(entries, id)?.enabled === false) continue;
    if (result.plugins.some((p) => p.id === id)) {
      result.problems.push(`duplicate plugin id (${id}): ${dir} ignored`);
      continue;
    }
    if (isCoreToolId(normalizeToolName(id))) {
      result.problems.push(`plugin id conflicts with core tool name (${id})`);
      continue;
    }
    const declared = Array.isArray(manifest.contracts?.tools) ? manifest.contracts.tools : [];
    const plugin: LoadedPlugin = { id, dir, manifest: file, tools: [] };
    for (const raw of declared) {
      const name = normalizeToolName(raw);
      if (!name || isGlob(name) || /[\s/\\]/.test(name) || name.startsWith('group:')) {
        result.problems.push(`plugin tool is malformed (${id}): ${JSON.stringify(raw)} is not a tool name`);
        continue;
      }
      if (isCoreToolId(name) || toolOwner.has(name)) {
        result.problems.push(`plugin tool name conflict (${id}): ${name}`);
        continue;
      }
      toolOwner.set(name, id);
      plugin.tools.push(name);
      result.tools.push(toolMeta(id, name, metadataFor(manifest, raw as string)));
    }
    result.plugins.push(plugin);
  }
  return result;
}

function entryFor(entries: WardenConfig['plugins']['entries'], id: string) {
  const key = Object.keys(entries).find((k) => k.trim().toLowerCase() === id);
  return key === undefined ? undefined : entries[key];
}

function metadataFor(manifest: Manifest, raw: string): { profiles?: unknown; optional?: unknown; description?: unknown } {
  const meta = manifest.toolMetadata;
  if (!meta || typeof meta !== 'object') return {};
  const found = meta[raw] ?? meta[normalizeToolName(raw)];
  return found && typeof found === 'object' ? found : {};
}

function toolMeta(pluginId: string, id: string, meta: { profiles?: unknown; optional?: unknown; description?: unknown }): PluginToolMeta {
  const profiles = Array.isArray(meta.profiles)
    ? meta.profiles.filter((p): p is ProfileId => typeof p === 'string' && (PROFILE_IDS as readonly string[]).includes(p))
    : [];
  return {
    id,
    label: id,
    description: typeof meta.description === 'string' ? meta.description : `Tool ${id} from plugin ${pluginId}.`,
    section: 'plugins',
    profiles,
    inWardenGroup: false,
    ownerOnly: false,
    source: { kind: 'plugin', pluginId },
    optional: meta.optional === true,
  };
}

/** A configured path is a plugin folder itself, or a folder of plugin folders (sorted: manifest order decides conflicts). */
function discoverPluginDirs(paths: readonly string[], baseDir: string, problems: string[]): string[] {
  const dirs: string[] = [];
  for (const p of paths) {
    const root = path.resolve(baseDir, p);
    if (!existsSync(root) || !statSync(root).isDirectory()) {
      problems.push(`plugins.paths: ${p} is not a directory`);
      continue;
    }
    if (hasManifest(root)) {
      dirs.push(root);
      continue;
    }
    for (const name of readdirSync(root).sort()) {
      const dir = path.join(root, name);
      if (statSync(dir).isDirectory() && hasManifest(dir)) dirs.push(dir);
    }
  }
  return dirs;
}

const hasManifest = (dir: string) => MANIFEST_FILES.some((f) => existsSync(path.join(dir, f)));

function readManifest(dir: string): { ok: true; manifest: Manifest; file: string } | { ok: false; error: string } {
  const file = MANIFEST_FILES.map((f) => path.join(dir, f)).find((f) => existsSync(f))!;
  const name = path.basename(file);
  if (statSync(file).size > MAX_MANIFEST_BYTES) return { ok: false, error: `${name} is larger than 256 KiB` };
  let parsed: unknown;
  try {
    parsed = JSON5.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    return { ok: false, error: `${name} is malformed: ${(err as Error).message}` };
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return { ok: false, error: `${name} must hold an object` };
  const id = (parsed as { id?: unknown }).id;
  if (typeof id !== 'string' || id.trim() === '') return { ok: false, error: `${name}: id must be a non-empty string` };
  return { ok: true, manifest: parsed as Manifest, file };
}
