import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { webChatToken, WEB_CHANNEL_ID, WEB_LOCAL_USER, type WebAdapter } from '../../adapters/web/index.js';
import { startRefusal, type WebChatFirst } from './start-first.js';
import { storeWebHistory } from '../../adapters/web/history.js';
import type { ToolExecutor } from '../agent/index.js';
import type { AgentDeps } from '../agent/types.js';
import type { WardenAgentRuntime } from '../agent/runtime.js';
import { DbTranscriptStore } from '../agent/transcript.js';
import { SessionContextStore } from '../turn/session-contexts.js';
import type { SubagentRunView } from '../agent/sessions.js';
import { ApprovalService, approverRefusal } from '../approvals/index.js';
import { closeAllBrowsers } from '../browser/shutdown.js';
import { ConfigError, type LoadedConfig, type WardenConfig } from '../config/index.js';
import { EventBus } from '../events/events.js';
import { log } from '../log/log.js';
import { listenerAddress, registerOwnListenerSource, runningListeners } from '../net/index.js';
import type { ControlPlane, ToolRuntime } from './tool-runtime.js';
import { defaultAgentId, knownAgentIds } from '../policy/steps.js';
import { agentWorkspace } from '../exec/agent-workspace.js';
import { createAgentWorkspaces } from './workspaces.js';
import { apiKeyFor, modelRefForAgent, modelSettings } from '../models/settings.js';
import { webWelcome } from '../../adapters/web/welcome.js';
import { sessionSkillsCatalog } from '../skills/index.js';
import { SessionSkillSnapshots } from '../skills/snapshot.js';
import { openConfiguredStore, WARDEN_MIGRATIONS } from './migrations.js';
import { createUsageService } from './usage.js';
import { usageReport } from '../usage/report.js';
import { migrationsFor, resolveDataDir, type Store } from '../store/index.js';
import { metrics } from '../ops/metrics.js';
import { adaptersCheck, migrationsCheck, readiness, shardsCheck, storeCheck, type Readiness } from '../ops/readiness.js';
import { OPS_LISTENER, OpsServer } from '../ops/server.js';
import type { CronJobs } from '../cron/jobs.js';
import { HookedCronJobs, skillChangeReporter } from '../plugins/lifecycle.js';
import { adoptPluginRuntime, loadPluginRuntime, pluginReloadProblems, type PluginRuntime } from '../plugins/runtime.js';
import { McpManager } from '../mcp/manager.js';
import { bindMcpManager, mcpManagerFor, reservedToolNames } from '../mcp/registry.js';
import { CronScheduler } from '../cron/scheduler.js';
import { joinCluster, type Cluster } from '../cluster/index.js';
import { createCronDeliver } from '../gateway/scheduled.js';
import { approveOn, withWebLocalOwner, type ResolveApproval } from '../gateway/approval-clicks.js';
import { DeferredCallRunner } from '../gateway/deferred-calls.js';
import { AccessGate } from '../gateway/access-gate.js';
import { PairingStore } from '../cluster/pairing.js';
import { BotLoopStore } from '../cluster/bot-loop.js';
import { SharedDeliveries } from '../cluster/deliveries.js';
import { RateLimiter } from '../cluster/rate-limit.js';
import { FollowUpStore } from '../gateway/follow-up-store.js';
import { Gateway } from '../gateway/gateway.js';
import { GovernedToolExecutor } from './tool-executor.js';
import { sessionKeyFor } from '../policy/session-key.js';
import { SkillCommandCatalog } from '../gateway/skill-commands.js';
import type { ChatAdapter, InboundMessage } from '../gateway/types.js';
import { plannedAdapters } from '../config/planned-adapters.js';
import { toolsToPreload } from './preload.js';
import { ConfigAdmin } from '../control/config-admin.js';
import { ConfigFileWatcher } from '../control/config-watch.js';
import { DeciderGuards } from '../control/decider-guards.js';
import { LiveConfig } from '../control/live-config.js';
import { ConfigReloader, type ApplyOutcome } from '../control/reloader.js';
import { surfaceInputs } from './surface-inputs.js';
import { ControlListeners } from '../control/listeners.js';
import { NodeHub } from '../control/nodes/hub.js';
import { NodeStore } from '../control/nodes/store.js';
import { background } from '../util/background.js';
import { messagingFor, createToolPath } from './tool-path.js';
import { cardPlatform, restartChangedAdapters, runtimeProblems, notifyOwners, createAdapter, listenerOf } from './chat-adapters.js';
import { NODE_LISTENER, controlListeners, carryOverResources } from './control-plane.js';
import { createAgent, loadAgentRuntime, reconfigureAgent, skillsFor } from './agent-assembly.js';
import { randomUUID } from 'node:crypto';
import { registerKnownSecrets } from '../redact/scrub.js';
import { configuredSecrets } from './known-secrets.js';
import { openSecrets, type SecretsRuntime } from './secret-grants.js';
import { SecretPrompts } from './secret-prompts.js';
import { UserQuestions } from './user-questions.js';
import { ProgressCards } from './progress-cards.js';
import { ConversationWaits, conversationDirectory } from './conversation-waits.js';
import { AuditLog } from '../store/audit.js';
export { createToolPath, messagingFor, toolReportFor } from './tool-path.js';

