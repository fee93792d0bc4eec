import type { ToolCallRequest, ToolCallScope, ToolExecutor, ToolSurface } from '../agent/index.js';
import type { DeferredCall } from '../approvals/types.js';
import type { WardenConfig } from '../config/index.js';
import { agentWorkspace } from '../exec/agent-workspace.js';
import { log } from '../log/log.js';
import type { TurnContext } from '../policy/context.js';
import { resolveToolSurface, type SurfaceResult } from '../policy/surface.js';
import { coreTool } from '../policy/catalog.js';
import { CORE_IMPLEMENTATIONS } from './core-tools.js';
import { loopDetectionEnabled, ToolInvoker, type ToolInvokerOptions } from '../tools/invoke/chain.js';
import { approvalRulesInput, surfaceInputs, type SurfaceInputs } from './surface-inputs.js';
import { isMetaTool } from '../agent/tool-search/ids.js';
import { directTools, toolSearchEngaged, toolSearchSettings } from '../agent/tool-search/settings.js';
import type { ToolImplementation, ToolResult } from '../tools/types.js';
import type { ToolRuntime } from './tool-runtime.js';
import type { SurfaceRun, ToolDefinition } from '../agent/types.js';
import { agentHookContext } from '../hooks/context.js';
import type { PromptBuildOutcome } from '../hooks/bus.js';

/** The core tools' descriptors, loaded with the first surface a process computes. */
let descriptors: Promise<typeof import('./core-descriptors.js')> | undefined;

/**
 * The seam between the turn loop (and `/exec`) and the governed call path: the surface is the
 * policy's answer for this turn, each call goes through the whole wrapper chain. A surface
 * reads the core tools' descriptors only; an implementation loads at its tool's first call and
 * is kept for the process.
 *
 * The surface is resolved with the process's surface inputs (plugin candidates, availability)
 * — the ones `warden tools` uses — and, when `before_prompt_build` handlers are registered, with
 * the `toolsAllow` lists they return, which the turn then carries into every call.
 */
export class GovernedToolExecutor implements ToolExecutor {
  private readonly loaded = new Map<string, Promise<ToolImplementation | undefined>>();
  /** Core tools whose implementation failed to load here: left off every later surface. */
  private readonly unloadable = new Set<string>();
  readonly invoker: ToolInvoker;
  /** What the surface function is handed for every turn of this process. */
  readonly inputs: SurfaceInputs;

  constructor(
    private readonly config: WardenConfig,
    private readonly runtime: ToolRuntime,
    private readonly chain: Omit<ToolInvokerOptions, 'resolveTool'>,
  ) {
    this.inputs = surfaceInputs(config, runtime.baseDir);
    this.invoker = new ToolInvoker({ approvalRules: approvalRulesInput(config, this.inputs), ...chain, resolveTool: this.resolveTool });
  }

  /** The policy's full answer (removed, unavailable, warnings) for a context: what `/tools` and `warden tools` print. */
  report(turn: TurnContext): SurfaceResult {
    return resolveToolSurface(this.config, turn, this.inputs);
  }

  /** The runnable tool for a catalog id (the chain's `resolveTool`); a plugin tool is built for the turn. */
  resolveTool = (id: string, turn?: TurnContext): Promise<ToolImplementation | undefined> => {
    const plugins = this.inputs.runtime;
    if (plugins?.isPluginTool(id)) return Promise.resolve(turn ? plugins.implementation(id, turn) : undefined);
    // An MCP tool is built from its server's current listing (never cached here: list_changed replaces it).
    const mcp = this.inputs.mcp;
    if (mcp?.isMcpTool(id)) return Promise.resolve(mcp.implementation(id));
    let hit = this.loaded.get(id);
    if (!hit) {
      const entry = Object.hasOwn(CORE_IMPLEMENTATIONS, id) ? CORE_IMPLEMENTATIONS[id] : undefined;
      // A tool that cannot be built here (its runtime part is missing) stays off, logged once.
      hit = entry
        ? entry.load(this.runtime).catch((err: unknown) => {
            log.warn({ err: (err as Error).message, tool: id }, 'tool cannot be loaded in this process; it is left off the surface');
            this.unloadable.add(id);
            return undefined;
          })
        : Promise.resolve(undefined);
      this.loaded.set(id, hit);
    }
    return hit;
  };

