import { randomBytes, randomUUID } from 'node:crypto';
import type { ApprovalsConfig, IdsByProvider, WardenConfig } from '../config/index.js';
import { events as defaultEvents, type EventBus } from '../events/events.js';
import { log } from '../log/log.js';
import { AuditLog } from '../store/audit.js';
import type { Store } from '../store/store.js';
import { Transcripts } from '../store/transcript.js';
import { processAlive } from '../util/process-alive.js';
import { approverRefusal } from './approvers.js';
import { actorOriginRefusal, originForAudit } from './click-origin.js';
import { scopedApprovers } from './scoped-approvers.js';
import { DeferredCallStore } from './deferred.js';
import { GrantStore, type RevokeResult } from './grants.js';
import { ApprovalLedger, type LedgerEntry } from './ledger.js';
import { toolRisk } from '../policy/tool-risk.js';
import {
  APPROVAL_DECISIONS,
  DEFAULT_GRANT_DECISIONS,
  GRANT_DECISIONS,
  isAllow,
  type ApprovalVote,
  type DecisionInput,
  type ApprovalActor,
  type ApprovalDecision,
  type ApprovalOutcome,
  type ApprovalRenderer,
  type ApprovalRequest,
  type ApprovalRequester,
  type ApprovalRequestContext,
  type ApprovalRequestInput,
  type ApprovalResolution,
  type DeferredCallSpec,
  type Grant,
  type PendingApproval,
  type RecoveryReport,
  type ResolveResult,
} from './types.js';
import { background } from '../util/background.js';

/** Hook approvals may not wait longer than this (reference §5.3). */
export const MAX_HOOK_APPROVAL_TIMEOUT_MS = 600_000;

export interface ApprovalServiceOptions {
  store: Store;
  config: { owners: IdsByProvider; approvals: ApprovalsConfig; channels?: WardenConfig['channels'] | undefined; accessGroups?: WardenConfig['accessGroups'] | undefined };
  events?: EventBus;
  now?: () => number;
  /** How often a waiting call looks for a decision written by another process. */
  pollMs?: number;
  /** How often a waiting process stamps its requests as still waited for. */
  heartbeatMs?: number;
  /** A waiter whose stamp is older than this is treated as dead by `recover()`. */
  staleWaiterMs?: number;
  /**
   * After `recover()`, how often to look for requests other processes opened or closed (a CLI
   * call waiting for a chat approver): new ones are rendered and timed here, closed ones get
   * their cards updated.
   */
  externalPollMs?: number;
  isProcessAlive?: (pid: number) => boolean;
  /**
   * On a store several instances share: who is alive (a waiter is alive while its instance's
   * lease is, whichever machine it runs on), and this instance's id. Decisions reach waiting
   * calls by notification (`APPROVAL_CHANNEL`), not by polling.
   */
  instances?: { readonly id: string; isLive(id: string): Promise<boolean>; live(): Promise<Array<{ id: string; role: string }>> } | undefined;
}

/** Shown first on a card whose waiting call died and whose call another process now runs once decided. */
export const TAKEN_OVER_FACT = { label: 'Taken over', value: 'the Warden process that posted this card stopped; the call still runs once decided' } as const;

/** Told the id of each approval that closed, on a shared store. Ids only: the payload never carries the request's text. */
export const APPROVAL_CHANNEL = 'warden_approval';

type Waiter = (resolution: ApprovalResolution) => void;

/** How many settled requests a service remembers, to settle each once (oldest forgotten first). */
const MAX_SETTLEMENTS_KEPT = 10_000;

/**
 * Pending approvals, decisions, expiry, grants and restart recovery. One instance per process;
 * several processes may share a data dir (the CLI waiting while the bot resolves): every state
 * change is a single atomic SQLite write, and waiters poll for decisions made elsewhere.
 */
export class ApprovalService {
  readonly grants: GrantStore;
  readonly audit: AuditLog;
  /** Calls that go on without their turn once decided (`requestOrDefer`); the gateway's runner claims them. */
  readonly deferred: DeferredCallStore;
  /** Identifies this process's waiters in the ledger. */
  readonly instanceId: string;

  private readonly ledger: ApprovalLedger;
  private readonly transcripts: Transcripts;
  private readonly renderers = new Set<ApprovalRenderer>();
  private readonly waiters = new Map<string, Set<Waiter>>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** Requests closed while this process knew them, each with its one settlement (`settle`). */
  private readonly settlements = new Map<string, Promise<void>>();
  private readonly events: EventBus;
  private readonly now: () => number;
  private poller: NodeJS.Timeout | undefined;
  private lastHeartbeat = 0;
  /** Requests other processes wait for, whose cards this process keeps current. */
  private readonly watched = new Set<string>();
  private watcher: NodeJS.Timeout | undefined;
  private polling = false;
  private syncing = false;
  private stopped = false;
  private subscribed: Promise<void> | undefined;
  private pushUnavailable = false;
  private unlisten: (() => Promise<void>) | undefined;

  constructor(private readonly options: ApprovalServiceOptions) {
    this.instanceId = options.instances?.id ?? randomUUID();
    this.ledger = new ApprovalLedger(options.store.db);
    this.audit = new AuditLog(options.store.db);
    this.transcripts = new Transcripts(options.store.db);
    this.now = options.now ?? Date.now;
    this.grants = new GrantStore(options.store.db, this.audit, this.now);
    this.deferred = new DeferredCallStore(options.store.db);
    this.events = options.events ?? defaultEvents;
  }

  /** Adapters call this once; the renderer shows and updates requests of its provider. */
  registerRenderer(renderer: ApprovalRenderer): () => void {
    this.renderers.add(renderer);
    return () => this.renderers.delete(renderer);
  }

