import type { AgentSessionsApi } from '../agent/sessions.js';
import type { WardenConfig } from '../config/schema/index.js';
import type { ConfigAdmin } from '../control/config-admin.js';
import type { NodeHub } from '../control/nodes/hub.js';
import type { CronJobs } from '../cron/jobs.js';
import type { CronScheduler } from '../cron/scheduler.js';
import type { Store } from '../store/store.js';
import type { SecretsRuntime } from './secret-grants.js';
import type { SecretPrompts } from './secret-prompts.js';
import type { UserQuestions } from './user-questions.js';
import type { MessagingService, RuntimeStatus } from '../tools/types.js';
import type { ProgressCardService } from '../tools/core/progress-card/view.js';
import type { ConversationDirectory, ConversationWaitService } from '../tools/core/conversations/conversations.js';
import type { UsageService } from '../usage/service.js';

/**
 * What a tool factory may need to build an implementation: the config, the store, and the
 * long-lived services of a running Warden. The CLI builds it with only what it has (no
 * scheduler, for instance); a tool must say clearly when a service it needs is absent.
 */
export interface ToolRuntime {
  config: WardenConfig;
  /** Directory relative config paths (workspaces, data dir) resolve against. */
  baseDir: string;
  /** The config file read, when there is one (the sandbox masks it). */
  configFile?: string | undefined;
  store?: Store | undefined;
  cron?: { jobs: CronJobs; scheduler?: CronScheduler | undefined } | undefined;
  /** Sessions and subagents of the running agent (session tools); absent without a model. */
  sessions?: AgentSessionsApi | undefined;
  /** Usage accounting and budgets of the running Warden; absent outside `warden start`. */
  usage?: Pick<UsageService, 'wrap' | 'admit' | 'settle'> | undefined;
  /** Sends through the running adapters; absent outside `warden start`. */
  messaging?: MessagingService | undefined;
  /** Live state of the running bot; absent outside `warden start`. */
  status?: (() => RuntimeStatus) | undefined;
  /** The secret store (the secrets tool); absent where none is open. */
  secrets?: SecretsRuntime | undefined;
  /** The private prompt for a secret (a modal on Discord and Slack); absent outside `warden start`. */
  secretPrompts?: SecretPrompts | undefined;
  /** The ask_user tool's questions (buttons and a form on every platform); absent outside `warden start`. */
  userQuestions?: UserQuestions | undefined;
  /** The progress_card tool's cards (edited in place through the running adapters); absent outside `warden start`. */
  progressCards?: ProgressCardService | undefined;
  /** conversations_turn's waits for a reply elsewhere; absent outside `warden start`. */
  conversationWaits?: ConversationWaitService | undefined;
  /** The conversations the router recorded (conversations_list); absent outside `warden start`. */
  conversations?: ConversationDirectory | undefined;
  /** The owner's control plane (config administration, paired nodes); absent outside `warden start`. */
  control?: ControlPlane | undefined;
}

/** What the owner-only gateway and nodes tools act on in a running Warden. */
export interface ControlPlane {
  admin?: ConfigAdmin | undefined;
  nodes?: NodeHub | undefined;
}
