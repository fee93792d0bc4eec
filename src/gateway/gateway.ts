import { performance } from 'node:perf_hooks';
import type { UsageCommandDeps } from './usage-command.js';
import type { UsageService } from '../usage/service.js';
import { scrubSecrets, secretLabelsIn } from '../redact/scrub.js';
import { randomUUID } from 'node:crypto';
import type { AgentRuntime, SessionContextRecorder, ToolExecutor } from '../agent/index.js';
import type { TranscriptAppend, TranscriptStore, TurnStart, TurnStartRead } from '../agent/types.js';
import { incomingAppend } from '../agent/incoming.js';
import type { WardenConfig } from '../config/index.js';
import { log } from '../log/log.js';
import type { TurnContext } from '../policy/context.js';
import type { SkillCommandSpec } from '../skills/commands.js';
import {
  NEW_ELSEWHERE_TEXT,
  NO_MODEL_HINT,
  runCommand,
  runPluginCommand,
  runsImmediately,
  type CommandDeps,
  type ParsedCommand,
  type ParsedPluginCommand,
  type PluginCommandRegistry,
  type SkillsView,
  type ToolReport,
} from './commands.js';
import { describeAdapter } from '../ops/adapter-text.js';
import { classifyCommandText, isAddressedCommand } from './command-text.js';
import { sessionKeyFor } from '../policy/session-key.js';
import { agentSkillNote, readSkillInstructions, runSkillToolCommand, skillTurnText, type SkillCommandSet } from './skill-commands.js';
import type { HookBus } from '../hooks/bus.js';
import { messageHookContext } from '../hooks/context.js';
import { DEFAULT_MAX_PENDING, SessionQueues, type EnqueueResult } from './queue.js';
import { leaseDigest, type ClaimedPlace, type HeldLease, type Place, type PlaceGuard } from '../cluster/leases.js';
import type { BatchStep } from '../store/db.js';
import { attachmentsFrom, decodeForwarded, encodeForwarded, forwardable } from './forwarded.js';
import { RecentForwards } from './recent-forwards.js';
import { routeMessage, ThreadParticipation, type Route } from './router.js';
import type { ApproveOutcome } from './approval-clicks.js';
import { answerDanglingCall, type FollowUpTurn } from './deferred-calls.js';
import type { FollowUpStore } from './follow-up-store.js';
import type { ApprovalRequest } from '../approvals/types.js';
import { buildTurnContext, conversationOf, refreshTurnContext, senderIsOwner, type Actor } from '../turn/turn-context.js';
import type { ApprovalClick, ChatAdapter, InboundMessage, OutboundFile, OutboundMessage, ReplyTarget } from './types.js';
import { turnReply, type TurnOrigin, type TurnReplyDeps, type TurnReplyRequest } from './turn-reply.js';
import { background } from '../util/background.js';
import { AccessGate, type NewPairingRequest } from './access-gate.js';
import { describeAccess } from '../policy/access.js';

export interface GatewayOptions {
  config: WardenConfig;
  adapters: ChatAdapter[];
  /** Provider keys for speech to text (the environment `warden start` read). */
  env?: Record<string, string | undefined> | undefined;
  /** An agent's workspace directory, where files people post are saved (`inbox/`); without it they are not taken in. */
  workspaceOf?: ((agentId: string) => string) | undefined;
  /** The turn loop; undefined when no model is configured (commands still work). */
  agent: AgentRuntime | undefined;
  /** The governed call path shared by turns and `/exec`. */
  tools: ToolExecutor | undefined;
  /** The policy's surface report for `/tools` (what `warden tools` prints). */
  toolReport(context: TurnContext): ToolReport;
  approvals: {
    /** The decision path of one platform, used by `/approve` typed there (buttons use the same). */
    approve(provider: InboundMessage['provider']): (click: ApprovalClick) => Promise<ApproveOutcome>;
    pendingCount(sessionKey: string): number | Promise<number>;
    /** Whether a request of the session was raised at or after `sinceMs` (any status). */
    raisedSince?: ((sessionKey: string, sinceMs: number) => Promise<boolean>) | undefined;
    /** The pending requests of a session, oldest first (`/approvals`); none when absent. */
    pending?: ((sessionKey: string) => ApprovalRequest[] | Promise<ApprovalRequest[]>) | undefined;
    /** The live grants of an agent (`/approvals grants`) and their revocation (`/approvals revoke ID`). */
    grants?: CommandDeps['grants'];
  };
  skills?: ((context: TurnContext) => SkillsView | undefined) | undefined;
  /** The default agent's skill commands (`/release_notes v1.2`), following its skill files. */
  skillCommands?: { current(): SkillCommandSet } | undefined;
  /** Where each routed message's conversation is recorded, so `sessions_send` runs under it later. */
  sessionContexts?: SessionContextRecorder | undefined;
  /** Messages waiting per session behind the running one. */
  maxPending?: number | undefined;
  /** How long shutdown lets running turns finish before aborting them. */
  shutdownGraceMs?: number | undefined;
  /**
   * A turn shows the typing indicator only once it has run this long (default 500 ms): quick
   * answers need none, and each indicator is a platform API call counted against rate limits.
   */
  typingDelayMs?: number | undefined;
  /** Paired nodes for `/nodes`; absent without a node listener. */
  nodes?: (() => import('../control/nodes/hub.js').NodeHub | undefined) | undefined;
  /** First wait before retrying a platform that could not be reached at start (doubles to 60 s). */
  adapterRetryBaseMs?: number | undefined;
  /** Plugin hooks: message_received, message_sending, message_sent, session_start, session_end. */
  hooks?: HookBus | undefined;
  /** Chat commands plugins registered. */
  pluginCommands?: PluginCommandRegistry | undefined;
  /** Usage records and budgets, for `/usage`. */
  usage?: UsageCommandDeps | undefined;
  /** Admits and records the media understanding calls of a message's files (the turn's own calls are metered by the agent). */
  meter?: Pick<UsageService, 'admit' | 'settle'> | undefined;
  /** The secret store's names (`/secrets`). */
  secretNames?: CommandDeps['secretNames'];
  /**
   * On a store several instances share: each item of a session runs holding the session's lease,
   * so a conversation's turns never overlap across instances (the second instance's item waits).
   */
  /**
   * Where follow-up turns that a shutdown would drop are parked (follow-up-store.ts): a
   * follow-up offered while this gateway is not running, or still queued when the shutdown
   * grace ends, is parked, and taken back — at the next start or by any instance sharing the
   * store — by one conditional write. Absent: such a follow-up is refused (logged).
   */
  followUps?:
    | {
        store: FollowUpStore;
        /** Repairs a dead turn's open tool call before a parked follow-up runs. */
        transcripts: TranscriptStore;
        /** This process among those sharing the store. */
        instance: string;
        /** Whether the instance that took a parked follow-up still runs (the cluster's lease); default: none other does. */
        alive?: ((instance: string) => Promise<boolean>) | undefined;
        /** How often parked follow-ups are looked for while running (default 15 s). */
        sweepMs?: number | undefined;
      }
    | undefined;
  sessionLeases?:
    | {
        /**
         * `keep`: asked when `fn` is done; true when this instance has the session's next item queued (the lease may pass to it in one write).
         * `taken`: the lease taken with the item's place (no acquire).
         */
        hold<T>(name: string, signal: AbortSignal, fn: (signal: AbortSignal, lease?: HeldLease) => Promise<T>, place?: number, keep?: () => boolean, taken?: HeldLease): Promise<T>;
        /** A place in the session's line across instances (arrival order), taken as a message queues here. */
        enqueue?(name: string): Promise<number>;
        /**
         * A place recorded with its message (`payload`), given to the conversation's owner: this
         * instance, or the one running the conversation, which picks it up (`claim`).
         */
        place?(name: string, payload?: string, takeLease?: boolean, alongside?: readonly BatchStep[], written?: (guard: PlaceGuard) => readonly BatchStep[]): Promise<Place>;
        /** Gives back a lease taken with a place whose item will not run here. */
        release?(lease: HeldLease): Promise<void>;
        /** The places forwarded to this instance, in place order. */
        claim?(): Promise<ClaimedPlace[]>;
        /** The places of instances that stopped or died, now this instance's. */
        takeOver?(): Promise<ClaimedPlace[]>;
        /** Hears places forwarded here; `takeOver` when dead instances' places may wait too. */
        onForwarded?(handler: (takeOver: boolean) => void): Promise<() => Promise<void>>;
        leave?(place: number): Promise<void>;
        /** `/stop` for a turn another instance runs: true when one does and was told. */
        requestStop?(name: string): Promise<boolean>;
        /** Stop requests from other instances, by the digest of the session's lease name. */
        onStop?(handler: (digest: string) => void): Promise<() => Promise<void>>;
      }
    | undefined;
  /**
   * Who may make Warden act (`access-gate.ts`): access rules, pairing, rate limits, the bot loop
   * breaker. Without one, the access rules still apply (no pairing codes, no rate limits).
   */
  access?: AccessGate | undefined;
  /**
   * Sees every inbound message (scrubbed) before routing, mentioned or not: conversations_turn's
   * waits take the next human reply in a conversation from here. It only reads. `admitted` says
   * whether the access rules let this sender reach the agent (asked only when the observer wants
   * the message: it may resolve user groups).
   */
  onInbound?: ((message: InboundMessage, admitted: () => Promise<boolean>) => void) | undefined;
}