  /**
   * Binds a turn's context, for `ToolCallContext.approvals`. With `deferred`, the call may go on
   * without its turn: `requestOrDefer` waits `approvals.waitSec` and then answers `pending`.
   */
  requester(context: ApprovalRequestContext, options: { deferred?: DeferredCallSpec | undefined } = {}): ApprovalRequester {
    const spec = options.deferred;
    return {
      request: (input, signal) => this.request(input, context, signal),
      ...(spec ? { requestOrDefer: (input: ApprovalRequestInput, signal?: AbortSignal) => this.requestOrDefer(input, context, spec, signal) } : {}),
    };
  }

  /**
   * The requester of a deferred call being resumed: its first request that asks what the
   * approver saw — same kind, tool, full text and bound files — gets that decision; any other request (the
   * command now reads differently, a hook asks something else) asks anew through `fallback`.
   */
  resumedRequester(approvalId: string, fallback: ApprovalRequester): ApprovalRequester {
    let used = false;
    const decided = async (input: ApprovalRequestInput): Promise<ApprovalResolution | undefined> => {
      if (used) return undefined;
      const entry = await this.ledger.get(approvalId);
      if (!entry || entry.request.status === 'pending') return undefined;
      const r = entry.request;
      if (r.kind !== input.kind || r.tool !== input.tool || r.fullText !== input.fullText) return undefined;
      if (used) return undefined;
      // The files the call names must be the ones the card bound: a file rewritten while the card waited asks anew.
      if (JSON.stringify(entry.grant?.boundFiles ?? null) !== JSON.stringify(input.grant?.boundFiles ?? null)) return undefined;
      used = true;
      return this.resolution(entry);
    };
    const orDefer = fallback.requestOrDefer;
    return {
      request: async (input, signal) => (await decided(input)) ?? fallback.request(input, signal),
      ...(orDefer ? { requestOrDefer: async (input: ApprovalRequestInput, signal?: AbortSignal) => (await decided(input)) ?? orDefer(input, signal) } : {}),
    };
  }

  /**
   * Creates, persists and renders a request, then waits until it is decided, expires, or
   * `signal` aborts (→ `cancelled`). Never rejects.
   */
  async request(input: ApprovalRequestInput, context: ApprovalRequestContext, signal?: AbortSignal): Promise<ApprovalResolution> {
    if (signal?.aborted) return { id: '', outcome: 'cancelled' };
    const request = await this.open(input, context);
    return this.wait(request.id, signal);
  }

  /**
   * Like `request`, but waits only `approvals.waitSec` for the decision. Decided in time: the
   * resolution, and the caller goes on as with `request`. Otherwise the call is deferred — its
   * turn may end; whoever sees the decision claims and runs it (`deferred`) — and the answer
   * is `pending`. The move to deferred and a decision never interleave: the check that the
   * request is still pending and the move are one write transaction.
   */
  async requestOrDefer(input: ApprovalRequestInput, context: ApprovalRequestContext, spec: DeferredCallSpec, signal?: AbortSignal): Promise<ApprovalResolution | PendingApproval> {
    if (signal?.aborted) return { id: '', outcome: 'cancelled' };
    // The same call again while its card waits (a retry, a poll): the card that waits answers for it.
    for (const e of await this.ledger.pending()) {
      if (e.request.sessionKey !== context.sessionKey || e.request.kind !== input.kind || e.request.tool !== input.tool || e.request.fullText !== input.fullText) continue;
      if ((await this.deferred.get(e.request.id))?.state === 'deferred') return { id: e.request.id, pending: true, expiresAt: e.request.expiresAt };
    }
    const request = await this.open(input, context, spec);
    const waitMs = Math.max(0, (this.options.config.approvals.waitSec ?? 0) * 1000);
    const early = waitMs > 0 ? await this.waitUpTo(request.id, signal, waitMs) : undefined;
    if (early) return this.inline(request.id, early);
    const db = this.options.store.db;
    const moved = await db.tx(async () => {
      // The row is held until the move commits: a decision made meanwhile (here or in another instance) waits for it.
      if ((await this.ledger.get(request.id, { lock: true }))?.request.status !== 'pending') return false;
      if (!(await this.deferred.defer(request.id))) return false;
      await this.ledger.clearWaiter(request.id);
      return true;
    });
    if (!moved) return this.inline(request.id, await this.resolution((await this.ledger.get(request.id))!));
    // Decisions written by other processes reach this one through the watcher.
    this.watched.add(request.id);
    this.ensureWatcher();
    await this.audit.record({ type: 'approval.deferred', subject: request.id, sessionKey: request.sessionKey, data: { tool: request.tool, toolCallId: spec.toolCallId, origin: spec.origin, waitedMs: waitMs } });
    log.info({ approval: request.id, tool: request.tool, waitedMs: waitMs }, 'approval deferred: the call goes on without its turn');
    this.events.emit('approval.deferred', { request });
    return { id: request.id, pending: true, expiresAt: request.expiresAt };
  }

  /** A decision within the wait: the turn handles it, unless another process took the call over (it thought this one dead). */
  private async inline(id: string, resolution: ApprovalResolution): Promise<ApprovalResolution | PendingApproval> {
    if ((await this.deferred.get(id)) === undefined || (await this.deferred.takeInline(id, this.instanceId, this.now(), resolution.outcome))) return resolution;
    return { id, pending: true, expiresAt: (await this.ledger.get(id))?.request.expiresAt ?? this.now() };
  }

