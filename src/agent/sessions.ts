import type { HookBus } from '../hooks/bus.js';
import { parseModelRef } from '../models/settings.js';
import { randomUUID } from 'node:crypto';
import type { WardenConfig } from '../config/index.js';
import { log } from '../log/log.js';
import { contextForSessionMessage, contextForSubagent } from '../turn/turn-context.js';
import type { InheritedPolicy, TurnContext } from '../policy/context.js';
import { subagentRole } from '../policy/subagent.js';
import { wrapUntrusted } from '../tools/untrusted.js';
import { processAlive } from '../util/process-alive.js';
import type { SessionContextStore } from '../turn/session-contexts.js';
import { childTurnFrom, INHERITED_POLICY_VERSION, type SubagentRunRecord, type SubagentRunStore, type SubagentStatus } from './subagent-runs.js';
import type { AgentRuntime, TranscriptEntry, TranscriptSearchHit, TranscriptStore, TurnOutcome } from './types.js';
import { background } from '../util/background.js';

export type { SubagentStatus } from './subagent-runs.js';

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
  /** Who the spawning turn acted for: the parent turn that reads the result acts for them too. */
  requestedBy: { id?: string | undefined; name?: string | undefined; owner: boolean };
  /**
   * The loop-detection run of the spawning turn, when this process drove the child: the parent
   * turn the result starts continues it. Not stored; after a restart that turn starts a new run.
   */
  spawnedInRun?: string | undefined;
}

/** What only the process driving a run holds: how to stop it and the steers it has not read yet. */
interface LiveRun {
  controller: AbortController;
  steers: string[];
  /** The spawning turn's loop-detection run: the child's calls count toward it. */
  runId?: string | undefined;
}

export interface SpawnRequest {
  parentKey: string;
  parentTurn: TurnContext;
  /** The parent's final surface and removals: the child's ceiling. */
  inherited: InheritedPolicy;
  task: string;
  label?: string | undefined;
  agentId?: string | undefined;
  /** The spawning turn's loop-detection run; the child's turns continue it. */
  runId?: string | undefined;
}

export interface SendRequest {
  fromKey: string;
  /** The sending turn: the receiving turn acts for its sender, never for more. */
  fromTurn: TurnContext;
  /** The sending turn's final surface and removals: the receiving turn's ceiling. */
  ceiling: InheritedPolicy;
  toKey: string;
  text: string;
  timeoutMs: number;
  signal: AbortSignal;
  /** The sending turn's loop-detection run; the receiving turn continues it. */
  runId?: string | undefined;
}

export type Result<T> = { ok: true; value: T } | { ok: false; message: string };

/**
 * Sessions as the session tools see them: list and read transcripts, message another
 * session, and spawn, steer and stop subagents whose results come back to their parent.
 */
export interface AgentSessionsApi {
  list(options: { agentId?: string | undefined; limit: number }): Promise<Array<{ sessionKey: string; entries: number; updatedAt: number; kind: string }>>;
  history(sessionKey: string, options: { limit: number; beforeSeq?: number | undefined }): Promise<TranscriptEntry[]>;
  /** Full-text search among `sessionKeys` (already judged visible); an error when the store has no index. */
  search(options: { sessionKeys: readonly string[]; terms: readonly string[]; limit: number; offset: number }): Promise<Result<TranscriptSearchHit[]>>;
  send(request: SendRequest): Promise<Result<TurnOutcome>>;
  spawn(request: SpawnRequest): Promise<Result<SubagentRunView>>;
  runs(parentKey: string): Promise<SubagentRunView[]>;
  /** The session that spawned a subagent session, if the store knows it. */
  parentOf(childKey: string): Promise<string | undefined>;
  steer(parentKey: string, runId: string, text: string): Promise<Result<SubagentRunView>>;
  kill(parentKey: string, runId: string): Promise<Result<SubagentRunView>>;
  /** Ends the caller's turn after the current tool round. */
  requestYield(sessionKey: string): void;
  agents(): Array<{ id: string; name?: string | undefined; default: boolean; model?: string | undefined }>;
}