/**
 * What a config reload swaps: the config and everything built from it. A turn takes the view
 * current when it starts and keeps it to the end (an immutable snapshot per turn).
 */
export interface GatewayConfigView {
  config: WardenConfig;
  agent: AgentRuntime | undefined;
  tools: ToolExecutor | undefined;
  toolReport(context: TurnContext): ToolReport;
  skills?: ((context: TurnContext) => SkillsView | undefined) | undefined;
}

interface QueuedItem {
  route: Route;
  /** The config the route was built under; a reload in between rebuilds the context at start. */
  config: WardenConfig;
  command: ParsedCommand | undefined;
  /** A skill command: a model turn with the skill, or its tool run directly. */
  skill?: { spec: SkillCommandSpec; args: string } | undefined;
  /** A plugin's command; queues like a turn (it may call tools). */
  pluginCommand?: ParsedPluginCommand | undefined;
  /** A turn Warden starts itself: subagent results arrived, or a deferred call's outcome. */
  origin?: TurnOrigin;
  /** Runs first when the item's turn comes (inside the session's queue). */
  before?: (() => void | Promise<void>) | undefined;
  /** A follow-up turn: parked (not dropped) when a shutdown hands it back before it began. */
  followUp?: FollowUpTurn | undefined;
  /** The parked row it was taken from: finished when its turn begins, put back if it never does. */
  parkedId?: string | undefined;
  /** Told how the item ended (scheduled turns report their outcome to the cron ledger). */
  onDone?: ((outcome: ScheduledOutcome) => void) | undefined;
  /** The loop-detection run a self-started turn continues (the one that spawned the subagents). */
  runId?: string | undefined;
  /** Its place in the session's line across instances (a shared store), taken when it arrived. */
  place?: number | undefined;
  /** The session's lease, taken with the place when the conversation was idle (one round trip for both). */
  lease?: HeldLease | undefined;
  /** What the turn starts from, read in that same write (its transcript): valid while `lease` was held throughout. */
  start?: TurnStart | undefined;
  /** The message is in the transcript already, written with its place (`seq` when known): the turn does not write it again. */
  written?: { seq?: number | undefined } | undefined;
  /** Its place carries the message (an instance that takes the place over runs it again). */
  rerunnable?: boolean | undefined;
}

/** A reply worked out by its item's turn, waiting for the replies before it to go out. */
interface Delivery {
  route: Route;
  item: QueuedItem;
  reply: OutboundMessage | undefined;
}

interface OutboxLane {
  waiting: Delivery[];
  /** Woken when the lane has sent everything (a streamed reply waiting to post, a lease holder, shutdown). */
  idle: Array<() => void>;
}

/** A turn's typing indicator, shown once the turn has run `typingDelayMs` (a timer argument, not a closure per turn). */
interface Typing {
  adapter: ChatAdapter;
  target: ReplyTarget;
  stop: (() => void) | undefined;
}

function showTyping(typing: Typing): void {
  typing.stop = typing.adapter.typing(typing.target);
}

/** An item that runs a model turn on the message as it came (not a command, a skill or a plugin's command). */
const isModelTurn = (item: QueuedItem): boolean => !item.command && !item.skill && !item.pluginCommand && item.origin === undefined && item.before === undefined;

/**
 * The transcript entry a model turn's message becomes, for its place to write: a person's
 * message without files (whose text the turn extends with what it makes of them) to a
 * configured model (without one no turn runs). The turn's input as `turnReply` builds it.
 */
function writtenAtPlace(item: QueuedItem): TranscriptAppend | undefined {
  const { route } = item;
  if (route.context.model === undefined || (route.attachments !== undefined && route.attachments.length > 0)) return undefined;
  return incomingAppend({ text: route.text, senderName: route.context.senderName }, route.context);
}

const outboxFailed = (err: unknown): void => log.error({ err }, 'replies of a session not sent');

export type ScheduledOutcome = { ok: true; detail: string } | { ok: false; error: string };

const TYPING_DELAY_MS = 500;

/** What a parent turn started by finished subagents is asked to do. */
export const SUBAGENTS_DONE_TEXT = 'Your subagents have finished. Tell the user what they found.';
/** Sessions whose last route is remembered, for turns Warden starts itself. */
const REMEMBERED_ROUTES = 10_000;

export const BUSY_TEXT = (waiting: number) =>
  `I'm still working on earlier messages in this conversation (${waiting} waiting), so I did not take this one. ` +
  'Please send it again in a moment, or use /stop to stop the current turn.';
export const SHUTDOWN_TEXT = 'Warden is shutting down and did not process this message. Please send it again once it is back.';

/**
 * The router in motion: takes every adapter's messages, routes them to sessions, runs
 * commands and turns one at a time per session, and sends the answers back through the
 * adapter the message came from.
 */
