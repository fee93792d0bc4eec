import { HOOK_NAMES, POLICY_HOOKS, type HookName } from '../hooks/types.js';
import { normalizeToolName } from '../policy/tool-names.js';
import type { Availability } from '../tools/types.js';
import type { PluginManifest } from './manifest.js';

/**
 * What a plugin that cannot load takes with it. A plugin whose hooks can block a tool call, ask
 * an approver or cancel a message (src/hooks POLICY_HOOKS), or that registers trusted tool
 * policies, enforces rules: without it those rules are silently gone. So such a *policy plugin*
 * that cannot load stops the start, the reload and every command that decides (fail closed), or,
 * where the operator says `plugins.entries.<id>.onLoadFailure: remove-guarded-tools`, the tools
 * its rules guard are withheld from every surface instead.
 *
 * Whether a plugin is one is read from its manifest, because a plugin that did not load
 * registered nothing: `contracts.hooks` lists the hooks it may register (Warden's key; OpenClaw
 * manifests have none), `contracts.guardedTools` the tools its policy hooks judge. A manifest
 * that declares no `contracts.hooks` may register any hook, so it counts as a policy plugin.
 * The runtime holds a plugin to its declaration (an undeclared hook, or a tool hook reaching
 * past `guardedTools`, is refused at registration), so the declaration cannot understate.
 */

export type OnLoadFailure = 'stop' | 'remove-guarded-tools';

export interface PluginGuard {
  /** `contracts.hooks`, when declared; absent: any hook may be registered. */
  hooks?: HookName[] | undefined;
  /** `contracts.guardedTools`, normalised, when declared; absent: its tool hooks may judge every tool. */
  guardedTools?: string[] | undefined;
  /** Why it is a policy plugin (for messages); absent: it is not one. */
  policy?: string | undefined;
  /** Malformed declarations; discovery fails the plugin with them. */
  problems: string[];
}

const isStringList = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

/** The guard a manifest declares (pure; no plugin code runs). */
export function guardOf(manifest: PluginManifest): PluginGuard {
  const contracts = manifest.contracts ?? {};
  const problems: string[] = [];
  let hooks: HookName[] | undefined;
  if (contracts.hooks !== undefined) {
    if (!isStringList(contracts.hooks)) problems.push('contracts.hooks must be a list of hook names');
    else {
      const unknown = contracts.hooks.filter((h) => !(HOOK_NAMES as readonly string[]).includes(h.trim()));
      if (unknown.length > 0) problems.push(`contracts.hooks names no hook Warden has: ${unknown.join(', ')}`);
      else hooks = [...new Set(contracts.hooks.map((h) => h.trim() as HookName))];
    }
  }
  let guardedTools: string[] | undefined;
  if (contracts.guardedTools !== undefined) {
    if (!isStringList(contracts.guardedTools) || contracts.guardedTools.some((t) => normalizeToolName(t) === '')) problems.push('contracts.guardedTools must be a list of tool names');
    else guardedTools = [...new Set(contracts.guardedTools.map((t) => normalizeToolName(t)))];
  }
  const trusted = isStringList(contracts.trustedToolPolicies) && contracts.trustedToolPolicies.some((t) => t.trim() !== '');
  const declaredPolicy = hooks?.filter((h) => POLICY_HOOKS.includes(h)) ?? [];
  const policy =
    problems.length > 0 || hooks === undefined
      ? 'its manifest does not declare contracts.hooks, so it may register before_tool_call'
      : declaredPolicy.length > 0
        ? `it declares ${declaredPolicy.join(' and ')}`
        : trusted
          ? 'it declares trusted tool policies'
          : undefined;
  return { ...(hooks ? { hooks } : {}), ...(guardedTools ? { guardedTools } : {}), ...(policy ? { policy } : {}), problems };
}

/** What a plugin that did not load means for the process. */
export type LoadFailureVerdict =
  | { kind: 'skip' }
  | { kind: 'stop'; message: string }
  | { kind: 'withhold'; tools: '*' | string[]; message: string };

