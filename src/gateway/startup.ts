import { mkdirSync } from 'node:fs';
import { checkBind, createWebAdapter, webChatToken, WEB_CHANNEL_ID, WEB_LOCAL_USER, type WebAdapter } from '../../adapters/web/index.js';
import { sqliteWebHistory } from '../../adapters/web/history.js';
import type { ToolExecutor } from '../agent/index.js';
import { createAgentRuntime, type WardenAgentRuntime } from '../agent/runtime.js';
import { SqliteTranscriptStore } from '../agent/transcript.js';
import { SubagentRunStore } from '../agent/subagent-runs.js';
import { SessionContextStore } from '../agent/session-contexts.js';
import type { SubagentRunView } from '../agent/sessions.js';
import { ApprovalService, approversFor } from '../approvals/index.js';
import { closeAllBrowsers } from '../browser/shutdown.js';
import { ConfigError, type LoadedConfig, type WardenConfig } from '../config/index.js';
import { EventBus } from '../events.js';
import { log } from '../log.js';
import { listenerAddress, registerOwnListenerSource, runningListeners, type OwnListener } from '../net/index.js';
import { createModelRegistry } from '../models/registry.js';
import type { TurnContext } from '../policy/context.js';
import type { ToolRuntime } from '../tools/types.js';
import { defaultAgentId, knownAgentIds } from '../policy/steps.js';
import { resolveToolSurface, type SurfaceOptions } from '../policy/surface.js';
import { agentWorkspace } from '../exec/check.js';
import { listSkills, sessionSkillsCatalog } from '../skills/index.js';
import { SessionSkillSnapshots } from '../skills/snapshot.js';
import { AuditLog, openStore, resolveDataDir, type Store } from '../store/index.js';
import { HookBus } from '../hooks/bus.js';
import { CronJobs } from '../cron/jobs.js';
import { CronScheduler } from '../cron/scheduler.js';
import type { MessagingService } from '../tools/types.js';
import { createCronDeliver } from './scheduled.js';
import { approveOn, clickHandlerOn, withWebLocalOwner, type ResolveApproval } from './approval-clicks.js';
import { sqliteCardStore } from './card-store.js';
import type { SkillsView, ToolReport } from './commands.js';
import { Gateway } from './gateway.js';
import { GovernedToolExecutor } from './tool-executor.js';
import { sessionKeyFor } from './session-key.js';
import { SkillCommandCatalog } from './skill-commands.js';
import type { ChatAdapter, InboundMessage } from './types.js';
import { plannedAdapters } from './planned-adapters.js';
import { toolsToPreload } from './preload.js';

export interface StartOptions {
  env?: NodeJS.ProcessEnv;
  /** Replaces the governed call path (benchmarks with no tools); default: the core tools through the wrapper chain. */
  tools?: ToolExecutor | undefined;
  /** Override `sessions.maxQueued` (tests, benchmarks). */
  maxPending?: number;
  /** Override `sessions.shutdownGraceSec` in milliseconds (tests). */
  shutdownGraceMs?: number;
  /** A separate bus for tests running several instances in one process. */
  events?: EventBus;
}

export interface RunningWarden {
  gateway: Gateway;
  approvals: ApprovalService;
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
  /** Graceful stop: turns finish or abort, adapters close, then the store closes. */
  stop(): Promise<void>;
}

export type StartResult = { ok: true; warden: RunningWarden } | { ok: false; error: ConfigError | Error };

export { plannedAdapters } from './planned-adapters.js';

/** The message tool's way out: posts through the running adapters. */
export function messagingFor(adapters: readonly ChatAdapter[]): MessagingService {
  return {
    providers: () => adapters.map((a) => a.provider),
    async send(target, text) {
      const adapter = adapters.find((a) => a.provider === target.provider);
      if (!adapter) return { ok: false, error: `no ${target.provider} adapter is running` };
      const channelId = target.channel ?? '';
      try {
        await adapter.send({ provider: adapter.provider, channelId, threadId: target.threadId, dmUserId: target.userId }, { text });
        return { ok: true, channelId: channelId || `dm:${target.userId}` };
      } catch (err) {
        return { ok: false, error: (err as Error).message };
      }
    },
  };
}