export class Gateway {
  private readonly queue: SessionQueues<QueuedItem>;
  private readonly threads = new ThreadParticipation();
  /** The router's questions, made once rather than for every message (`routeMessage` asks them while `receive` waits for nothing). */
  private readonly routeOptions = {
    botInThread: (sessionKey: string): boolean => this.threads.has(sessionKey),
    // A native command is addressed to the bot by how it was sent; typed ones by their form.
    isCommand: (text: string, message: InboundMessage): boolean =>
      message.invocationId !== undefined || isAddressedCommand(text, this.skillSpecs(), this.options.pluginCommands, senderIsOwner(this.view.config, message.provider, message.senderId)),
  };
  private readonly adapters = new Map<string, ChatAdapter>();
  private readonly startedAt = Date.now();
  private state: 'new' | 'running' | 'stopping' | 'stopped' = 'new';
  /** Platforms unreachable at start, waiting for their next try. */
  private readonly retries = new Map<string, NodeJS.Timeout>();
  /** Immediate commands in flight, so shutdown can wait for them too. */
  private readonly inFlight = new Set<Promise<void>>();
  /** Follow-ups being parked (the stop waits for them before the store closes). */
  private readonly parking = new Set<Promise<void>>();
  private followUpSweep: NodeJS.Timeout | undefined;
  /** The latest route of each session (bounded, oldest dropped): where a self-started turn answers. */
  private readonly routes = new Map<string, Route>();
  /** Sessions that received a message in this process, for session_start / session_end. */
  private readonly sessions = new Map<string, { agentId: string; startedAt: number; messages: number }>();
  private stopListener: (() => Promise<void>) | undefined;
  /** Per session, the message taking its place in the cross-instance line (see `lineUp`): the next waits for it. */
  private readonly placing = new Map<string, Promise<void>>();
  /** Sessions whose latest place taken here went to another instance (see `lineUp`). */
  private readonly forwardedLately = new RecentForwards();
  /** Stops hearing places forwarded here. */
  private inboxListener: (() => Promise<void>) | undefined;
  /** Messages that reached this instance whose place waits to be picked up in order (`pickUp`), by place. */
  private readonly arrived = new Map<number, QueuedItem>();
  /** The pick-ups in turn: one at a time, so places reach the local queue in their order. */
  private pickups: Promise<void> = Promise.resolve();
  private pickupWaiting: { done: Promise<void>; takeOver: boolean } | undefined;
  /** A pick-up is between its claim and queueing what it claimed: messages placed here meanwhile wait in `ready`. */
  private picking = false;
  private readonly ready = new Map<number, QueuedItem>();
  /** Per session, the replies worked out and not yet sent, in order (`deliver`). */
  private readonly outbox = new Map<string, OutboxLane>();

  private view: GatewayConfigView;
  private readonly gate: AccessGate;
  /** What every turn's reply needs of the gateway: fixed at construction (the adapter map changes in place). */
  private readonly replyDeps: TurnReplyDeps;

  constructor(private readonly options: GatewayOptions) {
    this.gate = options.access ?? new AccessGate({});
    this.view = { config: options.config, agent: options.agent, tools: options.tools, toolReport: options.toolReport, skills: options.skills };
    for (const adapter of options.adapters) this.adapters.set(adapter.provider, adapter);
    this.replyDeps = { adapters: this.adapters, hooks: options.hooks, env: options.env, workspaceOf: options.workspaceOf, meter: options.meter };
    const leases = options.sessionLeases;
    const leased = async (key: string, item: QueuedItem, signal: AbortSignal): Promise<void> => {
      let started = false;
      try {
        // What was read with the place's lease stands only if the work runs on that very lease.
        const run = (held: AbortSignal, lease?: HeldLease) => ((started = true), this.runItem(key, item.start && (lease === undefined || lease !== item.lease) ? { ...item, start: undefined } : item, held));
        await leases!.hold(`session:${key}`, signal, run, item.place, () => this.queue.pendingCount(key) > 0, item.lease);
      } catch (err) {
        // Stopped while waiting for another instance's turn: whoever waits for this item's outcome hears it.
        if (!started) item.onDone?.({ ok: false, error: `not run: ${(err as Error).message}` });
        throw err;
      }
    };
    this.queue = new SessionQueues((key, item, signal) => (leases ? leased(key, item, signal) : this.runItem(key, item, signal)), {
      maxPending: options.maxPending ?? DEFAULT_MAX_PENDING,
    });
  }

  /** The config new turns run under (a reload replaces it; running turns keep theirs). */
  get config(): WardenConfig {
    return this.view.config;
  }

  /** A reload: messages routed from now on, and turns that start from now on, use `view`. */
  reconfigure(view: Partial<GatewayConfigView>): void {
    this.view = { ...this.view, ...view };
  }

  /**
   * Replaces a running adapter (its block changed), adds one (`next` only) or removes one
   * (`next` undefined). The new adapter starts like one at boot; a failure is logged and
   * leaves the platform off until the next reload.
   */
  async replaceAdapter(provider: string, next: ChatAdapter | undefined): Promise<void> {
    const previous = this.adapters.get(provider);
    const timer = this.retries.get(provider);
    if (timer) clearTimeout(timer);
    this.retries.delete(provider);
    if (previous) {
      this.adapters.delete(provider);
      await previous.stop().catch((err: unknown) => log.error({ err, provider }, 'adapter did not stop cleanly'));
    }
    if (!next) return;
    this.adapters.set(provider, next);
    if (this.state !== 'running') return;
    try {
      await this.startAdapter(next, 0);
    } catch (err) {
      this.adapters.delete(provider);
      log.error({ err, provider }, 'chat adapter did not start after the config change');
      throw err;
    }
  }

  /** The running adapter of a provider. */
  adapter(provider: string): ChatAdapter | undefined {
    return this.adapters.get(provider);
  }

  async start(): Promise<void> {
    if (this.state !== 'new') throw new Error(`gateway already ${this.state}`);
    this.state = 'running';
    // `/stop` that reached another instance: the turn running here stops as if it had reached this one.
    this.stopListener = await this.options.sessionLeases
      ?.onStop?.((digest) => {
        for (const key of this.queue.runningKeys()) if (leaseDigest(`session:${key}`) === digest) this.queue.abort(key, 'stopped by /stop');
      })
      .catch((err: unknown) => {
        log.warn({ err: (err as Error).message }, '/stop from other instances unavailable');
        return undefined;
      });
    const leases = this.options.sessionLeases;
    if (leases?.onForwarded && leases.claim) {
      this.inboxListener = await leases.onForwarded((takeOver) => background(this.pickUp(takeOver), 'forwarded messages not picked up; the next notification or sweep tries again')).catch((err: unknown) => {
        log.warn({ err: (err as Error).message }, 'messages forwarded from other instances unavailable; they are taken over by the sweep');
        return undefined;
      });
      // Places left by instances that stopped or died while this one was not running.
      background(this.pickUp(true), 'places of stopped instances not taken over; the next sweep tries again');
    }
    for (const adapter of this.adapters.values()) await this.startAdapter(adapter, 0);
    if (this.options.followUps) {
      // Follow-ups parked by a shutdown (this process's last, or another instance's): run here, once.
      background(this.resumeFollowUps(), 'parked follow-ups not taken; the next sweep tries again');
      this.followUpSweep = setInterval(() => background(this.resumeFollowUps(), 'parked follow-ups not taken; the next sweep tries again'), this.options.followUps.sweepMs ?? 15_000);
      this.followUpSweep.unref?.();
    }
  }

  /** Which platforms are connected, and which are waiting to retry (for status reports). */
  adapterStates(): Array<{ provider: string; state: 'running' | 'retrying' }> {
    return [...this.adapters.keys()].map((provider) => ({ provider, state: this.retries.has(provider) ? 'retrying' : 'running' }));
  }

  /**
   * Starts one platform. A platform that cannot be reached (network error, 5xx) is retried with
   * backoff while the others run, so an outage at boot does not take Warden down; anything else
   * (a bad token, a port in use) fails the start so the operator sees it at once.
   */
  /**
   * A new pairing request's card, in the DM of each owner on the request's platform (owners are
   * who `/pair` accepts). A card that cannot be posted costs nothing: `/pair <code>` still works.
   */
  private async showPairingCard(config: WardenConfig, provider: string, request: NewPairingRequest): Promise<void> {
    const adapter = this.adapters.get(provider);
    const ownerIds = ((config.owners as Record<string, readonly string[] | undefined>)[provider] ?? []).filter((id) => id !== '*' && !id.includes(':'));
    if (!adapter?.askPairing || ownerIds.length === 0) return;
    try {
      await adapter.askPairing({ ...request, ownerIds });
    } catch (err) {
      log.warn({ err, provider, userId: request.userId }, 'could not post a pairing card; /pair still works');
    }
  }

