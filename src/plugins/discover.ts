import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import type { WardenConfig } from '../config/schema/index.js';
import { OPENCLAW_HOOK_NAMES } from '../hooks/types.js';
import { isGlob } from '../config/tool-glob.js';
import { BUNDLE_MCP, isCoreToolId } from '../policy/catalog.js';
import { isMetaTool } from '../agent/tool-search/ids.js';
import { normalizeToolName } from '../policy/tool-names.js';
import { checkPluginConfig } from './config-schema.js';
import { guardOf, type OnLoadFailure, type PluginGuard } from './load-failure.js';
import { hasManifest, metadataFor, readManifest, toolMeta, type PluginManifest, type PluginToolMeta } from './manifest.js';

/**
 * Which plugins this config names, read from disk without running any of their code: plugin
 * folders under `plugins.paths`, installed npm packages named in `plugins.load`, their
 * manifests, entry modules, declared tools and validated config. The rules of reference §9
 * that need no code apply here (ids, declared names, conflicts with core tools, enablement);
 * the loader (`loader.ts`) then runs the entry modules of the plugins found loadable.
 */

export type PluginOrigin = 'path' | 'package';

/** `discovered`: may load; `disabled`: turned off in the config; `blocked`: a rule keeps it out; `error`: cannot load. */
export type DiscoveryStatus = 'discovered' | 'disabled' | 'blocked' | 'error';

export interface PluginDiagnostic {
  level: 'error' | 'warn';
  pluginId?: string | undefined;
  message: string;
  /** `load`: the plugin was found but cannot run (entry, config, pin); absent: a manifest-level problem. */
  phase?: 'load' | undefined;
}

export interface PluginHooksPolicy {
  allowPromptInjection?: boolean | undefined;
  allowConversationAccess?: boolean | undefined;
  timeoutMs?: number | undefined;
  timeouts?: Record<string, number> | undefined;
}

export interface DiscoveredPlugin {
  id: string;
  name: string;
  version?: string | undefined;
  description?: string | undefined;
  dir: string;
  manifestFile: string;
  manifest: PluginManifest;
  origin: PluginOrigin;
  /** The configured folder it was found in, or the `node_modules` it was resolved from. */
  root: string;
  /** For a package: its name and the `plugins.load` entry that named it. */
  packageName?: string | undefined;
  requested?: string | undefined;
  /** Entry modules, absolute, inside `dir`. */
  entries: string[];
  status: DiscoveryStatus;
  /** Why it is disabled, blocked or in error. */
  why?: string | undefined;
  /** `contracts.tools`, normalised; only valid names. */
  declaredTools: string[];
  /** `contracts.trustedToolPolicies`, trimmed. */
  trustedPolicies: string[];
  /** The config after schema validation (defaults applied). */
  config: Record<string, unknown>;
  hooksPolicy: PluginHooksPolicy;
  /** The hooks and tools its manifest declares it guards (see load-failure.ts). */
  guard: PluginGuard;
  /** `plugins.entries.<id>.onLoadFailure`. */
  onLoadFailure?: OnLoadFailure | undefined;
}

export interface Discovery {
  plugins: DiscoveredPlugin[];
  /** Declared tools of plugins that are not disabled or blocked, in manifest order. */
  tools: PluginToolMeta[];
  diagnostics: PluginDiagnostic[];
  /**
   * Plugins the config names that could not even be read: a `plugins.paths` folder or a
   * `plugins.load` package missing, a manifest that does not parse, a `plugins.entries.<id>`
   * (not `enabled: false`) whose plugin is nowhere. Whatever rules they hold are unknown, so
   * they stop the start like a policy plugin that failed (load-failure.ts).
   */
  unresolved: Array<{ path: string; message: string }>;
}

/** Entry modules tried when package.json names none (OpenClaw's list). */
export const DEFAULT_ENTRIES = ['index.ts', 'index.js', 'index.mjs', 'index.cjs'] as const;

