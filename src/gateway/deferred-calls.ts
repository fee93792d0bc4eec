import type { TranscriptStore } from '../agent/types.js';
import type { ApprovalService } from '../approvals/service.js';
import { isAllow, type ApprovalRequest, type DeferredCall } from '../approvals/types.js';
import type { WardenConfig } from '../config/index.js';
import type { EventBus } from '../events/events.js';
import { log } from '../log/log.js';
import type { ToolCallPart } from '../models/types.js';
import type { TurnContext } from '../policy/context.js';
import { isWrappedUntrusted, wrapUntrusted } from '../tools/untrusted.js';
import type { ToolResult } from '../tools/types.js';
import { pendingApprovalText } from '../tools/invoke/approval-step.js';
import { forPeople } from './people-text.js';
import { outcomeLabel } from './commands.js';
import { deciderIn } from '../policy/people.js';
import { contextForDeferredCall } from '../turn/turn-context.js';
import type { ParkedFollowUp } from './follow-up-store.js';
import type { OutboundMessage, ReplyTarget } from './types.js';
import { background } from '../util/background.js';

/**
 * Runs deferred calls once their approval closes, in whatever process sees the closure first:
 * claims the call (one conditional write, so two processes or two clicks cannot both run it),
 * runs it through the whole call chain as the original requester under the original turn's
 * context — rebuilt by the one context builder, the original surface as its ceiling — posts the
 * result in the conversation linked to the card, and, for a call the agent made, queues a
 * follow-up turn that hands the agent the outcome. `/exec` calls are only posted.
 *
 * At start, `sweep` takes what happened while no process ran: calls decided or expired while
 * Warden was down run now; a call whose runner died mid-run is reported as lost, never run twice.
 */
export interface DeferredRunnerDeps {
  config: WardenConfig;
  approvals: ApprovalService;
  events: EventBus;
  /** The governed call path, resuming a call with the decision it waited for. */
  tools: {
    resume(call: DeferredCall, turn: TurnContext, signal: AbortSignal): Promise<ToolResult>;
  };
  /** Posts outside any turn, through the conversation's adapter. */
  post(target: ReplyTarget, message: OutboundMessage): Promise<void>;
  /** Queues the follow-up turn on the conversation's session queue; false when it cannot be queued. */
  followUp(item: FollowUpTurn): boolean;
  /** Where a follow-up goes when no model answers (the outcome still belongs in the transcript). */
  transcripts: TranscriptStore;
  /** Whether the gateway takes work; a closure seen while it does not is left for the next start. */
  accepting(): boolean;
  isProcessAlive?: (pid: number) => boolean;
  now?: () => number;
}

/** A turn Warden starts in a conversation to hand the agent a decided call's outcome. */
export interface FollowUpTurn {
  sessionKey: string;
  agentId: string;
  context: TurnContext;
  replyTo: ReplyTarget;
  text: string;
  /** Runs first, inside the session's queue (transcript repair after a restart). */
  before?: (() => void | Promise<void>) | undefined;
  /** What `before` repairs, as data: a follow-up parked at shutdown repairs it when it runs again elsewhere. */
  dangling?: ParkedFollowUp['dangling'];
}

/** How a deferred call ended, for the post, the follow-up and the ledger row. */
export interface DeferredOutcome {
  /** The request's final status. */
  status: ApprovalRequest['status'];
  /** The tool's result when the call was run (or refused by its own checks); absent when it never started. */
  result?: ToolResult | undefined;
  /** Why it did not start (the decision, or the surface it no longer has). */
  notRun?: string | undefined;
}

export class DeferredCallRunner {
  private readonly inFlight = new Set<Promise<void>>();
  private readonly controller = new AbortController();
  private off: (() => void) | undefined;
  private stopping = false;

  constructor(private readonly deps: DeferredRunnerDeps) {}

  /** Listens for closures; call before `approvals.recover()` so closures it makes are handled too. */
  start(): void {
    this.off ??= this.deps.events.on('approval.closed', ({ request }) => this.track(this.handle(request.id)));
  }

  /** Stops taking calls and waits for the ones running (their commands see the abort). */
  async stop(): Promise<void> {
    this.stopping = true;
    this.off?.();
    this.off = undefined;
    this.controller.abort(new Error('Warden is stopping'));
    await Promise.allSettled([...this.inFlight]);
  }

  /** Settles once every call handled so far is done (tests, benchmarks). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /**
   * What no process handled: calls whose approval closed while none ran them, calls whose
   * waiting turn died after the decision, and calls whose runner died while running.
   */
  async sweep(): Promise<void> {
    const { approvals } = this.deps;
    for (const call of await approvals.deferred.inState('waiting', 'deferred', 'running')) {
      const request = await approvals.get(call.approvalId);
      if (!request || request.status === 'pending') continue;
      if (call.state === 'waiting' && (await this.ownerDead(call))) await approvals.deferred.defer(call.approvalId);
      if (call.state === 'running' && (await this.ownerDead(call))) this.track(this.lost(call, request));
      else this.track(this.handle(call.approvalId));
    }
  }