  private async startAdapter(adapter: ChatAdapter, attempt: number): Promise<void> {
    try {
      await adapter.start((message) => this.receive(message));
      log.info({ provider: adapter.provider, attempt }, 'chat adapter started');
    } catch (err) {
      await adapter.stop().catch(() => undefined);
      if (this.state !== 'running') return;
      if (!isTransientStartError(err)) {
        if (attempt === 0) throw err;
        log.error({ provider: adapter.provider, err }, 'chat adapter cannot start; no more retries');
        return;
      }
      const base = this.options.adapterRetryBaseMs ?? 1000;
      const delayMs = Math.round(Math.min(60_000, base * 2 ** attempt) * (0.8 + Math.random() * 0.4));
      log.warn({ provider: adapter.provider, error: (err as Error).message, attempt: attempt + 1, retryInMs: delayMs }, 'chat platform unreachable; retrying');
      this.retries.set(
        adapter.provider,
        setTimeout(() => {
          this.retries.delete(adapter.provider);
          background(this.startAdapter(adapter, attempt + 1), 'chat adapter not started', { level: 'error', fields: { provider: adapter.provider } });
        }, delayMs),
      );
    }
  }

  /** One inbound message. Resolves once it is routed and queued (or answered, for immediate commands). */
  async receive(message: InboundMessage): Promise<void> {
    // A secret someone pasted is replaced before anything reads the message: the router, the
    // model, the transcript. The message is still handled; its sender is told to rotate it.
    const scrubbed = scrubSecrets(message.text);
    const leaked = scrubbed === message.text ? [] : secretLabelsIn(scrubbed);
    if (leaked.length > 0) message = { ...message, text: scrubbed };
    const observer = this.options.onInbound;
    if (observer) {
      try {
        const seen = message;
        observer(seen, () => this.gate.allows(this.view.config, seen));
      } catch (err) {
        log.warn({ err }, 'an inbound observer failed');
      }
    }
    const { config } = this.view;
    const skills = this.skillSpecs();
    const plugins = this.options.pluginCommands;
    const decision = routeMessage(config, message, this.routeOptions);
    if (decision.kind === 'ignore') {
      log.debug({ provider: message.provider, channelId: message.channelId, reason: decision.reason }, 'message ignored');
      return;
    }
    const { route } = decision;
    // Who may make Warden act, before anything acts: a refused message reaches no command, no hook and no model.
    const admitted = await this.gate.admit(config, message, route);
    if (!admitted.pass) {
      if (admitted.reply !== undefined && this.state === 'running') await this.send(route.replyTo, { text: admitted.reply });
      if (admitted.pairing && this.state === 'running') await this.showPairingCard(config, message.provider, admitted.pairing);
      return;
    }
    // Slack user groups are looked up, not sent: the turn's policy (`toolsBySender` keys) reads what the gate found.
    const usergroups = admitted.principal.usergroupIds;
    if (usergroups && usergroups.length > 0) route.context = { ...route.context, senderUsergroupIds: [...usergroups] };
    route.access = describeAccess(admitted.decision);
    if (leaked.length > 0) await this.warnLeak(message, route, leaked);
    this.remember(route);
    this.recordConversation(route);
    this.observeInbound(route, message);
    if (message.chatType === 'thread' && message.mentionsBot) this.threads.add(route.sessionKey);
    if (this.state !== 'running') {
      await this.send(route.replyTo, { text: SHUTDOWN_TEXT }, route);
      return;
    }

    const classified = classifyCommandText(route.text, { skills, plugins, senderIsOwner: route.context.senderIsOwner });
    if (classified.kind === 'answer') {
      // An unknown command is answered here; it never reaches the model.
      log.info({ sessionKey: route.sessionKey, word: classified.word }, 'unknown command answered');
      await this.send(route.replyTo, { text: classified.text });
      return;
    }
    const command = classified.kind === 'builtin' ? classified.command : undefined;
    const skill = classified.kind === 'skill' ? { spec: classified.spec, args: classified.args } : undefined;
    if (command && runsImmediately(command.name)) {
      const done = this.runImmediate(route, command);
      this.inFlight.add(done);
      await done.finally(() => this.inFlight.delete(done));
      return;
    }

    const pluginCommand = classified.kind === 'plugin' ? classified.command : undefined;
    const item: QueuedItem = { route, command, skill, pluginCommand, config };
    const queued = this.options.sessionLeases?.place ? await this.lineUp(item, forwardable(message)) : this.queue.enqueue(route.sessionKey, item);
    if (queued.ok) return;
    await this.refused(item, queued.reason);
  }

  /** Tells the sender a message was not queued (its session is full, or Warden is stopping). */
  private async refused(item: QueuedItem, reason: 'full' | 'closed'): Promise<void> {
    const { route } = item;
    const text = reason === 'full' ? BUSY_TEXT(this.queue.pendingCount(route.sessionKey)) : SHUTDOWN_TEXT;
    log.warn({ sessionKey: route.sessionKey, reason }, 'message not queued; sender told');
    await this.send(route.replyTo, { text }, route);
  }

  /**
   * A message's place in its session's line across instances, on a store other instances share:
   * its turn runs after every message of the conversation that reached the store before it,
   * whichever instance each reached (a load balancer spreads them). A message that can run
   * anywhere is recorded with its place and goes to the conversation's owner — the instance
   * running it while it is busy — which picks it up in place order (`pickUp`); so a busy
   * conversation stays on one instance instead of handing its lease back and forth, and the
   * message outlives this instance. Places are taken one at a time per session here, and each
   * message queues only after the one placed before it: the local queue holds them in place order.
   */
  private lineUp(item: QueuedItem, anywhere: boolean): Promise<EnqueueResult> {
    const leases = this.options.sessionLeases!;
    const key = item.route.sessionKey;
    const previous = this.placing.get(key) ?? Promise.resolve();
    const mine = previous.then(async (): Promise<EnqueueResult> => {
      // Refused here, before the place, the lease or the message is written: a refusal after them
      // would leave the message in the transcript with no turn to answer it.
      const refusal = this.queue.refusal(key);
      if (refusal !== undefined) return { ok: false, reason: refusal };
      let place: Place;
      let read: TurnStartRead | undefined;
      try {
        // The lease too when the conversation is idle here (nothing of it running or queued):
        // then the item starts at once and takes no lease of its own, one round trip fewer.
        // And, with the lease, the turn's first read (its transcript): a message on an idle
        // conversation starts in one round trip.
        // And the message itself, when it is a person's message to the model without files: in
        // the transcript from its place on (a crash during the model call loses it no more).
        // Not when this session's latest place here went to another instance a moment ago: it most
        // likely runs there still, and the lease's write and the reads would run for nothing.
        const takeLease = leases.release !== undefined && !this.queue.isRunning(key) && !this.forwardedLately.elsewhere(key, performance.now());
        read = takeLease && isModelTurn(item) ? this.view.agent?.startRead?.(key, writtenAtPlace(item)) : undefined;
        place = await leases.place!(`session:${key}`, anywhere ? encodeForwarded(item.route) : undefined, takeLease, read?.steps, read?.write);
      } catch (err) {
        // The turn still runs under the session's lease; only its order against other instances' messages is not promised.
        log.warn({ err: (err as Error).message, sessionKey: key }, 'no place in the session line; the message runs unordered across instances');
        return this.queue.enqueue(key, item);
      }
      // What was read with the lease, made ready here: from the checks below to the enqueue nothing waits.
      let start: TurnStart | undefined;
      if (place.lease && place.alongside && read) {
        start = await read.read(place.alongside).catch((err: unknown) => void log.warn({ err: (err as Error).message, sessionKey: key }, 'the turn reads its transcript itself'));
      }
      log.debug({ sessionKey: key, place: place.seq, ...(place.here ? {} : { forwardedTo: place.holder }) }, 'message took its place in the session line');
      this.forwardedLately.note(key, !place.here, performance.now());
      // Written with the place: whenever it runs (here, at once or later), its turn does not write it again.
      const seq = place.written && read?.writtenSeq ? read.writtenSeq(place.written) : undefined;
      if (seq !== undefined) item.written = { seq };
      if (anywhere) item.rerunnable = true;
      const lease = place.lease;
      // Taken with the place, but the item does not start at once (a pick-up under way, or this
      // session became busy meanwhile): given back, and the item takes the lease in its turn.
      if (lease && (this.picking || !place.taken || this.queue.isRunning(key))) {
        await leases.release!(lease).catch((err: unknown) => log.warn({ err: (err as Error).message }, 'lease release failed; it expires on its own'));
        delete place.lease;
      }
      // Forwarded: the owner runs it (and answers a refusal itself).
      if (!place.here) return { ok: true, position: 0 };
      if (!place.taken) {
        // This instance's, behind places forwarded here that wait to be picked up: picked up with them, in order.
        this.arrived.set(place.seq, item);
        await this.pickUp(false);
        return { ok: true, position: 0 };
      }
      // A pick-up under way may hold places that reached the store before this one (or after):
      // it queues this one with them, in place order.
      if (this.picking) {
        this.ready.set(place.seq, item);
        await this.pickups;
        return { ok: true, position: 0 };
      }
      const result = this.queue.enqueue(key, { ...item, place: place.seq, ...(place.lease ? { lease: place.lease, ...(start ? { start } : {}) } : {}) });
      if (!result.ok) {
        // Refused in the moment since the check above (the stop began, or the line filled): the
        // lease and the place are given back, and the sender is told (refused) — never silent.
        if (place.lease) await leases.release!(place.lease).catch(() => undefined);
        await leases.leave?.(place.seq).catch(() => undefined);
        if (item.written) log.warn({ sessionKey: key, reason: result.reason }, 'message refused after it was written with its place; the sender is told');
      }
      return result;
    });
    const settled = mine.then(
      () => undefined,
      () => undefined,
    );
    this.placing.set(key, settled);
    background(
      settled.then(() => {
        if (this.placing.get(key) === settled) this.placing.delete(key);
      }),
      'session line slot not cleared',
    );
    return mine;
  }

