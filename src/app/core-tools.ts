import { existsSync } from 'node:fs';
import type { WardenConfig } from '../config/schema/index.js';
import { BWRAP_PATH, bwrapAvailable } from '../exec/sandbox.js';
import { webFetchAvailability, webSearchAvailability } from '../tools/core/web/availability.js';
import { mediaAvailability } from '../tools/core/media/media-model.js';
import type { SessionToolId } from '../agent/tools/index.js';
import { eraseArgs, type Availability, type ToolCallContext, type ToolImplementation } from '../tools/types.js';
import type { ToolRuntime } from './tool-runtime.js';

/**
 * The registry of core tool implementations: what this build can actually offer.
 *
 * One entry per catalog id. `availability` must be cheap and import nothing heavy — the policy
 * calls it on every turn for every tool the policy keeps (check a binary's presence once and
 * cache it, never launch anything). `load` imports the implementation at the tool's first call,
 * so neither `warden tools` nor a turn's surface (read from `core-descriptors.ts`) pays for the
 * browser, the PDF reader or the SQLite store.
 *
 * A catalog tool without an entry is reported by the surface as unavailable with why "not
 * implemented in this build"; it never reaches the model.
 */
export interface CoreToolEntry {
  /** Config-dependent prerequisites (a configured provider, say) may be checked here; keep it cheap. */
  availability: (config: WardenConfig) => Availability;
  load: (runtime: ToolRuntime) => Promise<ToolImplementation>;
  /**
   * What the process must have handed the tool runtime for `load` to succeed (the agent's
   * sessions, the store), as why not; absent: nothing. The surface lists a tool from its
   * descriptor without loading it (`core-descriptors.ts`), so a tool this process cannot build is
   * left off by this check, which `load` makes too.
   */
  needs?: (runtime: ToolRuntime) => string | undefined;
}

const always = (): Availability => ({ ok: true });

/** The session tools need the running agent's sessions service. */
const needsSessions = (runtime: ToolRuntime): string | undefined => (runtime.sessions ? undefined : 'needs the agent runtime (a configured model): pass sessions in the tool runtime');

/** The session tools' loader. */
async function sessionToolFor(runtime: ToolRuntime, id: SessionToolId): Promise<ToolImplementation> {
  const sessions = runtime.sessions;
  if (!sessions) throw new Error(`${id} ${needsSessions(runtime)!}`);
  const { createSessionTools } = await import('../agent/tools/index.js');
  const { surfaceInputs } = await import('./surface-inputs.js');
  return createSessionTools({ config: runtime.config, sessions, surfaceOptions: surfaceInputs(runtime.config, runtime.baseDir) })[id];
}

let chromium: Availability | undefined;
/** The browser needs `browser.enabled` and Debian's Chromium (checked once, never launched here). */
const browserAvailability = (config: WardenConfig): Availability =>
  !config.browser.enabled
    ? { ok: false, why: 'browser.enabled is false' }
    : (chromium ??= existsSync('/usr/bin/chromium') ? { ok: true } : { ok: false, why: '/usr/bin/chromium is not installed (apt-get install chromium)' });

/** Tools that run on the agent's turn loop (sessions) or ask its model (image) exist only with a model. */
const needsModel = (config: WardenConfig): Availability =>
  config.models.default !== undefined || config.agents.list.some((a) => a.model !== undefined) ? { ok: true } : { ok: false, why: 'needs a model: set models.default' };

