import { randomUUID } from 'node:crypto';
import { modelSupportsTools } from '../turn/turn-context.js';
import type { HookBus } from '../hooks/bus.js';
import { agentHookContext } from '../hooks/context.js';
import { log } from '../log/log.js';
import { metrics } from '../ops/metrics.js';
import type { TurnContext } from '../policy/context.js';
import { projectTools, type ProjectionResult } from '../models/projection/index.js';
import { describeModelFailure, RetriesExhaustedError, withRetry } from '../models/retry.js';
import { modelRefForAgent, type ModelSettings } from '../models/settings.js';
import { isAbortError, ModelCallError, type Message, type ModelProvider, type ToolCallPart, type UserMessage } from '../models/types.js';
import { BudgetRefusedError } from '../usage/service.js';
import type { UsageAttribution } from '../usage/types.js';
import { chooseCut, summarize } from './compaction.js';
import { asSeenBy } from './cross-principal.js';
import { perResultCapChars, pruneToolResults, requestTokens } from './context-budget.js';
import { buildSystemPrompt } from './system-prompt.js';
import { saysContextOverflow } from './context-overflow.js';
import { runToolCalls } from './tool-calls.js';
import { summaryMessage } from './transcript.js';
import { incomingAppend, inputMessage, senderOf } from './incoming.js';
import type { AgentDeps, PromptAdditions, TranscriptAppend, TranscriptEntry, TurnInput, TurnOutcome, TurnRequest } from './types.js';

export const NO_MODEL_MESSAGE =
  'No model is configured. Set models.default (for example "anthropic/claude-sonnet-4-5") in the config and the provider\'s API key in the environment (ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY).';

/** Compaction starts when the request would fill this share of the window (minus the reply). */
const COMPACT_AT = 0.75;
/** How much recent conversation survives a compaction verbatim. */
const KEEP_AFTER_COMPACTION = 0.25;
const DEFAULT_TOOL_CONCURRENCY = 4;

const sameMessage = (a: Message, b: Message): boolean => a.role === b.role && JSON.stringify(a.content) === JSON.stringify(b.content);

const textOf = (m: Message) => m.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
const isContextOverflow = (err: ModelCallError) => err.kind === 'badRequest' && saysContextOverflow(err.message);

const reported = new Set<string>();

/** A tool left out of the projection is worth one warning per model, not one per turn. */
function reportDiagnostics(ref: string, projection: ProjectionResult): void {
  for (const d of projection.diagnostics) {
    const key = `${ref}|${d.tool}|${d.message}`;
    if (reported.has(key)) continue;
    reported.add(key);
    if (d.kind === 'omitted') log.warn({ model: ref, tool: d.tool }, d.message);
    else log.info({ model: ref, tool: d.tool }, d.message);
  }
}

interface TurnState {
  entries: TranscriptEntry[];
  usage: { inputTokens: number; outputTokens: number };
  rounds: number;
  lastText: string;
}

/** One turn: model ↔ tools until the model answers, the rounds run out, or the turn is stopped. */
/** What the loop asks of the sessions service; absent in tests that run a bare loop. */
export interface TurnSessionHooks {
  drainResults(sessionKey: string): string | undefined | Promise<string | undefined>;
  /** Whether `drainResults` has anything to take; false skips it (asked beside the transcript read). */
  resultsWaiting?(sessionKey: string): Promise<boolean>;
  consumeYield(sessionKey: string): boolean;
}

export async function runTurn(deps: AgentDeps, request: TurnRequest, sessions?: TurnSessionHooks): Promise<TurnOutcome> {
  const started = performance.now();
  let status = 'error';
  try {
    const outcome = await runTurnHooked(deps, request, sessions);
    status = outcome.status;
    return outcome;
  } finally {
    // `error` is a turn that threw, beside the loop's own completed / aborted / failed.
    metrics.turnEnded(status, (performance.now() - started) / 1000);
  }
}

