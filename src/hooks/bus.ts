import { log } from '../log/log.js';
import { normalizeToolName } from '../policy/tool-names.js';
import { background } from '../util/background.js';
import {
  DEFAULT_HOOK_TIMEOUT_MS,
  HOOK_NAMES,
  type BeforeModelResolveEvent,
  type BeforePromptBuildEvent,
  type BeforeToolCallEvent,
  type HookApprovalRequest,
  type HookHandler,
  type HookName,
  type HookOptions,
  type HookSignatures,
  type MessageSendingEvent,
  type PersistedToolMessage,
  type ResolveExecEnvEvent,
  type ToolResultPersistEvent,
  type VoidHookName,
} from './types.js';

interface Registration {
  name: HookName;
  handler: (event: unknown, ctx: unknown) => unknown;
  priority: number;
  timeoutMs: number;
  tools: ReadonlySet<string> | undefined;
  owner: string | undefined;
  seq: number;
}

/** The text of a fail-closed before_tool_call (reference §5.3). */
export const HOOK_FAILURE_TEXT = 'Tool call blocked because before_tool_call hook failed';
/** The block text when a hook blocks without saying why. */
export const HOOK_BLOCK_DEFAULT_TEXT = 'Tool call blocked by plugin hook';

export type BeforeToolCallOutcome =
  | { kind: 'continue'; params: Record<string, unknown>; approval?: HookApprovalRequest & { owner?: string | undefined } }
  | { kind: 'block'; reason: string; owner?: string | undefined }
  | { kind: 'failed'; reason: string; error: string; owner?: string | undefined };

export interface PromptBuildOutcome {
  systemPrompt?: string | undefined;
  prependContext: string[];
  appendContext: string[];
  prependSystemContext?: string[] | undefined;
  appendSystemContext?: string[] | undefined;
  /** One restriction per handler that returned toolsAllow; the turn keeps their intersection. */
  toolsAllow?: string[][] | undefined;
}

class HookTimeoutError extends Error {
  constructor(name: HookName, ms: number) {
    super(`${name} handler timed out after ${ms} ms`);
  }
}

/**
 * The typed hook bus (semantics §5). Modifying hooks run sequentially by priority (high first)
 * and merge; void hooks run in parallel; tool_result_persist is synchronous. before_tool_call
 * fails closed: a throw or timeout blocks the call. Every other hook fails open (logged).
 */
export class HookBus {
  private readonly byName = new Map<HookName, Registration[]>();
  private seq = 0;

  /** Registers a handler; returns the function that removes it. */
  on<K extends HookName>(name: K, handler: HookHandler<K>, options: HookOptions = {}): () => void {
    if (!(HOOK_NAMES as readonly string[]).includes(name)) throw new TypeError(`unknown hook "${name}"; expected one of ${HOOK_NAMES.join(', ')}`);
    let tools: Set<string> | undefined;
    if (options.toolMatcher !== undefined) {
      if (name !== 'before_tool_call' && name !== 'after_tool_call') throw new TypeError(`toolMatcher only applies to before_tool_call and after_tool_call, not ${name}`);
      tools = new Set();
      for (const raw of options.toolMatcher) {
        const tool = normalizeToolName(raw);
        // A wildcard matcher is the same as no matcher; refusing it keeps intent explicit.
        if (!tool || tool.includes('*')) throw new TypeError(`toolMatcher entry ${JSON.stringify(raw)} is not a tool name; omit toolMatcher to see every tool`);
        tools.add(tool);
      }
    }
    const registration: Registration = {
      name,
      handler: handler as (event: unknown, ctx: unknown) => unknown,
      priority: options.priority ?? 0,
      timeoutMs: options.timeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS[name],
      tools,
      owner: options.owner,
      seq: this.seq++,
    };
    const list = [...(this.byName.get(name) ?? []), registration].sort((a, b) => b.priority - a.priority || a.seq - b.seq);
    this.byName.set(name, list);
    return () => {
      const current = this.byName.get(name);
      if (current) this.byName.set(name, current.filter((r) => r !== registration));
    };
  }

