import type { TurnContext } from '../policy/context.js';
import { normalizeToolName } from '../policy/tool-names.js';
import type { Availability, JsonSchema, ToolImplementation } from '../tools/types.js';
import type { PluginDiagnostic } from './discover.js';
import { contextKey, pluginToolContext } from './runtime-context.js';
import type { PluginTool, PluginToolContext, PluginToolFactory } from './sdk.js';
import type { WardenConfig } from '../config/schema/index.js';

/**
 * Plugin tools at resolve time (reference §9.2–9.4): a registration is a plain tool or a factory
 * run with the turn's context. What a factory returns is inspected — a tool needs a name, an
 * `execute` function and a `parameters` object, and its name must be in `contracts.tools` —
 * and whatever fails is dropped with its diagnostic. The policy has already decided which tools
 * the turn keeps; a factory is only run for a tool the policy kept (so a denied plugin's
 * factory never runs).
 */

export interface ToolRegistration {
  pluginId: string;
  /** Names given at registration (a plain tool's own name, or `opts.name(s)`); empty = any declared name. */
  names: string[];
  /** The plugin's `contracts.tools` that reached the candidates. */
  declared: ReadonlySet<string>;
  /** Every name in `contracts.tools` (also those dropped for a conflict). */
  contract: ReadonlySet<string>;
  optional: boolean;
  factory: PluginToolFactory;
}

type Built = { tools: Map<string, PluginTool> } | { error: string };

const MAX_CONTEXTS = 512;

export class PluginTools {
  private readonly registrations: ToolRegistration[] = [];
  private readonly byContext = new WeakMap<TurnContext, string>();
  private readonly built = new Map<ToolRegistration, Map<string, Built>>();
  private readonly adapters = new WeakMap<PluginTool, ToolImplementation>();

  constructor(
    private readonly config: WardenConfig,
    private readonly baseDir: string,
    private readonly report: (pluginId: string, diagnostic: Omit<PluginDiagnostic, 'pluginId'>) => void,
  ) {}

  /** Registrations by the tool ids they may build (the surface asks for every kept tool, every turn). */
  private index: Map<string, ToolRegistration[]> | undefined;

  add(registration: ToolRegistration): void {
    this.registrations.push(registration);
    this.index = undefined;
  }

  /** Registrations that may build `id`: those naming it, and name-less factories of a plugin that declares it. */
  private candidates(id: string): readonly ToolRegistration[] {
    if (!this.index) {
      this.index = new Map();
      for (const r of this.registrations) {
        for (const name of r.names.length > 0 ? r.names : r.declared) {
          const list = this.index.get(name);
          if (list) list.push(r);
          else this.index.set(name, [r]);
        }
      }
    }
    return this.index.get(id) ?? [];
  }

  /** Whether any registration can build this tool at all (before any context is known). */
  registered(id: string): boolean {
    return this.candidates(id).length > 0;
  }

  /** A registration marked optional makes the tool optional. */
  optional(id: string): boolean {
    return this.candidates(id).some((r) => r.optional);
  }

  availability(id: string, turn: TurnContext): Availability {
    const found = this.find(id, turn);
    return 'tool' in found ? { ok: true } : { ok: false, why: found.why };
  }

  implementation(id: string, turn: TurnContext): ToolImplementation | undefined {
    const found = this.find(id, turn);
    if (!('tool' in found)) return undefined;
    let adapter = this.adapters.get(found.tool);
    if (!adapter) this.adapters.set(found.tool, (adapter = adapt(id, found.tool)));
    return adapter;
  }

  private find(id: string, turn: TurnContext): { tool: PluginTool } | { why: string } {
    const candidates = this.candidates(id);
    if (candidates.length === 0) return { why: 'the plugin registered no implementation of it' };
    let why = 'the plugin built no such tool for this turn';
    for (const r of candidates) {
      const built = this.build(r, turn);
      if ('error' in built) {
        why = built.error;
        continue;
      }
      const tool = built.tools.get(id);
      if (tool) return { tool };
    }
    return { why };
  }

  private build(r: ToolRegistration, turn: TurnContext): Built {
    let ctx: PluginToolContext | undefined;
    let key = this.byContext.get(turn);
    if (key === undefined) {
      ctx = pluginToolContext(turn, this.config, this.baseDir);
      key = contextKey(ctx);
      this.byContext.set(turn, key);
    }
    let cache = this.built.get(r);
    if (!cache) this.built.set(r, (cache = new Map()));
    const hit = cache.get(key);
    if (hit) return hit;
    const built = this.run(r, Object.freeze(ctx ?? pluginToolContext(turn, this.config, this.baseDir)));
    if (cache.size >= MAX_CONTEXTS) cache.delete(cache.keys().next().value as string);
    cache.set(key, built);
    return built;
  }

  private run(r: ToolRegistration, ctx: PluginToolContext): Built {
    let result: ReturnType<PluginToolFactory>;
    try {
      result = r.factory(ctx);
    } catch (err) {
      return { error: this.problem(r.pluginId, `plugin tool factory failed (${r.pluginId}): ${(err as Error)?.message ?? String(err)}`) };
    }
    if (result && typeof (result as { then?: unknown }).then === 'function') {
      return { error: this.problem(r.pluginId, `plugin tool is malformed (${r.pluginId}): the factory returned a Promise; factories are synchronous`) };
    }
    const tools = new Map<string, PluginTool>();
    for (const raw of result == null ? [] : Array.isArray(result) ? result : [result]) {
      const inspected = inspect(raw);
      if ('error' in inspected) {
        this.problem(r.pluginId, `plugin tool is malformed (${r.pluginId}): ${inspected.error}`);
        continue;
      }
      const name = normalizeToolName(inspected.tool.name);
      if (r.contract.has(name) && !r.declared.has(name)) {
        this.problem(r.pluginId, `plugin tool name conflict (${r.pluginId}): ${name}`);
        continue;
      }
      if (!r.declared.has(name) || (r.names.length > 0 && !r.names.includes(name))) {
        this.problem(r.pluginId, `plugin tool is undeclared (${r.pluginId}): ${inspected.tool.name}`);
        continue;
      }
      if (!tools.has(name)) tools.set(name, inspected.tool);
    }
    return { tools };
  }

  private problem(pluginId: string, message: string): string {
    this.report(pluginId, { level: 'error', message });
    return message;
  }
}

/** A tool object as OpenClaw checks it: a name, an `execute` function, a `parameters` object. */
export function inspect(raw: unknown): { tool: PluginTool } | { error: string } {
  if (!raw || typeof raw !== 'object') return { error: `expected a tool object, got ${raw === null ? 'null' : typeof raw}` };
  const t = raw as Partial<PluginTool>;
  if (typeof t.name !== 'string' || t.name.trim() === '') return { error: 'a tool has no name' };
  if (typeof t.execute !== 'function') return { error: `${t.name} has no execute function` };
  if (!t.parameters || typeof t.parameters !== 'object' || Array.isArray(t.parameters)) return { error: `${t.name} has no parameters object` };
  if (t.description !== undefined && typeof t.description !== 'string') return { error: `${t.name} has a description that is not a string` };
  return { tool: t as PluginTool };
}

/** The plugin tool as the call chain runs it: OpenClaw's `execute(toolCallId, params, signal, onUpdate)`. */
function adapt(id: string, tool: PluginTool): ToolImplementation {
  return {
    id,
    description: tool.description ?? `Tool ${id}.`,
    parameters: tool.parameters as JsonSchema,
    async execute(args, ctx) {
      return tool.execute(ctx.toolCallId, args, ctx.signal, () => {});
    },
  };
}