async function runTurnHooked(deps: AgentDeps, request: TurnRequest, sessions?: TurnSessionHooks): Promise<TurnOutcome> {
  const hooks = deps.hooks;
  // Loop detection counts per run: this turn's calls, and those of the turns it starts itself.
  const runId = request.runId ?? randomUUID();
  if (!hooks?.has('agent_end')) return runTurnOnce(deps, request, sessions, runId);
  const started = performance.now();
  const appended: unknown[] = [];
  const recording: AgentDeps = {
    ...deps,
    transcripts: {
      load: (k) => deps.transcripts.load(k),
      history: (k, o) => deps.transcripts.history(k, o),
      sessions: () => deps.transcripts.sessions(),
      append: (k, entries, options) => {
        const out = deps.transcripts.append(k, entries, options);
        if (k === request.sessionKey) appended.push(...entries.map((e) => e.message));
        return out;
      },
    },
  };
  let outcome: TurnOutcome | undefined;
  let error: string | undefined;
  try {
    outcome = await runTurnOnce(recording, request, sessions, runId);
    return outcome;
  } catch (err) {
    error = (err as Error).message;
    throw err;
  } finally {
    // An observer: the turn's outcome is settled before it hears of it, and its failure changes nothing.
    hooks.fire(
      'agent_end',
      {
        runId,
        messages: appended,
        success: outcome?.status === 'completed',
        ...(error ?? (outcome?.status === 'failed' ? outcome.error.message : undefined) ? { error: error ?? (outcome as { error: { message: string } }).error.message } : {}),
        durationMs: performance.now() - started,
      },
      agentHookContext(request.turn, request.sessionKey, { runId }),
    );
  }
}

/**
 * The turn's incoming message, held back until the model's first answer so both are written in
 * one batch (one round trip on PostgreSQL instead of two); written alone before a compaction (a
 * summary names entries by their seq) and when the turn ends without an answer. A turn whose
 * instance dies before the answer leaves the message unwritten: the message's place outlives
 * the instance and the one that takes it over runs it, so it is written once, not twice.
 */
class Incoming {
  unwritten: { appends: TranscriptAppend[]; entries: TranscriptEntry[] } | undefined;

  constructor(
    private readonly writes: TurnWrites,
    private readonly state: TurnState,
  ) {}

  /** Holds `appends` back; returns their stand-ins for the turn's entries (replaced once written). */
  hold(appends: TranscriptAppend[]): TranscriptEntry[] {
    const now = Date.now();
    const entries = appends.map((entry): TranscriptEntry => ({ ...entry, seq: Number.MAX_SAFE_INTEGER, createdAt: now }));
    this.unwritten = { appends, entries };
    return entries;
  }

  /** Writes what is held back with `extra`, in one batch; returns `extra` as written. */
  async record(extra: TranscriptAppend[]): Promise<TranscriptEntry[]> {
    const held = this.unwritten;
    if (!held) return extra.length > 0 ? this.writes.append(extra) : [];
    this.unwritten = undefined;
    let written: TranscriptEntry[];
    try {
      written = await this.writes.append([...held.appends, ...extra]);
    } catch (err) {
      // Nothing of the batch was written: the message is still owed (the turn's end tries it alone).
      this.unwritten = held;
      throw err;
    }
    held.entries.forEach((stand, i) => {
      const at = this.state.entries.indexOf(stand);
      if (at >= 0) this.state.entries[at] = written[i]!;
    });
    return written.slice(held.appends.length);
  }
}

/**
 * The turn's transcript writes. The session's activity time is written once a turn: with its
 * message (with its place, as the turn starts, or with the model's first answer), not again
 * with the answers and rounds after it — so a message's store work writes the session's row
 * once, and the session's activity time is when its latest message was written.
 */
class TurnWrites {
  /** Whether this turn's message (and with it the session's activity time) is written. */
  touched = false;

  constructor(
    private readonly transcripts: AgentDeps['transcripts'],
    private readonly sessionKey: string,
  ) {}

