import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { json5 } from '../util/json5.js';
import type { WardenConfig } from '../config/schema/index.js';
import { PROFILE_IDS, type ProfileId } from '../config/schema/policy.js';
import type { ToolMeta } from '../tools/types.js';
import { discoverPlugins } from './discover.js';

/**
 * Plugin manifests (reference §9.1): which plugins are installed, which tools they declare,
 * the JSON Schema of their config. Reading only — no plugin code runs here.
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

/** The manifest fields Warden reads; everything else in the file is ignored. */
export interface PluginManifest {
  id: string;
  name?: unknown;
  description?: unknown;
  version?: unknown;
  configSchema?: unknown;
  contracts?: { tools?: unknown; trustedToolPolicies?: unknown; [key: string]: unknown };
  toolMetadata?: Record<string, { profiles?: unknown; optional?: unknown; description?: unknown }>;
}

/** Discovers plugin folders and returns their declared tools (no plugin code runs). */
export function loadPluginTools(config: Pick<WardenConfig, 'plugins'>, baseDir: string): PluginLoadResult {
  const found = discoverPlugins(config, baseDir);
  return {
    tools: found.tools,
    plugins: found.plugins.filter((p) => p.status !== 'disabled').map((p) => ({ id: p.id, dir: p.dir, manifest: p.manifestFile, tools: p.declaredTools })),
    problems: found.diagnostics.filter((d) => d.level === 'error' && d.phase !== 'load').map((d) => d.message),
  };
}

export function metadataFor(manifest: PluginManifest, raw: string): { profiles?: unknown; optional?: unknown; description?: unknown } {
  const meta = manifest.toolMetadata;
  if (!meta || typeof meta !== 'object') return {};
  const found = meta[raw] ?? meta[raw.trim().toLowerCase()];
  return found && typeof found === 'object' ? found : {};
}

export function toolMeta(pluginId: string, id: string, meta: { profiles?: unknown; optional?: unknown; description?: unknown }): PluginToolMeta {
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

export const hasManifest = (dir: string): boolean => MANIFEST_FILES.some((f) => existsSync(path.join(dir, f)));

export function readManifest(dir: string): { ok: true; manifest: PluginManifest; file: string } | { ok: false; error: string } {
  const file = MANIFEST_FILES.map((f) => path.join(dir, f)).find((f) => existsSync(f));
  if (!file) return { ok: false, error: `no ${MANIFEST_FILES.join(' or ')}` };
  const name = path.basename(file);
  if (statSync(file).size > MAX_MANIFEST_BYTES) return { ok: false, error: `${name} is larger than 256 KiB` };
  let parsed: unknown;
  try {
    parsed = json5().parse(readFileSync(file, 'utf8'));
  } catch (err) {
    return { ok: false, error: `${name} is malformed: ${(err as Error).message}` };
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return { ok: false, error: `${name} must hold an object` };
  const id = (parsed as { id?: unknown }).id;
  if (typeof id !== 'string' || id.trim() === '') return { ok: false, error: `${name}: id must be a non-empty string` };
  const schema = (parsed as { configSchema?: unknown }).configSchema;
  if (schema !== undefined && (typeof schema !== 'object' || schema === null || Array.isArray(schema))) {
    return { ok: false, error: `${name}: configSchema must be a JSON Schema object` };
  }
  return { ok: true, manifest: parsed as PluginManifest, file };
}