  /**
   * Picks up the places forwarded to this instance (and, with `takeOver`, those of instances that
   * stopped or died) into the local queue, in place order. Pick-ups run one at a time; a request
   * while one waits to start joins it.
   */
  private pickUp(takeOver: boolean): Promise<void> {
    const waiting = this.pickupWaiting;
    if (waiting) {
      waiting.takeOver ||= takeOver;
      return waiting.done;
    }
    const next = { done: Promise.resolve(), takeOver };
    next.done = this.pickups.then(async () => {
      this.pickupWaiting = undefined;
      await this.pickUpNow(next.takeOver);
    });
    this.pickupWaiting = next;
    this.pickups = next.done.catch(() => undefined);
    return next.done;
  }

  private async pickUpNow(takeOver: boolean): Promise<void> {
    const leases = this.options.sessionLeases;
    if (!leases?.claim || this.state !== 'running') return;
    this.picking = true;
    let rows: ClaimedPlace[] = [];
    try {
      const taken = takeOver && leases.takeOver ? await leases.takeOver() : [];
      const rerun: ClaimedPlace[] = [];
      for (const row of taken) if (!(await this.continuedElsewhere(row))) rerun.push(row);
      rows = [...rerun, ...(await leases.claim())];
    } finally {
      // Messages placed here meanwhile join the claimed places, all in place order (no await from here on).
      const ready = [...this.ready].map(([seq, item]) => ({ seq, item }));
      this.ready.clear();
      this.picking = false;
      const all = [...rows.map((row) => ({ seq: row.seq, row })), ...ready].sort((a, b) => a.seq - b.seq);
      background(this.queuePlaces(all), 'picked-up places not queued');
    }
  }

  /**
   * Whether a dead instance's message is already continued by an approval it raised: a turn
   * killed while its call waited for a decision is carried on by the approval's take-over (the
   * card, then the deferred call), so running the message again would ask a second time.
   */
  private async continuedElsewhere(row: ClaimedPlace): Promise<boolean> {
    const key = row.name.startsWith('session:') ? row.name.slice('session:'.length) : undefined;
    const raisedSince = this.options.approvals.raisedSince;
    if (key === undefined || row.placedAt === undefined || !raisedSince) return false;
    // Not known: run it again (at least once), rather than lose it.
    if (!(await raisedSince(key, row.placedAt).catch(() => false))) return false;
    log.info({ sessionKey: key, place: row.seq }, "a dead instance's message raised an approval, whose take-over continues it; not run again");
    await this.options.sessionLeases?.leave?.(row.seq).catch(() => undefined);
    return true;
  }

  /** Queues picked-up places in the order given (synchronously, up to the first refusal's reply). */
  private async queuePlaces(places: ReadonlyArray<{ seq: number; row?: ClaimedPlace; item?: QueuedItem }>): Promise<void> {
    const leases = this.options.sessionLeases!;
    const refusals: Array<Promise<void>> = [];
    for (const place of places) {
      const row = place.row;
      const key = row ? (row.name.startsWith('session:') ? row.name.slice('session:'.length) : undefined) : place.item?.route.sessionKey;
      const item = place.item ?? this.arrived.get(place.seq) ?? (key === undefined || !row ? undefined : this.forwardedItem(key, row));
      this.arrived.delete(place.seq);
      if (!item || key === undefined) {
        refusals.push(leases.leave?.(place.seq).catch(() => undefined) ?? Promise.resolve());
        continue;
      }
      const result = this.queue.enqueue(key, { ...item, place: place.seq });
      if (result.ok) continue;
      refusals.push((leases.leave?.(place.seq).catch(() => undefined) ?? Promise.resolve()).then(() => this.refused(item, result.reason)));
    }
    await Promise.all(refusals);
  }

  /** A message another instance received (or left behind when it died), as this instance runs it. */
  private forwardedItem(key: string, row: ClaimedPlace): QueuedItem | undefined {
    const decoded = row.payload === undefined ? ({ ok: false, error: 'payload: none' } as const) : decodeForwarded(row.payload);
    if (!decoded.ok || decoded.route.sessionKey !== key) {
      log.error({ place: row.seq, error: decoded.ok ? 'payload.route.sessionKey: not the place\'s session' : decoded.error }, 'a forwarded message cannot be read; dropped');
      return undefined;
    }
    const config = this.view.config;
    const forwarded = decoded.route;
    // The files are fetched again when the turn runs, by this instance's adapter for their platform.
    const provider = forwarded.replyTo.provider;
    const files = decoded.files.length > 0 ? { attachments: attachmentsFrom(decoded.files, provider, this.adapters.get(provider)) } : {};
    // The context is rebuilt under this instance's config (it may have reloaded since the other decided).
    const route: Route = { ...forwarded, ...files, context: refreshTurnContext(config, forwarded.context) };
    const classified = classifyCommandText(route.text, { skills: this.skillSpecs(), plugins: this.options.pluginCommands, senderIsOwner: route.context.senderIsOwner });
    this.remember(route);
    log.debug({ sessionKey: key, place: row.seq }, 'picked up a message another instance received');
    return {
      route,
      config,
      command: classified.kind === 'builtin' ? classified.command : undefined,
      skill: classified.kind === 'skill' ? { spec: classified.spec, args: classified.args } : undefined,
      pluginCommand: classified.kind === 'plugin' ? classified.command : undefined,
      // Written with its place by the instance it reached: not written again here.
      ...(row.written ? { written: {} } : {}),
      rerunnable: true,
    };
  }