  /** Creates, persists and renders a request without waiting (the CLI prints its id first). */
  async open(input: ApprovalRequestInput, context: ApprovalRequestContext, deferred?: DeferredCallSpec): Promise<ApprovalRequest> {
    const { approvals } = this.options.config;
    const now = this.now();
    const rule = input.rule;
    // A rule's card waits as long as an exec card (its call is deferred, not held); a hook's is capped.
    const configured = input.kind === 'exec' || rule ? approvals.exec.timeoutSec * 1000 : approvals.hook.timeoutSec * 1000;
    let timeoutMs = input.timeoutMs !== undefined && input.timeoutMs > 0 ? input.timeoutMs : configured;
    if (input.kind === 'tool' && !rule) timeoutMs = Math.min(timeoutMs, MAX_HOOK_APPROVAL_TIMEOUT_MS);
    const quorum = Math.max(1, rule?.quorum ?? 1);
    const offered = input.allowedDecisions?.filter((d) => (APPROVAL_DECISIONS as readonly string[]).includes(d));
    let allowedDecisions: ApprovalDecision[] =
      offered && offered.length > 0
        ? [...new Set(offered)]
        : input.grant
          ? input.scopedGrants
            ? [...APPROVAL_DECISIONS]
            : [...DEFAULT_GRANT_DECISIONS]
          : ['allow-once', 'deny'];
    // Several people allow a call once together; no vote stores a grant for later calls.
    if (quorum > 1) allowedDecisions = allowedDecisions.filter((d) => d === 'allow-once' || d === 'deny');
    const channels = this.options.config.channels;
    const scoped =
      rule?.approvers ??
      (channels
        ? scopedApprovers({ channels }, { provider: context.provider as 'discord' | 'slack' | 'web', guildId: context.guildId, guildName: context.guildName, channelId: context.channelId, channelName: context.channelName })
        : undefined);
    const facts = input.facts ?? [];
    // Every card says what the call can do, from the rule or the catalog, never from the model.
    // Last, so a tool's own warnings keep the top of the card.
    const risk = facts.some((f) => f.label === 'Risk') ? [] : [{ label: 'Risk', value: toolRisk(input.tool) }];
    const request: ApprovalRequest = {
      id: randomBytes(5).toString('hex'),
      kind: input.kind,
      agentId: context.agentId,
      sessionKey: context.sessionKey,
      provider: context.provider,
      channelId: context.channelId,
      threadId: context.threadId,
      ...(context.guildId !== undefined ? { guildId: context.guildId } : {}),
      requesterId: context.requesterId,
      ...(scoped !== undefined ? { approvers: scoped } : {}),
      ...(context.requesterName !== undefined ? { requesterName: context.requesterName } : {}),
      ...(context.via !== undefined ? { via: context.via } : {}),
      tool: input.tool,
      title: input.title,
      preview: input.preview,
      fullText: input.fullText,
      facts: [...facts, ...risk],
      allowedDecisions,
      createdAt: now,
      expiresAt: now + timeoutMs,
      status: 'pending',
      ...(rule ? { rule: rule.path } : {}),
      ...(quorum > 1 ? { quorum } : {}),
      ...(allowedDecisions.includes('allow-timed') ? { timedGrantSec: approvals.timedGrantSec } : {}),
      ...(rule?.escalateAfterSec !== undefined && rule.escalateTo !== undefined && now + rule.escalateAfterSec * 1000 < now + timeoutMs
        ? { escalateAt: now + rule.escalateAfterSec * 1000, escalateTo: rule.escalateTo }
        : {}),
    };
    const timeoutBehavior = input.kind === 'tool' && input.timeoutBehavior === 'allow' ? 'allow' : 'deny';
    const waiter = { pid: process.pid, instance: this.instanceId, seenAt: now };
    await this.options.store.db.tx(async () => {
      await this.ledger.insert({ request, grant: input.grant, timeoutBehavior, waiter, shown: input.shown });
      if (deferred) await this.deferred.insert(request.id, { agentId: request.agentId, sessionKey: request.sessionKey }, deferred, waiter, now);
    });
    await this.audit.record({
      type: 'approval.requested',
      subject: request.id,
      actor: context.requesterId === undefined ? undefined : `${context.provider}:${context.requesterId}`,
      sessionKey: context.sessionKey,
      data: { kind: request.kind, tool: request.tool, agentId: request.agentId, preview: request.preview, expiresAt: request.expiresAt, allowedDecisions },
    });
    log.info({ approval: request.id, tool: request.tool, kind: request.kind, session: request.sessionKey, rule: request.rule }, 'approval requested');
    this.armExpiry(request);
    this.armEscalation(request);
    this.events.emit('approval.requested', { request });
    background(this.show(request), 'approval card not shown', { level: 'error', fields: { approval: request.id } });
    return request;
  }

  /** Waits for a request's outcome; resolves at once when it is already closed. */
  wait(id: string, signal?: AbortSignal): Promise<ApprovalResolution> {
    return this.waitUpTo(id, signal, undefined) as Promise<ApprovalResolution>;
  }

  /**
   * Waits for a request's outcome, at most `timeoutMs` (undefined: until it closes). An abort
   * withdraws the request (`cancelled`); running out of time changes nothing and resolves
   * undefined.
   */
  private async waitUpTo(id: string, signal: AbortSignal | undefined, timeoutMs: number | undefined): Promise<ApprovalResolution | undefined> {
    const entry = await this.ledger.get(id);
    if (!entry) return { id, outcome: 'cancelled' };
    if (entry.request.status !== 'pending') return this.resolution(entry);
    if (this.now() >= entry.request.expiresAt) {
      await this.expire(id);
      return this.resolution((await this.ledger.get(id))!);
    }
    // Subscribed before the waiter is registered and the ledger read again below: no decision falls in between.
    await this.subscribe();
    return new Promise((resolve) => {
      let set = this.waiters.get(id);
      if (!set) this.waiters.set(id, (set = new Set()));
      let timer: NodeJS.Timeout | undefined;
      const onAbort = () => void this.cancel(id, 'the waiting call was aborted').catch((err: unknown) => log.error({ err, approval: id }, 'approval not withdrawn'));
      const done = (value: ApprovalResolution | undefined) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        resolve(value);
      };
      const waiter: Waiter = (resolution) => done(resolution);
      set.add(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
      // Aborted while the request was being written or read back: the listener would never fire.
      if (signal?.aborted) onAbort();
      if (timeoutMs !== undefined) {
        timer = setTimeout(() => {
          const waiting = this.waiters.get(id);
          waiting?.delete(waiter);
          if (waiting?.size === 0) this.waiters.delete(id);
          this.stopPollingWhenIdle();
          done(undefined);
        }, timeoutMs);
      }
      this.ensurePolling();
      // A decision written between the read above and now would otherwise wait for the next poll.
      void this.ledger.get(id).then(
        (now) => {
          // Settled, not only delivered: a close no other path saw here (written elsewhere on an unshared store) still updates its cards, once.
          if (now && now.request.status !== 'pending') background(this.settle(now, undefined), 'approval decision not delivered to its waiting call', { level: 'error', fields: { approval: id } });
        },
        () => undefined,
      );
    });
  }