/** The policy's answer for `/tools`, as `warden tools` prints it: the same function, the same inputs. */
export function toolReportFor(config: WardenConfig, inputs: SurfaceOptions) {
  return (context: TurnContext): ToolReport => {
    const surface = resolveToolSurface(config, context, inputs);
    return {
      tools: surface.tools,
      removed: surface.removed,
      unavailable: surface.unavailable,
      warnings: surface.error ? [surface.error, ...surface.warnings] : surface.warnings,
    };
  };
}

/**
 * The governed call path as `warden start` wires it: the executor every turn, subagent and
 * `/exec` goes through, and the `/tools` report — both over the surface inputs `warden tools`
 * uses. `toolRuntime.sessions` is set once the agent runtime exists.
 */
export function createToolPath(config: WardenConfig, toolRuntime: ToolRuntime, services: { store: Store; approvals: ApprovalService; events: EventBus }) {
  // No transcript here: the turn loop persists each result once, in order with the model's messages.
  const executor = new GovernedToolExecutor(config, toolRuntime, {
    hooks: new HookBus(),
    approvals: services.approvals,
    audit: new AuditLog(services.store.db),
    events: services.events,
  });
  return { executor, toolReport: toolReportFor(config, executor.inputs) };
}

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
  // Refuse an unsafe web chat before anything is created on disk.
  if (planned.includes('web')) {
    const bind = checkBind(config.channels.web.host, config.channels.web.token);
    if (!bind.ok) return { ok: false, error: new ConfigError(loaded.file, [{ path: bind.path, message: bind.message }]) };
  }
  const opened = openStore({ dataDir });
  if (!opened.ok) return { ok: false, error: new Error(opened.error.message) };
  // A fresh checkout has no workspace yet; the file and exec tools work inside it.
  for (const agentId of knownAgentIds(config)) {
    const workspace = agentWorkspace(config, agentId, baseDir);
    try {
      mkdirSync(workspace, { recursive: true });
    } catch (err) {
      opened.store.close();
      return { ok: false, error: new Error(`workspace ${workspace} of agent ${agentId} cannot be created: ${(err as Error).message}`) };
    }
  }
  const { store } = opened;
  // The web chat needs its token even on loopback: the configured one, else the per-install one.
  const token = planned.includes('web') ? webChatToken(config.channels.web, dataDir) : undefined;
  if (token && !token.ok) {
    store.close();
    return { ok: false, error: new Error(token.error) };
  }
  const events = options.events ?? new EventBus();
  const approvals = new ApprovalService({ store, config: withWebLocalOwner(config), events });
  const resolve: ResolveApproval = (id, decision, by) => approvals.resolve(id, decision, by);

  // The web chat's page reads its session, history and pending cards from the store.
  const webAgent = defaultAgentId(config);
  const web = {
    history: sqliteWebHistory(store.db, {
      sessionKeyOf: (sessionId) => sessionKeyFor(webAgent, { provider: 'web', chatType: 'dm', channelId: WEB_CHANNEL_ID, senderId: WEB_LOCAL_USER, sessionId }),
      approvals,
    }),
    pendingApprovals: () => approvals.list(),
  };
  let adapters: ChatAdapter[];
  try {
    adapters = await Promise.all(planned.map((provider) => createAdapter(provider, config, store, resolve, token?.ok ? token.token : '', web)));
  } catch (err) {
    approvals.shutdown();
    store.close();
    return { ok: false, error: err as Error };
  }
  for (const adapter of adapters) approvals.registerRenderer(adapter.approvals);
  // The Slack receiver's socket belongs to Bolt; its address is read from the adapter at each check.
  const offListeners = registerOwnListenerSource(() => adapters.flatMap(listenerOf));

  const startedAt = Date.now();
  let gatewayRef: Gateway | undefined;
  const cronJobs = new CronJobs(store.db, { keepRuns: config.cron.keepRuns });
  // A job's turn runs behind its session's queue, as a message would; its outcome goes to the cron ledger.
  const scheduler = new CronScheduler({
    jobs: cronJobs,
    maxConcurrent: config.cron.maxConcurrent,
    deliver: createCronDeliver({
      config,
      runScheduled: (route) => gatewayRef?.runScheduled(route) ?? Promise.resolve({ ok: false, error: 'the gateway is not running' }),
      pendingApprovals: (sessionKey) => approvals.list({ sessionKey }).length,
      events,
    }),
  });
  const toolRuntime: ToolRuntime = {
    config,
    baseDir,
    configFile: loaded.file,
    store,
    cron: { jobs: cronJobs, scheduler },
    messaging: messagingFor(adapters),
    status: () => ({
      startedAt,
      adapters: gatewayRef?.adapterStates() ?? adapters.map((a) => ({ provider: a.provider, state: 'starting' })),
      activeSessions: gatewayRef?.stats().sessions ?? 0,
    }),
  };
  const toolPath = createToolPath(config, toolRuntime, { store, approvals, events });
  const tools = options.tools ?? toolPath.executor;
  // Each session keeps the skills catalog it was given until a skill file or the config changes.
  const skillSnapshots = new SessionSkillSnapshots(config, { baseDir, env });
  // Skill commands follow the skill files; the platforms with native commands follow the set.
  const skillCommands = new SkillCommandCatalog(skillSnapshots, defaultAgentId(config));
  for (const adapter of adapters) adapter.setSkillCommands?.(skillCommands.current().specs);
  const offSkillCommands = skillCommands.onChange((set) => {
    for (const adapter of adapters) adapter.setSkillCommands?.(set.specs);
  });
  const sessionContexts = new SessionContextStore(store.db);
  const announce = (parentKey: string, run: SubagentRunView) => gatewayRef?.announce(parentKey, run.requestedBy, run.spawnedInRun);
  const agent = createAgent(config, env, tools, store, sessionContexts, announce, sessionSkillsCatalog(skillSnapshots, () => config));
  // The session tools act on the running agent's sessions; without a model they stay off.
  toolRuntime.sessions = agent?.sessions;

  const gateway = new Gateway({
    config,
    adapters,
    agent,
    tools,
    toolReport: toolPath.toolReport,
    sessionContexts,
    approvals: {
      approve: (provider) => approveOn(resolve, provider),
      pendingCount: (sessionKey) => approvals.list({ sessionKey }).length,
    },
    skills: skillsFor(config, baseDir, env),
    skillCommands,
    maxPending: options.maxPending ?? config.sessions.maxQueued,
    shutdownGraceMs: options.shutdownGraceMs ?? config.sessions.shutdownGraceSec * 1000,
  });

  gatewayRef = gateway;

  // A call that died with Warden (its approval was interrupted) is reported where it was asked.
  const offInterrupted = events.on('approval.interrupted', ({ request, message }) => {
    if (!request.channelId) return;
    void gateway.notify({ provider: request.provider as InboundMessage['provider'], channelId: request.channelId, threadId: request.threadId }, { text: message });
  });

  try {
    await gateway.start();
  } catch (err) {
    offInterrupted();
    offListeners();
    offSkillCommands();
    skillCommands.close();
    await gateway.stop().catch(() => {});
    await skillSnapshots.close();
    approvals.shutdown();
    store.close();
    return { ok: false, error: err as Error };
  }
  const report = await approvals.recover();
  // Children that were running when Warden last stopped are marked interrupted and their parents told.
  const interruptedRuns = agent?.sessions.recover() ?? [];
  scheduler.start();
  // Load the tools a turn can call in the background, so the first call (and its approval card)
  // does not wait for module loading.
  const preloadAbort = new AbortController();
  const preloading =
    tools instanceof GovernedToolExecutor
      ? tools.preload(toolsToPreload(config, planned, tools.inputs), preloadAbort.signal)
      : Promise.resolve();
  log.info(
    { adapters: adapters.map((a) => a.provider), dataDir, listeners: runningListeners().map((l) => `${l.name} ${listenerAddress(l)}`), recovered: report, interruptedSubagents: interruptedRuns.length },
    'warden started',
  );
  const webAdapter = adapters.find((a): a is WebAdapter => a.provider === 'web');

  let stopping: Promise<void> | undefined;
  const warden: RunningWarden = {
    gateway,
    approvals,
    store,
    cron: { jobs: cronJobs, scheduler },
    adapters,
    webUrl: webAdapter?.url,
    webOpenUrl: webAdapter?.openUrl,
    webToken: token?.ok ? (token.source === 'config' ? { source: 'config' } : { source: 'file', file: token.file, created: token.created }) : undefined,
    dataDir,
    stop() {
      stopping ??= (async () => {
        preloadAbort.abort();
        await preloading;
        await scheduler.stop();
        await gateway.stop();
        // Running children stay recorded as running; the next start reports them interrupted.
        agent?.sessions.stop();
        // Chromium would keep the process alive; turns are over, so no tool uses it any more.
        await closeAllBrowsers();
        offSkillCommands();
        skillCommands.close();
        await skillSnapshots.close();
        offInterrupted();
        offListeners();
        approvals.shutdown();
        store.close();
        log.info('warden stopped');
      })();
      return stopping;
    },
  };
  return { ok: true, warden };
}

