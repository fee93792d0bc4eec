// The governed tool path a running Warden and the tests build alike: one executor over the
// three tool sources, the policy report `/tools` prints, and the message tool's way out.
import { ApprovalService } from '../approvals/index.js';
import { explainApprovalRules, explanationLines } from '../approvals/rules.js';
import type { WardenConfig } from '../config/index.js';
import { EventBus } from '../events/events.js';
import type { TurnContext } from '../policy/context.js';
import type { ToolRuntime } from './tool-runtime.js';
import { resolveToolSurface, type SurfaceOptions } from '../policy/surface.js';
import { AuditLog, type Store } from '../store/index.js';
import { HookBus } from '../hooks/bus.js';
import type { PluginRuntime } from '../plugins/runtime.js';
import type { MessagingService } from '../tools/types.js';
import type { ToolReport } from '../gateway/commands.js';
import { sendWithHooks } from '../gateway/gateway.js';
import { GovernedToolExecutor } from './tool-executor.js';
import type { ToolInvokerOptions } from '../tools/invoke/chain.js';
import type { ChatAdapter } from '../gateway/types.js';

/** The message tool's way out: posts through the running adapters (and message_sending / message_sent). */
export function messagingFor(adapters: readonly ChatAdapter[] | (() => readonly ChatAdapter[]), hooks?: HookBus): MessagingService {
  const list = typeof adapters === 'function' ? adapters : () => adapters;
  return {
    providers: () => list().map((a) => a.provider),
    async send(target, text) {
      const adapter = list().find((a) => a.provider === target.provider);
      if (!adapter) return { ok: false, error: `no ${target.provider} adapter is running` };
      const channelId = target.channel ?? '';
      const sent = await sendWithHooks(hooks, adapter, { provider: adapter.provider, channelId, threadId: target.threadId, dmUserId: target.userId }, { text }, {});
      return sent.ok ? { ok: true, channelId: channelId || `dm:${target.userId}`, messageId: sent.messageId } : { ok: false, error: sent.error };
    },
    actions: (provider) => list().find((a) => a.provider === provider)?.messageActions,
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
      trace: surface.trace,
      // What the call chain's rule step would read for this conversation.
      approvalRules: (tool) => explanationLines(explainApprovalRules(config, tool, context, inputs.plugins?.find((t) => t.id === tool))),
    };
  };
}

/**
 * The governed call path as `warden start` wires it: the executor every turn, subagent and
 * `/exec` goes through, and the `/tools` report — both over the surface inputs `warden tools`
 * uses. `toolRuntime.sessions` is set once the agent runtime exists.
 */
export function createToolPath(
  config: WardenConfig,
  toolRuntime: ToolRuntime,
  services: { store: Store; approvals: ApprovalService; events: EventBus; plugins?: PluginRuntime | undefined; secretEnv?: ToolInvokerOptions['secretEnv'] },
) {
  // No transcript here: the turn loop persists each result once, in order with the model's messages.
  const executor = new GovernedToolExecutor(config, toolRuntime, {
    hooks: services.plugins?.hooks ?? new HookBus(),
    trustedPolicies: services.plugins?.trustedPolicies,
    approvals: services.approvals,
    audit: new AuditLog(services.store.db),
    events: services.events,
    secretEnv: services.secretEnv,
  });
  return { executor, toolReport: toolReportFor(config, executor.inputs) };
}