  /** How many handlers are registered for a hook (every tool, for a tool hook). */
  count(name: HookName): number {
    return this.byName.get(name)?.length ?? 0;
  }

  /** Whether any handler would run (for a tool hook: for this tool). */
  has(name: HookName, toolName?: string): boolean {
    return this.handlers(name, toolName).length > 0;
  }

  private handlers(name: HookName, toolName?: string): Registration[] {
    const list = this.byName.get(name) ?? [];
    if (toolName === undefined) return list;
    return list.filter((r) => r.tools === undefined || r.tools.has(toolName));
  }

  /**
   * Runs before_tool_call handlers in priority order. `block` stops the chain; `params` is the
   * last one given (frozen once an approval was asked for), shallow-merged over the call's;
   * the first `requireApproval` wins. A throw or timeout fails closed.
   */
  async runBeforeToolCall(event: BeforeToolCallEvent, ctx?: HookSignatures['before_tool_call']['ctx']): Promise<BeforeToolCallOutcome> {
    let params: Record<string, unknown> | undefined;
    let approval: (HookApprovalRequest & { owner?: string | undefined }) | undefined;
    for (const r of this.handlers('before_tool_call', event.toolName)) {
      let result: HookSignatures['before_tool_call']['result'];
      try {
        // Each handler sees the original call, never another handler's edits (reference §5.5).
        result = (await this.call(r, structuredClone(event), ctx ?? { toolName: event.toolName, toolCallId: event.toolCallId })) as typeof result;
      } catch (err) {
        log.warn({ err, hook: 'before_tool_call', owner: r.owner, tool: event.toolName }, 'before_tool_call handler failed; blocking the call');
        return { kind: 'failed', reason: HOOK_FAILURE_TEXT, error: (err as Error)?.message ?? String(err), owner: r.owner };
      }
      if (!result || typeof result !== 'object') continue;
      if (result.block === true) return { kind: 'block', reason: nonEmpty(result.blockReason) ?? HOOK_BLOCK_DEFAULT_TEXT, owner: r.owner };
      if (result.params && typeof result.params === 'object' && approval === undefined) params = result.params;
      if (result.requireApproval && approval === undefined) approval = { ...result.requireApproval, owner: r.owner };
    }
    return { kind: 'continue', params: params ? { ...event.params, ...params } : event.params, ...(approval ? { approval } : {}) };
  }

  /**
   * Runs before_prompt_build handlers in order: the first systemPrompt wins, contexts
   * concatenate, each toolsAllow is kept as its own restriction (malformed → deny all).
   * A failing handler is logged and skipped.
   */
  async runBeforePromptBuild(event: BeforePromptBuildEvent, ctx: HookSignatures['before_prompt_build']['ctx'] = {}): Promise<PromptBuildOutcome> {
    const out: PromptBuildOutcome = { prependContext: [], appendContext: [] };
    for (const r of this.handlers('before_prompt_build')) {
      let result: HookSignatures['before_prompt_build']['result'];
      try {
        result = (await this.call(r, structuredClone(event), ctx)) as typeof result;
      } catch (err) {
        log.warn({ err, hook: 'before_prompt_build', owner: r.owner }, 'before_prompt_build handler failed; ignored');
        continue;
      }
      if (!result || typeof result !== 'object') continue;
      if (out.systemPrompt === undefined && typeof result.systemPrompt === 'string') out.systemPrompt = result.systemPrompt;
      if (typeof result.prependContext === 'string' && result.prependContext) out.prependContext.push(result.prependContext);
      if (typeof result.appendContext === 'string' && result.appendContext) out.appendContext.push(result.appendContext);
      if (typeof result.prependSystemContext === 'string' && result.prependSystemContext) (out.prependSystemContext ??= []).push(result.prependSystemContext);
      if (typeof result.appendSystemContext === 'string' && result.appendSystemContext) (out.appendSystemContext ??= []).push(result.appendSystemContext);
      if ('toolsAllow' in result && result.toolsAllow !== undefined) {
        const list = result.toolsAllow as unknown;
        const valid = Array.isArray(list) && list.every((t) => typeof t === 'string');
        (out.toolsAllow ??= []).push(valid ? (list as string[]).map(normalizeToolName).filter(Boolean) : []);
      }
    }
    return out;
  }