  async append(entries: TranscriptAppend[]): Promise<TranscriptEntry[]> {
    const written = await this.transcripts.append(this.sessionKey, entries, this.touched ? { touch: false } : undefined);
    this.touched = true;
    return written;
  }
}

async function runTurnOnce(deps: AgentDeps, request: TurnRequest, sessions: TurnSessionHooks | undefined, runId: string): Promise<TurnOutcome> {
  const state: TurnState = { entries: [], usage: { inputTokens: 0, outputTokens: 0 }, rounds: 0, lastText: '' };
  const writes = new TurnWrites(deps.transcripts, request.sessionKey);
  const incoming = new Incoming(writes, state);
  let outcome: TurnOutcome;
  try {
    outcome = await runTurnSteps(deps, request, sessions, runId, state, incoming, writes);
  } catch (err) {
    if (incoming.unwritten) await incoming.record([]).catch((e: unknown) => log.error({ err: e, sessionKey: request.sessionKey }, "the turn's message could not be written to its transcript"));
    throw err;
  }
  // Ended without an answer to write it with (stopped, refused, failed): the message alone.
  if (incoming.unwritten) await incoming.record([]);
  return outcome;
}

async function runTurnSteps(
  deps: AgentDeps,
  request: TurnRequest,
  sessions: TurnSessionHooks | undefined,
  runId: string,
  state: TurnState,
  held: Incoming,
  writes: TurnWrites,
): Promise<TurnOutcome> {
  const { config, transcripts, hooks } = deps;
  const { sessionKey, signal } = request;
  const record = (extra: TranscriptAppend[]) => held.record(extra);
  const ended = (status: 'completed' | 'aborted', reply: string): TurnOutcome => ({ status, reply, rounds: state.rounds, usage: state.usage });
  const failed = (kind: 'model' | 'config' | 'tools' | 'rounds' | 'budget', message: string, reply: string): TurnOutcome => ({
    status: 'failed',
    reply,
    rounds: state.rounds,
    usage: state.usage,
    error: { kind, message },
  });

  let ref = request.turn.model ?? modelRefForAgent(config, request.turn.agentId);
  if (!ref) return failed('config', NO_MODEL_MESSAGE, `⚠️ ${NO_MODEL_MESSAGE}`);
  let supportsTools = request.turn.modelSupportsTools;
  if (hooks?.has('before_model_resolve')) {
    const chosen = await resolveModelOverride(deps, request, ref, runId);
    if (chosen) {
      ref = chosen;
      supportsTools = modelSupportsTools(config, ref) ? undefined : false;
    }
  }
  const resolved = deps.models(ref);
  if (!resolved.ok) return failed('config', resolved.message, `⚠️ ${resolved.message}`);
  const { settings } = resolved;
  // Every call this turn makes through its provider — replies and compaction — is checked against
  // the budgets first and recorded after (src/usage); a refused call is never sent.
  const provider = deps.usage ? deps.usage.wrap(resolved.provider, usageAttribution(request, 'turn')) : resolved.provider;
  const budgetStop = (err: BudgetRefusedError): TurnOutcome => {
    log.info({ sessionKey, counter: err.refusal.counter.key, round: state.rounds }, 'model call refused by a budget');
    const text = partial || state.lastText;
    return failed('budget', err.message, text ? `${text}\n\n${err.message}` : err.message);
  };
  const { modelSupportsTools: _was, ...base } = request.turn;
  // The surface is decided for the model that answers (a hook's override included).
  const asked = { ...base, model: ref, ...(supportsTools === false ? { modelSupportsTools: false } : {}) };

  // Earlier messages of other people in this session are shown as their untrusted words.
  // The subagent-results probe goes out with the transcript's read (one round trip); a run ending
  // after it is taken at the next turn, as one ending after the drain always was.
  // Read already with the session's lease (the message's place) when nothing wrote the session
  // here since: no round trip of its own.
  const start = request.start?.fresh() === true ? request.start : undefined;
  // A person's message not written yet (its place did not take the lease: the conversation was
  // busy, or it came another way) is written as the turn starts, in the round trip of the read
  // the turn must make anyway: durable from here on, before the model is asked. Not a message
  // with images (what the model is shown of them is the turn's to decide) or relayed words, nor
  // one whose place carries it (`rerunnable`: a survivor taking the place over would write it again).
  const early =
    !start && request.written === undefined && request.rerunnable !== true && request.input.origin === undefined && (request.input.images?.length ?? 0) === 0
      ? writes.append([incomingAppend(request.input, request.turn)])
      : undefined;
  early?.catch(() => undefined); // awaited below, after the read it travels with
  const [loaded, resultsWaiting] = start ? [start.entries, start.resultsWaiting] : await Promise.all([transcripts.load(sessionKey), sessions?.resultsWaiting?.(sessionKey)]);
  const wroteEarly = early ? (await early)[0] : undefined;
  const written = wroteEarly ? { seq: wroteEarly.seq } : request.written;
  // Written with its place: the session's activity time with it.
  if (written) writes.touched = true;
  const history = asSeenBy(loaded, request.turn.senderId);
  // Read on another connection than the write went (a busy one passed over): it may not have seen it.
  if (wroteEarly && !history.some((e) => e.seq === wroteEarly.seq)) history.push(wroteEarly);
  const surface = await deps.tools.surface(asked, sessionKey, { prompt: request.input.text, messages: history.map((e) => e.message), runId });
  if (!surface.ok) return failed('tools', surface.message, `⚠️ ${surface.message}`);
  // The context the surface was resolved for (with any run restrictions): every call of the turn carries it.
  const turn = surface.turn ?? asked;
  const projection = projectTools(surface.tools, {
    api: settings.api,
    provider: settings.provider,
    model: settings.model,
    unsupportedKeywords: settings.unsupportedSchemaKeywords,
  });
  reportDiagnostics(ref, projection);

  const added = surface.prompt;
  const system = buildSystemPrompt({
    config,
    turn,
    skillsCatalog: deps.skillsCatalog?.(turn, sessionKey) ?? '',
    toolNames: projection.tools.map((t) => t.name),
    ...(added ? { plugin: { systemPrompt: added.systemPrompt, prepend: added.prependSystemContext, append: added.appendSystemContext } } : {}),
  });

  const arrived = resultsWaiting === false ? undefined : await sessions?.drainResults(sessionKey);
  const incoming: UserMessage[] = [
    ...(arrived ? [{ role: 'user' as const, content: [{ type: 'text' as const, text: `Results from your subagents:\n${arrived}` }] }] : []),
    withContext(inputMessage(request.input, turn.chat), added),
  ];
  // The requester's own message records who sent it, so that in another person's turn it is theirs, not the requester's.
  const own = senderOf(request.input, request.turn);
  const appendIncoming = incoming.map((message, i) => ({ kind: 'message' as const, message, ...(own && i === incoming.length - 1 ? { sender: own } : {}) }));
  if (written) {
    // Written with its place, or as the turn started (and so in the transcript just read): not written again.
    // Results taken for this turn are written at once, after it. When the model is shown more
    // of it than was written (a plugin's added context), that is written over it, with the
    // model's first answer.
    const results = arrived ? await writes.append(appendIncoming.slice(0, -1)) : [];
    const seq = written.seq;
    const at = seq === undefined ? -1 : history.findIndex((e) => e.seq === seq);
    const shown = appendIncoming.at(-1)!;
    if (at >= 0 && !sameMessage(history[at]!.message, shown.message)) {
      const [stand] = held.hold([{ ...shown, rewrites: seq }]);
      history[at] = stand!;
    }
    state.entries = [...history, ...results];
  } else if (arrived) {
    // Results taken from their runs are written at once: a crash must not lose them between.
    state.entries = [...history, ...(await writes.append(appendIncoming))];
  } else {
    // Written with the model's first answer, in one batch (see `Incoming`).
    state.entries = [...history, ...held.hold(appendIncoming)];
  }
  const budget = Math.max(1_000, settings.contextWindow - settings.maxOutputTokens);
  const maxRounds = config.agents.defaults.maxToolRounds;
  let forceCompaction = false;
  let partial = '';

  for (let round = 1; ; round++) {
    if (signal.aborted) return ended('aborted', state.lastText);
    try {
      state.entries = await fitContext(state.entries, { deps, sessionKey, provider, settings, system, projection, budget, force: forceCompaction, signal, onEvent: request.onEvent, turn, runId, flush: () => record([]), append: (entries) => writes.append(entries) });
    } catch (err) {
      if (isAbortError(err) || signal.aborted) return ended('aborted', state.lastText);
      if (err instanceof BudgetRefusedError) return budgetStop(err);
      throw err;
    }
    const sent = state.entries.map((e) => e.message);
    const messages = pruneToolResults(sent, requestTokens(system, projection.tools, sent), budget);

    request.onEvent?.({ type: 'modelCall', round });
    partial = '';
    let response;
    const call = hooks?.has('model_call_started') || hooks?.has('model_call_ended') ? modelCallHooks(hooks, request, runId, round, settings) : undefined;
    try {
      response = await withRetry(
        settings.retry,
        signal,
        () =>
          provider.complete(
            {
              model: settings.model,
              system,
              messages,
              tools: projection.tools,
              maxOutputTokens: settings.maxOutputTokens,
              onTextDelta: (delta) => {
                partial += delta;
                request.onTextDelta?.(delta);
              },
            },
            signal,
          ),
        { onRetry: ({ attempt, delayMs, error }) => request.onEvent?.({ type: 'retry', attempt, delayMs, reason: error.message }) },
      );
      call?.ended('completed');
    } catch (err) {
      call?.ended('error', err, signal.aborted);
      if (isAbortError(err) || signal.aborted) return ended('aborted', partial || state.lastText);
      if (err instanceof BudgetRefusedError) return budgetStop(err);
      if (err instanceof RetriesExhaustedError) {
        if (!forceCompaction && isContextOverflow(err.last)) {
          log.warn({ sessionKey, error: err.message }, 'model reports context overflow; compacting');
          forceCompaction = true;
          round--;
          continue;
        }
        const reply = describeModelFailure(ref, err);
        return failed('model', err.message, partial || state.lastText ? `${partial || state.lastText}\n\n${reply}` : reply);
      }
      throw err;
    }
    forceCompaction = false;
    state.rounds = round;
    state.usage.inputTokens += response.usage.inputTokens;
    state.usage.outputTokens += response.usage.outputTokens;
    state.entries.push(...(await record([{ kind: 'message', message: response.message }])));
    const text = textOf(response.message);
    if (text.trim()) state.lastText = text;

    const calls = response.message.content.filter((p): p is ToolCallPart => p.type === 'toolCall');
    if (calls.length === 0) return ended('completed', text.trim() ? text : state.lastText);

    if (round > maxRounds) {
      const note = `Not run: this turn reached its limit of ${maxRounds} tool rounds (agents.defaults.maxToolRounds).`;
      state.entries.push(
        ...(await writes.append(
          calls.map((c) => ({ kind: 'message' as const, message: { role: 'toolResult' as const, toolCallId: c.id, toolName: c.name, content: [{ type: 'text' as const, text: note }], isError: true } })),
        )),
      );
      const notice = `⚠️ I stopped after ${maxRounds} rounds of tool calls without a final answer. Ask me to continue if you want me to go on.`;
      return failed('rounds', note, state.lastText ? `${state.lastText}\n\n${notice}` : notice);
    }

    const results = await runToolCalls(calls, {
      executor: deps.tools,
      sessionKey,
      turn,
      signal,
      runId,
      idByWireName: projection.idByWireName,
      concurrency: deps.toolConcurrency ?? DEFAULT_TOOL_CONCURRENCY,
      resultCapChars: perResultCapChars(settings.contextWindow),
      deferApprovals: request.deferApprovals,
      onStart: (call, id) => request.onEvent?.({ type: 'toolCall', round, tool: id, toolCallId: call.id }),
      onDone: (call, result, files) => request.onEvent?.({ type: 'toolResult', round, tool: call.name, toolCallId: call.id, isError: result.isError, ...(files && files.length > 0 ? { files } : {}) }),
    });
    // Every call gets its result persisted, stopped or not, so the transcript stays valid for the next turn.
    state.entries.push(...(await writes.append(results.map((message) => ({ kind: 'message' as const, message })))));
    if (signal.aborted) return ended('aborted', state.lastText);
    // sessions_yield: the turn ends here; subagent results start the next one.
    if (sessions?.consumeYield(sessionKey)) return ended('completed', state.lastText);
  }
}

