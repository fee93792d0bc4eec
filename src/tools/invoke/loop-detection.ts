import { createHash } from 'node:crypto';
import { stableJson } from '../../util/stable-json.js';
import { isRecord } from '../../util/guards.js';

/**
 * Tool-call loop detection (reference §5.2), on by default in Warden. Detectors and thresholds
 * are OpenClaw's and not configurable (`tools.loopDetection` has only `enabled`, as there):
 * identical call repeated (warn 10, block after 20 identical outcomes), ping-pong between two
 * calls (10 / 20), polling without progress (10 / 20), argument churn (warn 10), a global
 * no-progress breaker (30), and an unknown tool retried (10).
 *
 * History is kept per run, not per session: a run is one turn and its tool rounds, together
 * with the turns it starts itself (its subagents, the sessions it messages, the turn its
 * finished subagents start). People's commands carry no run and are never counted, so twenty
 * `/exec git status` typed over a day are twenty separate decisions, not a loop.
 *
 * Where Warden differs from OpenClaw: a call without an outcome — one the detector blocked, one
 * still in flight, one a policy, hook or person refused — continues the no-progress streak of its
 * identical calls (OpenClaw's batch admission counts blocked and same-batch calls so; its
 * single-call path does not), so a model that keeps calling after a block reaches the breaker and
 * parallel calls cannot outrun their own outcomes; and once the breaker fires, every later call of
 * that run is refused, whatever the tool.
 */

export const HISTORY_SIZE = 30;
export const WARNING_THRESHOLD = 10;
export const CRITICAL_THRESHOLD = 20;
export const GLOBAL_CIRCUIT_BREAKER_THRESHOLD = 30;
export const UNKNOWN_TOOL_THRESHOLD = 10;
/** argument_churn: each argument variant must have repeated this often to count as stable. */
export const MIN_STABLE_CALLS_PER_VARIANT = 3;

export type LoopDetectorKind =
  | 'generic_repeat'
  | 'unknown_tool_repeat'
  | 'known_poll_no_progress'
  | 'global_circuit_breaker'
  | 'ping_pong'
  | 'argument_churn';

export type LoopVerdict =
  | { kind: 'ok' }
  | { kind: 'warn' | 'block'; detector: LoopDetectorKind; count: number; message: string; pairedToolName?: string | undefined };

export interface CallRecord {
  toolName: string;
  argsHash: string;
  toolCallId?: string | undefined;
  resultHash?: string | undefined;
  /** The outcome is itself evidence of no progress (an error, a write that changed nothing). */
  noProgress?: boolean | undefined;
  /** The detector refused this call: no outcome, but it counts toward the streak it continued. */
  veto?: boolean | undefined;
  unknownToolName?: string | undefined;
}

/** The text appended to a result the detector warned about. */
export const loopWarningNote = (count: number): string =>
  `[System note: Tool-loop warning after ${count} repeated calls. Change your approach or stop if you are not making progress.]`;

/** What one call returned, for outcome hashing. */
export interface CallOutcome {
  toolName: string;
  params: unknown;
  toolCallId?: string | undefined;
  details?: unknown;
  text?: string | undefined;
  /** The call failed with this message (thrown, or an error result). */
  error?: string | undefined;
  /** The model asked for a tool that does not exist. */
  unknownToolName?: string | undefined;
  /** The result was the detector's own block: never counts as progress or as an outcome. */
  loopVeto?: boolean;
}

const digest = (value: unknown): string => createHash('sha256').update(stableJson(value)).digest('hex');

/**
 * Tools that wrap their own output as untrusted data (read, web_fetch, …) give every result a
 * fresh nonce; the same file read twice must still be the same outcome. Content cannot carry a
 * tag of that form (the wrapper defangs it), so only real wrapper tags are rewritten.
 */
const WRAPPER_NONCE = /(<\/?untrusted)-[0-9a-f]{32}\b/g;
const digestOutcome = (value: unknown): string => createHash('sha256').update(stableJson(value).replace(WRAPPER_NONCE, '$1')).digest('hex');

export const hashCall = (toolName: string, params: unknown): string => `${toolName}:${digest(params)}`;

function isKnownPoll(toolName: string, params: unknown): boolean {
  if (toolName === 'command_status') return true;
  return toolName === 'process' && isRecord(params) && (params.action === 'poll' || params.action === 'log');
}

/** What counts as "the same outcome" per tool; undefined = no evidence either way. */
export function hashOutcome(o: CallOutcome): string | undefined {
  return outcomeEvidence(o)?.resultHash;
}

