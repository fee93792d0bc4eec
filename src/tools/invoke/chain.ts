import { randomUUID } from 'node:crypto';
import type { ApprovalService } from '../../approvals/service.js';
import type { ApprovalRequestContext, ApprovalRequester, ApprovalResolution, DeferredCallSpec } from '../../approvals/types.js';
import type { WardenConfig } from '../../config/index.js';
import { events as defaultEvents, type EventBus, type WardenEvents } from '../../events/events.js';
import type { HookBus } from '../../hooks/bus.js';
import { agentHookContext, toolHookContext } from '../../hooks/context.js';
import type { PersistedToolMessage } from '../../hooks/types.js';
import { log } from '../../log/log.js';
import type { TurnContext } from '../../policy/context.js';
import type { AuditLog } from '../../store/audit.js';
import type { Transcripts } from '../../store/transcript.js';
import { normalizeToolName } from '../../policy/tool-names.js';
import { capDetails, DEFAULT_MAX_RESULT_CHARS, errorToolResult, jsonResult, normalizeToolResult, truncateToolResult } from '../result.js';
import type { ToolContent, ToolFile, ToolImplementation, ToolResult } from '../types.js';
import { pendingApprovalText, runApprovalStep } from './approval-step.js';
import { approvalRuleFor, type RuleConfig } from '../../approvals/rules.js';
import type { ToolMeta } from '../../policy/tool-meta.js';
import { LoopDetector, loopWarningNote } from './loop-detection.js';
import { ownerOnlyRefusal } from './owner-guard.js';
import { runTrustedPolicies, type TrustedToolPolicy } from './trusted-policy.js';
import { formatArgumentProblems, validateArgs } from './validate-args.js';
import { scrubDeep, secretLabelIn, skipImages } from '../../redact/scrub.js';

/** Default limit on one execution; exec brings its own (1,800 s) under this. */
export const DEFAULT_TOOL_TIMEOUT_MS = 1_800_000 + 60_000;

export interface ToolInvokerOptions {
  /**
   * The runnable tool for a canonical id, or undefined when this build has none. A plugin tool
   * is built for the call's turn (its factory gets the turn's context).
   */
  resolveTool: (id: string, turn: TurnContext) => ToolImplementation | undefined | Promise<ToolImplementation | undefined>;
  hooks?: HookBus | undefined;
  approvals?: ApprovalService | undefined;
  /** Where tool results are persisted (after tool_result_persist). */
  transcripts?: Transcripts | undefined;
  /** Where blocked calls are recorded. */
  audit?: AuditLog | undefined;
  events?: EventBus | undefined;
  trustedPolicies?: readonly TrustedToolPolicy[] | undefined;
  /**
   * The stored secrets granted to an exec command (`secrets.grants`), resolved for the call's
   * agent and conversation; registered by the composition root where a secret store runs.
   */
  secretEnv?: ((request: { agentId: string; sessionKey: string; command: string; actor?: string | undefined }) => Promise<Record<string, string>>) | undefined;
  /**
   * `approvals.rules` (the config they are read from) and the catalog entry of a tool (plugin
   * and MCP tools: their origin), for the rule step. Absent: no rule ever asks.
   */
  approvalRules?: { config: RuleConfig; meta?: ((id: string) => ToolMeta | undefined) | undefined } | undefined;
  /** Per-result cap of what the model reads (default 16,000 chars). */
  maxResultChars?: number | undefined;
  timeoutMs?: number | undefined;
}

/** The turn's tool surface as `resolveToolSurface` gave it; a tool outside `tools` is refused. */
export interface CallSurface {
  tools: readonly string[];
  removed?: ReadonlyArray<{ tool: string; by: string }>;
  unavailable?: ReadonlyArray<{ tool: string; why: string }>;
}

