import { createHash } from 'node:crypto';
import { stableJson } from '../../util/stable-json.js';
import { isRecord } from '../../util/guards.js';

/**
 * Tool-call loop detection (reference §5.2), on by default in Warden. Detectors and thresholds
 * are OpenClaw's and not configurable: identical call repeated (warn 10, block after 20
 * identical outcomes), ping-pong between two calls (10 / 20), polling without progress
 * (10 / 20), a global no-progress breaker (30), and an unknown tool retried (10).
 */

export const HISTORY_SIZE = 30;
export const WARNING_THRESHOLD = 10;
export const CRITICAL_THRESHOLD = 20;
export const GLOBAL_CIRCUIT_BREAKER_THRESHOLD = 30;
export const UNKNOWN_TOOL_THRESHOLD = 10;

export type LoopDetectorKind = 'generic_repeat' | 'unknown_tool_repeat' | 'known_poll_no_progress' | 'global_circuit_breaker' | 'ping_pong';

export type LoopVerdict =
  | { kind: 'ok' }
  | { kind: 'warn' | 'block'; detector: LoopDetectorKind; count: number; message: string; pairedToolName?: string | undefined };

interface CallRecord {
  toolName: string;
  argsHash: string;
  toolCallId?: string | undefined;
  runId?: string | undefined;
  resultHash?: string | undefined;
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

export const hashCall = (toolName: string, params: unknown): string => `${toolName}:${digest(params)}`;


function isKnownPoll(toolName: string, params: unknown): boolean {
  if (toolName === 'command_status') return true;
  return toolName === 'process' && isRecord(params) && (params.action === 'poll' || params.action === 'log');
}

/** What counts as "the same outcome" per tool; undefined = no evidence either way. */
export function hashOutcome(o: CallOutcome): string | undefined {
  if (o.loopVeto) return undefined;
  if (o.error !== undefined) return `error:${digest(o.error)}`;
  const details = isRecord(o.details) ? o.details : {};
  const text = o.text ?? '';
  if (o.toolName === 'exec' && typeof details.status === 'string') {
    if (details.status === 'running') return digest({ status: 'running', tail: details.tail ?? '' });
    if (details.status === 'completed' || details.status === 'failed') {
      return digest({ status: details.status, exitCode: details.exitCode ?? null, timedOut: details.timedOut === true, output: details.aggregated ?? text });
    }
  }
  if (o.toolName === 'process' && isRecord(o.params) && (o.params.action === 'poll' || o.params.action === 'log')) {
    return digest({ action: o.params.action, status: details.status, exitCode: details.exitCode ?? null, totalLines: details.totalLines ?? null, text });
  }
  return digest({ details, text });
}

function noProgressStreak(history: CallRecord[], toolName: string, argsHash: string): number {
  let streak = 0;
  let latest: string | undefined;
  for (let i = history.length - 1; i >= 0; i--) {
    const r = history[i]!;
    if (r.toolName !== toolName || r.argsHash !== argsHash || !r.resultHash) continue;
    if (latest === undefined) {
      latest = r.resultHash;
      streak = 1;
    } else if (r.resultHash === latest) streak++;
    else break;
  }
  return streak;
}

function unknownToolStreak(history: CallRecord[], toolName: string): { count: number; name?: string } {
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

function pingPong(history: CallRecord[], current: string): { count: number; pairedToolName?: string; noProgress: boolean } {
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

/** Pure detection over a session's recent calls (oldest first), for a call about to run. */
export function detectLoop(history: CallRecord[], toolName: string, params: unknown): LoopVerdict & { key?: string } {
  const current = hashCall(toolName, params);
  const unknown = unknownToolStreak(history, toolName);
  if (unknown.count >= UNKNOWN_TOOL_THRESHOLD) {
    const name = unknown.name ?? toolName;
    return { kind: 'block', detector: 'unknown_tool_repeat', count: unknown.count, message: `CRITICAL: attempted unavailable tool ${name} ${unknown.count} times. Stop retrying that missing tool and answer without it.`, key: `unknown:${name}` };
  }
  const streak = noProgressStreak(history, toolName, current);
  if (streak >= GLOBAL_CIRCUIT_BREAKER_THRESHOLD) {
    return { kind: 'block', detector: 'global_circuit_breaker', count: streak, message: `CRITICAL: ${toolName} has repeated identical no-progress outcomes ${streak} times. Session execution blocked by global circuit breaker to prevent runaway loops.`, key: `global:${current}` };
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
    return { kind: 'block', detector: 'generic_repeat', count: streak, message: `CRITICAL: Called ${toolName} with identical arguments and identical outcomes ${streak} times. Session execution blocked to prevent runaway loops.`, key: `generic:${current}` };
  }
  const recent = history.filter((r) => r.toolName === toolName && r.argsHash === current).length;
  if (!poll && recent >= WARNING_THRESHOLD) {
    return { kind: 'warn', detector: 'generic_repeat', count: recent, message: `WARNING: You have called ${toolName} ${recent} times with identical arguments. If this is not making progress, stop retrying and report the task as failed.`, key: `generic:${current}` };
  }
  return { kind: 'ok' };
}

const MAX_WARNING_KEYS = 256;
const MAX_SESSIONS = 1000;

/**
 * Per-session call history (sliding window of 30, filtered to the current run) and the
 * warning throttle: a warning repeats only when its count reaches the next multiple of 10.
 */
export class LoopDetector {
  private readonly sessions = new Map<string, CallRecord[]>();
  private readonly warned = new Map<string, number>();

  check(sessionKey: string, runId: string | undefined, toolName: string, params: unknown): LoopVerdict {
    const history = (this.sessions.get(sessionKey) ?? []).filter((r) => r.runId === runId);
    const verdict = detectLoop(history, toolName, params);
    if (verdict.kind !== 'warn') return verdict.kind === 'ok' ? verdict : strip(verdict);
    const key = `${sessionKey}|${verdict.key}`;
    const bucket = Math.floor(verdict.count / WARNING_THRESHOLD);
    if ((this.warned.get(key) ?? 0) >= bucket) return { kind: 'ok' };
    this.warned.delete(key);
    this.warned.set(key, bucket);
    if (this.warned.size > MAX_WARNING_KEYS) this.warned.delete(this.warned.keys().next().value!);
    return strip(verdict);
  }

  recordCall(sessionKey: string, runId: string | undefined, toolName: string, params: unknown, toolCallId?: string): void {
    this.push(sessionKey, { toolName, argsHash: hashCall(toolName, params), toolCallId, runId });
  }

  /** Attaches an outcome to its call record (or adds one when the call was never recorded). */
  recordOutcome(sessionKey: string, runId: string | undefined, outcome: CallOutcome): void {
    const resultHash = hashOutcome(outcome);
    if (!resultHash) return;
    const argsHash = hashCall(outcome.toolName, outcome.params);
    const history = this.sessions.get(sessionKey) ?? [];
    for (let i = history.length - 1; i >= 0; i--) {
      const r = history[i]!;
      if (r.runId !== runId || r.toolName !== outcome.toolName || r.argsHash !== argsHash || r.resultHash !== undefined) continue;
      if (outcome.toolCallId !== undefined && r.toolCallId !== outcome.toolCallId) continue;
      r.resultHash = resultHash;
      r.unknownToolName = outcome.unknownToolName;
      return;
    }
    this.push(sessionKey, { toolName: outcome.toolName, argsHash, toolCallId: outcome.toolCallId, runId, resultHash, unknownToolName: outcome.unknownToolName });
  }

  private push(sessionKey: string, record: CallRecord): void {
    let history = this.sessions.get(sessionKey);
    if (!history) {
      this.sessions.set(sessionKey, (history = []));
      if (this.sessions.size > MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value!);
    }
    history.push(record);
    if (history.length > HISTORY_SIZE) history.splice(0, history.length - HISTORY_SIZE);
  }
}

function strip(v: LoopVerdict & { key?: string }): LoopVerdict {
  const { key: _key, ...rest } = v;
  return rest;
}