export interface FailedPlugin {
  id: string;
  why?: string | undefined;
  guard: PluginGuard;
  onLoadFailure?: OnLoadFailure | undefined;
}

/** The verdict for one plugin that is configured (not disabled) and did not load. */
export function loadFailureVerdict(p: FailedPlugin): LoadFailureVerdict {
  const { guard } = p;
  if (!guard.policy) return { kind: 'skip' };
  const head = `plugin ${p.id} did not load (${p.why ?? 'unknown reason'}) and ${guard.policy}`;
  if (p.onLoadFailure === 'remove-guarded-tools') {
    if (!guard.hooks) return { kind: 'stop', message: `${head}: onLoadFailure: remove-guarded-tools needs the manifest to declare contracts.hooks, so Warden knows its rules guard tools only` };
    if (guard.hooks.includes('message_sending')) return { kind: 'stop', message: `${head}: its message_sending hook guards messages, which removing tools cannot stand in for` };
    const tools = guard.guardedTools ?? '*';
    return { kind: 'withhold', tools, message: `${head}: the tools it guards are withheld (${tools === '*' ? 'every tool' : tools.join(', ')}) by plugins.entries.${p.id}.onLoadFailure` };
  }
  return {
    kind: 'stop',
    message: `${head}; Warden does not run without its rules. Fix the plugin (warden plugins), turn it off with plugins.entries.${p.id}.enabled: false, or set plugins.entries.${p.id}.onLoadFailure: remove-guarded-tools`,
  };
}

/** The plugins' failures together: what refuses the process, and what each withheld tool is withheld by. */
export interface PluginLoadGate {
  /** One entry per policy plugin (or unreadable plugin source) that stops the start, with its config key; empty: none. */
  stop: Array<{ path: string; message: string }>;
  /** Tool id → why it is withheld; `*` withholds every tool. */
  withheld: Map<string, string>;
}

export function pluginLoadGate(plugins: ReadonlyArray<FailedPlugin & { status: string }>, unresolved: ReadonlyArray<{ path: string; message: string }> = []): PluginLoadGate {
  const gate: PluginLoadGate = { stop: [...unresolved], withheld: new Map() };
  for (const p of plugins) {
    if (p.status !== 'error' && p.status !== 'blocked') continue;
    const verdict = loadFailureVerdict(p);
    if (verdict.kind === 'stop') gate.stop.push({ path: `plugins.entries.${p.id}`, message: verdict.message });
    else if (verdict.kind === 'withhold') for (const t of verdict.tools === '*' ? ['*'] : verdict.tools) if (!gate.withheld.has(t)) gate.withheld.set(t, `plugin ${p.id}, whose rules guard it, did not load (plugins.entries.${p.id}.onLoadFailure: remove-guarded-tools)`);
  }
  return gate;
}

/** Whether the gate withholds a tool (any tool source: core, plugin, MCP). */
export function withheldBy(gate: PluginLoadGate, toolId: string): Availability | undefined {
  const why = gate.withheld.get(toolId) ?? gate.withheld.get('*');
  return why === undefined ? undefined : { ok: false, why };
}

/**
 * Why a hook registration breaks the plugin's declaration (undefined: it keeps it): a hook
 * not in `contracts.hooks`, or a tool hook that judges tools outside `contracts.guardedTools`.
 */
export function undeclaredHook(guard: PluginGuard, hook: HookName, toolMatcher: readonly string[] | undefined): string | undefined {
  if (guard.hooks && !guard.hooks.includes(hook)) return `plugin must declare contracts.hooks for: ${hook}`;
  if (hook === 'before_tool_call' && guard.guardedTools) {
    if (!toolMatcher) return `typed hook "before_tool_call" judges every tool, but contracts.guardedTools names only ${guard.guardedTools.join(', ')}: give it a tool matcher`;
    const outside = toolMatcher.map((t) => normalizeToolName(t)).filter((t) => !guard.guardedTools!.includes(t));
    if (outside.length > 0) return `typed hook "before_tool_call" judges tools outside contracts.guardedTools: ${outside.join(', ')}`;
  }
  return undefined;
}