  /**
   * Runs before_model_resolve handlers in order: the first `modelOverride` and the first
   * `providerOverride` given win (OpenClaw's merge). A failing handler is logged and skipped.
   */
  async runBeforeModelResolve(event: BeforeModelResolveEvent, ctx: HookSignatures['before_model_resolve']['ctx'] = {}): Promise<{ modelOverride?: string; providerOverride?: string; owner?: string | undefined }> {
    const out: { modelOverride?: string; providerOverride?: string; owner?: string | undefined } = {};
    for (const r of this.handlers('before_model_resolve')) {
      let result: HookSignatures['before_model_resolve']['result'];
      try {
        result = (await this.call(r, structuredClone(event), ctx)) as typeof result;
      } catch (err) {
        log.warn({ err, hook: 'before_model_resolve', owner: r.owner }, 'before_model_resolve handler failed; ignored');
        continue;
      }
      if (!result || typeof result !== 'object') continue;
      if (out.modelOverride === undefined && nonEmpty(result.modelOverride)) {
        out.modelOverride = result.modelOverride!.trim();
        out.owner ??= r.owner;
      }
      if (out.providerOverride === undefined && nonEmpty(result.providerOverride)) {
        out.providerOverride = result.providerOverride!.trim();
        out.owner ??= r.owner;
      }
    }
    return out;
  }

  /**
   * Runs message_sending handlers in order. Each handler sees the text as the previous one left
   * it (OpenClaw hands every handler the original and keeps the last text given, so a later
   * handler could undo an earlier redaction); `cancel` stops. Fails open.
   */
  async runMessageSending(event: MessageSendingEvent, ctx: HookSignatures['message_sending']['ctx'] = { channelId: '' }): Promise<{ content: string; cancelled: boolean; cancelReason?: string | undefined }> {
    let content = event.content;
    for (const r of this.handlers('message_sending')) {
      let result: HookSignatures['message_sending']['result'];
      try {
        result = (await this.call(r, { ...structuredClone(event), content }, ctx)) as typeof result;
      } catch (err) {
        log.warn({ err, hook: 'message_sending', owner: r.owner }, 'message_sending handler failed; ignored');
        continue;
      }
      if (!result || typeof result !== 'object') continue;
      if (result.cancel === true) return { content, cancelled: true, cancelReason: nonEmpty(result.cancelReason) };
      if (typeof result.content === 'string') content = result.content;
    }
    return { content, cancelled: false };
  }

  /**
   * Runs resolve_exec_env handlers in order and merges what they return, a later handler's
   * value winning (OpenClaw's merge). Only string values count. Fails open: a failing handler
   * adds nothing. The caller still refuses keys exec never lets anyone set.
   */
  async runResolveExecEnv(event: ResolveExecEnvEvent, ctx: HookSignatures['resolve_exec_env']['ctx'] = {}): Promise<Record<string, string>> {
    const env: Record<string, string> = {};
    for (const r of this.handlers('resolve_exec_env')) {
      let result: unknown;
      try {
        result = await this.call(r, structuredClone(event), ctx);
      } catch (err) {
        log.warn({ err, hook: 'resolve_exec_env', owner: r.owner }, 'resolve_exec_env handler failed; ignored');
        continue;
      }
      if (!result || typeof result !== 'object' || Array.isArray(result)) continue;
      for (const [key, value] of Object.entries(result)) if (typeof value === 'string') env[key] = value;
    }
    return env;
  }

