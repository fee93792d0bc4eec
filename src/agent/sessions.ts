import { randomUUID } from 'node:crypto';
import type { WardenConfig } from '../config/index.js';
import { log } from '../log.js';
import type { InheritedPolicy, TurnContext } from '../policy/context.js';
import { wrapUntrusted } from '../tools/untrusted.js';
import type { AgentRuntime, TranscriptEntry, TranscriptStore, TurnOutcome } from './types.js';

export type SubagentStatus = 'running' | 'completed' | 'failed' | 'killed';

/** What the parent (and `subagents list`) sees of one spawned run. */
export interface SubagentRunView {
  runId: string;
  childKey: string;
  parentKey: string;
  agentId: string;
  label: string;
  task: string;
  depth: number;
  status: SubagentStatus;
  startedAt: number;
  endedAt?: number | undefined;
  /** The child's final reply (or error text) once it ended. */
  result?: string | undefined;
}

interface SubagentRun extends SubagentRunView {
  controller: AbortController;
  steers: string[];
  turn: TurnContext;
}

export interface SpawnRequest {
  parentKey: string;
  parentTurn: TurnContext;
  /** The parent's final surface and removals: the child's ceiling. */
  inherited: InheritedPolicy;
  task: string;
  label?: string | undefined;
  agentId?: string | undefined;
}

export interface SendRequest {
  fromKey: string;
  toKey: string;
  text: string;
  timeoutMs: number;
  signal: AbortSignal;
}

export type Result<T> = { ok: true; value: T } | { ok: false; message: string };

/**
 * Sessions as the session tools see them: list and read transcripts, message another
 * session, and spawn, steer and stop subagents whose results come back to their parent.
 */
export interface AgentSessionsApi {
  list(options: { agentId?: string | undefined; limit: number }): Array<{ sessionKey: string; entries: number; updatedAt: number; kind: string }>;
  history(sessionKey: string, options: { limit: number; beforeSeq?: number | undefined }): TranscriptEntry[];
  send(request: SendRequest): Promise<Result<TurnOutcome>>;
  spawn(request: SpawnRequest): Result<SubagentRunView>;
  runs(parentKey: string): SubagentRunView[];
  /** The session that spawned a subagent session, if this process knows it. */
  parentOf(childKey: string): string | undefined;
  steer(parentKey: string, runId: string, text: string): Result<SubagentRunView>;
  kill(parentKey: string, runId: string): Result<SubagentRunView>;
  /** Ends the caller's turn after the current tool round. */
  requestYield(sessionKey: string): void;
  agents(): Array<{ id: string; name?: string | undefined; default: boolean; model?: string | undefined }>;
}

/** How a finished subagent's result reaches its parent when the router wires it (a new parent turn). */
export type AnnounceResult = (parentKey: string, run: SubagentRunView) => void;

export interface AgentSessionsDeps {
  config: WardenConfig;
  transcripts: TranscriptStore;
  announce?: AnnounceResult | undefined;
}

const SUBAGENT_KEY = /^agent:([^:]+):subagent:/;

export class AgentSessions implements AgentSessionsApi {
  private runtime: AgentRuntime | undefined;
  private readonly byId = new Map<string, SubagentRun>();
  private readonly pending = new Map<string, SubagentRunView[]>();
  private readonly yields = new Set<string>();

  constructor(private readonly deps: AgentSessionsDeps) {}

  /** Set once the runtime exists (the runtime also owns this object). */
  attach(runtime: AgentRuntime): void {
    this.runtime = runtime;
  }

  list(options: { agentId?: string | undefined; limit: number }) {
    return this.deps.transcripts
      .sessions()
      .filter((s) => options.agentId === undefined || s.sessionKey.startsWith(`agent:${options.agentId}:`))
      .slice(0, options.limit)
      .map((s) => ({ ...s, kind: SUBAGENT_KEY.test(s.sessionKey) ? 'subagent' : (s.sessionKey.split(':')[3] ?? 'unknown') }));
  }

  history(sessionKey: string, options: { limit: number; beforeSeq?: number | undefined }): TranscriptEntry[] {
    return this.deps.transcripts.history(sessionKey, options);
  }