/** A platform's client library (discord.js, Bolt) is imported only when the config starts it. */
async function createAdapter(
  provider: 'discord' | 'slack' | 'web',
  config: WardenConfig,
  store: Store,
  resolve: ResolveApproval,
  webToken: string,
  web: Pick<Parameters<typeof createWebAdapter>[1], 'history' | 'pendingApprovals'>,
): Promise<ChatAdapter> {
  const onApprovalClick = clickHandlerOn(resolve, provider);
  switch (provider) {
    case 'web':
      return createWebAdapter(config.channels.web, { onApprovalClick, token: webToken, ...web });
    case 'discord': {
      const { createDiscordAdapter } = await import('../../adapters/discord/index.js');
      return createDiscordAdapter(config.channels.discord!, {
        onApprovalClick,
        approvers: [...approversFor({ owners: config.owners, approvers: config.approvals.approvers }, 'discord')],
        approvalsTarget: config.approvals.target,
        cards: sqliteCardStore(store.db, 'discord'),
      });
    }
    case 'slack': {
      const { createSlackAdapter } = await import('../../adapters/slack/index.js');
      return createSlackAdapter(config.channels.slack!, {
        onApprovalClick,
        approvers: [...approversFor({ owners: config.owners, approvers: config.approvals.approvers }, 'slack')],
        approvalsTarget: config.approvals.target,
        cards: sqliteCardStore(store.db, 'slack'),
      });
    }
  }
}