function outcomeEvidence(o: CallOutcome): { resultHash: string; noProgress?: true } | undefined {
  if (o.loopVeto) return undefined;
  if (o.error !== undefined) return { resultHash: `error:${digestOutcome(o.error)}`, noProgress: true };
  const details = isRecord(o.details) ? o.details : {};
  const text = o.text ?? '';
  if (o.toolName === 'exec' && typeof details.status === 'string') {
    if (details.status === 'running') return { resultHash: digestOutcome({ status: 'running', tail: details.tail ?? '' }) };
    if (details.status === 'completed' || details.status === 'failed') {
      return { resultHash: digestOutcome({ status: details.status, exitCode: details.exitCode ?? null, timedOut: details.timedOut === true, output: details.aggregated ?? text }) };
    }
  }
  // A write that changed nothing is no progress, whatever it wrote (OpenClaw's write no-op rule).
  if (o.toolName === 'write' && details.changed === false) return { resultHash: digestOutcome({ status: 'unchanged' }), noProgress: true };
  if (o.toolName === 'process' && isRecord(o.params) && (o.params.action === 'poll' || o.params.action === 'log')) {
    return { resultHash: digestOutcome({ action: o.params.action, status: details.status, exitCode: details.exitCode ?? null, totalLines: details.totalLines ?? null, text }) };
  }
  return { resultHash: digestOutcome({ details, text }) };
}

/**
 * Identical calls in a row (others in between are skipped) whose outcomes were identical. A call
 * without an outcome continues the streak it interrupts: the detector's own vetoes, calls still
 * in flight (parallel calls of one round, a subagent's calls beside its parent's — OpenClaw's
 * batch admission counts those the same way), and calls a policy, hook or person refused, so
 * twenty identical calls all denied are a loop too.
 */
function noProgressStreak(history: readonly CallRecord[], toolName: string, argsHash: string): number {
  let streak = 0;
  let vetoes = 0;
  let latest: string | undefined;
  for (let i = history.length - 1; i >= 0; i--) {
    const r = history[i]!;
    if (r.toolName !== toolName || r.argsHash !== argsHash) continue;
    if (r.veto || !r.resultHash) {
      vetoes++;
      continue;
    }
    if (latest === undefined) {
      latest = r.resultHash;
      streak = vetoes + 1;
    } else if (r.resultHash === latest) streak += vetoes + 1;
    else break;
    vetoes = 0;
  }
  return latest === undefined ? vetoes : streak;
}

function unknownToolStreak(history: readonly CallRecord[], toolName: string): { count: number; name?: string } {
  let count = 0;
  let name: string | undefined;
  for (let i = history.length - 1; i >= 0; i--) {
    const r = history[i]!;
    if (r.toolName !== toolName || !r.unknownToolName) break;
    if (name === undefined) name = r.unknownToolName;
    else if (r.unknownToolName !== name) break;
    count++;
  }
  return { count, ...(name ? { name } : {}) };
}

function pingPong(history: readonly CallRecord[], current: string): { count: number; pairedToolName?: string; noProgress: boolean } {
  const last = history.at(-1);
  if (!last) return { count: 0, noProgress: false };
  let other: CallRecord | undefined;
  for (let i = history.length - 2; i >= 0; i--) {
    if (history[i]!.argsHash !== last.argsHash) {
      other = history[i];
      break;
    }
  }
  if (!other || current !== other.argsHash) return { count: 0, noProgress: false };
  let tail = 0;
  for (let i = history.length - 1; i >= 0; i--) {
    if (history[i]!.argsHash !== (tail % 2 === 0 ? last.argsHash : other.argsHash)) break;
    tail++;
  }
  if (tail < 2) return { count: 0, noProgress: false };
  // No-progress evidence: each side of the pair kept returning one identical outcome.
  const outcomes = new Map<string, string>();
  let noProgress = true;
  for (const r of history.slice(history.length - tail)) {
    if (!r.resultHash) {
      noProgress = false;
      break;
    }
    const seen = outcomes.get(r.argsHash);
    if (seen === undefined) outcomes.set(r.argsHash, r.resultHash);
    else if (seen !== r.resultHash) {
      noProgress = false;
      break;
    }
  }
  if (outcomes.size < 2) noProgress = false;
  return { count: tail + 1, pairedToolName: last.toolName, noProgress };
}

/**
 * OpenClaw's `argument_churn`: the latest calls are all to this tool, each with no-progress
 * evidence (an error, an unchanged write), cycling through two or more argument variants that
 * each repeated at least three times with one and the same outcome — and the call about to run
 * is one of those variants. Reworded arguments that keep failing the same way are a loop too.
 */