type PluginsConfig = WardenConfig['plugins'];

export function discoverPlugins(config: Pick<WardenConfig, 'plugins'>, baseDir: string): Discovery {
  const out: Discovery = { plugins: [], tools: [], diagnostics: [], unresolved: [] };
  const settings = config.plugins;
  if (settings.enabled === false) return out;
  const allowed = settings.allow ? new Set(settings.allow.map((id) => id.trim().toLowerCase())) : undefined;
  const denied = new Set(settings.deny.map((id) => id.trim().toLowerCase()));
  const toolOwner = new Map<string, string>();
  const error = (message: string, pluginId?: string) => out.diagnostics.push({ level: 'error', message, ...(pluginId ? { pluginId } : {}) });
  const unresolved = (message: string, keyPath: string) => {
    error(message);
    out.unresolved.push({ path: keyPath, message });
  };

  for (const found of candidateDirs(settings, baseDir, unresolved)) {
    const read = readManifest(found.dir);
    if (!read.ok) {
      unresolved(`plugin ${found.dir}: ${read.error}`, found.origin === 'path' ? 'plugins.paths' : 'plugins.load');
      continue;
    }
    const { manifest, file } = read;
    const id = manifest.id.trim().toLowerCase();
    if (out.plugins.some((p) => p.id === id)) {
      error(`duplicate plugin id (${id}): ${found.dir} ignored`, id);
      continue;
    }
    const entry = entryFor(settings.entries, id);
    const plugin: DiscoveredPlugin = {
      id,
      name: typeof manifest.name === 'string' && manifest.name.trim() ? manifest.name : id,
      ...(typeof manifest.version === 'string' ? { version: manifest.version } : {}),
      ...(typeof manifest.description === 'string' ? { description: manifest.description } : {}),
      dir: found.dir,
      manifestFile: file,
      manifest,
      origin: found.origin,
      root: found.root,
      ...(found.packageName ? { packageName: found.packageName, requested: found.requested } : {}),
      entries: [],
      status: 'discovered',
      declaredTools: [],
      trustedPolicies: stringList(manifest.contracts?.trustedToolPolicies),
      config: {},
      hooksPolicy: entry?.hooks ?? {},
      guard: guardOf(manifest),
      ...(entry?.onLoadFailure ? { onLoadFailure: entry.onLoadFailure } : {}),
    };
    if (found.packageVersion !== undefined) plugin.version ??= found.packageVersion;
    out.plugins.push(plugin);

    const off = denied.has(id) ? 'plugins.deny' : allowed && !allowed.has(id) ? 'plugins.allow' : entry?.enabled === false ? `plugins.entries.${id}.enabled` : undefined;
    if (off) {
      plugin.status = 'disabled';
      plugin.why = off === 'plugins.allow' ? 'not in plugins.allow' : `disabled by ${off}`;
      continue;
    }
    if (isCoreToolId(normalizeToolName(id)) || isMetaTool(normalizeToolName(id))) {
      plugin.status = 'blocked';
      plugin.why = `plugin id conflicts with core tool name (${id})`;
      error(plugin.why, id);
      continue;
    }
    const reserved = reservedPluginId(id);
    if (reserved) {
      plugin.status = 'blocked';
      plugin.why = reserved;
      error(reserved, id);
      continue;
    }
    if (found.pinProblem) fail(plugin, found.pinProblem, out.diagnostics);
    if (plugin.guard.problems.length > 0) fail(plugin, plugin.guard.problems.join('; '), out.diagnostics);
    for (const hook of Object.keys(entry?.hooks?.timeouts ?? {})) {
      if (!(OPENCLAW_HOOK_NAMES as readonly string[]).includes(hook)) out.diagnostics.push({ level: 'warn', pluginId: id, message: `plugins.entries.${id}.hooks.timeouts.${hook}: no hook of that name; the timeout applies to nothing` });
    }

    for (const raw of Array.isArray(manifest.contracts?.tools) ? manifest.contracts.tools : []) {
      const name = typeof raw === 'string' ? normalizeToolName(raw) : '';
      if (!name || isGlob(name) || /[\s/\\]/.test(name) || name.startsWith('group:')) {
        error(`plugin tool is malformed (${id}): ${JSON.stringify(raw)} is not a tool name`, id);
        continue;
      }
      // The Tool Search tools are Warden's too: a plugin tool by their name could never be called.
      if (isCoreToolId(name) || isMetaTool(name) || toolOwner.has(name)) {
        error(`plugin tool name conflict (${id}): ${name}`, id);
        continue;
      }
      toolOwner.set(name, id);
      plugin.declaredTools.push(name);
      out.tools.push(toolMeta(id, name, metadataFor(manifest, raw as string)));
    }

    const checked = checkPluginConfig(id, manifest.configSchema as object | undefined, entry?.config, `plugins.entries.${entryKey(settings.entries, id) ?? id}.config`);
    if (checked.ok) plugin.config = checked.value;
    else fail(plugin, checked.errors.join('; '), out.diagnostics);

    const entries = entryModules(found.dir);
    if (!entries.ok) fail(plugin, entries.error, out.diagnostics);
    else plugin.entries = entries.files;
  }

  for (const key of Object.keys(settings.entries)) {
    const id = key.trim().toLowerCase();
    if (out.plugins.some((p) => p.id === id)) continue;
    const message = `plugins.entries.${key}: no plugin with this id was found`;
    out.diagnostics.push({ level: settings.entries[key]?.enabled === false ? 'warn' : 'error', pluginId: id, message });
    if (settings.entries[key]?.enabled !== false) out.unresolved.push({ path: `plugins.entries.${key}`, message: `${message} (in plugins.paths or plugins.load), so whatever rules its entry configures are not enforced; fix the path, or set plugins.entries.${key}.enabled: false` });
  }
  return out;
}