interface FitOptions {
  deps: AgentDeps;
  sessionKey: string;
  provider: ModelProvider;
  settings: ModelSettings;
  system: string;
  projection: ProjectionResult;
  budget: number;
  force: boolean;
  signal: AbortSignal;
  onEvent: TurnRequest['onEvent'];
  turn: TurnContext;
  runId: string;
  /** Writes the turn's incoming message if it is not yet (a summary names the entries it covers by their seq). */
  flush(): Promise<unknown>;
  /** The turn's transcript write (`TurnWrites`). */
  append(entries: TranscriptAppend[]): Promise<TranscriptEntry[]>;
}

/**
 * Compacts before the window is exceeded: when the request would pass 75% of the budget
 * (or the provider said it overflowed), older entries are folded into a model-written
 * summary that is persisted; the newest quarter of the budget stays verbatim.
 */
async function fitContext(entries: TranscriptEntry[], o: FitOptions): Promise<TranscriptEntry[]> {
  const used = requestTokens(o.system, o.projection.tools, entries.map((e) => e.message));
  if (!o.force && used <= o.budget * COMPACT_AT) return entries;
  await o.flush();
  const fixed = requestTokens(o.system, o.projection.tools, []);
  let keep = Math.max(0, o.budget * KEEP_AFTER_COMPACTION - fixed);
  // The provider said it overflowed: our estimate was too low, so keep a quarter of what we think we sent.
  if (o.force) keep = Math.min(keep, Math.max(0, used - fixed) * KEEP_AFTER_COMPACTION);
  const cut = chooseCut(entries, keep);
  const folded = entries.slice(0, cut).filter((e) => e.kind === 'message');
  if (cut === 0 || folded.length === 0) return entries;
  const coversThroughSeq = Math.max(...folded.map((e) => e.seq));
  const hooks = o.deps.hooks;
  const hookCtx = hooks?.has('before_compaction') || hooks?.has('after_compaction') ? agentHookContext(o.turn, o.sessionKey, { runId: o.runId }) : undefined;
  if (hookCtx) hooks!.fire('before_compaction', { messageCount: entries.length, compactingCount: folded.length, tokenCount: used }, hookCtx);
  let text: string;
  try {
    text = await summarize(entries.slice(0, cut), {
      provider: o.provider,
      model: o.settings.model,
      retry: o.settings.retry,
      signal: o.signal,
      chunkTokens: Math.floor(o.budget * 0.5),
      maxOutputTokens: o.settings.maxOutputTokens,
    });
  } catch (err) {
    if (isAbortError(err) || o.signal.aborted || err instanceof BudgetRefusedError) throw err;
    // Without a summary the turn still has to fit: the folded entries go, and the model is told so.
    log.warn({ sessionKey: o.sessionKey, err: (err as Error).message }, 'compaction summary failed; dropping older messages');
    text = `(${folded.length} earlier messages were removed to fit the context window; they could not be summarised: ${(err as Error).message})`;
  }
  const [summary] = await o.append([{ kind: 'summary', message: summaryMessage(text), coversThroughSeq }]);
  o.onEvent?.({ type: 'compacted', removedMessages: folded.length });
  if (hookCtx) hooks!.fire('after_compaction', { messageCount: entries.length - cut + 1, compactedCount: folded.length }, hookCtx);
  log.info({ sessionKey: o.sessionKey, folded: folded.length, kept: entries.length - cut }, 'transcript compacted');
  return [summary!, ...entries.slice(cut)];
}