function argumentChurn(history: readonly CallRecord[], toolName: string, current: string): { count: number; variants: number } {
  const byArgs = new Map<string, { resultHash: string; count: number }>();
  for (let i = history.length - 1; i >= 0; i--) {
    const r = history[i]!;
    if (r.toolName !== toolName) break;
    if (!r.resultHash) continue;
    if (r.noProgress !== true) break;
    const seen = byArgs.get(r.argsHash);
    if (seen && seen.resultHash !== r.resultHash) break;
    byArgs.set(r.argsHash, { resultHash: r.resultHash, count: (seen?.count ?? 0) + 1 });
  }
  const all = [...byArgs.values()];
  const count = all.reduce((n, v) => n + v.count, 0);
  const stable = all.filter((v) => v.count >= MIN_STABLE_CALLS_PER_VARIANT);
  const onlyStable = stable.reduce((n, v) => n + v.count, 0) === count;
  const sharedOutcome = new Set(stable.map((v) => v.resultHash)).size === 1;
  const currentStable = (byArgs.get(current)?.count ?? 0) >= MIN_STABLE_CALLS_PER_VARIANT;
  return stable.length > 1 && onlyStable && sharedOutcome && currentStable ? { count, variants: stable.length } : { count: 0, variants: 0 };
}

/** Pure detection over a run's recent calls (oldest first), for a call about to run. */
export function detectLoop(history: readonly CallRecord[], toolName: string, params: unknown): LoopVerdict & { key?: string } {
  const current = hashCall(toolName, params);
  const unknown = unknownToolStreak(history, toolName);
  if (unknown.count >= UNKNOWN_TOOL_THRESHOLD) {
    const name = unknown.name ?? toolName;
    return { kind: 'block', detector: 'unknown_tool_repeat', count: unknown.count, message: `CRITICAL: attempted unavailable tool ${name} ${unknown.count} times. Stop retrying that missing tool and answer without it.`, key: `unknown:${name}` };
  }
  const streak = noProgressStreak(history, toolName, current);
  if (streak >= GLOBAL_CIRCUIT_BREAKER_THRESHOLD) {
    return { kind: 'block', detector: 'global_circuit_breaker', count: streak, message: `CRITICAL: ${toolName} repeated identical no-progress outcomes ${streak} times. Session execution blocked by global circuit breaker to prevent runaway loops.`, key: `global:${current}` };
  }
  const poll = isKnownPoll(toolName, params);
  if (poll && streak >= CRITICAL_THRESHOLD) {
    return { kind: 'block', detector: 'known_poll_no_progress', count: streak, message: `CRITICAL: Called ${toolName} with identical arguments and no progress ${streak} times. This appears to be a stuck polling loop. Session execution blocked to prevent resource waste.`, key: `poll:${current}` };
  }
  if (poll && streak >= WARNING_THRESHOLD) {
    return { kind: 'warn', detector: 'known_poll_no_progress', count: streak, message: `WARNING: You have called ${toolName} ${streak} times with identical arguments and no progress. Stop polling and either (1) increase wait time between checks, or (2) report the task as failed if the process is stuck.`, key: `poll:${current}` };
  }
  const pp = pingPong(history, current);
  const ppKey = `pingpong:${[current, history.at(-1)?.argsHash ?? ''].sort().join('|')}`;
  if (pp.count >= CRITICAL_THRESHOLD && pp.noProgress) {
    return { kind: 'block', detector: 'ping_pong', count: pp.count, pairedToolName: pp.pairedToolName, message: `CRITICAL: You are alternating between repeated tool-call patterns (${pp.count} consecutive calls) with no progress. This appears to be a stuck ping-pong loop. Session execution blocked to prevent resource waste.`, key: ppKey };
  }
  if (pp.count >= WARNING_THRESHOLD) {
    return { kind: 'warn', detector: 'ping_pong', count: pp.count, pairedToolName: pp.pairedToolName, message: `WARNING: You are alternating between repeated tool-call patterns (${pp.count} consecutive calls). This looks like a ping-pong loop; stop retrying and report the task as failed.`, key: ppKey };
  }
  if (!poll && streak >= CRITICAL_THRESHOLD) {
    return { kind: 'block', detector: 'generic_repeat', count: streak, message: `CRITICAL: Called ${toolName} with identical outcomes ${streak} times. Session execution blocked to prevent runaway loops.`, key: `generic:${current}` };
  }
  const churn = argumentChurn(history, toolName, current);
  if (churn.count >= WARNING_THRESHOLD) {
    return {
      kind: 'warn',
      detector: 'argument_churn',
      count: churn.count,
      message: `WARNING: ${toolName} has cycled through ${churn.variants} repeated argument patterns with the same stable outcome ${churn.count} times. Continued churn is treated as stalled run activity, but this tool call remains allowed.`,
      key: `argument-churn:${toolName}`,
    };
  }
  const recent = history.filter((r) => r.toolName === toolName && r.argsHash === current).length;
  if (!poll && recent >= WARNING_THRESHOLD) {
    return { kind: 'warn', detector: 'generic_repeat', count: recent, message: `WARNING: You have called ${toolName} ${recent} times with identical arguments. If this is not making progress, stop retrying and report the task as failed.`, key: `generic:${current}` };
  }
  return { kind: 'ok' };
}