export const CORE_IMPLEMENTATIONS: Record<string, CoreToolEntry> = {
  ask_user: {
    availability: always,
    load: async (runtime) => {
      const { createAskUserTool } = await import('../tools/core/ask-user/ask-user.js');
      const questions = runtime.userQuestions;
      // Outside `warden start` (a one-shot command) no platform shows buttons: each call says so.
      return eraseArgs(createAskUserTool({ ask: async (input) => (questions ? questions.ask(input) : { status: 'error', error: 'no chat platform runs here to ask a person' }) }));
    },
  },
  conversations_list: {
    availability: always,
    load: async (runtime) => eraseArgs((await import('../tools/core/conversations/conversations.js')).createConversationsListTool(() => runtime.conversations, runtime.messaging)),
  },
  conversations_send: {
    availability: always,
    load: async (runtime) => eraseArgs((await import('../tools/core/conversations/conversations.js')).createConversationsSendTool(runtime.config, runtime.messaging)),
  },
  conversations_turn: {
    availability: always,
    load: async (runtime) => eraseArgs((await import('../tools/core/conversations/conversations.js')).createConversationsTurnTool(runtime.config, runtime.messaging, () => runtime.conversationWaits)),
  },
  progress_card: {
    availability: always,
    load: async (runtime) => eraseArgs((await import('../tools/core/progress-card/progress-card.js')).createProgressCardTool(() => runtime.progressCards)),
  },
  secrets: {
    availability: always,
    load: async (runtime) => {
      const { createSecretsTool } = await import('../tools/core/secrets/secrets.js');
      const { secretsToolDeps } = await import('./secret-tool-deps.js');
      // Without a secret store (a one-shot command) the tool loads and answers each call with why it cannot act.
      return eraseArgs(createSecretsTool(secretsToolDeps(runtime.secrets, runtime.secretPrompts, runtime.store)));
    },
  },
  image: {
    availability: needsModel,
    load: async (runtime) => {
      const { createImageTool } = await import('../tools/core/media/image.js');
      const { createModelRegistry } = await import('../models/registry.js');
      return eraseArgs(createImageTool({ config: runtime.config, models: createModelRegistry(runtime.config), usage: () => runtime.usage }));
    },
  },
  image_generate: {
    availability: (config) => mediaAvailability(config, 'imageGeneration'),
    load: async (runtime) => eraseArgs((await import('../tools/core/media/image-generate.js')).createImageGenerateTool(runtime.config, process.env, () => runtime.usage)),
  },
  tts: { availability: (config) => mediaAvailability(config, 'tts'), load: async (runtime) => eraseArgs((await import('../tools/core/media/tts.js')).createTtsTool(runtime.config, process.env, () => runtime.usage)) },
  pdf: { availability: always, load: async () => eraseArgs((await import('../tools/core/media/pdf.js')).pdfTool) },
  sessions_list: { availability: needsModel, needs: needsSessions, load: async (runtime) => sessionToolFor(runtime, 'sessions_list') },
  sessions_history: { availability: needsModel, needs: needsSessions, load: async (runtime) => sessionToolFor(runtime, 'sessions_history') },
  sessions_search: { availability: needsModel, needs: needsSessions, load: async (runtime) => sessionToolFor(runtime, 'sessions_search') },
  sessions_send: { availability: needsModel, needs: needsSessions, load: async (runtime) => sessionToolFor(runtime, 'sessions_send') },
  sessions_spawn: { availability: needsModel, needs: needsSessions, load: async (runtime) => sessionToolFor(runtime, 'sessions_spawn') },
  sessions_yield: { availability: needsModel, needs: needsSessions, load: async (runtime) => sessionToolFor(runtime, 'sessions_yield') },
  subagents: { availability: needsModel, needs: needsSessions, load: async (runtime) => sessionToolFor(runtime, 'subagents') },
  agents_list: { availability: needsModel, needs: needsSessions, load: async (runtime) => sessionToolFor(runtime, 'agents_list') },
  session_status: {
    availability: always,
    load: async (runtime) => {
      const { createSessionStatusTool } = await import('../agent/tools/session-status.js');
      const { surfaceInputs } = await import('./surface-inputs.js');
      return eraseArgs(createSessionStatusTool({ config: runtime.config, store: runtime.store, surfaceOptions: surfaceInputs(runtime.config, runtime.baseDir) }));
    },
  },
  read: { availability: always, load: async () => eraseArgs((await import('../tools/core/fs/read.js')).readTool) },
  write: { availability: always, load: async () => eraseArgs((await import('../tools/core/fs/write.js')).writeTool) },
  edit: { availability: always, load: async () => eraseArgs((await import('../tools/core/fs/edit.js')).editTool) },
  apply_patch: { availability: always, load: async () => eraseArgs((await import('../tools/core/fs/apply-patch.js')).applyPatchTool) },
  exec: {
    // Gateway needs nothing; the sandbox host needs bubblewrap.
    availability: (config) =>
      config.tools.exec?.host === 'sandbox' && !bwrapAvailable()
        ? { ok: false, why: `tools.exec.host is sandbox but bubblewrap (${BWRAP_PATH}) is not installed` }
        : { ok: true },
    load: async (runtime) => {
      const { createExecTool } = await import('../tools/core/exec/exec.js');
      const { ExecAllowlistStore } = await import('../exec/allowlist-store.js');
      const { wardenStatePaths } = await import('../exec/warden-state.js');
      const { resolveDataDir } = await import('../store/data-dir.js');
      const dataDir = resolveDataDir({ configDataDir: runtime.config.dataDir, env: process.env, cwd: runtime.baseDir });
      const protect = wardenStatePaths({ dataDir, configFile: runtime.configFile, baseDir: runtime.baseDir, cwd: process.cwd() }).map((p) => p.at);
      const admin = runtime.control?.admin;
      // "Allow always" on a network card: one more allowlist entry, as a config patch the control plane judges.
      const addNetworkAllow = admin
        ? async (entry: string, ctx: ToolCallContext) => {
            const current = admin.config().tools.exec?.sandbox.network.allow ?? [];
            if (current.includes(entry)) return { ok: true as const };
            const outcome = await admin.patch({ tools: { exec: { sandbox: { network: { allow: [...current, entry] } } } } }, ctx.turn, ctx.sessionKey, ctx.signal);
            if (outcome.kind === 'applied' || outcome.kind === 'unchanged') return { ok: true as const };
            return { ok: false as const, why: outcome.kind === 'refused' ? outcome.reason : outcome.problems.map((p) => p.message).join('; ') };
          }
        : undefined;
      const { AuditLog } = await import('../store/audit.js');
      const audit = runtime.store ? new AuditLog(runtime.store.db) : undefined;
      return eraseArgs(createExecTool({ config: runtime.config, allowlist: runtime.store ? new ExecAllowlistStore(runtime.store.db) : undefined, protect, addNetworkAllow, audit }));
    },
  },
  process: { availability: always, load: async () => eraseArgs((await import('../tools/core/process/process.js')).createProcessTool()) },
  memory_search: { availability: always, load: async (runtime) => eraseArgs((await import('../tools/core/memory/memory-search.js')).memorySearchForRuntime(runtime)) },
  memory_get: { availability: always, load: async () => eraseArgs((await import('../tools/core/memory/memory-get.js')).memoryGetTool) },
  message: {
    availability: always,
    load: async (runtime) => eraseArgs((await import('../tools/core/message/message.js')).createMessageTool(runtime.config, runtime.messaging)),
  },
  web_search: {
    availability: (config) => webSearchAvailability(config),
    load: async (runtime) => eraseArgs((await import('../tools/core/web/web-search.js')).createWebSearchTool(runtime.config)),
  },
  web_fetch: {
    availability: webFetchAvailability,
    load: async (runtime) => eraseArgs((await import('../tools/core/web/web-fetch.js')).createWebFetchTool({ config: runtime.config })),
  },
  gateway: {
    availability: always,
    load: async (runtime) => eraseArgs((await import('../control/tools/gateway/gateway.js')).createGatewayTool({ config: runtime.config, status: runtime.status, admin: runtime.control?.admin })),
  },
  nodes: {
    availability: always,
    load: async (runtime) => eraseArgs((await import('../control/tools/nodes/nodes.js')).createNodesTool({ hub: () => runtime.control?.nodes })),
  },
  browser: { availability: browserAvailability, load: async (runtime) => eraseArgs((await import('../tools/core/browser/browser.js')).browserToolForRuntime(runtime)) },
  cron: {
    availability: always,
    needs: (runtime) => (runtime.cron || runtime.store ? undefined : 'cron needs the store: open it before loading the tool'),
    load: async (runtime) => {
      const { createCronTool } = await import('../tools/core/cron/cron.js');
      const { CronJobs } = await import('../cron/jobs.js');
      const { SessionContextStore } = await import('../turn/session-contexts.js');
      const missing = CORE_IMPLEMENTATIONS.cron!.needs!(runtime);
      if (missing) throw new Error(missing);
      const cron = runtime.cron ?? { jobs: new CronJobs(runtime.store!.db, { keepRuns: runtime.config.cron.keepRuns }) };
      // A job may post in another conversation Warden has been addressed in: the router's records say which.
      const conversations = runtime.store ? new SessionContextStore(runtime.store.db) : undefined;
      return eraseArgs(createCronTool({ jobs: cron.jobs, scheduler: cron.scheduler, conversations, config: runtime.config }));
    },
  },
};

/** The availability of a core tool, or undefined when this build has no implementation of it. */
export function coreAvailability(id: string, config: WardenConfig): Availability | undefined {
  return Object.hasOwn(CORE_IMPLEMENTATIONS, id) ? CORE_IMPLEMENTATIONS[id]!.availability(config) : undefined;
}