  /**
   * Decides a request on behalf of a platform user. Only an approver of `by.provider` may
   * decide; a request decides once (the first writer wins, across processes); the decision
   * must be one the request offers. allow-always with a grant spec stores a grant.
   */
  async resolve(id: string, decision: string, by: ApprovalActor, input: DecisionInput = {}): Promise<ResolveResult> {
    const { owners, approvals, accessGroups } = this.options.config;
    const entry = await this.ledger.get(id);
    if (!entry) return { kind: 'not-found', id };
    let refusal = approverRefusal({ owners, approvers: approvals.approvers, accessGroups }, by.provider, by.userId, entry.request, by);
    // Under a quorum the requester's own vote never counts, owner or not: two people means two other people.
    if (refusal === undefined && (entry.request.quorum ?? 1) > 1 && isAllow(decision) && isRequester(entry.request, by)) {
      refusal = 'the requester cannot approve their own request';
    }
    if (refusal !== undefined) {
      await this.audit.record({ type: 'approval.refused', subject: id, actor: `${by.provider}:${by.userId}`, sessionKey: entry.request.sessionKey, data: { decision, reason: refusal } });
      return { kind: 'not-approver', reason: refusal };
    }
    // A click is judged by where it came from too: the card's places only, whoever clicks.
    const via = (by as Partial<ApprovalActor>).via;
    const misplaced = actorOriginRefusal(entry.request, via, approvals.target);
    if (misplaced !== undefined) {
      await this.audit.record({ type: 'approval.refused', subject: id, actor: `${by.provider}:${by.userId}`, sessionKey: entry.request.sessionKey, data: { decision, reason: misplaced, origin: originForAudit(via?.kind === 'click' ? via.origin : null) } });
      return { kind: 'not-approver', reason: misplaced, wrongConversation: true };
    }
    return this.decide(entry, decision, `${by.provider}:${by.userId}`, input);
  }

  /**
   * Decides as the local operator (the `warden approvals resolve` and `warden invoke --approve`
   * commands): whoever can run the CLI against this data dir already controls it.
   */
  async resolveAsOperator(id: string, decision: string, operator: string, input: DecisionInput = {}): Promise<ResolveResult> {
    const entry = await this.ledger.get(id);
    if (!entry) return { kind: 'not-found', id };
    return this.decide(entry, decision, `cli:${operator}`, input);
  }

  private async decide(entry: LedgerEntry, decision: string, decidedBy: string, input: DecisionInput = {}): Promise<ResolveResult> {
    const id = entry.request.id;
    if (entry.request.status !== 'pending') return this.alreadyResolved(entry);
    if (!(entry.request.allowedDecisions as string[]).includes(decision)) {
      return { kind: 'decision-not-allowed', decision, allowed: entry.request.allowedDecisions };
    }
    if (this.now() >= entry.request.expiresAt) {
      await this.expire(id);
      return this.alreadyResolved((await this.ledger.get(id))!);
    }
    const at = this.now();
    const quorum = entry.request.quorum ?? 1;
    let votes: ApprovalVote[] | undefined;
    if (quorum > 1 && isAllow(decision)) {
      const counted = await this.vote(id, decidedBy, at, quorum);
      if (counted.kind !== 'closing') return counted.result;
      votes = counted.votes;
    }
    const denyReason = decision === 'deny' ? cleanReason(input.reason) : undefined;
    let grant: Grant | undefined;
    const won = await this.options.store.db.tx(async () => {
      if (!(await this.ledger.close(id, decision as ApprovalDecision, decidedBy, at, { ...(votes ? { votes } : {}), denyReason }))) return false;
      if ((GRANT_DECISIONS as readonly string[]).includes(decision) && entry.grant) {
        // The duration the button named when the card was posted, not one a reload set since.
        const timed = decision === 'allow-timed' ? at + (entry.request.timedGrantSec ?? this.options.config.approvals.timedGrantSec) * 1000 : undefined;
        const ttl = entry.grant.ttlMs === undefined ? undefined : at + entry.grant.ttlMs;
        const expiresAt = timed !== undefined && ttl !== undefined ? Math.min(timed, ttl) : (timed ?? ttl);
        grant = await this.grants.create({
          agentId: entry.request.agentId,
          tool: entry.request.tool,
          pattern: entry.grant.pattern,
          argPattern: entry.grant.argPattern,
          approvalId: id,
          createdBy: decidedBy,
          expiresAt,
          ...(decision === 'allow-conversation' ? { sessionKey: entry.request.sessionKey } : {}),
          ...(entry.grant.ruleKey !== undefined ? { ruleKey: entry.grant.ruleKey } : {}),
          ...(entry.grant.boundFiles !== undefined ? { boundFiles: entry.grant.boundFiles } : {}),
        });
      }
      await this.audit.record({
        type: 'approval.resolved',
        subject: id,
        actor: decidedBy,
        sessionKey: entry.request.sessionKey,
        data: { outcome: decision, tool: entry.request.tool, grantId: grant?.id, ...(votes ? { votes: votes.map((v) => v.by) } : {}), ...(denyReason ? { reason: denyReason } : {}) },
      });
      await this.announce(id);
      return true;
    });
    if (!won) return this.alreadyResolved((await this.ledger.get(id))!);
    const closed = (await this.ledger.get(id))!;
    log.info({ approval: id, outcome: decision, by: decidedBy }, 'approval resolved');
    await this.settle(closed, grant?.id);
    this.events.emit('approval.resolved', { request: closed.request });
    return { kind: 'resolved', request: closed.request, grant };
  }