  /**
   * Graceful stop: no new messages; running turns get `shutdownGraceMs` to finish, then are
   * aborted; anything still waiting is answered with a "shutting down" note; then the
   * adapters close. The caller closes the store afterwards, so nothing is written half-way.
   */
  async stop(): Promise<void> {
    if (this.state === 'stopping' || this.state === 'stopped') return;
    this.state = 'stopping';
    await this.stopListener?.().catch(() => undefined);
    // Places forwarded here from now on stay for the other instances to take over.
    await this.inboxListener?.().catch(() => undefined);
    for (const timer of this.retries.values()) clearTimeout(timer);
    this.retries.clear();
    this.queue.close();
    const idle = this.queue.whenIdle();
    const grace = this.options.shutdownGraceMs ?? 10_000;
    let timer: NodeJS.Timeout | undefined;
    const finished = await Promise.race([
      idle.then(() => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), grace);
      }),
    ]);
    clearTimeout(timer);
    if (!finished) {
      const all = this.queue.abortAll('shutting down');
      // A follow-up nobody typed is parked, not answered with "send it again".
      const handedBack = all.filter((item) => !(item.followUp && this.options.followUps));
      for (const item of all) if (item.followUp && this.options.followUps) this.park(item.followUp, item.parkedId);
      log.warn({ waiting: handedBack.length, parked: all.length - handedBack.length }, 'shutdown: aborted running turns');
      for (const item of handedBack) item.onDone?.({ ok: false, error: 'Warden shut down before this turn ran' });
      await Promise.all(handedBack.map((item) => this.send(item.route.replyTo, { text: SHUTDOWN_TEXT })));
      await idle;
    }
    if (this.followUpSweep) clearInterval(this.followUpSweep);
    this.followUpSweep = undefined;
    // Replies worked out before the stop still go out, before the adapters close.
    await Promise.all([...this.outbox.keys()].map(this.delivered));
    await Promise.allSettled([...this.inFlight]);
    await this.endSessions();
    for (const adapter of this.adapters.values()) {
      try {
        await adapter.stop();
      } catch (err) {
        log.error({ err, provider: adapter.provider }, 'adapter did not stop cleanly');
      }
    }
    // Follow-ups parked during the stop are written before the caller closes the store.
    await Promise.allSettled([...this.parking]);
    this.state = 'stopped';
  }

  /**
   * A subagent of `parentKey` finished: queue a parent turn, which picks up the results and
   * answers where the parent's conversation is. The turn acts for `requester`, who started the
   * subagent (no requester: a non-owner). When the session is unknown (a restart) or busy beyond
   * its bound, the results wait for the parent's next turn instead.
   */
  announce(parentKey: string, requester?: Actor & { owner: boolean }, runId?: string): void {
    const route = this.routes.get(parentKey);
    if (!route || this.state !== 'running') {
      log.info({ sessionKey: parentKey }, 'subagent results wait for the next turn of their session');
      return;
    }
    // The turn acts for whoever started the subagent, not for the conversation's latest sender.
    const config = this.view.config;
    const context = buildTurnContext(config, {
      agentId: route.agentId,
      conversation: conversationOf(route.context),
      sender: requester ?? {},
      mayBeOwner: requester?.owner ?? false,
    });
    const queued = this.queue.enqueue(parentKey, { route: { ...route, context, text: SUBAGENTS_DONE_TEXT }, command: undefined, origin: 'session', runId, config });
    if (!queued.ok) log.info({ sessionKey: parentKey, reason: queued.reason }, 'subagent results wait for the next turn of their session');
  }

  /**
   * Runs a turn Warden starts itself (a cron job) behind the session's queue, like a message
   * would, and resolves with how it ended. Never rejects.
   */
  runScheduled(route: Route): Promise<ScheduledOutcome> {
    return new Promise((resolve) => {
      if (this.state !== 'running') return resolve({ ok: false, error: 'Warden is shutting down' });
      this.remember(route);
      const queued = this.queue.enqueue(route.sessionKey, { route, command: undefined, onDone: resolve, config: this.view.config });
      if (!queued.ok) resolve({ ok: false, error: queued.reason === 'full' ? `the session queue is full (${this.queue.pendingCount(route.sessionKey)} waiting)` : 'Warden is shutting down' });
    });
  }

  /**
   * A deferred call's outcome: a turn in its conversation, behind what is queued there, that
   * hands the agent the outcome. Never refused for a full queue (the outcome must reach the
   * agent); false only when the gateway is not running.
   */
  followUp(turn: FollowUpTurn): boolean {
    if (this.state !== 'running') {
      // Claimed by its caller already: parked for the next start or another instance, not dropped.
      if (!this.options.followUps || this.state === 'stopped') return false;
      this.park(turn);
      return true;
    }
    const route: Route = { agentId: turn.agentId, sessionKey: turn.sessionKey, context: turn.context, replyTo: turn.replyTo, text: turn.text };
    const queued = this.queue.enqueue(turn.sessionKey, { route, command: undefined, origin: 'approval', before: turn.before, followUp: turn, config: this.view.config }, { overflow: true });
    return queued.ok;
  }

  /** Parks a follow-up this process will not run (tracked: the stop waits for the write). */
  private park(turn: FollowUpTurn, parkedId?: string): void {
    const followUps = this.options.followUps;
    if (!followUps) return;
    const write = parkedId !== undefined ? followUps.store.putBack(parkedId, followUps.instance) : followUps.store.park(turn).then(() => undefined);
    const done = write.then(
      () => log.info({ sessionKey: turn.sessionKey }, 'follow-up parked for the next start or another instance'),
      (err: unknown) => log.error({ err, sessionKey: turn.sessionKey }, 'follow-up could not be parked; it is lost'),
    );
    this.parking.add(done);
    // `done` never rejects (both outcomes are handled above); it only leaves the set when settled.
    background(done.finally(() => this.parking.delete(done)), 'follow-up parking not tracked');
  }

  /**
   * Takes the parked follow-ups (this process's from before a restart, or another instance's
   * that stopped) and queues them; each is taken by one write, so it runs on one instance.
   */
  async resumeFollowUps(): Promise<number> {
    const followUps = this.options.followUps;
    if (!followUps || this.state !== 'running') return 0;
    const taken = await followUps.store.take(followUps.instance, followUps.alive ?? (async () => false));
    for (const f of taken) {
      // Parked under the config of its time, maybe before a restart: judged under today's (never
      // more of an owner than it was), as a forwarded message is.
      const context = refreshTurnContext(this.view.config, f.context);
      const before = f.dangling ? () => answerDanglingCall(followUps.transcripts, { approvalId: f.dangling!.approvalId, sessionKey: f.sessionKey, toolCallId: f.dangling!.toolCallId }, f.dangling!.pendingText) : undefined;
      const turn: FollowUpTurn = { ...f, context, before };
      const route: Route = { agentId: context.agentId, sessionKey: f.sessionKey, context, replyTo: f.replyTo, text: f.text };
      const queued = this.queue.enqueue(f.sessionKey, { route, command: undefined, origin: 'approval', before, followUp: turn, parkedId: f.id, config: this.view.config }, { overflow: true });
      if (!queued.ok) await followUps.store.putBack(f.id, followUps.instance);
      else log.info({ sessionKey: f.sessionKey }, 'parked follow-up queued');
    }
    return taken.length;
  }

  /** Whether new work is taken (false once stopping). */
  get accepting(): boolean {
    return this.state === 'running';
  }

  /** Posts a notice outside any turn (an interrupted approval, a deferred call's result). */
  notify(target: ReplyTarget, message: OutboundMessage): Promise<void> {
    return this.send(target, message);
  }

  /** Sessions, running and waiting items; for `/status`, tests and benchmarks. */
  stats() {
    return this.queue.stats();
  }

  private recordConversation(route: Route): void {
    const contexts = this.options.sessionContexts;
    if (!contexts) return;
    // Without a record the session cannot be messaged by another one: the safe side.
    const failed = (err: unknown) => log.warn({ err, sessionKey: route.sessionKey }, 'conversation of the session could not be recorded');
    try {
      void Promise.resolve(contexts.record(route.sessionKey, route.agentId, conversationOf(route.context), route.context.senderId)).catch(failed);
    } catch (err) {
      failed(err);
    }
  }

  private remember(route: Route): void {
    this.routes.delete(route.sessionKey);
    this.routes.set(route.sessionKey, route);
    if (this.routes.size > REMEMBERED_ROUTES) this.routes.delete(this.routes.keys().next().value as string);
  }

  private async runImmediate(route: Route, command: ParsedCommand): Promise<void> {
    const reply = await this.commandReply(route, command, new AbortController().signal, this.view);
    await this.send(route.replyTo, reply, route);
  }

  /** message_received and, for a session's first message in this process, session_start (observers: nothing waits for them). */
  private observeInbound(route: Route, message: InboundMessage): void {
    const hooks = this.options.hooks;
    const known = this.sessions.get(route.sessionKey);
    if (known) known.messages++;
    else {
      this.sessions.set(route.sessionKey, { agentId: route.agentId, startedAt: Date.now(), messages: 1 });
      if (hooks?.has('session_start')) hooks.fire('session_start', { sessionId: route.sessionKey, sessionKey: route.sessionKey }, { agentId: route.agentId, sessionId: route.sessionKey, sessionKey: route.sessionKey });
    }
    if (!hooks?.has('message_received')) return;
    hooks.fire(
      'message_received',
      {
        from: message.senderId,
        content: route.text,
        timestamp: Date.now(),
        ...(message.threadId !== undefined ? { threadId: message.threadId } : {}),
        messageId: message.messageId,
        senderId: message.senderId,
        sessionKey: route.sessionKey,
      },
      messageHookContext({ provider: message.provider, channelId: message.channelId }, { sessionKey: route.sessionKey, senderId: message.senderId, messageId: message.messageId, turn: route.context }),
    );
  }

  /** session_end for every session this process saw (Warden's sessions outlive it; the reason is `shutdown`). */
  private async endSessions(): Promise<void> {
    const hooks = this.options.hooks;
    if (!hooks?.has('session_end')) return;
    const now = Date.now();
    await Promise.all(
      [...this.sessions].map(([key, s]) =>
        hooks.runVoid('session_end', { sessionId: key, sessionKey: key, messageCount: s.messages, durationMs: now - s.startedAt, reason: 'shutdown' }, { agentId: s.agentId, sessionId: key, sessionKey: key }),
      ),
    );
  }

  /**
   * One queued item: its reply is worked out in the session's turn, then delivered behind the
   * session's previous reply (`deliver`). Without a shared store the queue moves on as soon as
   * the reply is worked out, so the next turn's model call overlaps this reply's sending; the
   * replies still reach the platform one after another, in order, and the transcript is written
   * by the turns, which stay one at a time. On a shared store the item holds the session's lease
   * until its reply is out, so another instance's next reply cannot overtake it.
   */
  private async runItem(sessionKey: string, item: QueuedItem, signal: AbortSignal): Promise<void> {
    // A follow-up whose turn would begin once the stop has begun is parked instead: begun, it is
    // the transcript's (no longer parked), and the grace's end would abort it — lost to everyone.
    if (item.followUp && this.options.followUps && this.state !== 'running') {
      this.park(item.followUp, item.parkedId);
      return;
    }
    // The turn's snapshot: taken now, kept to its end whatever reloads meanwhile.
    const view = this.view;
    const { command } = item;
    const route = item.config === view.config ? item.route : { ...item.route, context: refreshTurnContext(view.config, item.route.context) };
    const adapter = this.adapters.get(route.replyTo.provider);
    const typing: Typing | undefined = adapter ? { adapter, target: route.replyTo, stop: undefined } : undefined;
    const typingTimer = typing ? setTimeout(showTyping, this.options.typingDelayMs ?? TYPING_DELAY_MS, typing) : undefined;
    let reply: OutboundMessage | undefined;
    try {
      // A parked follow-up's turn begins: from here it is the transcript's, no longer parked.
      if (item.parkedId !== undefined) await this.options.followUps?.store.finish(item.parkedId);
      if (item.before) await item.before();
      if (command) reply = await this.commandReply(route, command, signal, view);
      else if (item.skill) reply = await this.skillReply(route, item.skill, signal, view);
      else if (item.pluginCommand) reply = await this.pluginCommandReply(route, item.pluginCommand, signal, view);
      else reply = await this.turnReply({ route, signal, view, origin: item.origin, runId: item.runId, delivered: this.outbox.has(sessionKey) ? this.delivered : undefined, start: item.start, written: item.written, rerunnable: item.rerunnable });
    } catch (err) {
      item.onDone?.({ ok: false, error: (err as Error).message });
      throw err;
    } finally {
      clearTimeout(typingTimer);
      typing?.stop?.();
    }
    this.deliver(sessionKey, { route, item, reply });
    if (this.options.sessionLeases) await this.delivered(sessionKey);
  }

  /**
   * Queues an item's reply behind the session's previous ones. One loop per session sends them,
   * one at a time, and tells each item how it ended (no promise chain or closure per reply).
   */
  private deliver(sessionKey: string, delivery: Delivery): void {
    const lane = this.outbox.get(sessionKey);
    if (lane) {
      lane.waiting.push(delivery);
      return;
    }
    const fresh: OutboxLane = { waiting: [delivery], idle: [] };
    this.outbox.set(sessionKey, fresh);
    void this.sendInTurn(sessionKey, fresh).catch(outboxFailed);
  }

  /** Sends a session's replies until none waits, then clears its lane and wakes who waits for it. */
  private async sendInTurn(sessionKey: string, lane: OutboxLane): Promise<void> {
    try {
      for (let next = lane.waiting.shift(); next; next = lane.waiting.shift()) {
        const { route, item, reply } = next;
        try {
          if (reply && (reply.text !== '' || (reply.files?.length ?? 0) > 0)) await this.send(route.replyTo, reply, route);
          if (route.replyTo.threadId !== undefined) this.threads.add(sessionKey);
          item.onDone?.({ ok: true, detail: (reply?.text ?? '').slice(0, 500) });
        } catch (err) {
          log.error({ err, sessionKey }, 'reply not delivered');
        }
      }
    } finally {
      this.outbox.delete(sessionKey);
      for (const wake of lane.idle) wake();
    }
  }

  /** Resolves once every reply of the session queued so far has gone out. */
  private readonly delivered = (sessionKey: string): Promise<void> => {
    const lane = this.outbox.get(sessionKey);
    return lane ? new Promise((resolve) => lane.idle.push(resolve)) : Promise.resolve();
  };

  private turnReply(turn: TurnReplyRequest): Promise<OutboundMessage | undefined> {
    return turnReply(this.replyDeps, turn);
  }

  /**
   * A skill command: `command-dispatch: tool` runs its tool like `/exec` (no model); any other
   * is a model turn given the skill's instructions and the typed request.
   */
  private async skillReply(route: Route, skill: { spec: SkillCommandSpec; args: string }, signal: AbortSignal, view: GatewayConfigView): Promise<OutboundMessage | undefined> {
    const { spec, args } = skill;
    if (spec.dispatch) {
      try {
        return await runSkillToolCommand(spec, args, route, this.commandDeps(route, view), signal);
      } catch (err) {
        log.error({ err, command: spec.name, sessionKey: route.sessionKey }, 'skill command failed');
        return { text: `/${spec.name} failed: ${(err as Error).message}` };
      }
    }
    if (!view.agent || route.context.model === undefined) return { text: `/${spec.name} runs the ${spec.skillName} skill, which needs a model. ${NO_MODEL_HINT}` };
    const reply = await this.turnReply({ route: { ...route, text: skillTurnText(spec, readSkillInstructions(spec), route.text) }, signal, view });
    if (!spec.agentWritable) return reply;
    // The person who typed it is told which file ran, and that the model took it as untrusted data.
    const note = agentSkillNote(spec);
    return reply ? { ...reply, text: reply.text ? `${reply.text}\n\n${note}` : note } : { text: note };
  }

  private skillSpecs(): readonly SkillCommandSpec[] {
    try {
      return this.options.skillCommands?.current().specs ?? [];
    } catch (err) {
      log.error({ err }, 'skill commands unavailable');
      return [];
    }
  }

  /**
   * `/new` where the adapter keeps sessions of its own (the web chat): a fresh session id, whose
   * key is recorded at once with the conversation, so the store names the current session even
   * before its first message, and a restart comes back to it.
   */
  private async newSession(route: Route): Promise<string> {
    const adapter = this.adapters.get(route.replyTo.provider);
    if (!adapter?.newSession || route.context.chat !== 'dm' || route.context.senderId === undefined) return NEW_ELSEWHERE_TEXT;
    const sessionId = await adapter.newSession(route.replyTo);
    const sessionKey = sessionKeyFor(route.agentId, {
      provider: route.replyTo.provider,
      chatType: 'dm',
      channelId: route.replyTo.channelId,
      senderId: route.context.senderId,
      sessionId,
    });
    const fresh: Route = { ...route, sessionKey };
    this.remember(fresh);
    this.recordConversation(fresh);
    log.info({ from: route.sessionKey, to: sessionKey }, 'new session started');
    return `Started a new session: ${sessionKey}. The previous one, ${route.sessionKey}, keeps its transcript.`;
  }

  private async commandReply(route: Route, command: ParsedCommand, signal: AbortSignal, view: GatewayConfigView): Promise<OutboundMessage> {
    try {
      return await runCommand(command, route, this.commandDeps(route, view), signal);
    } catch (err) {
      log.error({ err, command: command.name, sessionKey: route.sessionKey }, 'command failed');
      return { text: `/${command.name} failed: ${(err as Error).message}` };
    }
  }

  private async pluginCommandReply(route: Route, parsed: ParsedPluginCommand, signal: AbortSignal, view: GatewayConfigView): Promise<OutboundMessage> {
    try {
      return await runPluginCommand(parsed, route, this.commandDeps(route, view), signal);
    } catch (err) {
      log.error({ err, command: parsed.command.name, plugin: parsed.command.pluginId, sessionKey: route.sessionKey }, 'plugin command failed');
      return { text: `/${parsed.command.name} failed: ${(err as Error).message}` };
    }
  }

  private commandDeps(route: Route, view: GatewayConfigView): CommandDeps {
    const { options } = this;
    return {
      toolReport: view.toolReport,
      tools: view.tools,
      approve: options.approvals.approve(route.replyTo.provider),
      skills: (context) => view.skills?.(context),
      status: async (r) => ({
        model: r.context.model,
        running: this.queue.isRunning(r.sessionKey),
        queued: this.queue.pendingCount(r.sessionKey),
        pendingApprovals: await options.approvals.pendingCount(r.sessionKey),
        adapters: [...this.adapters].map(([provider, adapter]) => describeAdapter(provider, adapter.shards?.())),
        uptimeMs: Date.now() - this.startedAt,
      }),
      stop: async (key) => this.queue.abort(key, 'stopped by /stop') || ((await this.options.sessionLeases?.requestStop?.(`session:${key}`)) ?? false),
      pendingApprovals: async (key) => (await options.approvals.pending?.(key)) ?? [],
      grants: options.approvals.grants,
      newCallId: () => `cmd-${randomUUID()}`,
      skillCommands: () => this.skillSpecs(),
      newSession: (r) => this.newSession(r),
      pluginCommands: options.pluginCommands,
      nodes: options.nodes,
      pairing: this.gate.pairing,
      usage: options.usage,
      secretNames: options.secretNames,
    };
  }

  /**
   * Tells whoever pasted a secret that it was hidden and must be rotated: privately (a DM) on
   * Discord and Slack, in the conversation on the web chat (where only they read it).
   */
  private async warnLeak(message: InboundMessage, route: Route, labels: readonly string[]): Promise<void> {
    log.warn({ provider: message.provider, channelId: message.channelId, senderId: message.senderId, labels }, 'an inbound message held a secret; it was replaced before the model or the store saw it');
    const text = `Your message held what looks like a secret (${labels.join(', ')}). It was replaced before the assistant or its transcript saw it, but it was posted in the chat: rotate it now.`;
    const target: ReplyTarget = message.provider === 'web' ? route.replyTo : { provider: message.provider, channelId: message.channelId, dmUserId: message.senderId };
    await this.send(target, { text });
  }

  private async send(target: ReplyTarget, message: OutboundMessage, route?: Route): Promise<void> {
    const adapter = this.adapters.get(target.provider);
    if (!adapter) {
      log.error({ provider: target.provider }, 'no adapter for reply');
      return;
    }
    await sendWithHooks(this.options.hooks, adapter, target, message, route ? { sessionKey: route.sessionKey, turn: route.context } : {});
  }
}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_SOCKET']);

