import { userInfo } from 'node:os';
import { ApprovalService } from '../approvals/service.js';
import { joinCluster } from '../cluster/index.js';
import type { ApprovalDecision } from '../approvals/types.js';
import { closeAllBrowsers } from '../browser/shutdown.js';
import { closest } from '../config/errors.js';
import type { WardenConfig } from '../config/index.js';
import { EventBus } from '../events/events.js';
import { agentWorkspace } from '../exec/check.js';
import { sessionKeyFor } from '../policy/session-key.js';
import type { TurnContext } from '../policy/context.js';
import { resolveToolSurface } from '../policy/surface.js';
import { AuditLog } from '../store/audit.js';
import { resolveDataDir } from '../store/data-dir.js';
import { openConfiguredStore } from '../app/migrations.js';
import { configuredSecrets } from '../app/known-secrets.js';
import { registerKnownSecrets } from '../redact/scrub.js';
import type { Store } from '../store/store.js';
import { Transcripts } from '../store/transcript.js';
import { CORE_IMPLEMENTATIONS } from '../app/core-tools.js';
import { loopDetectionEnabled, ToolInvoker, type InvokeOutcome } from '../tools/invoke/chain.js';
import { loadPluginRuntime, type PluginRuntime } from '../plugins/runtime.js';
import type { McpManager } from '../mcp/manager.js';
import { connectMcpForCommand, reservedToolNames } from '../mcp/registry.js';
import { approvalRulesInput, surfaceInputs } from '../app/surface-inputs.js';
import type { ToolImplementation } from '../tools/types.js';
import { EXIT, stringOption, type CliIO, type CommandRunner } from './args.js';
import { loadConfigForCommand } from './config.js';
import { CONTEXT_FLAGS, contextFromArgs, unknownFlagProblems } from './context.js';

/**
 * `warden invoke TOOL --args JSON [--approve once|always|deny]`: one call through the surface
 * and the whole wrapper chain in the context the flags describe; prints the normalised result.
 * With --approve, an approval the call raises is answered by the local operator; without it the
 * call waits until someone resolves it (`warden approvals resolve`, or a chat approver).
 */

const FLAGS = ['config', 'json', 'args', 'approve', 'session', 'help', ...CONTEXT_FLAGS];
const APPROVE: Record<string, ApprovalDecision> = { once: 'allow-once', always: 'allow-always', deny: 'deny' };

export const run: CommandRunner = async (args, io) => {
  const problems = unknownFlagProblems(args, FLAGS, closest);
  const [toolName, ...extra] = args.positionals;
  if (toolName === undefined) problems.push('missing TOOL: warden invoke TOOL --args JSON');
  if (extra.length > 0) problems.push(`unexpected arguments: ${extra.join(' ')}`);
  const callArgs = parseArgsJson(args.options.get('args'), problems);
  const approveFlag = args.options.get('approve');
  let approve: ApprovalDecision | undefined;
  if (approveFlag !== undefined) {
    approve = typeof approveFlag === 'string' ? APPROVE[approveFlag] : undefined;
    if (!approve) problems.push(`--approve: expected once, always or deny${typeof approveFlag === 'string' ? `, got "${approveFlag}"` : ''}`);
  }
  if (args.options.get('session') === true) problems.push('--session needs a session key');

  const loaded = loadConfigForCommand(args, io);
  if (!loaded) {
    if (problems.length) io.stderr(problems.map((p) => `warden invoke: ${p}`).join('\n'));
    return EXIT.badInput;
  }
  const { config, baseDir } = loaded;
  const context = contextFromArgs(args, config);
  if (!context.ok) problems.push(...context.problems);
  if (problems.length > 0 || !context.ok) {
    io.stderr(problems.map((p) => `warden invoke: ${p}`).join('\n'));
    return EXIT.badInput;
  }
  const turn = context.ctx;

  // The bot's plugins: their tools, hooks and trusted policies take part in this call as in a turn.
  const plugins = await loadPluginRuntime(config, baseDir);
  // A policy plugin that did not load: its rules would be missing from this call, as from the bot's.
  const refusal = plugins.refusal();
  if (refusal) {
    io.stderr(`warden invoke: ${refusal}`);
    return EXIT.badInput;
  }
  // The config's MCP servers, connected for this one call (a server still connecting is unavailable, with why).
  const mcp = await connectMcpForCommand(config, baseDir, { reserved: reservedToolNames(() => plugins.tools) });
  try {
    return await invokeOnce(args, io, { config, baseDir, turn, plugins, mcp, toolName: toolName!, callArgs, approve });
  } finally {
    await mcp?.stop();
  }
};