  private track(work: Promise<void>): void {
    this.inFlight.add(work);
    background(
      work.finally(() => this.inFlight.delete(work)),
      'deferred call not run',
      { level: 'error' },
    );
  }

  private async ownerDead(call: DeferredCall): Promise<boolean> {
    const owner = call.owner;
    if (!owner) return true;
    if (owner.instance === this.deps.approvals.instanceId) return false;
    if (this.deps.isProcessAlive) return owner.pid === process.pid || !this.deps.isProcessAlive(owner.pid);
    // On a shared store the owner's instance lease decides (its pid means nothing on another machine).
    return !(await this.deps.approvals.ownerAlive(owner));
  }

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }

  private async handle(approvalId: string): Promise<void> {
    const { approvals } = this.deps;
    if (this.stopping || !this.deps.accepting()) return;
    const call = await approvals.deferred.get(approvalId);
    const request = await approvals.get(approvalId);
    if (!call || call.state !== 'deferred' || !request || request.status === 'pending') return;
    if (!(await approvals.deferred.claim(approvalId, { instance: approvals.instanceId, pid: process.pid }, this.now()))) return;
    const started = this.now();
    let outcome: DeferredOutcome;
    const context = contextForDeferredCall(this.deps.config, call);
    try {
      outcome = await this.run(call, request, context);
    } catch (err) {
      log.error({ err, approval: approvalId }, 'deferred call failed');
      outcome = { status: request.status, notRun: `it failed in Warden: ${(err as Error).message}` };
    }
    const summary = resultText(outcome);
    log.info({ approval: approvalId, tool: call.tool, outcome: request.status, ran: outcome.result !== undefined, ms: this.now() - started }, 'deferred call handled');
    try {
      await this.announce(call, request, context, outcome);
    } finally {
      await approvals.deferred.finish(approvalId, this.now(), { outcome: outcome.result ? `${request.status}:ran` : `${request.status}:not-run`, text: summary.slice(0, 2000) });
    }
  }

  private async run(call: DeferredCall, request: ApprovalRequest, context: TurnContext): Promise<DeferredOutcome> {
    const status = request.status;
    // A person said no (or the request was withdrawn): nothing runs, whatever the policy says now.
    if (!isAllow(status) && status !== 'expired') {
      if (status === 'deny') return { status, notRun: request.denyReason ? `the approver denied it, giving the reason ${JSON.stringify(request.denyReason)}` : 'the approver denied it' };
      return { status, notRun: `the approval was ${status}` };
    }
    // Expired: the tool applies its own rule for that (exec's askFallback, a hook's timeoutBehavior).
    const result = await this.deps.tools.resume(call, context, this.controller.signal);
    return { status, result };
  }

  /** Posts under the card and hands the outcome to the agent. */
  private async announce(call: DeferredCall, request: ApprovalRequest, context: TurnContext, outcome: DeferredOutcome): Promise<void> {
    const details = outcome.result?.details as { status?: unknown } | undefined;
    // Resumed into another approval (the call now asks something else): that card answers for it.
    if (details?.status === 'pending') return;
    const target = replyTargetOf(call.turn);
    if (target) await this.deps.post(target, { ...resultPost(call, request, outcome), linkedApproval: request.id });
    if (call.origin !== 'turn') return;
    const text = followUpText(call, request, outcome);
    if (context.model === undefined || !target) {
      // No model answers here: the outcome still goes into the conversation's transcript.
      await this.deps.transcripts.append(call.sessionKey, [{ kind: 'message', message: { role: 'user', content: [{ type: 'text', text }] } }]);
      return;
    }
    const queued = this.deps.followUp({
      sessionKey: call.sessionKey,
      agentId: call.agentId,
      context,
      replyTo: target,
      text,
      before: () => answerDanglingCall(this.deps.transcripts, call),
      dangling: { approvalId: call.approvalId, toolCallId: call.toolCallId },
    });
    if (!queued) log.warn({ approval: request.id, sessionKey: call.sessionKey }, 'follow-up turn could not be queued');
  }

  /** A call whose runner died while it ran: it may have run in part, so it never runs again. */
  private async lost(call: DeferredCall, request: ApprovalRequest): Promise<void> {
    const text = 'Warden stopped while it was running, so it may have run in part or not at all; it is not run again.';
    if (!(await this.deps.approvals.deferred.lose(call.approvalId, this.now(), text))) return;
    log.warn({ approval: call.approvalId, tool: call.tool }, 'deferred call lost: its runner died while it ran');
    await this.announce(call, request, contextForDeferredCall(this.deps.config, call), { status: request.status, notRun: text });
  }
}

/** Where a conversation is answered, from the context its turn had. */
export function replyTargetOf(turn: TurnContext): ReplyTarget | undefined {
  if (turn.channelId === undefined) return undefined;
  const provider = turn.provider as ReplyTarget['provider'];
  return { provider, channelId: turn.channelId, ...(turn.chat === 'thread' && turn.threadId !== undefined ? { threadId: turn.threadId } : {}) };
}

