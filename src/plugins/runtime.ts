import { existsSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { WardenConfig } from '../config/schema/index.js';
import { HookBus } from '../hooks/bus.js';
import { toolHookContext } from '../hooks/context.js';
import {
  CONVERSATION_HOOKS,
  HOOK_NAMES,
  MAX_HOOK_TIMEOUT_MS,
  NOT_EMITTED,
  OPENCLAW_HOOK_NAMES,
  POLICY_HOOKS,
  PROMPT_INJECTION_HOOKS,
  type HookName,
  type HookOptions,
} from '../hooks/types.js';
import { log } from '../log/log.js';
import { compileLinearRegex } from '../util/linear-regex.js';
import type { TurnContext } from '../policy/context.js';
import type { TrustedToolPolicy } from '../tools/invoke/trusted-policy.js';
import { normalizeToolName } from '../policy/tool-names.js';
import type { Availability, ToolImplementation } from '../tools/types.js';
import { discoverPlugins, type DiscoveredPlugin, type Discovery, type PluginDiagnostic, type PluginOrigin } from './discover.js';
import type { PluginToolMeta } from './manifest.js';
import type { PluginCommandDefinition, PluginCommandHandler, PluginLogger, PluginTool, PluginToolFactory, RegisterToolOptions, TrustedToolPolicyRegistration, WardenPluginApi } from './sdk.js';
import { pluginLoadGate, undeclaredHook, withheldBy, type OnLoadFailure, type PluginGuard, type PluginLoadGate } from './load-failure.js';
import { inspect, PluginTools, type ToolRegistration } from './tools.js';

/**
 * The plugin runtime: discovery, then each loadable plugin's entry module is imported and its
 * `register(api)` run. What a plugin registers is staged and committed only when `register`
 * returns, so a plugin that throws (or whose module fails to load) leaves nothing behind. A
 * plugin that enforces nothing is then reported and skipped; a policy plugin (load-failure.ts)
 * makes `gate` refuse the start and every deciding command, or withhold the tools it guards.
 * Registration rules and their diagnostics follow reference §9 (OpenClaw's texts where OpenClaw
 * has them).
 */

export type PluginStatus = 'loaded' | 'disabled' | 'blocked' | 'error';

export interface PluginHookInfo {
  name: string;
  priority: number;
  timeoutMs?: number | undefined;
  toolMatcher?: string[] | undefined;
}

export interface PluginRecord {
  id: string;
  name: string;
  version?: string | undefined;
  description?: string | undefined;
  dir: string;
  origin: PluginOrigin;
  root: string;
  packageName?: string | undefined;
  requested?: string | undefined;
  entries: string[];
  status: PluginStatus;
  why?: string | undefined;
  /** `contracts.tools` that reached the candidates. */
  declaredTools: string[];
  /** Tool names it registered an implementation for (a factory without names: every declared tool). */
  tools: string[];
  hooks: PluginHookInfo[];
  commands: string[];
  skillsDirs: string[];
  trustedPolicies: string[];
  diagnostics: PluginDiagnostic[];
  hooksPolicy: DiscoveredPlugin['hooksPolicy'];
  config: Record<string, unknown>;
  guard: PluginGuard;
  onLoadFailure?: OnLoadFailure | undefined;
  /** `contracts.trustedToolPolicies` of its manifest. */
  trustedPoliciesDeclared: string[];
}

export interface PluginCommand {
  pluginId: string;
  name: string;
  description?: string | undefined;
  ownerOnly: boolean;
  handler: PluginCommandHandler;
  config: Record<string, unknown>;
}

/** Warden's own command words; a plugin cannot take them. */
export const RESERVED_COMMANDS: readonly string[] = ['help', 'tools', 'exec', 'approve', 'skills', 'status', 'stop', 'warden', 'new', 'reset'];

/** How long one plugin's import and `register(api)` may take before it is given up. */
export const REGISTER_TIMEOUT_MS = 30_000;

export interface PluginRuntimeOptions {
  /** Where plugin hooks go; default a new bus. */
  hooks?: HookBus | undefined;
  registerTimeoutMs?: number | undefined;
}

export class PluginRuntime {
  readonly hooks: HookBus;
  readonly plugins: PluginRecord[] = [];
  /** Problems not tied to one plugin (a missing folder, an uninstalled package, a malformed manifest). */
  readonly diagnostics: PluginDiagnostic[] = [];
  /** Tool candidates for the surface: every declared tool of a plugin that is not disabled or blocked. */
  tools: PluginToolMeta[] = [];
  readonly trustedPolicies: TrustedToolPolicy[] = [];
  readonly commands = new Map<string, PluginCommand>();
  /** Whether entry modules were run (false: manifests only). */
  loaded = false;
  /** What the plugins that did not load take with them (policy plugins); complete once `loaded`. */
  gate: PluginLoadGate = { stop: [], withheld: new Map() };
  private started = false;
  private readonly impl: PluginTools;
  private readonly toolPlugin = new Map<string, PluginRecord>();
  private readonly manifests = new Map<string, DiscoveredPlugin['manifest']>();

  constructor(
    readonly config: WardenConfig,
    readonly baseDir: string,
    discovery: Discovery,
    options: PluginRuntimeOptions = {},
  ) {
    this.hooks = options.hooks ?? new HookBus();
    this.impl = new PluginTools(config, baseDir, (pluginId, d) => this.report(pluginId, d));
    for (const d of discovery.diagnostics) if (!d.pluginId || !discovery.plugins.some((p) => p.id === d.pluginId)) this.diagnostics.push(d);
    for (const p of discovery.plugins) {
      const record: PluginRecord = {
        id: p.id,
        name: p.name,
        version: p.version,
        description: p.description,
        dir: p.dir,
        origin: p.origin,
        root: p.root,
        packageName: p.packageName,
        requested: p.requested,
        entries: p.entries,
        status: p.status === 'discovered' ? 'error' : p.status,
        why: p.status === 'discovered' ? 'plugin runtime not loaded' : p.why,
        declaredTools: p.declaredTools,
        tools: [],
        hooks: [],
        commands: [],
        skillsDirs: [],
        trustedPolicies: [],
        diagnostics: discovery.diagnostics.filter((d) => d.pluginId === p.id),
        hooksPolicy: p.hooksPolicy,
        config: p.config,
        guard: p.guard,
        onLoadFailure: p.onLoadFailure,
        trustedPoliciesDeclared: p.trustedPolicies,
      };
      this.plugins.push(record);
      this.manifests.set(p.id, p.manifest);
      for (const t of p.declaredTools) this.toolPlugin.set(t, record);
    }
    this.tools = discovery.tools;
    this.unresolved = discovery.unresolved;
  }

  /** Plugin sources the config names that could not be read (discover.ts); each stops the start. */
  readonly unresolved: Discovery['unresolved'];

  /** Every skill folder plugins registered, in load order (the lowest-precedence skill root). */
  skillsDirs(): string[] {
    return this.plugins.filter((p) => p.status === 'loaded').flatMap((p) => p.skillsDirs);
  }

  /** Whether a plugin tool can be offered in this turn (its factory runs with the turn's context). */
  availability(id: string, turn?: TurnContext): Availability | undefined {
    const plugin = this.toolPlugin.get(id);
    if (!plugin) return undefined;
    if (plugin.status !== 'loaded') return { ok: false, why: plugin.why === 'plugin runtime not loaded' ? plugin.why : `plugin ${plugin.id} did not load: ${plugin.why}` };
    if (!this.impl.registered(id)) return { ok: false, why: `plugin ${plugin.id} registered no implementation of ${id}` };
    if (!turn) return { ok: true };
    return this.impl.availability(id, turn);
  }

  /** The runnable plugin tool for this turn, or undefined (not a plugin tool, not built here). */
  implementation(id: string, turn: TurnContext): ToolImplementation | undefined {
    const plugin = this.toolPlugin.get(id);
    if (!plugin || plugin.status !== 'loaded') return undefined;
    return this.impl.implementation(id, turn);
  }

  isPluginTool(id: string): boolean {
    return this.toolPlugin.has(id);
  }

  /** Runs every loadable plugin's entry modules; never throws. */
  async load(timeoutMs = REGISTER_TIMEOUT_MS): Promise<void> {
    if (this.started) return;
    this.started = true;
    for (const record of this.plugins) {
      if (record.why !== 'plugin runtime not loaded') continue;
      const staged = new Staging(record, this);
      const ran = await withTimeout(runEntries(record, staged.api), timeoutMs, `${record.id} did not finish registering within ${timeoutMs} ms`);
      staged.close();
      const outcome = ran.ok ? staged.keepsItsWord() : ran;
      if (!outcome.ok) {
        record.status = 'error';
        record.why = outcome.error;
        this.report(record.id, { level: 'error', message: `plugin ${record.id} failed to load: ${outcome.error}` });
        log.error({ plugin: record.id, error: outcome.error, policy: record.guard.policy }, record.guard.policy ? 'policy plugin failed to load' : 'plugin failed to load; skipped');
        continue;
      }
      staged.commit();
      record.status = 'loaded';
      record.why = undefined;
      log.info({ plugin: record.id, tools: record.tools, hooks: record.hooks.map((h) => h.name), commands: record.commands }, 'plugin loaded');
    }
    // Registration may have made a declared tool optional; the candidate list is built once more, then kept.
    this.tools = this.tools.map((t) => (!t.optional && this.impl.optional(t.id) ? { ...t, optional: true } : t));
    this.gate = pluginLoadGate(this.plugins, this.unresolved);
    this.loaded = true;
  }

  /** Why this process must not run with these plugins (a policy plugin did not load); undefined: it may. */
  refusal(): string | undefined {
    return this.gate.stop.length > 0 ? this.gate.stop.map((s) => s.message).join('\n') : undefined;
  }

  /** Whether a tool (core, plugin or MCP) is withheld because the plugin guarding it did not load. */
  withheld(id: string): Availability | undefined {
    return withheldBy(this.gate, id);
  }

  /** The manifest a plugin was discovered with. */
  manifestOf(id: string): DiscoveredPlugin['manifest'] {
    return this.manifests.get(id) ?? { id };
  }

  report(pluginId: string, d: Omit<PluginDiagnostic, 'pluginId'>): void {
    const record = this.plugins.find((p) => p.id === pluginId);
    const full: PluginDiagnostic = { ...d, pluginId };
    if (record) {
      if (record.diagnostics.some((x) => x.message === d.message)) return;
      record.diagnostics.push(full);
    } else this.diagnostics.push(full);
    (d.level === 'error' ? log.error : log.warn).call(log, { plugin: pluginId }, d.message);
  }

  /** Diagnostics of every plugin and the global ones, errors first. */
  allDiagnostics(): PluginDiagnostic[] {
    const all = [...this.diagnostics, ...this.plugins.flatMap((p) => p.diagnostics)];
    return [...all.filter((d) => d.level === 'error'), ...all.filter((d) => d.level === 'warn')];
  }

  /** @internal */
  addToolRegistration(registration: ToolRegistration): void {
    this.impl.add(registration);
  }
}

async function runEntries(record: PluginRecord, api: WardenPluginApi): Promise<{ ok: true } | { ok: false; error: string }> {
  for (const file of record.entries) {
    let mod: Record<string, unknown>;
    try {
      mod = await importEntry(file);
    } catch (err) {
      return { ok: false, error: `entry module ${path.relative(record.dir, file)} failed to load: ${message(err)}` };
    }
    const def = mod.default as unknown;
    const register =
      typeof mod.register === 'function'
        ? mod.register
        : typeof def === 'function'
          ? def
          : def && typeof def === 'object' && typeof (def as { register?: unknown }).register === 'function'
            ? (def as { register: (api: WardenPluginApi) => unknown }).register.bind(def)
            : undefined;
    if (!register) return { ok: false, error: `entry module ${path.relative(record.dir, file)} exports no register(api)` };
    try {
      await (register as (api: WardenPluginApi) => unknown)(api);
    } catch (err) {
      return { ok: false, error: `register(api) threw: ${message(err)}` };
    }
  }
  return { ok: true };
}

/** TypeScript entry modules (the shipped plugins are .ts, and so may an operator's be). */
const TYPESCRIPT = /\.[cm]?ts$/i;

/**
 * Imports an entry module. JavaScript is imported as is; TypeScript goes through tsx (a
 * dependency) scoped to this one import, so the built CLI under plain node loads a .ts plugin
 * as the sources do, without a loader registered for the rest of the process.
 */
async function importEntry(file: string): Promise<Record<string, unknown>> {
  const url = pathToFileURL(file).href;
  if (!TYPESCRIPT.test(file)) return (await import(url)) as Record<string, unknown>;
  const { tsImport } = await import('tsx/esm/api');
  return (await tsImport(url, import.meta.url)) as Record<string, unknown>;
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

async function withTimeout<T>(work: Promise<T>, ms: number, text: string): Promise<T | { ok: false; error: string }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<{ ok: false; error: string }>((resolve) => {
    timer = setTimeout(() => resolve({ ok: false, error: text }), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

interface StagedHook {
  name: HookName;
  handler: (event: never, ctx: never) => unknown;
  options: HookOptions;
}

/** What one plugin registers while its `register(api)` runs; committed only when it returns. */
class Staging {
  readonly api: WardenPluginApi;
  private open = true;
  private readonly tools: ToolRegistration[] = [];
  private readonly hooks: StagedHook[] = [];
  private readonly policies: TrustedToolPolicy[] = [];
  private readonly commands: PluginCommand[] = [];
  private readonly skills: string[] = [];
  private readonly contract: Set<string>;
  /** Refused registrations of a policy hook (before_tool_call, message_sending): rules that would be missing. */
  private readonly refusedPolicy: string[] = [];
  private errors = 0;
  private lastError = '';

  constructor(
    private readonly record: PluginRecord,
    private readonly runtime: PluginRuntime,
  ) {
    const manifest = runtime.manifestOf(record.id);
    this.contract = new Set(
      (Array.isArray(manifest.contracts?.tools) ? manifest.contracts.tools : []).filter((t): t is string => typeof t === 'string').map((t) => normalizeToolName(t)).filter(Boolean),
    );
    const logger = log.child({ plugin: record.id }) as unknown as PluginLogger;
    const self = this;
    const api: WardenPluginApi = {
      id: record.id,
      name: record.name,
      version: record.version,
      description: record.description,
      source: record.entries[0] ?? record.dir,
      rootDir: record.dir,
      config: record.config,
      pluginConfig: record.config,
      logger,
      registerTool: (tool, opts) => self.guard('registerTool', () => self.registerTool(tool, opts)),
      on: (hook, handler, opts) => self.guard('on', () => self.on(hook as string, handler as never, opts ?? {})),
      registerSkillsDir: (dir) => self.guard('registerSkillsDir', () => self.registerSkillsDir(dir)),
      registerTrustedToolPolicy: (policy) => self.guard('registerTrustedToolPolicy', () => self.registerTrustedToolPolicy(policy)),
      registerCommand: ((nameOrDef: string | PluginCommandDefinition, handler?: PluginCommandHandler) =>
        self.guard('registerCommand', () => self.registerCommand(typeof nameOrDef === 'string' ? { name: nameOrDef, handler: handler! } : nameOrDef))) as WardenPluginApi['registerCommand'],
      resolvePath: (input) => path.resolve(record.dir, input),
      compileRegex: (source, flags) => compileLinearRegex(source, flags),
    };
    this.api = Object.freeze(api);
  }

  close(): void {
    this.open = false;
  }

  private error(message: string): void {
    this.errors++;
    this.lastError = message;
    this.runtime.report(this.record.id, { level: 'error', message });
  }

  /**
   * Whether the plugin's rules all took: no policy hook registration was refused (one that was
   * is a rule missing; a plugin whose manifest said it has none becomes a policy plugin by it),
   * and each policy hook and trusted tool policy its manifest declares was registered (a
   * misspelt or skipped one is a rule missing too).
   */
  keepsItsWord(): { ok: true } | { ok: false; error: string } {
    const { guard } = this.record;
    if (this.refusedPolicy.length > 0) {
      guard.policy ??= 'it registers a policy hook';
      return { ok: false, error: `a policy hook's registration was refused: ${this.refusedPolicy.join('; ')}` };
    }
    if (!guard.policy) return { ok: true };
    const missing = [
      ...(guard.hooks ?? []).filter((h) => POLICY_HOOKS.includes(h) && !this.hooks.some((r) => r.name === h)),
      ...this.record.trustedPoliciesDeclared.filter((id) => !this.policies.some((p) => p.id === id)).map((id) => `trusted tool policy ${id}`),
    ];
    if (missing.length > 0) return { ok: false, error: `its manifest declares ${missing.join(', ')} but register(api) did not register ${missing.length > 1 ? 'them' : 'it'}` };
    return { ok: true };
  }

  private warn(message: string): void {
    this.runtime.report(this.record.id, { level: 'warn', message });
  }

  private guard(what: string, fn: () => void): void {
    if (!this.open) {
      this.warn(`api.${what} called after register(api) returned; ignored`);
      return;
    }
    fn();
  }

  private registerTool(tool: PluginTool | PluginToolFactory, opts: RegisterToolOptions | undefined): void {
    if (this.contract.size === 0) return this.error('plugin must declare contracts.tools before registering agent tools');
    if (tool === null || (typeof tool !== 'function' && typeof tool !== 'object')) return this.error(`plugin tool is malformed (${this.record.id}): registerTool needs a tool or a factory`);
    if (typeof tool === 'object' && 'contextVersion' in tool) return this.error('unsupported plugin tool context version');
    const names = [...(opts?.names ?? []), ...(opts?.name ? [opts.name] : [])];
    let factory: PluginToolFactory;
    if (typeof tool === 'function') factory = tool as PluginToolFactory;
    else {
      const inspected = inspect(tool);
      if ('error' in inspected) return this.error(`plugin tool is malformed (${this.record.id}): ${inspected.error}`);
      names.push(inspected.tool.name);
      factory = () => inspected.tool;
    }
    const normalized = [...new Set(names.map((n) => (typeof n === 'string' ? normalizeToolName(n) : '')).filter(Boolean))];
    const undeclared = normalized.filter((n) => !this.contract.has(n));
    if (undeclared.length > 0) return this.error(`plugin must declare contracts.tools for: ${undeclared.join(', ')}`);
    // A declared name dropped at discovery (core name, another plugin's) was reported there; nothing to build.
    const usable = normalized.filter((n) => this.record.declaredTools.includes(n));
    if (normalized.length > 0 && usable.length === 0) return;
    this.tools.push({ pluginId: this.record.id, names: usable, declared: new Set(this.record.declaredTools), contract: this.contract, optional: opts?.optional === true, factory });
  }

  private on(hook: string, handler: (event: never, ctx: never) => unknown, opts: { priority?: number; timeoutMs?: number; toolMatcher?: readonly string[]; matcher?: readonly string[] }): void {
    const before = this.errors;
    this.onChecked(hook, handler, opts);
    if (this.errors > before && (POLICY_HOOKS as readonly string[]).includes(hook)) this.refusedPolicy.push(this.lastError);
  }

  private onChecked(hook: string, handler: (event: never, ctx: never) => unknown, opts: { priority?: number; timeoutMs?: number; toolMatcher?: readonly string[]; matcher?: readonly string[] }): void {
    if (typeof hook !== 'string' || !(OPENCLAW_HOOK_NAMES as readonly string[]).includes(hook)) return this.warn(`unknown typed hook "${String(hook)}" ignored`);
    if (!(HOOK_NAMES as readonly string[]).includes(hook)) {
      return this.warn(`typed hook "${hook}" is never emitted by Warden (${NOT_EMITTED[hook as keyof typeof NOT_EMITTED]}); its handler will not run`);
    }
    const name = hook as HookName;
    if (typeof handler !== 'function') return this.error(`typed hook "${name}" handler must be a function`);
    const policy = this.record.hooksPolicy;
    if (PROMPT_INJECTION_HOOKS.includes(name) && policy.allowPromptInjection === false) {
      return this.warn(`typed hook "${name}" blocked by plugins.entries.${this.record.id}.hooks.allowPromptInjection=false`);
    }
    if (CONVERSATION_HOOKS.includes(name) && policy.allowConversationAccess !== true) {
      return this.warn(`typed hook "${name}" blocked because non-bundled plugins must set plugins.entries.${this.record.id}.hooks.allowConversationAccess=true`);
    }
    let toolMatcher = opts.toolMatcher ?? opts.matcher;
    if (toolMatcher !== undefined && name !== 'before_tool_call' && name !== 'after_tool_call') {
      this.warn(`typed hook "${name}" ignores tool matcher`);
      toolMatcher = undefined;
    }
    if (toolMatcher !== undefined && (!Array.isArray(toolMatcher) || toolMatcher.length === 0)) return this.error(`typed hook "${name}" tool matcher must be a non-empty list of tool names`);
    const undeclared = undeclaredHook(this.record.guard, name, toolMatcher);
    if (undeclared) return this.error(undeclared);
    const options: HookOptions = { owner: this.record.id };
    if (typeof opts.priority === 'number' && Number.isFinite(opts.priority)) options.priority = opts.priority;
    const timeoutMs = timeoutFor(name, policy, opts.timeoutMs);
    if (timeoutMs !== undefined) options.timeoutMs = timeoutMs;
    if (toolMatcher) {
      // The bus refuses wildcards and empty names; check now, so the diagnostic names this plugin.
      try {
        new HookBus().on(name, () => undefined, { toolMatcher })();
      } catch (err) {
        return this.error(`typed hook "${name}": ${(err as Error).message}`);
      }
      options.toolMatcher = toolMatcher;
    }
    this.hooks.push({ name, handler, options });
  }

  private registerSkillsDir(dir: string): void {
    if (typeof dir !== 'string' || dir.trim() === '') return this.error('skills dir registration needs a folder');
    const abs = path.resolve(this.record.dir, dir);
    if (!existsSync(abs) || !statSync(abs).isDirectory()) return this.error(`skills dir ${dir} is not a directory`);
    const real = realpathSync(abs);
    const root = realpathSync(this.record.dir);
    if (real !== root && !real.startsWith(root + path.sep)) return this.error(`skills dir ${dir} is outside the plugin folder`);
    this.skills.push(real);
  }

  private registerTrustedToolPolicy(policy: TrustedToolPolicyRegistration): void {
    if (!policy || typeof policy.id !== 'string' || !policy.id.trim() || typeof policy.description !== 'string' || typeof policy.evaluate !== 'function') {
      return this.error('trusted tool policy registration requires id, description, and evaluate()');
    }
    const id = policy.id.trim();
    const declared = this.runtime.manifestOf(this.record.id).contracts?.trustedToolPolicies;
    if (!Array.isArray(declared) || !declared.some((d) => typeof d === 'string' && d.trim() === id)) return this.error(`plugin must declare contracts.trustedToolPolicies for: ${id}`);
    if (!explicitlyEnabled(this.runtime.config, this.record.id)) return this.error(`plugin must be explicitly enabled to register trusted tool policy: ${id}`);
    const existing = this.runtime.trustedPolicies.find((p) => p.id === id) ?? this.policies.find((p) => p.id === id);
    if (existing) return this.error(`trusted tool policy already registered: ${id} (${(existing as { pluginId?: string }).pluginId ?? this.record.id})`);
    if (policy.matcher !== undefined && (!Array.isArray(policy.matcher) || policy.matcher.some((m) => typeof m !== 'string'))) {
      return this.error(`trusted tool policy ${id}: matcher must be a list of tool names`);
    }
    const guarded = this.record.guard.guardedTools;
    if (guarded && (!policy.matcher || policy.matcher.some((m) => !guarded.includes(normalizeToolName(m))))) {
      return this.error(`trusted tool policy ${id} judges tools outside contracts.guardedTools (${guarded.join(', ')}): give it a matcher within them`);
    }
    const pluginId = this.record.id;
    const adapted: TrustedToolPolicy & { pluginId: string } = {
      id,
      pluginId,
      description: policy.description,
      ...(policy.matcher ? { matcher: policy.matcher.map((m) => normalizeToolName(m)) } : {}),
      evaluate: (call) =>
        policy.evaluate(
          { toolName: call.toolName, params: call.params, toolCallId: call.toolCallId, runId: call.runId },
          call.turn
            ? toolHookContext(call.turn, call.sessionKey, { toolName: call.toolName, toolCallId: call.toolCallId ?? '', runId: call.runId })
            : { toolName: call.toolName, agentId: call.agentId, sessionKey: call.sessionKey, senderId: call.senderId, senderIsOwner: call.senderIsOwner },
        ),
    };
    this.policies.push(adapted);
  }

  private registerCommand(def: PluginCommandDefinition): void {
    if (!def || typeof def.name !== 'string' || def.name.trim() === '') return this.error('command registration missing name');
    const name = def.name.trim().replace(/^\//, '').toLowerCase();
    if (!/^[a-z][a-z0-9_-]{0,31}$/.test(name)) return this.error(`command registration failed: invalid command name "${def.name}"`);
    if (RESERVED_COMMANDS.includes(name)) return this.error(`command registration failed: /${name} is one of Warden's own commands`);
    const existing = this.runtime.commands.get(name) ?? this.commands.find((c) => c.name === name);
    if (existing) return this.error(`command already registered: /${name} (${existing.pluginId})`);
    if (typeof def.handler !== 'function') return this.error(`command registration failed: /${name} has no handler`);
    this.commands.push({ pluginId: this.record.id, name, description: typeof def.description === 'string' ? def.description : undefined, ownerOnly: def.ownerOnly === true, handler: def.handler, config: this.record.config });
  }

  commit(): void {
    const r = this.record;
    for (const t of this.tools) this.runtime.addToolRegistration(t);
    r.tools = [...new Set(this.tools.flatMap((t) => (t.names.length > 0 ? t.names : r.declaredTools)))];
    for (const h of this.hooks) {
      this.runtime.hooks.on(h.name, h.handler as never, h.options);
      r.hooks.push({ name: h.name, priority: h.options.priority ?? 0, ...(h.options.timeoutMs !== undefined ? { timeoutMs: h.options.timeoutMs } : {}), ...(h.options.toolMatcher ? { toolMatcher: [...h.options.toolMatcher] } : {}) });
    }
    for (const p of this.policies) this.runtime.trustedPolicies.push(p);
    r.trustedPolicies = this.policies.map((p) => p.id);
    for (const c of this.commands) this.runtime.commands.set(c.name, c);
    r.commands = this.commands.map((c) => c.name);
    r.skillsDirs = [...this.skills];
  }
}

/** `plugins.entries.<id>.hooks.timeouts.<hook>`, then `.hooks.timeoutMs`, then the registration's (reference §5.5). */
function timeoutFor(hook: HookName, policy: DiscoveredPlugin['hooksPolicy'], registered: unknown): number | undefined {
  const valid = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.min(Math.floor(v), MAX_HOOK_TIMEOUT_MS) : undefined);
  return valid(policy.timeouts?.[hook]) ?? valid(policy.timeoutMs) ?? valid(registered);
}

/** `plugins.entries.<id>.enabled: true`, or `plugins.allow` naming it. */
function explicitlyEnabled(config: WardenConfig, id: string): boolean {
  const key = Object.keys(config.plugins.entries).find((k) => k.trim().toLowerCase() === id);
  if (key !== undefined && config.plugins.entries[key]?.enabled === true) return true;
  return (config.plugins.allow ?? []).some((a) => a.trim().toLowerCase() === id);
}

/** The runtime of a config, from its discovery (no code run yet). */
export function createPluginRuntime(config: WardenConfig, baseDir: string, options: PluginRuntimeOptions = {}): PluginRuntime {
  return new PluginRuntime(config, baseDir, discoverPlugins(config, baseDir), options);
}

const runtimes = new WeakMap<WardenConfig, Map<string, { runtime: PluginRuntime; loading: Promise<PluginRuntime> }>>();

/**
 * The process's plugin runtime for a config whose paths resolve against `baseDir`, loaded once:
 * the running bot and each CLI command load it before resolving a surface, so `warden tools`,
 * `/tools` and what the model is offered see the same plugin tools.
 */
export function loadPluginRuntime(config: WardenConfig, baseDir: string, options: PluginRuntimeOptions = {}): Promise<PluginRuntime> {
  const dir = path.resolve(baseDir);
  let byDir = runtimes.get(config);
  if (!byDir) runtimes.set(config, (byDir = new Map()));
  const hit = byDir.get(dir);
  if (hit) return hit.loading;
  const runtime = createPluginRuntime(config, dir, options);
  const loading = runtime.load(options.registerTimeoutMs).then(() => runtime);
  byDir.set(dir, { runtime, loading });
  return loading;
}

/** The runtime `loadPluginRuntime` made for this config, once its loading finished; else undefined. */
export function loadedPluginRuntime(config: WardenConfig, baseDir: string): PluginRuntime | undefined {
  const hit = runtimes.get(config)?.get(path.resolve(baseDir));
  return hit?.runtime.loaded ? hit.runtime : undefined;
}

/**
 * Hands a running process's loaded runtime to a reloaded config: plugins are read at start, so
 * the same plugins (their tools, hooks, and the tools a failed policy plugin withholds) serve the
 * new config until the next start.
 */
export function adoptPluginRuntime(config: WardenConfig, baseDir: string, runtime: PluginRuntime): void {
  const dir = path.resolve(baseDir);
  let byDir = runtimes.get(config);
  if (!byDir) runtimes.set(config, (byDir = new Map()));
  if (!byDir.has(dir)) byDir.set(dir, { runtime, loading: Promise.resolve(runtime) });
}

/**
 * Why a running Warden refuses a new config (a reload or a patch): under it a policy plugin
 * could not load (discovery only; no plugin code runs again), so the next start would stop or
 * run without its rules. The old config keeps serving.
 */
export function pluginReloadProblems(config: WardenConfig, baseDir: string): Array<{ path: string; message: string }> {
  const discovery = discoverPlugins(config, path.resolve(baseDir));
  return pluginLoadGate(discovery.plugins, discovery.unresolved).stop;
}