export interface InvokeRequest {
  /** The tool as the model (or a command) named it; normalised here. */
  tool: string;
  args: unknown;
  toolCallId?: string | undefined;
  turn: TurnContext;
  sessionKey: string;
  workspaceDir: string;
  /**
   * The run this call counts toward for loop detection: a turn and its tool rounds, with the
   * turns it starts itself (subagents, messaged sessions). Absent for a call a person made
   * (`/exec`, a skill command, an approval decision): such calls are never counted.
   */
  runId?: string | undefined;
  surface?: CallSurface | undefined;
  /** `tools.loopDetection.enabled` resolved for the agent (see loopDetectionEnabled). */
  loopDetection?: boolean | undefined;
  signal?: AbortSignal | undefined;
  /** Who made the call: the model in a turn, or a person through a command (`/exec`). Shown on approval cards. */
  via?: 'agent' | 'command' | undefined;
  /**
   * The call's approvals may defer it (`approvals.waitSec`) instead of holding the caller: the
   * call answers `pending` and runs later, once decided, as a deferred call (needs `surface`).
   */
  defer?: boolean | undefined;
  /** Resuming a deferred call: the decision of this approval answers the request it was made for. */
  resume?: { approvalId: string } | undefined;
}

/** `pending`: an approval was asked and not decided within `approvals.waitSec`; the call runs once it is. */
export type InvokeStatus = 'ok' | 'error' | 'blocked' | 'pending';

/** One call's result: what the model reads, and what is kept beside it. */
export interface InvokeOutcome {
  tool: string;
  toolCallId: string;
  status: InvokeStatus;
  /** Why a blocked call did not run (`owner-only`, `tool-loop`, `approval-denied`, …). */
  deniedReason?: string | undefined;
  /** Files the tool made for the people in the conversation (`ToolResult.files`). */
  files?: ToolFile[] | undefined;
  /** What the model reads: normalised, capped, with any loop warning appended. */
  content: ToolContent[];
  /** Capped; stored in the transcript, never part of `content`. */
  details?: unknown;
  isError: boolean;
  truncated: boolean;
  durationMs?: number | undefined;
  approval?: ApprovalResolution | undefined;
  grantId?: string | undefined;
}

/** `agents.list[id].tools.loopDetection.enabled`, else `tools.loopDetection.enabled`, else on. */
export function loopDetectionEnabled(config: Pick<WardenConfig, 'tools' | 'agents'>, agentId: string): boolean {
  const agent = config.agents.list.find((a) => a.id === agentId);
  return agent?.tools?.loopDetection?.enabled ?? config.tools.loopDetection?.enabled ?? true;
}

const noApprovals: ApprovalRequester = { request: async () => ({ id: '', outcome: 'cancelled' }) };

/**
 * The wrapper chain every tool call passes (semantics §5): name → surface → owner-only →
 * argument validation → loop detection → trusted policies → the tool's own approval rule →
 * before_tool_call → approval →
 * execute (abort signal, timeout) → after_tool_call → tool_result_persist → normalise and
 * truncate. Every refusal is a result the model can read; `invoke` never throws.
 */
export class ToolInvoker {
  readonly loops = new LoopDetector();
  private readonly events: EventBus;

  /** Tool results still being written to the transcript, in call order. */
  private persisting: Promise<void> = Promise.resolve();

  constructor(private readonly options: ToolInvokerOptions) {
    this.events = options.events ?? defaultEvents;
  }

  /** Resolves once every tool result handed out so far is in the transcript (a one-shot command awaits it before closing the store). */
  settled(): Promise<void> {
    return this.persisting;
  }

  /** Diagnostic events go to pino and to the in-process bus. */
  private emit<K extends keyof WardenEvents>(name: K, payload: WardenEvents[K]): void {
    const level = name === 'tool.execution.error' || name === 'tool.loop' ? 'warn' : name === 'tool.execution.blocked' ? 'info' : 'debug';
    log[level]({ event: name, ...(payload as object) }, name);
    this.events.emit(name, payload);
  }

  async invoke(req: InvokeRequest): Promise<InvokeOutcome> {
    const toolCallId = req.toolCallId ?? `call_${randomUUID()}`;
    const name = normalizeToolName(req.tool);
    const base = { toolCallId, req, name: name || String(req.tool) };
    try {
      return await this.run(base);
    } catch (err) {
      // Only a bug gets here; the model still gets an answer and the call is recorded.
      log.error({ err, tool: name, toolCallId }, 'tool call chain failed');
      return this.finish(base, { status: 'error', result: errorToolResult(base.name, err), synthetic: true });
    }
  }