export interface StartOptions {
  env?: NodeJS.ProcessEnv;
  /** Replaces the governed call path (benchmarks with no tools); default: the core tools through the wrapper chain. */
  tools?: ToolExecutor | undefined;
  /** Override `sessions.maxQueued` (tests, benchmarks). */
  maxPending?: number;
  /** Override `sessions.shutdownGraceSec` in milliseconds (tests). */
  shutdownGraceMs?: number;
  /** Every ask_user question's timeout, whatever the model asked (tests). */
  askUserTimeoutMs?: number;
  /** A separate bus for tests running several instances in one process. */
  events?: EventBus;
  /** Called when an owner asks for a restart (`gateway` restart): `warden start` stops and starts again. */
  onRestart?: (() => void) | undefined;
  /** Called after each applied config change (`warden start` prints what changed). */
  onConfigApplied?: ((outcome: ApplyOutcome & { ok: true }) => void) | undefined;
  /**
   * The web chat's listener and token, opened by `warden start` before this module loaded
   * (`openWebChatFirst`): the web chat attaches to it. The caller closes it when the start fails.
   */
  web?: WebChatFirst | undefined;
}

export interface RunningWarden {
  gateway: Gateway;
  approvals: ApprovalService;
  /** Runs calls whose approval came after their turn ended (`approvals.waitSec`). */
  deferred: DeferredCallRunner | undefined;
  store: Store;
  /** The cron scheduler: jobs run as turns in the conversation they were created in. */
  cron: { jobs: CronJobs; scheduler: CronScheduler };
  adapters: ChatAdapter[];
  /** The web chat's address when it runs. */
  webUrl: string | undefined;
  /** The web chat's ready-to-open address with its access token (`…/?token=…`). */
  webOpenUrl: string | undefined;
  /** Where the web chat's token comes from: the config, or the per-install file (created at this start or before). */
  webToken: { source: 'config' } | { source: 'file'; file: string; created: boolean } | undefined;
  dataDir: string;
  /** The config new turns run under, and the reload path (file watcher, `gateway` reload and patch). */
  config: { live: LiveConfig; reloader: ConfigReloader; admin: ConfigAdmin };
  /** The control plane's own listeners (the HTTP tools API, the node listener). */
  listeners: ControlListeners;
  /** The ops listener's address (`/healthz`, `/readyz`, `/metrics`) while it listens. */
  readonly opsUrl: string | undefined;
  /** What `/readyz` answers now. */
  readiness(): Promise<Readiness>;
  /** The governed call path new turns use (replaced by a reload). */
  tools(): ToolExecutor;
  /** Settles when the background load of the tools a turn can call has finished (or was aborted). */
  preloaded: Promise<void>;
  /** The secret store (values set through the private prompt or `warden secrets set`). */
  secrets: SecretsRuntime;
  /** Graceful stop: turns finish or abort, adapters close, then the store closes. */
  stop(): Promise<void>;
}

export type StartResult = { ok: true; warden: RunningWarden } | { ok: false; error: ConfigError | Error };

export { plannedAdapters } from '../config/planned-adapters.js';

/**
 * Starts Warden: the store under the data dir, the approval service, the chat adapters the
 * config asks for, and the gateway between them. Pending approvals from a previous run are
 * recovered once the adapters are up, so their cards are edited rather than left clickable.
 */