/** How a finished subagent's result reaches its parent when the router wires it (a new parent turn). */
export type AnnounceResult = (parentKey: string, run: SubagentRunView) => void;

export interface AgentSessionsDeps {
  config: WardenConfig;
  transcripts: TranscriptStore;
  /** Where runs, their envelopes and undelivered results are kept across restarts. */
  runs: SubagentRunStore;
  /** The conversation each session was created by; a session without one cannot be messaged. */
  contexts: Pick<SessionContextStore, 'get'>;
  announce?: AnnounceResult | undefined;
  /** Whether the process that drove a run still exists; replaced in tests. */
  isProcessAlive?: ((pid: number) => boolean) | undefined;
  /**
   * Whether a run's owner is gone, when the store is shared by instances on other machines (a
   * pid names a process only on its own host): their liveness as the instance registry sees it.
   */
  isOwnerGone?: ((owner: SubagentRunRecord['owner']) => boolean) | undefined;
  /** The id runs are recorded under: the instance's on a shared store, else one of this runtime's own. */
  instanceId?: string | undefined;
  /** subagent_spawned / subagent_ended observers. */
  hooks?: HookBus | undefined;
}

/** What a parent is told about a child that was running when Warden stopped. */
export const interruptedResult = (run: Pick<SubagentRunRecord, 'childKey'>): string =>
  `The subagent was interrupted: Warden restarted before it finished, so it did not complete its task. ` +
  `What it did so far is in its session ${run.childKey} (sessions_history); spawn a new subagent to finish the task.`;

const SUBAGENT_KEY = /^agent:([^:]+):subagent:/;

/** How many sessions_send hops one chain of turns may take (A → B → C → D). */
export const MAX_SEND_HOPS = 3;

export class AgentSessions implements AgentSessionsApi {
  private runtime: AgentRuntime | undefined;
  /** The runs this instance drives; the store has every run, including those of earlier processes. */
  private readonly live = new Map<string, LiveRun>();
  private readonly yields = new Set<string>();
  /**
   * The sessions_send chain that led to each session's running turn, per run (`runId` and key):
   * the sessions waiting on it, oldest first. A send into one of them would wait on itself.
   */
  private readonly sendChains = new Map<string, { chain: string[]; turns: number }>();
  /** Tells this runtime's runs apart from those of an earlier one (a pid can be reused). */
  readonly instanceId: string;
  private stopped = false;

  constructor(private deps: AgentSessionsDeps) {
    this.instanceId = deps.instanceId ?? randomUUID();
  }

  /** A config reload: spawns and sends from now on are judged under `config`. */
  setConfig(config: WardenConfig): void {
    this.deps = { ...this.deps, config };
  }

  /** Set once the runtime exists (the runtime also owns this object). */
  attach(runtime: AgentRuntime): void {
    this.runtime = runtime;
  }

  async list(options: { agentId?: string | undefined; limit: number }) {
    return (await this.deps.transcripts.sessions())
      .filter((s) => options.agentId === undefined || s.sessionKey.startsWith(`agent:${options.agentId}:`))
      .slice(0, options.limit)
      .map((s) => ({ ...s, kind: SUBAGENT_KEY.test(s.sessionKey) ? 'subagent' : (s.sessionKey.split(':')[3] ?? 'unknown') }));
  }

  history(sessionKey: string, options: { limit: number; beforeSeq?: number | undefined }): Promise<TranscriptEntry[]> {
    return this.deps.transcripts.history(sessionKey, options);
  }

  async search(options: { sessionKeys: readonly string[]; terms: readonly string[]; limit: number; offset: number }): Promise<Result<TranscriptSearchHit[]>> {
    const store = this.deps.transcripts;
    if (!store.search) return { ok: false, message: 'this transcript store has no search index' };
    return { ok: true, value: await store.search(options) };
  }