/**
 * Ids that would mean something else in a policy entry: `bundle-mcp` (every MCP tool),
 * OpenClaw's reserved `node-mcp`, `group:…`, and anything that is not a plain name.
 */
function reservedPluginId(id: string): string | undefined {
  if (id === BUNDLE_MCP || id === 'node-mcp' || id === 'plugins') return `plugin id is reserved (${id})`;
  if (!/^[a-z0-9][a-z0-9._-]*$/.test(id)) return `plugin id must be letters, digits, ".", "_" or "-" (${id})`;
  return undefined;
}

function fail(plugin: DiscoveredPlugin, why: string, diagnostics: PluginDiagnostic[]): void {
  if (plugin.status === 'error') return;
  plugin.status = 'error';
  plugin.why = why;
  diagnostics.push({ level: 'error', pluginId: plugin.id, message: `plugin ${plugin.id} cannot load: ${why}`, phase: 'load' });
}

const stringList = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x.trim() !== '').map((x) => x.trim()) : []);

function entryKey(entries: PluginsConfig['entries'], id: string): string | undefined {
  return Object.keys(entries).find((k) => k.trim().toLowerCase() === id);
}

function entryFor(entries: PluginsConfig['entries'], id: string) {
  const key = entryKey(entries, id);
  return key === undefined ? undefined : entries[key];
}

interface CandidateDir {
  dir: string;
  root: string;
  origin: PluginOrigin;
  packageName?: string;
  requested?: string;
  packageVersion?: string;
  /** The installed version differs from the one `plugins.load` pins. */
  pinProblem?: string;
}