  /**
   * Takes over loaded implementations from the executor of an earlier config (a reload), for
   * tools that hold a process-wide resource (the browser's Chromium per profile, which a second
   * instance could not open) and whose config did not change.
   */
  adopt(previous: GovernedToolExecutor, ids: readonly string[]): void {
    for (const id of ids) {
      const hit = previous.loaded.get(id);
      if (hit) this.loaded.set(id, hit);
    }
  }

  /** The core tools whose implementation this executor has loaded (or is loading), in load order. */
  loadedTools(): string[] {
    return [...this.loaded.keys()];
  }

  /** Loads implementations ahead of their first call; a failure is logged and retried on use. */
  async preload(ids: readonly string[], signal?: AbortSignal): Promise<void> {
    for (const id of ids) {
      if (signal?.aborted) return;
      try {
        await this.resolveTool(id);
      } catch (err) {
        log.debug({ err, tool: id }, 'tool preload failed; it loads again on first use');
      }
    }
  }

  /**
   * The tools the model is shown: every tool the policy gives this turn (after the run's
   * `before_prompt_build` toolsAllow), or with `tools.toolSearch` the coding primitives plus
   * tool_search / tool_describe / tool_call over the rest (agent/tool-search).
   */
  async surface(turn: TurnContext, sessionKey?: string, run?: SurfaceRun): Promise<ToolSurface> {
    const hooks = this.chain.hooks;
    let prompt: PromptBuildOutcome | undefined;
    if (hooks?.has('before_prompt_build')) {
      const first = this.report(turn);
      if (!first.error) {
        prompt = await hooks.runBeforePromptBuild(
          { prompt: run?.prompt ?? '', messages: run?.messages ?? [], agentId: turn.agentId, sessionKey: sessionKey ?? '', provider: turn.provider, tools: [...first.tools] },
          agentHookContext(turn, sessionKey, { runId: run?.runId, workspaceDir: agentWorkspace(this.config, turn.agentId, this.runtime.baseDir) }),
        );
        // toolsAllow only ever intersects: each list is one more restriction on the policy's surface.
        if (prompt.toolsAllow?.length) turn = { ...turn, toolsAllow: [...(turn.toolsAllow ?? []), ...prompt.toolsAllow] };
      }
    }
    const all = await this.authorized(turn);
    if (!all.ok) return all;
    const extra = prompt ? { prompt } : {};
    const search = toolSearchSettings(this.config);
    const direct = search ? directTools(search.mode) : undefined;
    const deferred = direct ? all.tools.filter((t) => !direct.has(t.id)) : [];
    if (!search || !direct || !toolSearchEngaged(search, deferred)) return { ok: true, tools: all.tools, turn, ...extra };
    // The search's ranking and lexicon load with the first turn that engages it.
    const { metaToolDefinitions } = await import('../agent/tool-search/meta-tools.js');
    return { ok: true, tools: [...all.tools.filter((t) => direct.has(t.id)), ...metaToolDefinitions(deferred, search)], turn, ...extra };
  }

  /**
   * Every tool the policy gives this turn (its toolsAllow included), with its schema. A core
   * tool is described from its descriptor (`core-descriptors.ts`) without loading it: its
   * implementation loads at its first call. A plugin or MCP tool is built as before (its schema
   * lives with it).
   */
  private async authorized(turn: TurnContext): Promise<{ ok: true; tools: ToolDefinition[] } | { ok: false; message: string }> {
    const result = this.report(turn);
    if (result.error) return { ok: false, message: result.error };
    const plugins = this.inputs.runtime;
    const mcp = this.inputs.mcp;
    const tools = await Promise.all(
      result.tools.map(async (id): Promise<ToolDefinition | undefined> => {
        if (!plugins?.isPluginTool(id) && !mcp?.isMcpTool(id) && Object.hasOwn(CORE_IMPLEMENTATIONS, id)) return this.describeCore(id);
        const impl = await this.resolveTool(id, turn);
        return impl ? { id, description: impl.description ?? coreTool(id)?.description ?? id, parameters: impl.parameters } : undefined;
      }),
    );
    return { ok: true, tools: tools.filter((t) => t !== undefined) };
  }