  private async run(c: CallState): Promise<InvokeOutcome> {
    const { req, name } = c;
    // Only calls of a run are counted; loop detection can also be off for the agent.
    const run = (req.loopDetection ?? true) ? req.runId : undefined;

    // An owner-only tool does not exist for a non-owner: whatever path the call came by (the
    // surface may be absent), it gets the answer a name that names nothing gets, word for word;
    // only the audit log says what it was.
    const ownerRefusal = ownerOnlyRefusal(name, req.turn);
    // 1. The tool must be on this turn's surface, and exist.
    const onSurface = ownerRefusal === undefined && (req.surface === undefined || req.surface.tools.includes(name));
    if (!onSurface && ownerRefusal === undefined) {
      const removed = req.surface?.removed?.find((r) => r.tool === name);
      const unavailable = req.surface?.unavailable?.find((u) => u.tool === name);
      if (removed || unavailable) {
        const why = removed ? `removed by ${removed.by}` : `unavailable: ${unavailable!.why}`;
        return this.block(c, 'not-on-surface', `Tool ${name} is not available in this turn (${why}). The tool call did not run.`);
      }
    }
    const tool = onSurface && name ? await this.options.resolveTool(name, req.turn) : undefined;
    if (!tool) {
      // A hidden tool is named as typed, never by the id an alias resolves to (`automations` stays `automations`).
      const shownName = ownerRefusal !== undefined ? String(req.tool).trim().toLowerCase() : name;
      const shown = shownName === name ? c : { ...c, name: shownName };
      const unknownToolName = shownName || String(req.tool);
      if (run !== undefined) {
        const verdict = this.loops.check(run, shownName, req.args);
        if (verdict.kind === 'block') return this.loopBlock(shown, run, req.args, verdict, unknownToolName);
      }
      const available = req.surface ? ` Available tools: ${req.surface.tools.join(', ') || '(none)'}.` : '';
      const error = `Unknown tool "${String(req.tool)}".${available}`;
      if (ownerRefusal !== undefined) await this.recordHidden(c, ownerRefusal);
      if (run !== undefined) this.loops.recordOutcome(run, { toolName: shownName, params: req.args, toolCallId: c.toolCallId, error, unknownToolName });
      return this.finish(shown, { status: 'error', result: jsonResult({ status: 'error', tool: shownName, error }, true), synthetic: true });
    }

    // 2. Owner-only, whatever path the call came by: settled above, before the tool was resolved.

    // 3. Arguments against the schema.
    let params = coerceArgs(tool, req.args);
    const invalid = this.invalid(c, tool, params);
    if (invalid) return invalid;
    // 3b. A secret's label is a placeholder, never content: written into a file or a command it
    // would replace the real value (and corrupt the file); the model is told to do without it.
    const label = secretLabelIn(params);
    if (label) {
      return this.block(
        c,
        'secret-label',
        `The arguments hold the placeholder ${label}, which stands for a secret you cannot see. It is not the secret's value and must never be written anywhere. The tool call did not run. To use a secret, ask for it with the secrets tool and name it in the command's environment as the operator's secrets.grants allow.`,
        { label },
      );
    }

    // 4. Loop detection.
    let loopWarning: number | undefined;
    // The outcome is filed under the call as detected, before any hook rewrites its arguments.
    const detectedParams = params;
    if (run !== undefined) {
      const verdict = this.loops.check(run, name, params);
      if (verdict.kind === 'block') return this.loopBlock(c, run, params, verdict);
      if (verdict.kind === 'warn') {
        loopWarning = verdict.count;
        this.emit('tool.loop', { tool: name, sessionKey: req.sessionKey, level: 'warning', action: 'warn', detector: verdict.detector, count: verdict.count, message: verdict.message, pairedToolName: verdict.pairedToolName });
      }
      this.loops.recordCall(run, name, params, c.toolCallId);
    }

    const approvalContext: ApprovalRequestContext = {
      agentId: req.turn.agentId,
      sessionKey: req.sessionKey,
      provider: req.turn.provider,
      channelId: req.turn.channelId,
      threadId: req.turn.threadId,
      guildId: req.turn.guildId,
      guildName: req.turn.guildName,
      channelName: req.turn.channelName,
      requesterId: req.turn.senderId,
      requesterName: req.turn.senderName,
      via: req.via ?? 'agent',
    };
    // One requester for every approval of this call: it may defer the call, or answer a resumed one.
    const approvals = this.requesterFor(c, approvalContext);

    // 4b. The configured approval rules (approvals.rules): the first matching rule asks. It only
    // adds asking: the approvals after it (policies, the tool's own, hooks, exec's verdict) still ask.
    const rules = this.options.approvalRules;
    if (rules) {
      const hit = approvalRuleFor(rules.config, { tool: name, params, turn: req.turn, meta: rules.meta?.(name) });
      if (hit) {
        const ask = { title: `${name} under ${hit.path}`, description: `Configured rule ${hit.path} asks before this call runs.`, rule: hit };
        const step = await runApprovalStep(this.options.approvals, approvals, ask, { tool: name, params, context: approvalContext, signal: req.signal, workspaceDir: req.workspaceDir });
        if (step.kind === 'pending') return this.pending(c, step);
        if (step.kind === 'refused') return this.block(c, step.deniedReason, step.text, { rule: hit.path }, step.status, step.resolution);
        c.ruleApproval = step.resolution;
        c.ruleGrantId = step.grantId;
      }
    }

    // 5. Trusted policies, and the approval the first of them asks for.
    if (this.options.trustedPolicies?.length) {
      const policy = await runTrustedPolicies(this.options.trustedPolicies, {
        toolName: name,
        params,
        agentId: req.turn.agentId,
        sessionKey: req.sessionKey,
        senderId: req.turn.senderId,
        senderIsOwner: req.turn.senderIsOwner,
        turn: req.turn,
        toolCallId: c.toolCallId,
        runId: req.runId,
      });
      if (policy.kind === 'block') return this.block(c, 'trusted-policy', policy.reason, { policyId: policy.policyId });
      if (policy.params !== params) {
        params = policy.params;
        const bad = this.invalid(c, tool, params);
        if (bad) return bad;
      }
      if (policy.approval) {
        const step = await runApprovalStep(this.options.approvals, approvals, policy.approval, { tool: name, params, context: approvalContext, signal: req.signal, workspaceDir: req.workspaceDir });
        if (step.kind === 'pending') return this.pending(c, step);
        if (step.kind === 'refused') return this.block(c, step.deniedReason, step.text, {}, step.status, step.resolution);
        c.approval = step.resolution;
        c.grantId = step.grantId;
      }
    }

    // 5b. The tool's own approval rule (an MCP tool's annotations), unless a policy's approval already answered.
    const own = c.approval === undefined && c.grantId === undefined ? tool.approval?.(params) : undefined;
    if (own) {
      const step = await runApprovalStep(this.options.approvals, approvals, own, { tool: name, params, context: approvalContext, signal: req.signal });
      if (step.kind === 'pending') return this.pending(c, step);
      if (step.kind === 'refused') return this.block(c, step.deniedReason, step.text, {}, step.status, step.resolution);
      c.approval = step.resolution;
      c.grantId = step.grantId;
    }

    // 6. before_tool_call hooks (fail closed), then their approval.
    if (this.options.hooks?.has('before_tool_call', name)) {
      const hook = await this.options.hooks.runBeforeToolCall({
        toolName: name,
        toolCallId: c.toolCallId,
        params,
        agentId: req.turn.agentId,
        sessionKey: req.sessionKey,
        provider: req.turn.provider,
        senderId: req.turn.senderId,
        runId: req.runId,
      }, toolHookContext(req.turn, req.sessionKey, { toolName: name, toolCallId: c.toolCallId, runId: req.runId, signal: req.signal, workspaceDir: req.workspaceDir }));
      if (hook.kind === 'block') return this.block(c, 'plugin-before-tool-call', hook.reason, hook.owner ? { hook: hook.owner } : {});
      if (hook.kind === 'failed') return this.block(c, 'before-tool-call-failed', hook.reason, { error: hook.error, ...(hook.owner ? { hook: hook.owner } : {}) });
      if (hook.params !== params) {
        params = hook.params;
        const bad = this.invalid(c, tool, params);
        if (bad) return bad;
      }
      if (hook.approval && c.approval === undefined && c.grantId === undefined) {
        const step = await runApprovalStep(this.options.approvals, approvals, hook.approval, { tool: name, params, context: approvalContext, signal: req.signal, workspaceDir: req.workspaceDir });
        if (step.kind === 'pending') return this.pending(c, step);
        if (step.kind === 'refused') return this.block(c, step.deniedReason, step.text, {}, step.status, step.resolution);
        c.approval = step.resolution;
        c.grantId = step.grantId;
      }
    }

    // 7. Execute with an abort signal and a timeout.
    const executed = await this.execute(c, tool, params, approvals);

    if (run !== undefined) {
      const text = executed.result.content.map((b) => (b.type === 'text' ? b.text : '')).join('\n');
      this.loops.recordOutcome(run, { toolName: name, params: detectedParams, toolCallId: c.toolCallId, details: executed.result.details, text, error: executed.error });
    }
    if (loopWarning !== undefined) executed.result.content.push({ type: 'text', text: loopWarningNote(loopWarning) });

    // 8. after_tool_call: fire and forget (void hook); failures are logged by the bus.
    if (this.options.hooks?.has('after_tool_call', name)) {
      this.options.hooks.fire(
        'after_tool_call',
        {
          toolName: name,
          toolCallId: c.toolCallId,
          params,
          content: executed.result.content,
          isError: executed.result.isError === true,
          error: executed.error,
          durationMs: executed.durationMs,
          agentId: req.turn.agentId,
          sessionKey: req.sessionKey,
          provider: req.turn.provider,
          senderId: req.turn.senderId,
          runId: req.runId,
        },
        toolHookContext(req.turn, req.sessionKey, { toolName: name, toolCallId: c.toolCallId, runId: req.runId, workspaceDir: req.workspaceDir }),
        name,
      );
    }
    return this.finish(c, { status: executed.result.isError ? 'error' : 'ok', result: executed.result, synthetic: false, durationMs: executed.durationMs });
  }