/** A network failure or a server-side error: worth trying again later. Looks through `cause` chains. */
export function isTransientStartError(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, status } = e as { code?: unknown; status?: unknown };
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
    if (typeof status === 'number' && (status >= 500 || status === 429)) return true;
    if (/\b(ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|socket hang up)\b/.test(String((e as Error).message ?? ''))) return true;
  }
  return false;
}

/**
 * One outbound message through message_sending (which may rewrite or cancel it) and
 * message_sent. The gateway's replies and the message tool's posts both come here. A delivery
 * failure is logged, never thrown.
 */
export async function sendWithHooks(
  hooks: HookBus | undefined,
  adapter: ChatAdapter,
  target: ReplyTarget,
  message: OutboundMessage,
  extra: { sessionKey?: string | undefined; turn?: TurnContext | undefined },
): Promise<{ ok: true; messageId?: string | undefined } | { ok: false; error: string; cancelled?: boolean }> {
  const to = target.dmUserId ? `dm:${target.dmUserId}` : target.channelId;
  const ctx = hooks && (hooks.has('message_sending') || hooks.has('message_sent')) ? messageHookContext(target, extra) : undefined;
  let outgoing = message;
  if (ctx && hooks!.has('message_sending')) {
    const decided = await hooks!.runMessageSending({ to, content: message.text, ...(target.threadId !== undefined ? { threadId: target.threadId } : {}) }, ctx);
    if (decided.cancelled) {
      log.info({ provider: target.provider, channelId: target.channelId, reason: decided.cancelReason }, 'message_sending hook cancelled a message');
      return { ok: false, error: `cancelled by a message_sending hook${decided.cancelReason ? `: ${decided.cancelReason}` : ''}`, cancelled: true };
    }
    if (decided.content !== message.text) outgoing = { ...message, text: decided.content };
  }
  let error: string | undefined;
  let messageId: string | undefined;
  try {
    messageId = (await adapter.send(target, outgoing))?.messageId;
  } catch (err) {
    error = (err as Error).message;
    log.error({ err, provider: target.provider, channelId: target.channelId }, 'reply not delivered');
  }
  if (ctx && hooks!.has('message_sent')) {
    hooks!.fire('message_sent', { to, content: outgoing.text, success: error === undefined, ...(extra.sessionKey ? { sessionKey: extra.sessionKey } : {}), ...(error ? { error } : {}) }, ctx);
  }
  return error === undefined ? { ok: true, messageId } : { ok: false, error };
}