/** Who a turn's model calls are for, as usage records and budgets see them. */
function usageAttribution(request: TurnRequest, purpose: string): UsageAttribution {
  const t = request.turn;
  return {
    agentId: t.agentId,
    sessionKey: request.sessionKey,
    platform: t.provider,
    senderId: t.senderId,
    senderName: t.senderName,
    channelId: t.channelId,
    threadId: t.threadId,
    guildId: t.guildId,
    purpose,
  };
}

/** before_prompt_build's prependContext / appendContext around the user's message of this run. */
function withContext(message: UserMessage, added: PromptAdditions | undefined): UserMessage {
  if (!added || (added.prependContext.length === 0 && added.appendContext.length === 0)) return message;
  const content = [...message.content];
  const first = content.findIndex((p) => p.type === 'text');
  const text = first >= 0 ? (content[first] as { text: string }).text : '';
  const joined = [...added.prependContext, text, ...added.appendContext].filter((t) => t !== '').join('\n\n');
  if (first >= 0) content[first] = { type: 'text', text: joined };
  else content.unshift({ type: 'text', text: joined });
  return { ...message, content };
}

/**
 * before_model_resolve: a plugin may pick the model of this run (the first override given wins).
 * One that names no configured, reachable model is ignored with a warning: the configured model
 * answers. Fails open, like every hook but before_tool_call.
 */