  private invalid(c: CallState, tool: ToolImplementation, params: Record<string, unknown>): InvokeOutcome | undefined {
    const problems = validateArgs(tool.parameters, params);
    if (problems.length === 0) return undefined;
    const error = `Invalid arguments for ${c.name}: ${formatArgumentProblems(problems)}`;
    return this.finish(c, { status: 'error', result: jsonResult({ status: 'error', tool: c.name, error, problems }, true), synthetic: true });
  }

  /**
   * The requester a call's approvals go through: it may defer the call when the request asks
   * for it and has the surface to keep as the ceiling, and a resumed call's requester answers
   * the request the approver saw with their decision.
   */
  private requesterFor(c: CallState, context: ApprovalRequestContext): ApprovalRequester {
    const approvals = this.options.approvals;
    if (!approvals) return noApprovals;
    const { req } = c;
    const deferred: DeferredCallSpec | undefined =
      req.defer && req.surface
        ? {
            tool: c.name,
            args: (req.args ?? {}) as Record<string, unknown>,
            toolCallId: c.toolCallId,
            origin: req.via === 'command' ? 'command' : 'turn',
            turn: req.turn,
            surface: [...req.surface.tools],
          }
        : undefined;
    const base = approvals.requester(context, { deferred });
    return req.resume ? approvals.resumedRequester(req.resume.approvalId, base) : base;
  }