export async function startWarden(loaded: LoadedConfig, options: StartOptions = {}): Promise<StartResult> {
  const env = options.env ?? process.env;
  const { config, baseDir } = loaded;
  // Relative paths resolve against the config file's folder (the working directory without one).
  const dataDir = resolveDataDir({ configDataDir: config.dataDir, env, cwd: baseDir });
  const planned = plannedAdapters(config);
  // Refuse an unsafe web chat, a token pasted into the wrong key (instead of retrying it against
  // the platform forever) and a malformed store.url before anything is created on disk; a
  // doubtful token shape is a warning. `warden doctor` reads the same token verdict. (`warden
  // start` asked this already, before it opened the web chat's listener.)
  const refused = startRefusal(loaded);
  if (refused.error) return { ok: false, error: refused.error };
  for (const f of refused.warnings) log.warn({ key: f.path }, `${f.path} ${f.message}`);
  // Plugins load before anything listens: a plugin that fails is reported and skipped, unless it
  // enforces rules (a policy plugin, see plugins/load-failure.ts): then Warden does not start.
  const plugins = await loadPluginRuntime(config, baseDir);
  const refusal = plugins.refusal();
  if (refusal) return { ok: false, error: new Error(refusal) };
  const hooks = plugins.hooks;
  const opened = await openConfiguredStore({ dataDir, store: config.store });
  if (!opened.ok) return { ok: false, error: opened.error.path === 'store.url' ? new ConfigError(loaded.file, [{ path: 'store.url', message: opened.error.message.replace(/^store\.url: /, '') }]) : new Error(opened.error.message) };
  // A fresh checkout has no workspace yet; the file and exec tools work inside it.
  const workspaces = createAgentWorkspaces(config, baseDir);
  if (!workspaces.ok) {
    await opened.store.close();
    return { ok: false, error: new Error(workspaces.error) };
  }
  const { store } = opened;
  // The secret store: its key from WARDEN_SECRETS_KEY or the data dir's key file; its values are known secrets.
  const secretsOpened = await openSecrets(store.db, dataDir, env, new AuditLog(store.db), `store:${randomUUID()}`);
  if (!secretsOpened.ok) {
    await store.close();
    return { ok: false, error: new Error(`secret store: ${secretsOpened.error}`) };
  }
  const secrets = secretsOpened.secrets;
  // The web chat needs its token even on loopback: the configured one, else the per-install one
  // (read already when `warden start` opened the listener first).
  const token = planned.includes('web') ? (options.web?.token ?? webChatToken(config.channels.web, dataDir)) : undefined;
  if (token && !token.ok) {
    await store.close();
    return { ok: false, error: new Error(token.error) };
  }
  // The config's credentials, the `.env` values and the web chat's token are known secrets from
  // here on: scrubbed from tool results, stored rows, posted messages and log lines.
  const secretSource = `config:${randomUUID()}`;
  const registerConfigSecrets = (cfg: WardenConfig) =>
    registerKnownSecrets(secretSource, configuredSecrets(cfg, { env, configFile: loaded.file, baseDir, webToken: token?.ok ? token.token : undefined }));
  const forgetConfigSecrets = registerConfigSecrets(config);
  const events = options.events ?? new EventBus();
  // Tool calls and approvals reach /metrics through the bus they are reported on.
  const offMetrics = metrics.observe(events);
  const live = new LiveConfig(loaded, readIfExists(loaded.file));
  const current = (): WardenConfig => live.current().loaded.config;
  // Other instances on the same PostgreSQL store: this one's heartbeat and leases (none on SQLite).
  let cluster: Cluster | undefined;
  try {
    cluster = await joinCluster(store, { leaseSec: config.store.leaseSec, role: 'server' });
  } catch (err) {
    await store.close();
    return { ok: false, error: new Error(`store.url: this instance could not register with the shared store: ${(err as Error).message}`) };
  }
  // Which instances were alive when subagent runs were last recovered (read just before).
  let liveInstances = new Set<string>();
  const ownership: AgentDeps['ownership'] = cluster ? { instanceId: cluster.instances.id, isOwnerGone: (owner) => !liveInstances.has(owner.instance) } : undefined;
  // The approval service reads owners and approvers at each decision: a reload changes them.
  const approvals = new ApprovalService({ store, config: approvalConfigOf(current), events, instances: cluster?.instances });
  // Every model call of every turn is admitted by the budgets and recorded (src/usage).
  const usage = createUsageService(store, current, approvals);
  const guards = new DeciderGuards();
  const resolve: ResolveApproval = async (id, decision, by, input) => {
    const refusal = guards.refusal(id, by);
    if (refusal === undefined) return approvals.resolve(id, decision, by, input);
    await approvals.audit.recordOrLog({ type: 'approval.refused', subject: id, actor: `${by.provider}:${by.userId}`, data: { decision, reason: refusal } });
    return { kind: 'not-approver', reason: refusal };
  };

  // The web chat's page reads its session, history and pending cards from the store.
  const webAgent = defaultAgentId(config);
  const web = {
    history: storeWebHistory(store.db, {
      sessionKeyOf: (sessionId) => sessionKeyFor(webAgent, { provider: 'web', chatType: 'dm', channelId: WEB_CHANNEL_ID, senderId: WEB_LOCAL_USER, sessionId }),
      approvals,
    }),
    pendingApprovals: () => approvals.list(),
    // Files shown in the page (replies' and uploads), kept so their links outlive a restart.
    filesDir: path.join(dataDir, 'web-files'),
    welcome: () => {
      const c = current();
      const model = modelRefForAgent(c, webAgent);
      const settings = model ? modelSettings(c, model) : undefined;
      const missingKey = settings?.ok && !apiKeyFor(settings.value, env).ok ? settings.value.apiKeyEnv : undefined;
      return webWelcome({ model, missingKey, workspace: agentWorkspace(c, webAgent, baseDir), configFile: loaded.file });
    },
  };
  const webToken = token?.ok ? token.token : '';
  const renderers = new Map<string, () => void>();
  // The secrets tool's private prompts: posted through the running adapters, answered by their modals.
  const secretPrompts = new SecretPrompts({
    db: store.db,
    secrets,
    audit: approvals.audit,
    adapter: (provider) => gatewayRef?.adapter(provider as ChatAdapter['provider']),
    notify: async (target, text) => {
      await gatewayRef?.notify(target, { text });
    },
  });
  // The ask_user tool's questions: posted through the running adapters, answered by their buttons and forms.
  const userQuestions = new UserQuestions({
    db: store.db,
    instance: cluster?.instances.id,
    // On a shared store a question another instance's turn still waits for is that turn's to take, while its instance lives.
    ...(cluster ? { ownerAlive: (instance: string) => cluster!.instances.isLive(instance) } : {}),
    config: current,
    transcripts: new DbTranscriptStore(store.db),
    audit: approvals.audit,
    adapter: (provider) => gatewayRef?.adapter(provider as ChatAdapter['provider']),
    waitMs: () => (current().approvals.waitSec ?? 0) * 1000,
    // The people who decide approvals here may answer too (the requester may be away).
    // Who decides approvals on the platform may answer too: the approvals' own decision, read at each click.
    alsoMayAnswer: (provider, userId) => approverRefusal({ owners: current().owners, approvers: current().approvals.approvers }, provider, userId) === undefined,
    ...(options.askUserTimeoutMs !== undefined ? { timeoutMs: () => options.askUserTimeoutMs! } : {}),
  });
  // progress_card: one message per session edited in place through the running adapters' stream surface.
  // conversations_turn: the next human reply in another conversation, back as a follow-up turn.
  const conversationWaits = new ConversationWaits({ db: store.db, config: current, instance: cluster?.instances.id });
  const progressCards = new ProgressCards({ adapter: (provider) => gatewayRef?.adapter(provider as ChatAdapter['provider']), db: store.db });
  // The listener `warden start` opened first goes to the first web chat made; a reload's makes its own.
  let firstListener = options.web?.listener;
  const makeAdapter = async (provider: 'discord' | 'slack' | 'web', cfg: WardenConfig, tokenValue: string): Promise<ChatAdapter> => {
    const front = provider === 'web' ? firstListener : undefined;
    if (front) firstListener = undefined;
    const adapter = await createAdapter(provider, cfg, store, resolve, tokenValue, front ? { ...web, front } : web, current, secretPrompts, userQuestions);
    renderers.get(provider)?.();
    renderers.set(provider, approvals.registerRenderer(adapter.approvals));
    return adapter;
  };
  let adapters: ChatAdapter[];
  try {
    adapters = await Promise.all(planned.map((provider) => makeAdapter(provider, config, webToken)));
  } catch (err) {
    approvals.shutdown();
    await cluster?.stop();
    await store.close();
    return { ok: false, error: err as Error };
  }
  // The adapters running now: a reload may replace, add or stop one.
  const running = (): ChatAdapter[] => (gatewayRef ? plannedAdapters(current()).map((p) => gatewayRef!.adapter(p)).filter((a): a is ChatAdapter => a !== undefined) : adapters);
  // The Slack receiver's socket belongs to Bolt; its address is read from the adapter at each check.
  const offListeners = registerOwnListenerSource(() => running().flatMap(listenerOf));

  // MCP servers connect in the background: a slow or broken one never holds up the start or a turn.
  // A stdio server granted secrets (`secrets.grants` to mcp:<server>) gets the default agent's values in its environment.
  const mcp = new McpManager(config, baseDir, { reserved: reservedToolNames(() => plugins.tools), secretEnv: (server) => secrets.envFor(current(), `mcp:${server}`, defaultAgentId(current())) });
  bindMcpManager(config, mcp);
  mcp.start();
  const startedAt = Date.now();
  let gatewayRef: Gateway | undefined;
  const cronJobs = new HookedCronJobs(store.db, hooks, { keepRuns: config.cron.keepRuns, instanceId: cluster?.instances.id });
  // A job's turn runs behind its session's queue, as a message would; its outcome goes to the cron ledger.
  const scheduler = new CronScheduler({
    jobs: cronJobs,
    shared: cluster !== undefined,
    maxConcurrent: config.cron.maxConcurrent,
    deliver: createCronDeliver({
      // Read at each run: a reload changes the policy a job's turn runs under.
      get config() {
        return current();
      },
      runScheduled: (route) => gatewayRef?.runScheduled(route) ?? Promise.resolve({ ok: false, error: 'the gateway is not running' }),
      pendingApprovals: async (sessionKey) => (await approvals.list({ sessionKey })).length,
      events,
    }),
  });
  let listenersRef: ControlListeners | undefined;
  const control: ControlPlane = {
    get nodes() {
      return listenersRef?.get<NodeHub>(NODE_LISTENER);
    },
  };
  const shared = {
    baseDir,
    configFile: loaded.file,
    store,
    cron: { jobs: cronJobs, scheduler },
    messaging: messagingFor(running, hooks),
    status: () => ({
      startedAt,
      adapters: gatewayRef?.adapterStates() ?? adapters.map((a) => ({ provider: a.provider, state: 'starting' })),
      activeSessions: gatewayRef?.stats().sessions ?? 0,
    }),
    control,
    secrets,
    secretPrompts,
    userQuestions,
    progressCards,
    conversationWaits,
    conversations: conversationDirectory(store.db),
  } satisfies Omit<ToolRuntime, 'config'>;
  // Everything a config derives, built again on each reload; running turns keep the one they began with.
  const derive = (cfg: WardenConfig) => {
    // One MCP manager for the process: a reloaded config restarts only the servers it changed.
    if (cfg !== config) {
      adoptPluginRuntime(cfg, baseDir, plugins);
      registerConfigSecrets(cfg);
    }
    if (cfg !== config && mcpManagerFor(cfg) !== mcp) {
      bindMcpManager(cfg, mcp);
      void mcp.reconfigure(cfg).catch((err: unknown) => log.error({ err }, 'MCP reconfiguration failed'));
    }
    const toolRuntime: ToolRuntime = { ...shared, config: cfg, sessions: agentRef?.sessions };
    const toolPath = createToolPath(cfg, toolRuntime, { store, approvals, events, plugins, secretEnv: (request) => secrets.execEnv(current(), request) });
    return { toolRuntime, toolPath, tools: options.tools ?? toolPath.executor };
  };
  let agentRef: WardenAgentRuntime | undefined;
  let generation = derive(config);
  // Each session keeps the skills catalog it was given until a skill file or the config changes.
  const pluginSkillDirs = plugins.skillsDirs();
  const skillSnapshots = new SessionSkillSnapshots(config, { baseDir, env, pluginSkillDirs });
  const reportSkillChanges = skillChangeReporter(hooks, current, { baseDir, env, pluginSkillDirs });
  const offSkillChanges = skillSnapshots.onChange(() => reportSkillChanges());
  // Skill commands follow the skill files; the platforms with native commands follow the set.
  const skillCommands = new SkillCommandCatalog(skillSnapshots, defaultAgentId(config));
  for (const adapter of adapters) adapter.setSkillCommands?.(skillCommands.current().specs);
  const offSkillCommands = skillCommands.onChange((set) => {
    for (const adapter of adapters) adapter.setSkillCommands?.(set.specs);
  });
  const sessionContexts = new SessionContextStore(store.db);
  const announce = (parentKey: string, run: SubagentRunView) => gatewayRef?.announce(parentKey, run.requestedBy, run.spawnedInRun);
  const skillsCatalog = sessionSkillsCatalog(skillSnapshots, current);
  const agentInputs = (cfg: WardenConfig) => ({ config: cfg, env, tools: generation.tools, store, sessionContexts, announce, skillsCatalog, hooks, ownership, usage });
  // The turn loop's modules load only with a model (a reload that adds one loads them in `prepare`).
  await loadAgentRuntime(config);
  agentRef = createAgent(agentInputs(config));
  // The session tools act on the running agent's sessions; without a model they stay off.
  generation.toolRuntime.sessions = agentRef?.sessions;
  generation.toolRuntime.usage = usage;

  // On a shared store the cluster's instance id; alone, one of this run (a parked follow-up taken by a dead run is taken again).
  const followUpInstance = cluster?.instances.id ?? `local-${randomUUID()}`;
  const gateway = new Gateway({
    config,
    adapters,
    // Who may make Warden act: pairing and rate limits in the store (shared by every instance on it).
    access: new AccessGate({
      pairing: new PairingStore(store.db),
      limiter: new RateLimiter(store.db),
      botLoops: new BotLoopStore(store.db),
      notices: new SharedDeliveries(store.db),
      audit: approvals.audit,
      memberships: (provider) => gatewayRef?.adapter(provider)?.memberships,
    }),
    sessionLeases: cluster?.leases,
    // Follow-ups a shutdown would drop are parked in the store and run once, here after a restart or on another instance.
    followUps: {
      store: new FollowUpStore(store.db),
      transcripts: new DbTranscriptStore(store.db),
      instance: followUpInstance,
      ...(cluster ? { alive: (instance: string) => cluster!.instances.isLive(instance) } : {}),
    },
    workspaceOf: (agentId) => agentWorkspace(current(), agentId, baseDir),
    env,
    agent: agentRef,
    tools: generation.tools,
    toolReport: generation.toolPath.toolReport,
    sessionContexts,
    approvals: {
      approve: (provider) => approveOn(resolve, provider, 'typed'),
      pendingCount: async (sessionKey) => (await approvals.list({ sessionKey })).length,
      raisedSince: async (sessionKey, sinceMs) =>
        [...(await approvals.list({ sessionKey })), ...(await approvals.history({ sessionKey, limit: 20 }))].some((r) => r.createdAt >= sinceMs),
      pending: (sessionKey) => approvals.list({ sessionKey }),
      grants: { list: (agentId) => approvals.grants.list({ agentId }), revoke: (id, by) => approvals.revokeGrant(id, by) },
    },
    skills: skillsFor(config, baseDir, env, pluginSkillDirs),
    skillCommands,
    usage: { report: (filter) => usageReport(store.db, filter), budgets: usage, timeZone: () => current().budgets.timeZone },
    meter: usage,
    nodes: () => control.nodes,
    maxPending: options.maxPending ?? config.sessions.maxQueued,
    shutdownGraceMs: options.shutdownGraceMs ?? config.sessions.shutdownGraceSec * 1000,
    hooks,
    pluginCommands: plugins.commands,
    secretNames: async (agentId) => (await secrets.store.list({ agentId })).map((e) => ({ name: e.name, scope: e.scope, updatedAt: e.updatedAt })),
    onInbound: (message, admitted) => conversationWaits.offer(message, admitted),
  });

  gatewayRef = gateway;
  userQuestions.bindFollowUp(
    (turn) => gateway.followUp(turn),
    () => gateway.accepting,
  );
  conversationWaits.bindFollowUp(
    (turn) => gateway.followUp(turn),
    () => gateway.accepting,
  );

  // Calls whose approval comes after their turn ended run here, wherever the decision was made.
  const deferred =
    generation.tools instanceof GovernedToolExecutor
      ? new DeferredCallRunner({
          // Read at each call: a call decided after a reload runs under the config then current.
          get config() {
            return current();
          },
          approvals,
          events,
          get tools() {
            return generation.tools as GovernedToolExecutor;
          },
          post: (target, message) => gateway.notify(target, message),
          followUp: (turn) => gateway.followUp(turn),
          transcripts: new DbTranscriptStore(store.db),
          accepting: () => gateway.accepting,
        })
      : undefined;

  const reloader = new ConfigReloader(live, {
    env,
    audit: approvals.audit,
    plugins: () => (generation.tools instanceof GovernedToolExecutor ? generation.tools.inputs : surfaceInputs(current(), baseDir)).plugins,
    check: (cfg) => [...runtimeProblems(cfg), ...pluginReloadProblems(cfg, baseDir)],
    prepare: loadAgentRuntime,
    swap: (next, previous) => {
      const cfg = next.config;
      const before = generation;
      generation = derive(cfg);
      carryOverResources(before.tools, generation.tools, previous.config, cfg);
      if (!agentRef) {
        agentRef = createAgent(agentInputs(cfg));
      } else {
        reconfigureAgent(agentRef, cfg, env, generation.tools);
      }
      generation.toolRuntime.sessions = agentRef?.sessions;
  generation.toolRuntime.usage = usage;
      skillSnapshots.setConfig(cfg);
      gateway.reconfigure({ config: cfg, agent: agentRef, tools: generation.tools, toolReport: generation.toolPath.toolReport, skills: skillsFor(cfg, baseDir, env, pluginSkillDirs) });
    },
    restart: async (next, previous) => {
      const failed = await restartChangedAdapters(gateway, previous, next, {
        make: (provider) => {
          const tokenValue = provider === 'web' ? webChatToken(next.channels.web, dataDir) : undefined;
          if (tokenValue && !tokenValue.ok) throw new Error(tokenValue.error);
          return makeAdapter(provider, next, tokenValue?.ok ? tokenValue.token : '');
        },
        forget: (provider) => {
          renderers.get(provider)?.();
          renderers.delete(provider);
        },
      });
      return [...failed, ...(await listeners.sync(next)), ...(await ops.sync(next))];
    },
    notifyOwners: (text, cfg) => notifyOwners(gateway, cfg, text),
    onApplied: options.onConfigApplied,
  });
  const listeners = controlListeners({
    current,
    tools: () => generation.tools,
    audit: approvals.audit,
    nodes: { store: new NodeStore(store.db), approvals, guards, audit: approvals.audit, current, cardProvider: () => cardPlatform(running(), current()) },
  });
  listenersRef = listeners;
  const admin = new ConfigAdmin({
    live,
    reloader,
    approvals,
    guards,
    audit: approvals.audit,
    env,
    providers: () => running().map((a) => a.provider),
    plugins: () => (generation.tools instanceof GovernedToolExecutor ? generation.tools.inputs : surfaceInputs(current(), baseDir)).plugins,
    restart: options.onRestart,
  });
  control.admin = admin;
  const watcher =
    loaded.file && (config.gateway?.reload?.watch ?? true)
      ? new ConfigFileWatcher(loaded.file, () => void reloader.reloadFile('file').catch((err: unknown) => log.error({ err }, 'config reload failed; the running config stays')), config.gateway?.reload?.debounceMs ?? 300)
      : undefined;

  const readinessNow = (): Promise<Readiness> => {
    const shards = gateway.adapter('discord')?.shards?.() ?? [];
    return readiness({
      store: () => storeCheck(store.db),
      migrations: () => migrationsCheck(store.db, migrationsFor(store.engine, WARDEN_MIGRATIONS)),
      adapters: () => adaptersCheck(gateway.accepting, gateway.adapterStates().map((a) => ({ ...a, connected: gateway.adapter(a.provider)?.connected?.() }))),
      ...(shards.length > 0 ? { shards: () => shardsCheck('discord', shards) } : {}),
    });
  };
  const ops = new ControlListeners([{ name: OPS_LISTENER, block: (c) => (c.ops?.enabled ? c.ops : undefined), create: (c) => new OpsServer(c.ops, { readiness: readinessNow, metrics }) }]);
  const offGauges = metrics.addSource({ approvalsPending: async () => (await approvals.list()).length, queue: () => gateway.stats() });

  // A call that died with Warden (its approval was interrupted) is reported where it was asked.
  const offInterrupted = events.on('approval.interrupted', ({ request, message }) => {
    if (!request.channelId) return;
    background(gateway.notify({ provider: request.provider as InboundMessage['provider'], channelId: request.channelId, threadId: request.threadId }, { text: message }), 'interrupted approval not reported in its chat', {
      fields: { approval: request.id },
    });
  });

  try {
    // Before the platforms connect: /healthz answers and /readyz says what is still starting.
    await ops.sync(config, { throwOnError: true });
    await gateway.start();
    await listeners.sync(config, { throwOnError: true });
    await watcher?.ready();
  } catch (err) {
    offInterrupted();
    offListeners();
    await watcher?.close();
    await listeners.stopAll();
    await ops.stopAll();
    offGauges();
    offMetrics();
    offSkillCommands();
    skillCommands.close();
    offSkillChanges();
    await gateway.stop().catch(() => {});
    await skillSnapshots.close();
    await mcp.stop();
    approvals.shutdown();
    await cluster?.stop();
    await store.close();
    forgetConfigSecrets();
    secrets.close();
    return { ok: false, error: err as Error };
  }
  // Before recovery, so requests it closes (expired while Warden was down) run their calls' outcome.
  deferred?.start();
  const report = await approvals.recover();
  // Calls decided while no Warden ran, and calls whose runner died.
  await deferred?.sweep();
  // conversations_turn waits stored before this start: their deadlines, and the ones already past.
  await conversationWaits.start();
  await conversationWaits.sweep();
  // ask_user questions stored before this start: their deadlines, and the outcomes nobody handed over (expired while down).
  await userQuestions.start();
  // Children that were running when Warden last stopped are marked interrupted and their parents told.
  // Subagent runs of instances still alive are theirs: only those of gone ones are interrupted.
  if (cluster) liveInstances = new Set((await cluster.instances.live()).map((i) => i.id));
  const interruptedRuns = (await agentRef?.sessions.recover()) ?? [];
  await scheduler.start();
  // Load exec in the background when a model may call it, so its first call (and its approval
  // card) does not wait for module loading; every other tool loads at its first call.
  const preloadAbort = new AbortController();
  const firstTools = generation.tools;
  const preloading =
    firstTools instanceof GovernedToolExecutor
      ? firstTools.preload(toolsToPreload(config), preloadAbort.signal)
      : Promise.resolve();
  log.info(
    { adapters: adapters.map((a) => a.provider), dataDir, listeners: runningListeners().map((l) => `${l.name} ${listenerAddress(l)}`), recovered: report, interruptedSubagents: interruptedRuns.length, watching: loaded.file && watcher ? loaded.file : undefined },
    'warden started',
  );
  const webAdapter = adapters.find((a): a is WebAdapter => a.provider === 'web');
  const gatewayContext = { port: webAdapter?.url ? Number(new URL(webAdapter.url).port) : 0, workspaceDir: agentWorkspace(config, knownAgentIds(config)[0] ?? 'main', baseDir) };
  if (hooks.has('gateway_start')) hooks.fire('gateway_start', { port: gatewayContext.port }, gatewayContext);

  let stopping: Promise<void> | undefined;
  const warden: RunningWarden = {
    gateway,
    approvals,
    deferred,
    store,
    cron: { jobs: cronJobs, scheduler },
    adapters,
    webUrl: webAdapter?.url,
    webOpenUrl: webAdapter?.openUrl,
    webToken: token?.ok ? (token.source === 'config' ? { source: 'config' } : { source: 'file', file: token.file, created: token.created }) : undefined,
    dataDir,
    config: { live, reloader, admin },
    listeners,
    get opsUrl() {
      return ops.get<OpsServer>(OPS_LISTENER)?.url;
    },
    readiness: readinessNow,
    tools: () => generation.tools,
    preloaded: preloading.then(
      () => undefined,
      () => undefined,
    ),
    secrets,
    stop() {
      stopping ??= (async () => {
        preloadAbort.abort();
        await watcher?.close();
        await preloading;
        await scheduler.stop();
        await listeners.stopAll();
        // Deferred calls still running finish (aborted) and post while the adapters are up.
        await deferred?.stop();
        // Waits stay stored: the next start, or another instance, answers them.
        await conversationWaits.stop();
        // Questions stay stored too: a click after the restart, or on another instance, answers them.
        userQuestions.stop();
        await gateway.stop();
        // Stdio servers are closed (stdin, SIGTERM, SIGKILL); they would also die with the process.
        await mcp.stop();
        // Plugins release what they hold while the store is still open (each handler bounded, 5 s by default).
        if (hooks.has('gateway_stop')) await hooks.runVoid('gateway_stop', { reason: 'shutdown' }, gatewayContext);
        offSkillChanges();
        // Running children stay recorded as running; the next start reports them interrupted.
        agentRef?.sessions.stop();
        // Chromium would keep the process alive; turns are over, so no tool uses it any more.
        await closeAllBrowsers();
        offSkillCommands();
        skillCommands.close();
        await skillSnapshots.close();
        offInterrupted();
        offListeners();
        await ops.stopAll();
        offGauges();
        offMetrics();
        approvals.shutdown();
        // Usage records of the last answers, still being written.
        await usage.settled();
        // Last: its requests and runs pass to the other instances at once, not after the lease runs out.
        await cluster?.stop();
        await store.close();
        log.info('warden stopped');
        forgetConfigSecrets();
        secrets.close();
      })();
      return stopping;
    },
  };
  return { ok: true, warden };
}

/** The approval service's view of owners and approvers: read from the current config at each use. */
function approvalConfigOf(current: () => WardenConfig): Pick<WardenConfig, 'owners' | 'approvals' | 'channels' | 'accessGroups'> {
  return {
    get channels() {
      return current().channels;
    },
    get accessGroups() {
      return current().accessGroups;
    },
    get owners() {
      return withWebLocalOwner(current()).owners;
    },
    get approvals() {
      return withWebLocalOwner(current()).approvals;
    },
  };
}

function readIfExists(file: string | undefined): string | undefined {
  if (!file || !existsSync(file)) return undefined;
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}