  async send(request: SendRequest): Promise<Result<TurnOutcome>> {
    if (request.toKey === request.fromKey) return { ok: false, message: 'a session cannot send a message to itself' };
    const target = turnForSessionKey(request.toKey);
    if (!target) return { ok: false, message: `unknown session key "${request.toKey}" (use sessions_list)` };
    const runtime = this.requireRuntime();
    const controller = new AbortController();
    const onAbort = () => controller.abort();
    request.signal.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => controller.abort(), request.timeoutMs);
    try {
      const outcome = await runtime.runTurn({
        sessionKey: request.toKey,
        turn: target,
        input: { text: request.text, origin: 'session', senderName: request.fromKey },
        signal: controller.signal,
      });
      return { ok: true, value: outcome };
    } finally {
      clearTimeout(timer);
      request.signal.removeEventListener('abort', onAbort);
    }
  }

  spawn(request: SpawnRequest): Result<SubagentRunView> {
    const max = this.deps.config.agents.defaults.subagents.maxSpawnDepth;
    const depth = request.parentTurn.spawnDepth;
    if (depth >= max) {
      return { ok: false, message: `sessions_spawn is not allowed at this depth (current depth: ${depth}, max: ${max}; agents.defaults.subagents.maxSpawnDepth).` };
    }
    const agentId = request.agentId ?? request.parentTurn.agentId;
    if (agentId !== request.parentTurn.agentId && !this.deps.config.agents.list.some((a) => a.id === agentId)) {
      return { ok: false, message: `unknown agent "${agentId}" (use agents_list)` };
    }
    const runtime = this.requireRuntime();
    const runId = randomUUID().slice(0, 8);
    const childKey = `agent:${agentId}:subagent:${runId}`;
    const turn: TurnContext = {
      ...request.parentTurn,
      agentId,
      // Another agent answers with its own model; the same agent keeps the parent's.
      model: agentId === request.parentTurn.agentId ? request.parentTurn.model : undefined,
      spawnDepth: depth + 1,
      inherited: request.inherited,
    };
    const run: SubagentRun = {
      runId,
      childKey,
      parentKey: request.parentKey,
      agentId,
      label: request.label?.trim() || request.task.slice(0, 40),
      task: request.task,
      depth: depth + 1,
      status: 'running',
      startedAt: Date.now(),
      controller: new AbortController(),
      steers: [],
      turn,
    };
    this.byId.set(runId, run);
    void this.drive(run, runtime);
    return { ok: true, value: view(run) };
  }

  runs(parentKey: string): SubagentRunView[] {
    return [...this.byId.values()].filter((r) => r.parentKey === parentKey).map(view);
  }

  parentOf(childKey: string): string | undefined {
    for (const run of this.byId.values()) if (run.childKey === childKey) return run.parentKey;
    return undefined;
  }

  steer(parentKey: string, runId: string, text: string): Result<SubagentRunView> {
    const run = this.owned(parentKey, runId);
    if (!run.ok) return run;
    if (run.value.status !== 'running') return { ok: false, message: `subagent ${runId} already ${run.value.status}` };
    run.value.steers.push(text);
    return { ok: true, value: view(run.value) };
  }

  kill(parentKey: string, runId: string): Result<SubagentRunView> {
    const run = this.owned(parentKey, runId);
    if (!run.ok) return run;
    if (run.value.status === 'running') {
      run.value.status = 'killed';
      run.value.controller.abort();
    }
    return { ok: true, value: view(run.value) };
  }

  requestYield(sessionKey: string): void {
    this.yields.add(sessionKey);
  }

  /** True once per sessions_yield: the loop ends the turn after the current tool round. */
  consumeYield(sessionKey: string): boolean {
    return this.yields.delete(sessionKey);
  }

  /**
   * Results of subagents that ended since the parent's last turn, as a message for its next
   * turn. The child's words are data to the parent: they are wrapped as untrusted.
   */
  drainResults(parentKey: string): string | undefined {
    const done = this.pending.get(parentKey);
    if (!done || done.length === 0) return undefined;
    this.pending.delete(parentKey);
    return done
      .map((r) => wrapUntrusted(`subagent:${r.runId}`, `Subagent "${r.label}" (${r.runId}) ${r.status}:\n${r.result ?? ''}`))
      .join('\n');
  }

  agents() {
    const list = this.deps.config.agents.list;
    if (list.length === 0) return [{ id: 'main', default: true, model: this.deps.config.models.default }];
    return list.map((a) => ({ id: a.id, name: a.name, default: a.default === true, model: a.model ?? this.deps.config.models.default }));
  }

  /** Runs the child's turns: the task, then every steer message, until none is left or it is killed. */
  private async drive(run: SubagentRun, runtime: AgentRuntime): Promise<void> {
    let input = run.task;
    let outcome: TurnOutcome | undefined;
    try {
      for (;;) {
        outcome = await runtime.runTurn({ sessionKey: run.childKey, turn: run.turn, input: { text: input }, signal: run.controller.signal });
        const next = run.steers.shift();
        if (next === undefined || run.controller.signal.aborted) break;
        input = next;
      }
    } catch (err) {
      log.error({ err, runId: run.runId }, 'subagent run failed');
      outcome = { status: 'failed', reply: `subagent crashed: ${(err as Error).message}`, rounds: 0, usage: { inputTokens: 0, outputTokens: 0 }, error: { kind: 'model', message: (err as Error).message } };
    }
    if (run.status === 'running') run.status = outcome?.status === 'completed' ? 'completed' : 'failed';
    run.result = outcome?.reply ?? '';
    run.endedAt = Date.now();
    const done = view(run);
    const list = this.pending.get(run.parentKey) ?? [];
    list.push(done);
    this.pending.set(run.parentKey, list);
    this.deps.announce?.(run.parentKey, done);
  }

  private owned(parentKey: string, runId: string): Result<SubagentRun> {
    const run = this.byId.get(runId);
    if (!run || run.parentKey !== parentKey) return { ok: false, message: `no subagent ${runId} spawned by this session (use subagents with action "list")` };
    return { ok: true, value: run };
  }

  private requireRuntime(): AgentRuntime {
    if (!this.runtime) throw new Error('AgentSessions used before attach(runtime)');
    return this.runtime;
  }
}

const view = (run: SubagentRun): SubagentRunView => {
  const { controller: _c, steers: _s, turn: _t, ...rest } = run;
  return { ...rest };
};

/**
 * The policy context for a message another session sends into `key`. Nobody in that
 * conversation wrote it, so the sender is never an owner (fail closed).
 */
export function turnForSessionKey(key: string): TurnContext | undefined {
  const m = /^agent:([^:]+):([^:]+):(direct|channel):([^:]+)(?::thread:([^:]+))?$/.exec(key);
  if (!m) return undefined;
  const [, agentId, provider, kind, peerId, threadId] = m;
  return {
    agentId: agentId!,
    provider: provider!,
    chat: kind === 'direct' ? 'dm' : threadId ? 'thread' : 'channel',
    channelId: kind === 'channel' ? peerId : undefined,
    threadId,
    senderIsOwner: false,
    spawnDepth: 0,
  };
}