/** The listening socket of an adapter that does not register its own (Slack's HTTP receiver). */
function listenerOf(adapter: ChatAdapter): OwnListener[] {
  if (adapter.provider !== 'slack' || !('eventsUrl' in adapter) || typeof adapter.eventsUrl !== 'string') return [];
  const m = /^http:\/\/(.+):(\d+)\/slack\/events$/.exec(adapter.eventsUrl);
  return m ? [{ name: 'Slack HTTP receiver', host: m[1]!, port: Number(m[2]) }] : [];
}

/** The turn loop when a model is configured; else commands only. */
function createAgent(
  config: WardenConfig,
  env: NodeJS.ProcessEnv,
  tools: ToolExecutor,
  store: Store,
  sessionContexts: SessionContextStore,
  announce: (parentKey: string, run: SubagentRunView) => void,
  skillsCatalog: (turn: TurnContext, sessionKey: string) => string,
): WardenAgentRuntime | undefined {
  const anyModel = config.models.default !== undefined || config.agents.list.some((a) => a.model !== undefined);
  if (!anyModel) return undefined;
  return createAgentRuntime({
    config,
    models: createModelRegistry(config, env),
    tools,
    transcripts: new SqliteTranscriptStore(store.db),
    subagentRuns: new SubagentRunStore(store.db),
    sessionContexts,
    announce,
    skillsCatalog,
  });
}

function skillsFor(config: WardenConfig, baseDir: string, env: NodeJS.ProcessEnv) {
  return (context: TurnContext): SkillsView | undefined => {
    const listing = listSkills(config, context.agentId, { baseDir, env });
    if (!listing.ok) return { eligible: [], ineligible: [{ name: '(skills)', why: listing.error }] };
    return {
      eligible: listing.value.eligible.map((s) => ({ name: s.name, description: s.description })),
      ineligible: listing.value.ineligible.map((s) => ({ name: s.name, why: s.why })),
    };
  };
}