async function resolveModelOverride(deps: AgentDeps, request: TurnRequest, ref: string, runId: string): Promise<string | undefined> {
  const images = request.input.images?.length ?? 0;
  const picked = await deps.hooks!.runBeforeModelResolve(
    { prompt: request.input.text, ...(images > 0 ? { attachments: Array.from({ length: images }, () => ({ kind: 'image' as const })) } : {}) },
    agentHookContext(request.turn, request.sessionKey, { runId }),
  );
  if (!picked.modelOverride && !picked.providerOverride) return undefined;
  const slash = ref.indexOf('/');
  const current = { provider: ref.slice(0, slash), model: ref.slice(slash + 1) };
  const override = picked.modelOverride ?? '';
  const named = override.includes('/') ? { provider: override.slice(0, override.indexOf('/')), model: override.slice(override.indexOf('/') + 1) } : undefined;
  const next = `${picked.providerOverride ?? named?.provider ?? current.provider}/${named?.model ?? (override || current.model)}`;
  if (next === ref) return undefined;
  const check = deps.models(next);
  if (!check.ok) {
    log.warn({ plugin: picked.owner, model: next, error: check.message }, 'before_model_resolve named a model that cannot be used; the configured model answers');
    return undefined;
  }
  log.info({ plugin: picked.owner, from: ref, to: next, sessionKey: request.sessionKey }, 'before_model_resolve chose the model of this run');
  return next;
}

function modelCallHooks(hooks: HookBus, request: TurnRequest, runId: string, round: number, settings: ModelSettings) {
  const ctx = agentHookContext(request.turn, request.sessionKey, { runId });
  const base = { runId, callId: `${runId}:${round}`, sessionKey: request.sessionKey, provider: settings.provider, model: settings.model, api: settings.api };
  const started = performance.now();
  hooks.fire('model_call_started', base, ctx);
  return {
    ended(outcome: 'completed' | 'error', err?: unknown, aborted?: boolean) {
      const failure = aborted ? { failureKind: 'aborted' as const } : err instanceof RetriesExhaustedError ? { errorCategory: err.last.kind } : err ? { errorCategory: 'unknown' } : {};
      hooks.fire('model_call_ended', { ...base, durationMs: performance.now() - started, outcome, ...failure }, ctx);
    },
  };
}