  /** Runs tool_result_persist handlers synchronously; each may replace the message. */
  runToolResultPersist(event: ToolResultPersistEvent, ctx: HookSignatures['tool_result_persist']['ctx'] = {}): PersistedToolMessage {
    let message = event.message;
    for (const r of this.handlers('tool_result_persist')) {
      try {
        const result = r.handler({ ...event, message }, { ...ctx, toolName: event.toolName, toolCallId: event.toolCallId }) as { message?: PersistedToolMessage } | void | Promise<unknown>;
        if (result instanceof Promise) {
          result.catch(() => {});
          log.warn({ hook: 'tool_result_persist', owner: r.owner }, 'tool_result_persist handler returned a Promise; it must be synchronous, result ignored');
          continue;
        }
        if (result && typeof result === 'object' && result.message) message = result.message;
      } catch (err) {
        log.warn({ err, hook: 'tool_result_persist', owner: r.owner }, 'tool_result_persist handler failed; ignored');
      }
    }
    return message;
  }

  /**
   * Runs every handler of a void hook in parallel and resolves when all have settled (each
   * bounded by its timeout). Failures are logged, never thrown. Handlers get a copy of the
   * event, so an observer that edits it changes nothing for the caller.
   */
  async runVoid<K extends VoidHookName>(name: K, event: HookSignatures[K]['event'], ctx?: HookSignatures[K]['ctx'], toolName?: string): Promise<void> {
    const list = this.handlers(name, toolName);
    if (list.length === 0) return;
    let copy: unknown;
    try {
      copy = structuredClone(event);
    } catch {
      copy = event;
    }
    await Promise.all(
      list.map((r) =>
        this.call(r, copy, ctx ?? {}).catch((err: unknown) => {
          log.warn({ err, hook: name, owner: r.owner }, `${name} handler failed`);
        }),
      ),
    );
  }

  /**
   * `runVoid` for a caller that does not wait for the observers (message_received, agent_end …):
   * the handlers' failures are logged by `runVoid`; anything else that fails is logged here,
   * never left to end the process.
   */
  fire<K extends VoidHookName>(name: K, event: HookSignatures[K]['event'], ctx?: HookSignatures[K]['ctx'], toolName?: string): void {
    background(this.runVoid(name, event, ctx, toolName), `${name} hooks failed`, { fields: { hook: name } });
  }

  /**
   * Calls each handler one owner registered for a hook, on its own, and returns what each did
   * (`warden audit` probes before_tool_call this way). Nothing is merged or enforced.
   */
  async probe<K extends HookName>(name: K, owner: string, event: HookSignatures[K]['event'], ctx: HookSignatures[K]['ctx'], timeoutMs: number): Promise<Array<{ result?: unknown; error?: string }>> {
    const out: Array<{ result?: unknown; error?: string }> = [];
    for (const r of this.byName.get(name) ?? []) {
      if (r.owner !== owner) continue;
      try {
        out.push({ result: await this.call({ ...r, timeoutMs: Math.min(r.timeoutMs || timeoutMs, timeoutMs) }, structuredClone(event), ctx) });
      } catch (err) {
        out.push({ error: (err as Error)?.message ?? String(err) });
      }
    }
    return out;
  }

  private call(r: Registration, event: unknown, ctx: unknown): Promise<unknown> {
    let result: unknown;
    try {
      result = r.handler(event, ctx);
    } catch (err) {
      return Promise.reject(err);
    }
    if (!(result instanceof Promise) || r.timeoutMs <= 0) return Promise.resolve(result);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new HookTimeoutError(r.name, r.timeoutMs)), r.timeoutMs);
    });
    return Promise.race([result, timeout]).finally(() => clearTimeout(timer));
  }
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}