  /** No decision within the wait: the model is told the call waits on its own, and not to retry. */
  private pending(c: CallState, p: { id: string; expiresAt: number }): InvokeOutcome {
    const result: ToolResult = {
      content: [{ type: 'text', text: pendingApprovalText(p.id, p.expiresAt) }],
      details: { status: 'pending', approvalId: p.id, expiresAt: p.expiresAt },
    };
    return this.finish(c, { status: 'pending', result, synthetic: true });
  }

  private async execute(c: CallState, tool: ToolImplementation, params: Record<string, unknown>, approvals: ApprovalRequester) {
    const { req } = c;
    const timeoutMs = this.options.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
    const controller = new AbortController();
    const onAbort = () => controller.abort(req.signal?.reason);
    if (req.signal?.aborted) controller.abort(req.signal.reason);
    else req.signal?.addEventListener('abort', onAbort, { once: true });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new Error(`timed out after ${timeoutMs} ms`));
    }, timeoutMs);

    const started = performance.now();
    this.emit('tool.execution.started', { tool: c.name, toolCallId: c.toolCallId, sessionKey: req.sessionKey, agentId: req.turn.agentId });
    let result: ToolResult;
    let error: string | undefined;
    try {
      if (controller.signal.aborted) throw new AbortedError();
      const aborted = new Promise<never>((_, reject) => controller.signal.addEventListener('abort', () => reject(new AbortedError()), { once: true }));
      const value = await Promise.race([
        tool.execute(params, {
          toolCallId: c.toolCallId,
          signal: controller.signal,
          turn: req.turn,
          sessionKey: req.sessionKey,
          workspaceDir: req.workspaceDir,
          log: log.child({ tool: c.name, toolCallId: c.toolCallId }),
          approvals,
          ...(req.runId !== undefined ? { runId: req.runId } : {}),
          ...(this.options.hooks?.has('resolve_exec_env') ? { resolveExecEnv: this.execEnvResolver(req) } : {}),
          ...(this.options.secretEnv
            ? {
                secretEnv: (command: string) =>
                  this.options.secretEnv!({ agentId: req.turn.agentId, sessionKey: req.sessionKey, command, actor: req.turn.senderId === undefined ? undefined : `${req.turn.provider}:${req.turn.senderId}` }),
              }
            : {}),
        }),
        aborted,
      ]);
      result = normalizeToolResult(c.name, value);
      if (result.isError) error = result.content.map((b) => (b.type === 'text' ? b.text : '')).join('\n');
    } catch (err) {
      if (err instanceof AbortedError || controller.signal.aborted) {
        error = timedOut ? `Tool ${c.name} timed out after ${timeoutMs} ms` : `Tool ${c.name} was aborted`;
        result = jsonResult({ status: timedOut ? 'timeout' : 'aborted', tool: c.name, error, ...(timedOut ? { timedOut: true } : {}) }, true);
      } else {
        error = err instanceof Error ? err.message : String(err);
        result = errorToolResult(c.name, err);
        log.warn({ err, tool: c.name, toolCallId: c.toolCallId }, 'tool execution threw');
      }
    } finally {
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onAbort);
    }
    const durationMs = performance.now() - started;
    if (error !== undefined) this.emit('tool.execution.error', { tool: c.name, toolCallId: c.toolCallId, sessionKey: req.sessionKey, durationMs, error });
    else this.emit('tool.execution.completed', { tool: c.name, toolCallId: c.toolCallId, sessionKey: req.sessionKey, durationMs, isError: false });
    return { result, error, durationMs };
  }

  /** resolve_exec_env for this call: plugin-supplied variables exec adds (after its own checks). */
  private execEnvResolver(req: InvokeRequest): (host: 'gateway' | 'sandbox') => Promise<Record<string, string>> {
    const hooks = this.options.hooks!;
    return (host) => hooks.runResolveExecEnv({ sessionKey: req.sessionKey, toolName: 'exec', host }, agentHookContext(req.turn, req.sessionKey, { runId: req.runId, workspaceDir: req.workspaceDir }));
  }

  /** A blocked call is recorded as a veto: a model that keeps calling after blocks reaches the breaker. */
  private loopBlock(
    c: CallState,
    run: string,
    params: unknown,
    verdict: { detector: string; count: number; message: string; pairedToolName?: string | undefined },
    unknownToolName?: string,
  ): Promise<InvokeOutcome> {
    this.loops.recordVeto(run, c.name, params, c.toolCallId, unknownToolName);
    this.emit('tool.loop', { tool: c.name, sessionKey: c.req.sessionKey, level: 'critical', action: 'block', detector: verdict.detector, count: verdict.count, message: verdict.message, pairedToolName: verdict.pairedToolName });
    return this.block(c, 'tool-loop', verdict.message, { detector: verdict.detector, count: verdict.count });
  }

  /** The audit entry of a non-owner's call of an owner-only tool, which the caller is answered as an unknown tool. */
  private async recordHidden(c: CallState, reason: string): Promise<void> {
    this.emit('tool.execution.blocked', { tool: c.name, toolCallId: c.toolCallId, sessionKey: c.req.sessionKey, deniedReason: 'owner-only', reason });
    await this.options.audit?.recordOrLog({
      type: 'tool.blocked',
      subject: c.toolCallId,
      actor: c.req.turn.senderId === undefined ? undefined : `${c.req.turn.provider}:${c.req.turn.senderId}`,
      sessionKey: c.req.sessionKey,
      data: { tool: c.name, deniedReason: 'owner-only', reason },
    });
  }

  private async block(c: CallState, deniedReason: string, reason: string, extra: Record<string, unknown> = {}, status: 'blocked' | 'denied' = 'blocked', approval?: ApprovalResolution): Promise<InvokeOutcome> {
    if (approval) c.approval = approval;
    this.emit('tool.execution.blocked', { tool: c.name, toolCallId: c.toolCallId, sessionKey: c.req.sessionKey, deniedReason, reason });
    // Awaited: a blocked call's outcome is reported after its audit entry, never before.
    await this.options.audit?.recordOrLog({
      type: 'tool.blocked',
      subject: c.toolCallId,
      actor: c.req.turn.senderId === undefined ? undefined : `${c.req.turn.provider}:${c.req.turn.senderId}`,
      sessionKey: c.req.sessionKey,
      data: { tool: c.name, deniedReason, reason, ...extra },
    });
    const result: ToolResult = { content: [{ type: 'text', text: reason }], details: { status, deniedReason, reason, ...extra }, isError: true };
    return this.finish(c, { status: 'blocked', result, synthetic: true, deniedReason });
  }

  /** tool_result_persist, transcript, truncation for the model. */
  private finish(c: CallState, r: { status: InvokeStatus; result: ToolResult; synthetic: boolean; deniedReason?: string; durationMs?: number }): InvokeOutcome {
    // Secrets out first (known values in every encoding, credential shapes): neither the model,
    // the transcript nor a tool_result_persist handler ever holds them.
    const scrubbed: ToolResult = { ...r.result, content: scrubDeep(r.result.content, { skip: skipImages }), details: scrubDeep(r.result.details, { skip: skipImages }) };
    const { result: capped, truncated } = truncateToolResult(scrubbed, this.options.maxResultChars ?? DEFAULT_MAX_RESULT_CHARS);
    const details = capDetails(scrubbed.details);
    let message: PersistedToolMessage = { role: 'tool', tool: c.name, toolCallId: c.toolCallId, content: capped.content, details, isError: r.result.isError === true };
    if (this.options.hooks?.has('tool_result_persist')) {
      message = this.options.hooks.runToolResultPersist({ toolName: c.name, toolCallId: c.toolCallId, message, isSynthetic: r.synthetic }, { agentId: c.req.turn.agentId, sessionKey: c.req.sessionKey });
    }
    if (this.options.transcripts) {
      const transcripts = this.options.transcripts;
      const persisted = message;
      // Written in call order, one after another; a failure is logged, never thrown into the call's outcome.
      this.persisting = this.persisting
        .then(async () => {
          await transcripts.ensureSession(c.req.sessionKey, c.req.turn.agentId, c.req.turn.provider);
          await transcripts.append({ sessionKey: c.req.sessionKey, role: 'tool', tool: c.name, toolCallId: c.toolCallId, content: persisted.content, details: persisted.details, isError: persisted.isError });
        })
        .catch((err: unknown) => log.error({ err, tool: c.name, toolCallId: c.toolCallId }, 'could not persist a tool result'));
    }
    return {
      tool: c.name,
      toolCallId: c.toolCallId,
      status: r.status,
      ...(r.deniedReason ? { deniedReason: r.deniedReason } : {}),
      ...(r.result.files && r.result.files.length > 0 && !message.isError ? { files: r.result.files } : {}),
      // What the model sees is what was persisted: a tool_result_persist rewrite applies to both.
      content: message.content,
      details: message.details,
      isError: message.isError,
      truncated,
      ...(r.durationMs !== undefined ? { durationMs: r.durationMs } : {}),
      ...(c.approval ?? c.ruleApproval ? { approval: c.approval ?? c.ruleApproval } : {}),
      ...(c.grantId ?? c.ruleGrantId ? { grantId: c.grantId ?? c.ruleGrantId } : {}),
    };
  }
}

interface CallState {
  toolCallId: string;
  req: InvokeRequest;
  name: string;
  approval?: ApprovalResolution | undefined;
  grantId?: string | undefined;
  /** The decision (or grant) of the configured rule that asked, kept apart: later approval steps still ask. */
  ruleApproval?: ApprovalResolution | undefined;
  ruleGrantId?: string | undefined;
}

class AbortedError extends Error {}

/** `null`/`undefined` arguments become `{}` (reference §10.7); anything else is validated as given. */
function coerceArgs(_tool: ToolImplementation, args: unknown): Record<string, unknown> {
  if (args === undefined || args === null) return {};
  return args as Record<string, unknown>;
}