  /** A core tool's definition from its descriptor, unless this process cannot build the tool. */
  private async describeCore(id: string): Promise<ToolDefinition | undefined> {
    if (this.unloadable.has(id)) return undefined;
    const missing = CORE_IMPLEMENTATIONS[id]!.needs?.(this.runtime);
    if (missing) return undefined;
    const { coreToolDefinition } = await (descriptors ??= import('./core-descriptors.js'));
    return coreToolDefinition(id, this.config);
  }

  async execute(call: ToolCallRequest, scope: ToolCallScope): Promise<ToolResult> {
    const search = toolSearchSettings(this.config);
    if (search && isMetaTool(call.tool)) {
      // The catalog is the policy's surface for this very turn, computed again: nothing beyond it.
      const all = await this.authorized(scope.turn);
      if (!all.ok) return { content: [{ type: 'text', text: all.message }], isError: true };
      const direct = directTools(search.mode);
      const deferred = all.tools.filter((t) => !direct.has(t.id));
      // Below the threshold the turn has no meta tools: the chain refuses the name like any unknown tool.
      if (deferred.length > 0 && !toolSearchEngaged(search, deferred)) return this.invoke(call, scope, scope.surface);
      const { runMetaTool } = await import('../agent/tool-search/meta-tools.js');
      const outcome = runMetaTool(call.tool, call.args, deferred, search);
      if (outcome.kind === 'result') return outcome.result;
      return this.invoke({ ...call, tool: outcome.tool, args: outcome.args }, scope, all.tools.map((t) => t.id));
    }
    return this.invoke(call, scope, scope.surface);
  }

  private async invoke(call: ToolCallRequest, scope: ToolCallScope, surface: readonly string[]): Promise<ToolResult> {
    const outcome = await this.invoker.invoke({
      tool: call.tool,
      args: call.args,
      toolCallId: call.toolCallId,
      turn: scope.turn,
      sessionKey: scope.sessionKey,
      workspaceDir: agentWorkspace(this.config, scope.turn.agentId, this.runtime.baseDir),
      surface: { tools: [...surface] },
      // A call without a run is a person's command: it is never counted.
      runId: scope.runId,
      loopDetection: loopDetectionEnabled(this.config, scope.turn.agentId),
      signal: scope.signal,
      via: scope.via,
      defer: scope.deferApprovals,
    });
    return { content: outcome.content, ...(outcome.details !== undefined ? { details: outcome.details } : {}), isError: outcome.isError, ...(outcome.files ? { files: outcome.files } : {}) };
  }

  /**
   * Runs a deferred call again through the whole chain once its approval closed: under `turn`
   * (the original turn's context, rebuilt with the original surface as its ceiling), on the
   * surface the policy gives that context now, its approval answered by the decision it waited
   * for. Loop detection does not count it again: the model made the call once. A removed tool
   * is refused by the chain's surface gate with the step that removed it.
   */
  async resume(call: DeferredCall, turn: TurnContext, signal: AbortSignal): Promise<ToolResult> {
    const surface = this.report(turn);
    const outcome = await this.invoker.invoke({
      tool: call.tool,
      args: call.args,
      toolCallId: call.toolCallId,
      turn,
      sessionKey: call.sessionKey,
      workspaceDir: agentWorkspace(this.config, turn.agentId, this.runtime.baseDir),
      surface: { tools: surface.error ? [] : surface.tools, removed: surface.removed, unavailable: surface.unavailable },
      loopDetection: false,
      signal,
      via: call.origin === 'command' ? 'command' : 'agent',
      defer: true,
      resume: { approvalId: call.approvalId },
    });
    return { content: outcome.content, ...(outcome.details !== undefined ? { details: outcome.details } : {}), isError: outcome.isError, ...(outcome.files ? { files: outcome.files } : {}) };
  }
}