  async send(request: SendRequest): Promise<Result<TurnOutcome>> {
    if (request.toKey === request.fromKey) return { ok: false, message: 'a session cannot send a message to itself' };
    // The receiving turn continues the sender's run, so a chain of sends can be followed through it.
    const runId = request.runId ?? randomUUID();
    const chain = this.sendChains.get(`${runId}\0${request.fromKey}`)?.chain ?? [request.fromKey];
    if (chain.includes(request.toKey)) {
      return { ok: false, message: `session ${request.toKey} is waiting for this message chain (${[...chain, request.toKey].join(' → ')}): a message back into it would wait on itself. Put what it needs in your reply instead.` };
    }
    if (chain.length > MAX_SEND_HOPS) {
      return { ok: false, message: `sessions_send hop limit reached (${MAX_SEND_HOPS} hops: ${chain.join(' → ')}): answer with what you have instead of messaging further sessions.` };
    }
    const resolved = await this.turnFor(request.toKey, request.fromTurn, request.ceiling);
    if (!resolved.ok) return resolved;
    const target = resolved.value;
    const runtime = this.requireRuntime();
    const chainKey = `${runId}\0${request.toKey}`;
    const held = this.sendChains.get(chainKey);
    this.sendChains.set(chainKey, { chain: [...chain, request.toKey], turns: (held?.turns ?? 0) + 1 });
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
        runId,
        // A conversation's session: an undecided approval must not hold it (a subagent's waits inline).
        deferApprovals: target.spawnDepth === 0,
      });
      return { ok: true, value: outcome };
    } finally {
      clearTimeout(timer);
      request.signal.removeEventListener('abort', onAbort);
      const entry = this.sendChains.get(chainKey);
      if (entry && --entry.turns <= 0) this.sendChains.delete(chainKey);
    }
  }

  async spawn(request: SpawnRequest): Promise<Result<SubagentRunView>> {
    const max = this.deps.config.agents.defaults.subagents.maxSpawnDepth;
    const depth = request.parentTurn.spawnDepth;
    if (depth >= max) {
      return { ok: false, message: `sessions_spawn is not allowed at this depth (current depth: ${depth}, max: ${max}; agents.defaults.subagents.maxSpawnDepth).` };
    }
    const agentId = request.agentId ?? request.parentTurn.agentId;
    if (agentId !== request.parentTurn.agentId && !this.deps.config.agents.list.some((a) => a.id === agentId)) {
      return { ok: false, message: `unknown agent "${agentId}" (use agents_list)` };
    }
    if (this.stopped) return { ok: false, message: 'Warden is shutting down; no new subagents start' };
    const runtime = this.requireRuntime();
    const runId = randomUUID().slice(0, 8);
    const childKey = `agent:${agentId}:subagent:${runId}`;
    const turn = contextForSubagent(this.deps.config, request.parentTurn, { agentId, inherited: request.inherited });
    const { inherited: _envelope, ...turnWithoutEnvelope } = turn;
    const record: SubagentRunRecord = {
      runId,
      childKey,
      parentKey: request.parentKey,
      agentId,
      label: request.label?.trim() || request.task.slice(0, 40),
      task: request.task,
      depth: depth + 1,
      role: subagentRole(depth + 1, max) === 'leaf' ? 'leaf' : 'orchestrator',
      inherited: turn.inherited ?? request.inherited,
      policyVersion: INHERITED_POLICY_VERSION,
      turn: turnWithoutEnvelope,
      status: 'running',
      owner: { pid: process.pid, instance: this.instanceId },
      startedAt: Date.now(),
    };
    // Stored before the first turn: a restart from here on finds the run and tells the parent.
    await this.deps.runs.insert(record);
    const live: LiveRun = { controller: new AbortController(), steers: [], runId: request.runId };
    this.live.set(runId, live);
    background(this.drive(record, turn, live, runtime), 'subagent run failed', { level: 'error', fields: { runId } });
    if (this.deps.hooks?.has('subagent_spawned')) {
      const ref = turn.model ? parseModelRef(turn.model) : undefined;
      this.deps.hooks.fire(
        'subagent_spawned',
        { childSessionKey: childKey, agentId, label: record.label, mode: 'run', threadRequested: false, runId, ...(turn.model ? { resolvedModel: turn.model } : {}), ...(ref ? { resolvedProvider: ref.provider } : {}) },
        { runId, childSessionKey: childKey, requesterSessionKey: request.parentKey },
      );
    }
    return { ok: true, value: view(record) };
  }

  async runs(parentKey: string): Promise<SubagentRunView[]> {
    return (await this.deps.runs.ofParent(parentKey)).map(view);
  }

  async parentOf(childKey: string): Promise<string | undefined> {
    return (await this.deps.runs.byChildKey(childKey))?.parentKey;
  }

  /**
   * The policy context for a message `from` sends into `key`, or why it is refused. A
   * conversation's session runs under the context stored when its conversation created it (a key
   * no conversation created is refused); a subagent's under its stored envelope. Either way the
   * turn acts for the sending turn's sender, never as more of an owner than they are, and under
   * `ceiling`, the sending turn's surface.
   */
  async turnFor(key: string, from: TurnContext, ceiling: InheritedPolicy): Promise<Result<TurnContext>> {
    // sessions_send is denied to every subagent; a call that still gets here is refused too.
    if (from.spawnDepth > 0) return { ok: false, message: 'a subagent cannot message other sessions' };
    if (!key.toLowerCase().startsWith(`agent:${from.agentId.toLowerCase()}:`)) return { ok: false, message: `session "${key}" belongs to another agent` };
    if (SUBAGENT_KEY.test(key)) {
      const run = await this.deps.runs.byChildKey(key);
      if (!run) return { ok: false, message: `unknown subagent session "${key}" (use subagents with action "list")` };
      const checked = childTurnFrom(this.deps.config, run, { sender: { id: from.senderId, name: from.senderName, username: from.senderUsername }, ceiling });
      if (!checked.ok) return { ok: false, message: `subagent session "${key}" cannot run a turn: ${checked.reason}` };
      return { ok: true, value: checked.turn };
    }
    const stored = await this.deps.contexts.get(key);
    if (!stored || stored.agentId !== from.agentId) {
      return { ok: false, message: `unknown session "${key}": no conversation has started it (use sessions_list for the sessions that exist)` };
    }
    return { ok: true, value: contextForSessionMessage(this.deps.config, stored, from, ceiling) };
  }

  /**
   * Marks runs whose process is gone (Warden stopped or crashed while they ran) as
   * interrupted and announces them, so their parents learn what became of them. Runs of this
   * instance and of other live processes are left alone. Call once at start.
   */
  async recover(now = Date.now()): Promise<SubagentRunView[]> {
    const alive = this.deps.isProcessAlive ?? processAlive;
    // One runtime per process: an earlier instance under this same pid is an in-process restart.
    const local = (owner: SubagentRunRecord['owner']) => owner.pid === process.pid || !alive(owner.pid);
    const gone = this.deps.isOwnerGone ?? local;
    const orphaned = (owner: SubagentRunRecord['owner']) => owner.instance !== this.instanceId && gone(owner);
    const interrupted = (await this.deps.runs.interruptOrphans(orphaned, interruptedResult, now)).map(view);
    if (interrupted.length > 0) log.warn({ runs: interrupted.map((r) => r.runId) }, 'subagent runs interrupted by a restart; their parents are told');
    for (const run of interrupted) this.deps.announce?.(run.parentKey, run);
    return interrupted;
  }

  async steer(parentKey: string, runId: string, text: string): Promise<Result<SubagentRunView>> {
    const run = await this.owned(parentKey, runId);
    if (!run.ok) return run;
    const live = this.live.get(runId);
    if (run.value.status !== 'running' || !live) return { ok: false, message: `subagent ${runId} already ${run.value.status === 'running' ? 'stopped' : run.value.status}` };
    live.steers.push(text);
    return { ok: true, value: view(run.value) };
  }

  async kill(parentKey: string, runId: string): Promise<Result<SubagentRunView>> {
    const run = await this.owned(parentKey, runId);
    if (!run.ok) return run;
    if (run.value.status === 'running' && (await this.deps.runs.kill(runId))) this.live.get(runId)?.controller.abort();
    return { ok: true, value: view((await this.deps.runs.get(runId))!) };
  }

  /**
   * Warden is stopping: the children's turns are aborted and their runs stay `running` in the
   * store, so the next start reports them interrupted (a stopped child did not finish).
   */
  stop(): void {
    this.stopped = true;
    for (const live of this.live.values()) live.controller.abort();
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
  /** Whether `drainResults` would find something: asked with the turn's transcript read (one round trip). */
  resultsWaiting(parentKey: string): Promise<boolean> {
    return this.deps.runs.anyUndelivered(parentKey);
  }

  /** `resultsWaiting` as a batch step another write carries (see `TurnStartRead`): a row when results wait. */
  resultsWaitingStep(parentKey: string): { sql: string; params: string[] } {
    return this.deps.runs.undeliveredStep(parentKey);
  }

  async drainResults(parentKey: string): Promise<string | undefined> {
    const done = await this.deps.runs.takeUndelivered(parentKey, Date.now());
    if (done.length === 0) return undefined;
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
  private async drive(run: SubagentRunRecord, turn: TurnContext, live: LiveRun, runtime: AgentRuntime): Promise<void> {
    let input = run.task;
    let outcome: TurnOutcome | undefined;
    try {
      for (;;) {
        outcome = await runtime.runTurn({ sessionKey: run.childKey, turn, input: { text: input }, signal: live.controller.signal, ...(live.runId !== undefined ? { runId: live.runId } : {}) });
        const next = live.steers.shift();
        if (next === undefined || live.controller.signal.aborted) break;
        input = next;
      }
    } catch (err) {
      log.error({ err, runId: run.runId }, 'subagent run failed');
      outcome = { status: 'failed', reply: `subagent crashed: ${(err as Error).message}`, rounds: 0, usage: { inputTokens: 0, outputTokens: 0 }, error: { kind: 'model', message: (err as Error).message } };
    }
    this.live.delete(run.runId);
    if (this.deps.hooks?.has('subagent_ended')) {
      const ok = outcome?.status === 'completed';
      this.deps.hooks.fire(
        'subagent_ended',
        {
          targetSessionKey: run.childKey,
          targetKind: 'subagent',
          reason: this.stopped ? 'shutdown' : live.controller.signal.aborted ? 'killed' : ok ? 'completed' : 'failed',
          runId: run.runId,
          endedAt: Date.now(),
          outcome: live.controller.signal.aborted ? 'killed' : ok ? 'ok' : 'error',
          ...(ok ? {} : { error: outcome?.status === 'failed' ? outcome.error.message : outcome?.reply }),
        },
        { runId: run.runId, childSessionKey: run.childKey, requesterSessionKey: run.parentKey },
      );
    }
    if (this.stopped) return;
    let ended: SubagentRunRecord | undefined;
    try {
      await this.deps.runs.end(run.runId, outcome?.status === 'completed' ? 'done' : 'failed', outcome?.reply ?? '', Date.now());
      ended = await this.deps.runs.get(run.runId);
    } catch (err) {
      // The store closed under a stopping Warden: the next start finds the run and interrupts it.
      log.warn({ err, runId: run.runId }, 'subagent result could not be stored');
      return;
    }
    if (ended) this.deps.announce?.(run.parentKey, { ...view(ended), ...(live.runId !== undefined ? { spawnedInRun: live.runId } : {}) });
  }

  private async owned(parentKey: string, runId: string): Promise<Result<SubagentRunRecord>> {
    const run = await this.deps.runs.get(runId);
    if (!run || run.parentKey !== parentKey) return { ok: false, message: `no subagent ${runId} spawned by this session (use subagents with action "list")` };
    return { ok: true, value: run };
  }

  private requireRuntime(): AgentRuntime {
    if (!this.runtime) throw new Error('AgentSessions used before attach(runtime)');
    return this.runtime;
  }
}

const view = (run: SubagentRunRecord): SubagentRunView => ({
  runId: run.runId,
  childKey: run.childKey,
  parentKey: run.parentKey,
  agentId: run.agentId,
  label: run.label,
  task: run.task,
  depth: run.depth,
  status: run.status,
  startedAt: run.startedAt,
  endedAt: run.endedAt,
  result: run.result,
  requestedBy: { id: run.turn.senderId, name: run.turn.senderName, owner: run.turn.senderIsOwner === true },
});