const textOf = (result: ToolResult): string =>
  result.content
    .map((c) => (c.type === 'text' ? c.text : `[${c.mimeType} image]`))
    .join('\n')
    .trimEnd();

/** The call in one short line: exec's command, else the tool and its arguments. */
export function callLabel(call: Pick<DeferredCall, 'tool' | 'args'>, max = 200): string {
  const raw = call.tool === 'exec' && typeof call.args.command === 'string' ? call.args.command : `${call.tool} ${JSON.stringify(call.args)}`;
  const line = raw.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

const code = (text: string) => `\`${text.replaceAll('`', 'ˋ')}\``;
const block = (text: string) => `\`\`\`\n${(text === '' ? '(no output)' : text).replaceAll('```', '`\u200b``')}\n\`\`\``;

/** One line on what became of the call; shared by the post and the ledger. */
export function resultText(outcome: DeferredOutcome): string {
  if (outcome.result) return textOf(outcome.result);
  return `not run: ${outcome.notRun ?? 'no reason recorded'}`;
}

/** What the conversation sees under the card. */
export function resultPost(call: Pick<DeferredCall, 'tool' | 'args'>, request: Pick<ApprovalRequest, 'id' | 'status' | 'decidedBy' | 'provider'>, outcome: DeferredOutcome): OutboundMessage {
  // The decider named as the card above it names them ("by you" in the web chat, a mention on a platform).
  const head = `Approval ${request.id} · ${outcomeLabel(request, (d) => deciderIn(request.provider, d))} · ${code(callLabel(call, 120))}`;
  if (!outcome.result) return { text: `${head}\nDid not run: ${outcome.notRun}.` };
  const failed = outcome.result.isError === true;
  // People read the facts, not what the tool told the model to do next.
  return { text: `${head}\n${failed ? 'It ran into a refusal or an error:' : 'Result:'}\n${block(forPeople(textOf(outcome.result)))}` };
}

/**
 * What the agent reads in its follow-up turn (and the transcript keeps): Warden's own words,
 * the call's output as untrusted data, and what to do with it — finish the task, never retry.
 */
export function followUpText(call: Pick<DeferredCall, 'tool' | 'args' | 'toolCallId'>, request: Pick<ApprovalRequest, 'id' | 'status' | 'decidedBy'>, outcome: DeferredOutcome): string {
  const head = `[Approval ${request.id}] ${outcomeLabel(request)}. Your earlier ${call.tool} call (${code(callLabel(call))}, call ${call.toolCallId}) that was pending approval`;
  if (!outcome.result) {
    return `${head} did not run: ${outcome.notRun}. Do not retry it; tell the user what happened, and go on without it.`;
  }
  const text = textOf(outcome.result);
  const output = isWrappedUntrusted(text) ? text : wrapUntrusted(`tool:${call.tool}`, text === '' ? '(no output)' : text);
  const next = outcome.result.isError
    ? 'It did not succeed. Tell the user what happened; do not retry it unless they ask.'
    : 'Finish the task you started with this result. Do not run the call again.';
  return `${head} has now been run. Its result:\n${output}\n${next}`;
}

/**
 * After a restart, the turn that made the call may have died between its tool call and the
 * result, leaving the call unanswered in the transcript — which model APIs reject. When that
 * call is the transcript's last word, it (and any call of the same message) gets its result
 * now, before the follow-up: the pending answer it would have had (`pendingText`, when the call
 * waited for something other than an approval: an ask_user question).
 */
export async function answerDanglingCall(transcripts: TranscriptStore, call: Pick<DeferredCall, 'approvalId' | 'sessionKey' | 'toolCallId'>, pendingText?: string): Promise<void> {
  const entries = await transcripts.load(call.sessionKey);
  let i = entries.length - 1;
  const answered = new Set<string>();
  while (i >= 0 && entries[i]!.message.role === 'toolResult') answered.add((entries[i]!.message as { toolCallId: string }).toolCallId), i--;
  const last = entries[i]?.message;
  if (!last || last.role !== 'assistant') return;
  const calls = last.content.filter((p): p is ToolCallPart => p.type === 'toolCall');
  if (!calls.some((c) => c.id === call.toolCallId)) return;
  const missing = calls.filter((c) => !answered.has(c.id));
  if (missing.length === 0) return;
  await transcripts.append(
    call.sessionKey,
    missing.map((c) => ({
      kind: 'message' as const,
      message: {
        role: 'toolResult' as const,
        toolCallId: c.id,
        toolName: c.name,
        content: [{ type: 'text' as const, text: c.id === call.toolCallId ? (pendingText ?? pendingApprovalText(call.approvalId)) : 'Not run: Warden stopped during this turn.' }],
        isError: c.id !== call.toolCallId,
      },
    })),
  );
}