/** `plugins.paths` (a plugin folder, or a folder of them, sorted) then `plugins.load` packages, in config order. */
function candidateDirs(settings: PluginsConfig, baseDir: string, error: (m: string, keyPath: string) => void): CandidateDir[] {
  const dirs: CandidateDir[] = [];
  for (const p of settings.paths) {
    const root = path.resolve(baseDir, p);
    if (!existsSync(root) || !statSync(root).isDirectory()) {
      error(`plugins.paths: ${p} is not a directory`, 'plugins.paths');
      continue;
    }
    if (hasManifest(root)) {
      dirs.push({ dir: root, root, origin: 'path' });
      continue;
    }
    for (const name of readdirSync(root).sort()) {
      const dir = path.join(root, name);
      if (statSync(dir).isDirectory() && hasManifest(dir)) dirs.push({ dir, root, origin: 'path' });
    }
  }
  for (const spec of settings.load) {
    const { name, version } = parsePackageSpec(spec);
    const dir = resolvePackageDir(name, baseDir);
    if (!dir) {
      error(`plugins.load: package ${name} is not installed (no node_modules/${name} from ${baseDir} up)`, 'plugins.load');
      continue;
    }
    if (!hasManifest(dir)) {
      error(`plugins.load: package ${name} has no warden.plugin.json or openclaw.plugin.json`, 'plugins.load');
      continue;
    }
    const installed = packageJson(dir)?.version;
    const candidate: CandidateDir = { dir, root: path.dirname(dir), origin: 'package', packageName: name, requested: spec, ...(typeof installed === 'string' ? { packageVersion: installed } : {}) };
    if (version !== undefined && installed !== version) candidate.pinProblem = `plugins.load pins ${name}@${version} but ${typeof installed === 'string' ? installed : 'no version'} is installed`;
    dirs.push(candidate);
  }
  return dirs;
}

/** `name`, `@scope/name`, `name@1.2.3`, `@scope/name@1.2.3`. */
export function parsePackageSpec(spec: string): { name: string; version?: string } {
  const at = spec.lastIndexOf('@');
  if (at > 0) return { name: spec.slice(0, at), version: spec.slice(at + 1) };
  return { name: spec };
}

/** `node_modules/<name>` from `baseDir` up to the filesystem root, as Node resolves packages. */
export function resolvePackageDir(name: string, baseDir: string): string | undefined {
  if (!/^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*$/i.test(name)) return undefined;
  for (let dir = path.resolve(baseDir); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (path.dirname(dir) === dir) return undefined;
  }
}

function packageJson(dir: string): Record<string, unknown> | undefined {
  try {
    const parsed = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as unknown;
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The entry modules: package.json `warden.extensions` (or OpenClaw's `openclaw.extensions`), else
 * the first of index.ts/js/mjs/cjs. Each must be a file inside the plugin's folder once links
 * are followed, so a manifest cannot point Warden at code elsewhere on the machine.
 */
export function entryModules(dir: string): { ok: true; files: string[] } | { ok: false; error: string } {
  const pkg = packageJson(dir);
  const block = (pkg?.warden ?? pkg?.openclaw) as { extensions?: unknown } | undefined;
  let names: string[];
  if (block && block.extensions !== undefined) {
    if (!Array.isArray(block.extensions) || block.extensions.length === 0 || block.extensions.some((e) => typeof e !== 'string' || e.trim() === '')) {
      return { ok: false, error: 'package.json extensions must be a non-empty array of paths' };
    }
    names = block.extensions as string[];
  } else {
    const first = DEFAULT_ENTRIES.find((f) => existsSync(path.join(dir, f)));
    if (!first) return { ok: false, error: `no entry module (${DEFAULT_ENTRIES.join(', ')} or package.json warden.extensions)` };
    names = [first];
  }
  const realDir = realpathSync(dir);
  const files: string[] = [];
  for (const name of names) {
    const file = path.resolve(dir, name);
    if (!existsSync(file) || !statSync(file).isFile()) return { ok: false, error: `entry module ${name} does not exist` };
    const real = realpathSync(file);
    if (!real.startsWith(realDir + path.sep)) return { ok: false, error: `entry module ${name} is outside the plugin folder` };
    files.push(real);
  }
  return { ok: true, files };
}