async function invokeOnce(
  args: Parameters<CommandRunner>[0],
  io: Parameters<CommandRunner>[1],
  { config, baseDir, turn, plugins, mcp, toolName, callArgs, approve }: { config: WardenConfig; baseDir: string; turn: TurnContext; plugins: PluginRuntime; mcp: McpManager | undefined; toolName: string; callArgs: unknown; approve: ApprovalDecision | undefined },
): Promise<number> {
  const surface = resolveToolSurface(config, turn, surfaceInputs(config, baseDir));
  if (surface.error) {
    if (args.options.get('json') === true) io.stdout(JSON.stringify({ error: surface.error }, null, 2));
    else io.stderr(`warden invoke: ${surface.error}`);
    return EXIT.noTools;
  }

  const dataDir = resolveDataDir({ configDataDir: config.dataDir, env: io.env, cwd: baseDir });
  const opened = await openConfiguredStore({ dataDir, store: config.store });
  if (!opened.ok) {
    io.stderr(`warden invoke: ${opened.error.message}`);
    return EXIT.badInput;
  }
  const store = opened.store;
  // The config's credentials and `.env` values are known secrets here too: the result printed is scrubbed of them.
  const forgetSecrets = registerKnownSecrets('cli-invoke', configuredSecrets(config, { env: io.env, baseDir }));
  const events = new EventBus();
  // On a shared store the servers must see this command alive, or they would close its request as interrupted.
  const cluster = await joinCluster(store, { leaseSec: config.store.leaseSec, role: 'cli' }).catch(() => undefined);
  const approvals = new ApprovalService({ store, config, events, instances: cluster?.instances });
  try {
    const operator = userInfo().username || 'operator';
    events.on('approval.requested', ({ request }) => {
      if (approve) {
        // Not decided here, the call waits for its expiry: say so, with the way to decide it by hand.
        approvals.resolveAsOperator(request.id, approve, operator).catch((err: unknown) =>
          io.stderr(`warden invoke: approval ${request.id} could not be resolved (${(err as Error).message}); decide with: warden approvals resolve ${request.id} ${approve}`),
        );
        return;
      }
      io.stderr(
        `warden invoke: approval ${request.id} is pending (${request.title}); it expires ${new Date(request.expiresAt).toISOString()}.\n` +
          `  decide with: warden approvals resolve ${request.id} ${request.allowedDecisions.join('|')}`,
      );
    });
    const invoker = new ToolInvoker({
      resolveTool: (id, call) => (plugins.isPluginTool(id) ? plugins.implementation(id, call) : mcp?.isMcpTool(id) ? Promise.resolve(mcp.implementation(id)) : loadTool(id, config, baseDir, store)),
      hooks: plugins.hooks,
      trustedPolicies: plugins.trustedPolicies,
      approvalRules: approvalRulesInput(config, surfaceInputs(config, baseDir)),
      approvals,
      transcripts: new Transcripts(store.db),
      audit: new AuditLog(store.db),
      events,
    });
    const outcome = await invoker.invoke({
      tool: toolName,
      args: callArgs,
      turn,
      sessionKey: stringOption(args, 'session') ?? sessionKeyOf(turn),
      workspaceDir: agentWorkspace(config, turn.agentId, baseDir),
      surface,
      loopDetection: loopDetectionEnabled(config, turn.agentId),
    });
    print(io, outcome, args.options.get('json') === true);
    // The call's transcript row is written after it answers: in before the store closes.
    await invoker.settled();
    return exitFor(outcome);
  } finally {
    // A browser call launched Chromium; a one-shot command must not leave it running.
    await closeAllBrowsers();
    approvals.shutdown();
    await cluster?.stop();
    await store.close();
    forgetSecrets();
  }
}

/**
 * A script branches on the outcome (docs/cli.md): 0 ran, 4 waiting on an approval, 5
 * refused by policy — by the call chain (`blocked`) or by the tool's own gate (exec's approval
 * denied or expired: an error result whose details say `denied`) — and 6 the tool failed.
 */
export function exitFor(outcome: Pick<InvokeOutcome, 'status' | 'details'>): number {
  if (outcome.status === 'ok') return EXIT.ok;
  if (outcome.status === 'pending') return EXIT.ask;
  if (outcome.status === 'blocked') return EXIT.deny;
  const details = outcome.details as { status?: unknown } | undefined;
  return details?.status === 'denied' ? EXIT.deny : EXIT.toolError;
}

function parseArgsJson(value: string | true | undefined, problems: string[]): unknown {
  if (value === undefined) return {};
  if (value === true) {
    problems.push('--args needs a JSON object, e.g. --args \'{"path":"README.md"}\'');
    return {};
  }
  try {
    return JSON.parse(value) as unknown;
  } catch (err) {
    problems.push(`--args: not valid JSON (${(err as Error).message})`);
    return {};
  }
}

async function loadTool(id: string, config: WardenConfig, baseDir: string, store: Store): Promise<ToolImplementation | undefined> {
  const entry = Object.hasOwn(CORE_IMPLEMENTATIONS, id) ? CORE_IMPLEMENTATIONS[id] : undefined;
  return entry?.load({ config, baseDir, store });
}

function sessionKeyOf(turn: TurnContext): string {
  return sessionKeyFor(turn.agentId, {
    provider: turn.provider as 'discord' | 'slack' | 'web',
    chatType: turn.chat,
    channelId: turn.channelId ?? turn.channelName ?? 'cli',
    threadId: turn.threadId,
    senderId: turn.senderId ?? 'cli',
  });
}

function print(io: CliIO, outcome: InvokeOutcome, json: boolean): void {
  if (json) {
    io.stdout(JSON.stringify(outcome, null, 2));
    return;
  }
  const head = `${outcome.tool}: ${outcome.status}${outcome.deniedReason ? ` (${outcome.deniedReason})` : ''}${outcome.truncated ? ', truncated' : ''}`;
  const body = outcome.content.map((b) => (b.type === 'text' ? b.text : `[image ${b.mimeType}]`)).join('\n');
  io.stdout(`${head}\n${body}`);
}