  /**
   * Counts one approver's vote towards a quorum. The vote is one conditional write against the
   * votes as read (`ledger.vote`): of two votes read at once one is written and the other reads
   * again, on SQLite or across instances on PostgreSQL. A repeated vote of the same person
   * counts once. The vote that reaches the quorum is not written here: it closes the request
   * (`ledger.close`, the first-writer-wins write), so the call is allowed exactly once.
   */
  private async vote(id: string, by: string, at: number, quorum: number): Promise<{ kind: 'closing'; votes: ApprovalVote[] } | { kind: 'done'; result: ResolveResult }> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const entry = await this.ledger.get(id);
      if (!entry) return { kind: 'done', result: { kind: 'not-found', id } };
      if (entry.request.status !== 'pending') return { kind: 'done', result: this.alreadyResolved(entry) };
      const before = entry.request.votes ?? [];
      if (before.some((v) => v.by === by)) return { kind: 'done', result: { kind: 'counted', request: entry.request } };
      const after = [...before, { by, at }];
      if (after.length >= quorum) return { kind: 'closing', votes: after };
      if (!(await this.ledger.vote(id, before, after))) continue;
      const counted = (await this.ledger.get(id))!;
      await this.audit.record({ type: 'approval.counted', subject: id, actor: by, sessionKey: counted.request.sessionKey, data: { votes: after.length, quorum } });
      log.info({ approval: id, by, votes: after.length, quorum }, 'approval vote counted');
      this.events.emit('approval.counted', { request: counted.request });
      background(this.update(counted.request), 'approval card not updated', { level: 'error', fields: { approval: id } });
      return { kind: 'done', result: { kind: 'counted', request: counted.request } };
    }
    return { kind: 'done', result: { kind: 'not-approver', reason: 'too many concurrent votes; try again' } };
  }

  private alreadyResolved(entry: LedgerEntry): ResolveResult {
    const outcome = entry.request.status as ApprovalOutcome;
    return { kind: 'already-resolved', request: entry.request, outcome, decidedBy: entry.request.decidedBy };
  }

  async get(id: string): Promise<ApprovalRequest | undefined> {
    return (await this.ledger.get(id))?.request;
  }

  /** Pending requests, oldest first. */
  async list(filter: { sessionKey?: string } = {}): Promise<ApprovalRequest[]> {
    return (await this.ledger.pending()).map((e) => e.request).filter((r) => filter.sessionKey === undefined || r.sessionKey === filter.sessionKey);
  }

  /** Closed requests, newest first. */
  async history(filter: { sessionKey?: string; limit?: number } = {}): Promise<ApprovalRequest[]> {
    return (await this.ledger.history(filter)).map((e) => e.request);
  }

  revokeGrant(id: string, by: string): Promise<RevokeResult> {
    return this.grants.revoke(id, by);
  }

  /**
   * Startup recovery. Each pending request is either expired (past its time; cards updated),
   * re-armed (a live call in another process still waits; its timer runs here too), or
   * interrupted (the waiting call died: closed, written to its session's transcript, and
   * announced as `approval.interrupted`). Nothing stays pending without a timer.
   */
  async recover(): Promise<RecoveryReport> {
    const report: RecoveryReport = { expired: [], rearmed: [], interrupted: [], deferred: [] };
    const now = this.now();
    const updates: Promise<void>[] = [];
    const servers = this.options.instances ? (await this.options.instances.live()).filter((i) => i.role === 'server').map((i) => i.id) : undefined;
    for (const entry of await this.ledger.pending()) {
      // Already in this process's charge (its own request, or one adopted before).
      if (this.timers.has(entry.request.id)) continue;
      if (servers && !(await this.inChargeOf(entry, servers))) continue;
      const adopted = await this.adopt(entry, now);
      if (adopted.kind === 'expired') report.expired.push(adopted.request);
      else if (adopted.kind === 'interrupted') report.interrupted.push(adopted.request);
      else if (adopted.kind === 'rearmed' || adopted.kind === 'deferred') {
        report[adopted.kind].push(adopted.request);
        updates.push(adopted.render);
      }
    }
    await Promise.all(updates);
    log.info(
      { expired: report.expired.length, rearmed: report.rearmed.length, interrupted: report.interrupted.length, deferred: report.deferred.length },
      'approvals recovered',
    );
    this.ensureWatcher();
    return report;
  }

  /**
   * On a shared store, whose job a request another instance opened is. A live server instance
   * keeps its own (it renders, times and closes them; rendering them here too would post a second
   * card). A CLI's request, a deferred call's, or a dead instance's goes to one instance: the
   * oldest live server, so two never post cards for it; when that one dies the next takes over.
   */
  private async inChargeOf(entry: LedgerEntry, servers: readonly string[]): Promise<boolean> {
    const owner = entry.waiter?.instance;
    if (owner !== undefined && owner !== this.instanceId && servers.includes(owner)) return false;
    return servers[0] === this.instanceId;
  }

  /** Whether the process that owns a call (its waiter or runner) still runs: its instance's lease on a shared store, its pid otherwise. */
  async ownerAlive(owner: { instance: string; pid: number }): Promise<boolean> {
    if (owner.instance === this.instanceId) return true;
    if (this.options.instances) return this.options.instances.isLive(owner.instance);
    // A new process may get the old one's pid (pid 1 in a container): then it is not the owner.
    return owner.pid !== process.pid && (this.options.isProcessAlive ?? processAlive)(owner.pid);
  }

  /** On a shared store: decisions made by any instance reach this one's waiters and watched cards by notification. */
  private subscribe(): Promise<void> {
    if (!this.options.store.db.shared) return Promise.resolve();
    this.subscribed ??= this.options.store.db.listen(APPROVAL_CHANNEL, (payload) => background(this.closedElsewhere(payload), 'approval closed by another instance not picked up', { fields: { approval: payload } })).then(
      (off) => {
        this.unlisten = off;
      },
      (err: unknown) => {
        // The notification connection failed while subscribing: waiters poll instead, so no decision is missed.
        log.warn({ err: (err as Error).message }, 'approvals: notifications unavailable; waiting calls poll for decisions');
        this.pushUnavailable = true;
      },
    );
    return this.subscribed;
  }

  /** A notified closure (or, without a payload, possibly missed ones): wake its waiters, keep its cards current. */
  private async closedElsewhere(id: string | undefined): Promise<void> {
    const ids = id === undefined ? [...new Set([...this.waiters.keys(), ...this.watched])] : [id];
    for (const one of ids) {
      if (!this.waiters.has(one) && !this.watched.has(one) && !this.timers.has(one)) continue;
      try {
        const entry = await this.ledger.get(one);
        if (entry && entry.request.status !== 'pending') await this.settle(entry, undefined);
      } catch (err) {
        if (!this.stopped) log.warn({ err, approval: one }, 'approvals: reading a closure made elsewhere failed');
      }
    }
  }

  /** Tells every instance sharing the store that `id` closed (inside a transaction: at its commit). */
  private async announce(id: string): Promise<void> {
    if (this.options.store.db.shared) await this.options.store.db.notify(APPROVAL_CHANNEL, id);
  }

  private ensureWatcher(): void {
    if (this.watcher) return;
    this.watcher = setInterval(() => background(this.syncExternal(), 'approvals of other instances not synced'), this.options.externalPollMs ?? 1000);
    this.watcher.unref();
  }

  /**
   * Takes charge of a pending request this process did not open: past expiry → expired;
   * a live waiter elsewhere → timed, rendered (or refreshed) and watched here; a deferred call
   * (or one whose waiting turn died) → timed, refreshed and watched, still decidable; any other
   * dead waiter → interrupted, written to its session's transcript and announced on the bus.
   */
  private async adopt(
    entry: LedgerEntry,
    now: number,
  ): Promise<{ kind: 'expired' | 'interrupted'; request: ApprovalRequest } | { kind: 'rearmed' | 'deferred'; request: ApprovalRequest; render: Promise<void> } | { kind: 'none' }> {
    const { request } = entry;
    if (now >= request.expiresAt) {
      return (await this.expire(request.id)) ? { kind: 'expired', request: (await this.ledger.get(request.id))!.request } : { kind: 'none' };
    }
    const alive = await this.waiterAlive(entry, now);
    if (alive || (await this.keepDeferred(entry))) {
      this.armExpiry(request);
      this.armEscalation(request);
      this.watched.add(request.id);
      // The card says it changed hands: the process that posted it is gone, this one runs the call once decided.
      const shown = alive ? request : { ...request, facts: [TAKEN_OVER_FACT, ...request.facts] };
      // Not marked shown: the process may have died between posting the card and recording it, so a card it did post is edited too.
      const render = entry.renderedAt !== undefined ? this.update(shown) : alive ? this.show(shown) : this.update(shown).then(() => this.show(shown));
      return { kind: alive ? 'rearmed' : 'deferred', request, render };
    }
    const closed = await this.interrupt(request);
    return closed ? { kind: 'interrupted', request: closed } : { kind: 'none' };
  }

  /**
   * A request whose waiter is gone but whose call is stored as deferred (or was waiting when
   * its turn died) is not interrupted: the call moves to `deferred` and runs once decided.
   */
  private async keepDeferred(entry: LedgerEntry): Promise<boolean> {
    const call = await this.deferred.get(entry.request.id);
    if (call?.state === 'waiting') {
      await this.deferred.defer(entry.request.id);
      await this.ledger.clearWaiter(entry.request.id);
      log.info({ approval: entry.request.id, tool: call.tool }, 'the turn waiting for an approval is gone; its call stays decidable');
      return true;
    }
    return call?.state === 'deferred';
  }

  /** Closes a request whose waiting call died; its session hears about it. */
  private async interrupt(request: ApprovalRequest): Promise<ApprovalRequest | undefined> {
    const message = `Approval ${request.id} for ${request.tool} was interrupted: the call waiting for it stopped before anyone decided (its Warden process ended). The tool call did not run.`;
    const closed = await this.closeRequest(request.id, 'interrupted', undefined, 'approval.interrupted', { message });
    if (!closed) return undefined;
    await this.transcripts.append({ sessionKey: request.sessionKey, role: 'system', tool: request.tool, content: message, details: { approvalId: request.id, outcome: 'interrupted' } });
    this.events.emit('approval.interrupted', { request: closed.request, message });
    return closed.request;
  }

  /** Picks up requests opened by other live processes, and closures made elsewhere. */
  private async syncExternal(): Promise<void> {
    if (this.syncing) return;
    this.syncing = true;
    try {
      const now = this.now();
      const servers = this.options.instances ? (await this.options.instances.live()).filter((i) => i.role === 'server').map((i) => i.id) : undefined;
      for (const entry of await this.ledger.pending()) {
        if (entry.waiter?.instance === this.instanceId || this.timers.has(entry.request.id)) continue;
        if (servers && !(await this.inChargeOf(entry, servers))) continue;
        await this.adopt(entry, now);
      }
      for (const id of [...this.watched]) {
        const entry = await this.ledger.get(id);
        if (!entry) this.watched.delete(id);
        else if (entry.request.status !== 'pending') await this.settle(entry, undefined);
        else if (!(await this.waiterAlive(entry, now)) && !(await this.keepDeferred(entry))) await this.interrupt(entry.request);
      }
    } catch (err) {
      if (!this.stopped) log.warn({ err }, 'approvals: looking for changes made elsewhere failed');
    } finally {
      this.syncing = false;
    }
  }

  /** Stops timers and polling. Pending requests stay in the ledger for the next `recover()`. */
  shutdown(): void {
    this.stopped = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    for (const timer of this.escalations.values()) clearTimeout(timer);
    this.escalations.clear();
    if (this.watcher) clearInterval(this.watcher);
    this.watcher = undefined;
    this.watched.clear();
    if (this.poller) clearInterval(this.poller);
    this.poller = undefined;
    void this.unlisten?.().catch(() => undefined);
    this.unlisten = undefined;
  }

  /** Withdraws a pending request (its call was aborted); false when it was already closed. */
  async cancel(id: string, reason: string): Promise<boolean> {
    return (await this.closeRequest(id, 'cancelled', undefined, 'approval.cancelled', { reason })) !== undefined;
  }

  private async closeRequest(id: string, outcome: ApprovalOutcome, decidedBy: string | undefined, auditType: string, data: Record<string, unknown> = {}): Promise<LedgerEntry | undefined> {
    // The close and its announcement commit together: a close other instances are not told of would leave their waiters waiting.
    const closed = await this.options.store.db.tx(async () => {
      if (!(await this.ledger.close(id, outcome, decidedBy, this.now()))) return false;
      await this.announce(id);
      return true;
    });
    if (!closed) return undefined;
    const entry = (await this.ledger.get(id))!;
    await this.audit.record({ type: auditType, subject: id, actor: decidedBy, sessionKey: entry.request.sessionKey, data: { outcome, tool: entry.request.tool, ...data } });
    log.info({ approval: id, outcome }, 'approval closed');
    await this.settle(entry, undefined);
    return entry;
  }

  /** Closes a request as expired if still pending; true when this call did it. */
  private async expire(id: string): Promise<boolean> {
    const entry = await this.closeRequest(id, 'expired', undefined, 'approval.expired');
    if (entry) this.events.emit('approval.expired', { request: entry.request });
    return entry !== undefined;
  }

  /**
   * After any close, whichever path learned of it first — this process's decision, timer or
   * withdrawal, a notification or poll of a close written elsewhere: stop its timer, wake its
   * waiters, update its cards and announce `approval.closed`, once per request. Several paths
   * learn of one close at nearly the same time (on a shared store this process's own NOTIFY
   * can arrive before its decision path gets here; a poll can read the row the moment it is
   * written), so the first claims the settlement before its first await and the others wait
   * for that one; a waiter registered meanwhile is still woken.
   */
  private settle(entry: LedgerEntry, grantId: string | undefined): Promise<void> {
    const id = entry.request.id;
    this.watched.delete(id);
    const timer = this.timers.get(id);
    if (timer) clearTimeout(timer);
    this.timers.delete(id);
    const escalation = this.escalations.get(id);
    if (escalation) clearTimeout(escalation);
    this.escalations.delete(id);
    const first = this.settlements.get(id);
    if (first) return first.catch(() => undefined).then(() => this.deliver(entry, grantId));
    const settling = this.settleOnce(entry, grantId);
    this.settlements.set(id, settling);
    // Bounded: a second path arrives within a few store round trips of the first, and once settled no timer or watch brings the id back.
    if (this.settlements.size > MAX_SETTLEMENTS_KEPT) this.settlements.delete(this.settlements.keys().next().value!);
    return settling;
  }

  private async settleOnce(entry: LedgerEntry, grantId: string | undefined): Promise<void> {
    await this.deliver(entry, grantId);
    background(this.update(entry.request), 'approval card not updated', { level: 'error', fields: { approval: entry.request.id } });
    // The deferred-call runner, the web page's pending list, the metrics: every closure, however it came, once.
    this.events.emit('approval.closed', { request: entry.request });
  }

  private async deliver(entry: LedgerEntry, grantId?: string): Promise<void> {
    if (!this.waiters.has(entry.request.id)) return;
    const resolution = await this.resolution(entry, grantId);
    const set = this.waiters.get(entry.request.id);
    if (!set) return;
    this.waiters.delete(entry.request.id);
    for (const waiter of set) waiter(resolution);
    this.stopPollingWhenIdle();
  }

  private stopPollingWhenIdle(): void {
    if (this.waiters.size === 0 && this.poller) {
      clearInterval(this.poller);
      this.poller = undefined;
    }
  }

  private async resolution(entry: LedgerEntry, grantId?: string): Promise<ApprovalResolution> {
    const outcome = entry.request.status as ApprovalOutcome;
    let grant = grantId;
    if (grant === undefined && (GRANT_DECISIONS as readonly string[]).includes(outcome) && entry.grant) grant = await this.ledger.grantOf(entry.request.id);
    return {
      id: entry.request.id,
      outcome,
      decidedBy: entry.request.decidedBy,
      grantId: grant,
      timeoutBehavior: entry.timeoutBehavior,
      ...(entry.shown !== undefined ? { shown: entry.shown } : {}),
      ...(entry.request.denyReason !== undefined ? { denyReason: entry.request.denyReason } : {}),
    };
  }

  private armExpiry(request: ApprovalRequest): void {
    const existing = this.timers.get(request.id);
    if (existing) clearTimeout(existing);
    // setTimeout caps at 2^31-1 ms; longer expiries are re-checked by the poller and recover().
    const delay = Math.min(Math.max(0, request.expiresAt - this.now()), 2_147_483_647);
    const timer = setTimeout(() => {
      this.timers.delete(request.id);
      void this.expire(request.id).catch((err: unknown) => {
        if (!this.stopped) log.error({ err, approval: request.id }, 'approval could not be expired');
      });
    }, delay);
    timer.unref();
    this.timers.set(request.id, timer);
  }

  private readonly escalations = new Map<string, NodeJS.Timeout>();

  /**
   * Undecided after its rule's `escalateAfterSec`: the card goes to `escalateTo` too. Armed by
   * whichever process times the request (its opener, or after a restart the one that adopts
   * it); the ledger's conditional write makes it happen once across processes.
   */
  private armEscalation(request: ApprovalRequest): void {
    if (request.escalateAt === undefined || request.escalatedAt !== undefined || this.escalations.has(request.id)) return;
    const delay = Math.min(Math.max(0, request.escalateAt - this.now()), 2_147_483_647);
    const timer = setTimeout(() => {
      this.escalations.delete(request.id);
      background(this.escalate(request.id), 'approval not escalated', { level: 'error', fields: { approval: request.id } });
    }, delay);
    timer.unref();
    this.escalations.set(request.id, timer);
  }

  /** Escalates a pending request now; false when it was decided or escalated already. */
  async escalate(id: string): Promise<boolean> {
    if (!(await this.ledger.escalate(id, this.now()))) return false;
    const entry = (await this.ledger.get(id))!;
    await this.audit.record({ type: 'approval.escalated', subject: id, sessionKey: entry.request.sessionKey, data: { to: entry.request.escalateTo, rule: entry.request.rule } });
    log.info({ approval: id, to: entry.request.escalateTo }, 'approval escalated');
    this.events.emit('approval.escalated', { request: entry.request });
    const renderers = this.renderersFor(entry.request);
    const results = await Promise.allSettled(renderers.map((r) => r.escalate?.(entry.request)));
    results.forEach((r) => {
      if (r.status === 'rejected') log.error({ err: r.reason, approval: id }, 'approval renderer failed to escalate a request');
    });
    await this.update(entry.request);
    return true;
  }

  /** While calls wait: pick up decisions other processes wrote and keep our waiters stamped alive. */
  private ensurePolling(): void {
    // A shared store pushes decisions (closedElsewhere) and leases instances; nothing to poll for, unless subscribing failed.
    if (this.poller || (this.options.store.db.shared && !this.pushUnavailable)) return;
    this.poller = setInterval(() => background(this.poll(), 'approval poll failed'), this.options.pollMs ?? 250);
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      const now = this.now();
      if (now - this.lastHeartbeat >= (this.options.heartbeatMs ?? 5000)) {
        this.lastHeartbeat = now;
        await this.ledger.heartbeat(this.instanceId, now);
      }
      for (const id of [...this.waiters.keys()]) {
        const entry = await this.ledger.get(id);
        if (!entry) continue;
        if (entry.request.status !== 'pending') await this.settle(entry, undefined);
        // An expiry this process's own timer will fire is left to it: two local paths racing to
        // close the same request would only have one lose its write.
        else if (now >= entry.request.expiresAt && !this.timers.has(id)) await this.expire(id);
      }
    } catch (err) {
      if (!this.stopped) log.warn({ err }, 'approvals: looking for decisions failed');
    } finally {
      this.polling = false;
    }
  }

  private async waiterAlive(entry: LedgerEntry, now: number): Promise<boolean> {
    const waiter = entry.waiter;
    if (!waiter) return false;
    if (waiter.instance === this.instanceId) return true;
    // A pid means nothing on another machine: on a shared store the instance's lease decides.
    if (this.options.instances) return this.options.instances.isLive(waiter.instance);
    if (now - waiter.seenAt > (this.options.staleWaiterMs ?? 60_000)) return false;
    return (this.options.isProcessAlive ?? processAlive)(waiter.pid);
  }

  private renderersFor(request: ApprovalRequest): ApprovalRenderer[] {
    return [...this.renderers].filter((r) => r.provider === request.provider);
  }

  private async show(request: ApprovalRequest): Promise<void> {
    const renderers = this.renderersFor(request);
    if (renderers.length === 0) return;
    const results = await Promise.allSettled(renderers.map((r) => r.show(request)));
    results.forEach((r, i) => {
      if (r.status === 'rejected') log.error({ err: r.reason, approval: request.id, provider: renderers[i]!.provider }, 'approval renderer failed to show a request');
    });
    if (results.some((r) => r.status === 'fulfilled')) await this.ledger.markRendered(request.id, this.now()).catch((err: unknown) => log.warn({ err, approval: request.id }, 'approval card shown but not recorded as shown'));
  }

  private async update(request: ApprovalRequest): Promise<void> {
    const renderers = this.renderersFor(request);
    const results = await Promise.allSettled(renderers.map((r) => r.update(request)));
    results.forEach((r, i) => {
      if (r.status === 'rejected') log.error({ err: r.reason, approval: request.id, provider: renderers[i]!.provider }, 'approval renderer failed to update a request');
    });
  }
}

/** Whether the actor is the person the call was made for. */
function isRequester(request: ApprovalRequest, by: ApprovalActor): boolean {
  return request.requesterId !== undefined && request.provider === by.provider && request.requesterId.trim().toLowerCase() === by.userId.trim().toLowerCase();
}

/** The longest deny reason kept; the card and the model's result show it whole. */
export const MAX_DENY_REASON = 500;

/** A typed reason, trimmed and clipped, control characters removed; empty → none. */
function cleanReason(reason: string | undefined): string | undefined {
  if (reason === undefined) return undefined;
  let out = '';
  for (const ch of reason) {
    const code = ch.codePointAt(0)!;
    out += code < 0x20 || code === 0x7f ? ' ' : ch;
  }
  out = out.trim();
  if (out === '') return undefined;
  return out.length > MAX_DENY_REASON ? `${out.slice(0, MAX_DENY_REASON - 1)}…` : out;
}