const RUN_STOPPED = 'No further tool calls run in this run; answer without tools.';

/** What every later call of a run is told once the breaker fired in it. */
export const trippedMessage = (tool: string, count: number): string =>
  `CRITICAL: this run was stopped by the global circuit breaker after ${tool} repeated identical no-progress outcomes ${count} times. ${RUN_STOPPED}`;

const MAX_WARNING_KEYS = 256;
const MAX_RUNS = 1000;

interface RunState {
  history: CallRecord[];
  /** Warning keys and the last bucket (count / 10) they were shown at. */
  warned: Map<string, number>;
  /** Set once the global breaker fired in this run. */
  tripped?: { tool: string; count: number } | undefined;
}

/**
 * Call history per run (a sliding window of 30), the warning throttle (a warning repeats only
 * when its count reaches the next multiple of 10) and the breaker's state. Runs are identified
 * by the caller; the oldest are forgotten past 1,000.
 */
export class LoopDetector {
  private readonly runs = new Map<string, RunState>();

  check(run: string, toolName: string, params: unknown): LoopVerdict {
    const state = this.runs.get(run);
    if (state?.tripped) {
      const { tool, count } = state.tripped;
      return { kind: 'block', detector: 'global_circuit_breaker', count, message: trippedMessage(tool, count) };
    }
    const verdict = detectLoop(state?.history ?? [], toolName, params);
    if (verdict.kind === 'block' && verdict.detector === 'global_circuit_breaker') {
      this.state(run).tripped = { tool: toolName, count: verdict.count };
      return strip({ ...verdict, message: `${verdict.message} ${RUN_STOPPED}` });
    }
    if (verdict.kind !== 'warn') return verdict.kind === 'ok' ? verdict : strip(verdict);
    const warned = this.state(run).warned;
    const bucket = Math.floor(verdict.count / WARNING_THRESHOLD);
    if ((warned.get(verdict.key!) ?? 0) >= bucket) return { kind: 'ok' };
    warned.delete(verdict.key!);
    warned.set(verdict.key!, bucket);
    if (warned.size > MAX_WARNING_KEYS) warned.delete(warned.keys().next().value!);
    return strip(verdict);
  }

  recordCall(run: string, toolName: string, params: unknown, toolCallId?: string): void {
    this.push(run, { toolName, argsHash: hashCall(toolName, params), toolCallId });
  }

  /** A call the detector refused: evidence that the model kept going after the block. */
  recordVeto(run: string, toolName: string, params: unknown, toolCallId?: string, unknownToolName?: string): void {
    this.push(run, { toolName, argsHash: hashCall(toolName, params), toolCallId, veto: true, unknownToolName });
  }

  /** Attaches an outcome to its call record (or adds one when the call was never recorded). */
  recordOutcome(run: string, outcome: CallOutcome): void {
    const evidence = outcomeEvidence(outcome);
    if (!evidence) return;
    const argsHash = hashCall(outcome.toolName, outcome.params);
    const history = this.runs.get(run)?.history ?? [];
    for (let i = history.length - 1; i >= 0; i--) {
      const r = history[i]!;
      if (r.veto || r.toolName !== outcome.toolName || r.argsHash !== argsHash || r.resultHash !== undefined) continue;
      if (outcome.toolCallId !== undefined && r.toolCallId !== outcome.toolCallId) continue;
      r.resultHash = evidence.resultHash;
      r.noProgress = evidence.noProgress;
      r.unknownToolName = outcome.unknownToolName;
      return;
    }
    this.push(run, { toolName: outcome.toolName, argsHash, toolCallId: outcome.toolCallId, resultHash: evidence.resultHash, noProgress: evidence.noProgress, unknownToolName: outcome.unknownToolName });
  }

  private state(run: string): RunState {
    let state = this.runs.get(run);
    if (!state) {
      this.runs.set(run, (state = { history: [], warned: new Map() }));
      if (this.runs.size > MAX_RUNS) this.runs.delete(this.runs.keys().next().value!);
    }
    return state;
  }

  private push(run: string, record: CallRecord): void {
    const history = this.state(run).history;
    history.push(record);
    if (history.length > HISTORY_SIZE) history.splice(0, history.length - HISTORY_SIZE);
  }
}

function strip(v: LoopVerdict & { key?: string }): LoopVerdict {
  const { key: _key, ...rest } = v;
  return rest;
}
