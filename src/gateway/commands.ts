import { describeBinding } from './bindings.js';
import { deciderIn } from '../policy/people.js';
import { forPeople } from './people-text.js';
import type { ToolExecutor } from '../agent/index.js';
import { APPROVAL_DECISIONS, type ApprovalDecision, type ApprovalRequest, type Grant } from '../approvals/types.js';
import type { RevokeResult } from '../approvals/grants.js';
import type { PluginCommand } from '../plugins/runtime.js';
import type { PluginCommandContext } from '../plugins/sdk.js';
import type { TurnContext } from '../policy/context.js';
import { explainTool, explanationHead } from '../policy/explain.js';
import type { ExplainStep } from '../policy/surface.js';
import { normalizeToolName } from '../policy/tool-names.js';
import type { SkillCommandSpec } from '../skills/commands.js';
import type { ToolDefinition } from '../agent/types.js';
import type { ToolResult } from '../tools/types.js';
import { OWNER_ONLY_TOOLS } from '../policy/catalog.js';
import type { Route } from './router.js';
import type { PairingStore } from '../cluster/pairing.js';
import type { ApproveOutcome } from './approval-clicks.js';
import { decidePairing, pairingDecisionText } from './pairing-decision.js';
import type { ApprovalClick, OutboundMessage } from './types.js';
import { runNodesCommand, type NodesCommandDeps } from './commands/nodes.js';
import { runCronCommand } from './cron-command.js';
import { formatPendingApprovals } from './approvals-command.js';
import { unknownCommandText } from './command-text.js';
import { runUsageCommand, type UsageCommandDeps } from './usage-command.js';

export const COMMAND_NAMES = ['help', 'tools', 'exec', 'approve', 'approvals', 'skills', 'status', 'stop', 'cron', 'nodes', 'pair', 'new', 'usage', 'secrets'] as const;
export type CommandName = (typeof COMMAND_NAMES)[number];
/**
 * The chat forms of owner-only tools (`/cron`, `/nodes`): for a non-owner they are not
 * commands at all — answered as an unknown word, left out of /help and of did-you-mean hints —
 * so a non-owner is never told the tools exist (README: owner-only tools are never visible to
 * anyone but an owner).
 */
// `/pair` approves who may DM; `/secrets` lists the secret store's names (the `secrets` tool itself is not owner-only).
export const OWNER_COMMANDS: ReadonlySet<string> = new Set([...COMMAND_NAMES.filter((n) => OWNER_ONLY_TOOLS.includes(n)), 'pair', 'secrets']);

/** Commands only the web chat can carry out; platforms do not register them as native commands. */
export const WEB_ONLY_COMMANDS: readonly CommandName[] = ['new'];

export interface ParsedCommand {
  name: CommandName;
  /** Everything after the command word, trimmed (the shell text of `/exec`). */
  args: string;
}

/**
 * `/tools`, `/exec ls -la`, `/warden exec ls` (the form a single registered Slack command
 * takes). Only Warden's own commands parse; any other text is a plain message.
 */
export function parseCommand(text: string): ParsedCommand | undefined {
  const m = /^\/(?:warden\s+)?([a-z]+)(?:\s+([\s\S]*))?$/i.exec(text.trim());
  if (!m) return undefined;
  const name = m[1]!.toLowerCase();
  if (!(COMMAND_NAMES as readonly string[]).includes(name)) return undefined;
  return { name: name as CommandName, args: (m[2] ?? '').trim() };
}

export const isCommand = (text: string): boolean => parseCommand(text) !== undefined;

/**
 * Commands that must not wait behind the session's running turn: `/stop` aborts it and
 * `/approve` may be the very decision it is waiting for. `/exec` runs a tool call and queues
 * like a turn.
 */
export function runsImmediately(name: CommandName): boolean {
  return name !== 'exec';
}

/** `/approve <id> <decision>`; `always` and `once` are accepted as OpenClaw accepts them. */
export function parseApproveArgs(args: string): { ok: true; id: string; decision: ApprovalDecision } | { ok: false; message: string } {
  const [id, raw, ...extra] = args.split(/\s+/).filter(Boolean);
  const usage = `usage: /approve <id> ${APPROVAL_DECISIONS.join('|')}`;
  if (!id || !raw || extra.length > 0) return { ok: false, message: usage };
  const decision = DECISION_ALIASES[raw.toLowerCase()];
  if (!decision) return { ok: false, message: `unknown decision "${raw}"; ${usage}` };
  return { ok: true, id, decision };
}

const DECISION_ALIASES: Record<string, ApprovalDecision> = {
  'allow-once': 'allow-once',
  once: 'allow-once',
  'allow-always': 'allow-always',
  always: 'allow-always',
  'allow-conversation': 'allow-conversation',
  conversation: 'allow-conversation',
  'allow-timed': 'allow-timed',
  timed: 'allow-timed',
  deny: 'deny',
};

/** The policy's answer for one context, as `warden tools` prints it. */
export interface ToolReport {
  tools: string[];
  removed: Array<{ tool: string; by: string }>;
  unavailable: Array<{ tool: string; why: string }>;
  warnings: string[];
  /** One tool's path through every filter and step (`/tools --explain`), from the same surface. */
  trace?: ((tool: string) => ExplainStep[]) | undefined;
  /** The approval rules that can make a tool's calls ask here, one line each (`approvals.rules[2]`). */
  approvalRules?: ((tool: string) => string[]) | undefined;
}

export interface SkillsView {
  eligible: Array<{ name: string; description?: string }>;
  ineligible: Array<{ name: string; why: string }>;
}

/** Chat commands plugins registered (`api.registerCommand`); Warden's own names are never among them. */
export interface PluginCommandRegistry {
  get(name: string): PluginCommand | undefined;
  values(): Iterable<PluginCommand>;
}

export interface ParsedPluginCommand {
  command: PluginCommand;
  args: string;
  body: string;
}

/** How long a plugin's command may run before the conversation gets an answer without it. */
export const PLUGIN_COMMAND_TIMEOUT_MS = 120_000;

/**
 * A plugin's command, through the gates Warden's own commands pass: an owner-only command
 * refuses anyone else before the plugin runs, and the tools it may call are this conversation's
 * surface for this sender, each call through the whole call chain.
 */
export async function runPluginCommand(parsed: ParsedPluginCommand, route: Route, deps: CommandDeps, signal: AbortSignal): Promise<OutboundMessage> {
  const { command } = parsed;
  if (command.ownerOnly && !route.context.senderIsOwner) return { text: `/${command.name} is reserved for owners.` };
  let surface: { ids: string[]; turn: TurnContext } | undefined;
  const resolveSurface = async () => {
    if (surface) return surface;
    if (!deps.tools) return (surface = { ids: [], turn: route.context });
    const s = await deps.tools.surface(route.context, route.sessionKey);
    return (surface = s.ok ? { ids: s.tools.map((t) => t.id), turn: s.turn ?? route.context } : { ids: [], turn: route.context });
  };
  const initial = await resolveSurface();
  const ctx: PluginCommandContext = {
    args: parsed.args,
    commandBody: parsed.body,
    agentId: route.agentId,
    sessionKey: route.sessionKey,
    channel: route.context.provider,
    channelId: route.context.channelId,
    threadId: route.context.threadId,
    senderId: route.context.senderId,
    senderIsOwner: route.context.senderIsOwner,
    config: command.config,
    tools: {
      list: () => [...initial.ids],
      call: async (name, args) => {
        if (!deps.tools) return { content: [{ type: 'text', text: 'tools cannot run: the tool call path is not set up in this process' }], isError: true };
        const { ids, turn } = await resolveSurface();
        // A person's command: never counted as a model's run, and an undecided approval does not hold the conversation.
        const result = await deps.tools.execute({ toolCallId: deps.newCallId(), tool: name, args }, { sessionKey: route.sessionKey, turn, signal, surface: ids, via: 'command', deferApprovals: true });
        return { content: result.content, isError: result.isError === true };
      },
    },
  };
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${PLUGIN_COMMAND_TIMEOUT_MS / 1000} s`)), PLUGIN_COMMAND_TIMEOUT_MS);
  });
  try {
    const result = await Promise.race([Promise.resolve().then(() => command.handler(ctx)), timeout]);
    const text = typeof result === 'string' ? result : result && typeof result === 'object' && typeof result.text === 'string' ? result.text : '';
    return { text: text === '' ? `/${command.name}: done.` : text };
  } finally {
    clearTimeout(timer);
  }
}

/** What the commands need from the rest of Warden; each piece is the same one turns use. */
export interface CommandDeps {
  toolReport(context: TurnContext): ToolReport;
  /** The governed call path (surface gate, approval, execute); absent = tools cannot run here. */
  tools: ToolExecutor | undefined;
  /** The approval click path for `/approve`, bound to the sender's platform. */
  approve(click: ApprovalClick): Promise<ApproveOutcome>;
  skills(context: TurnContext): SkillsView | undefined;
  status(route: Route): StatusView | Promise<StatusView>;
  /** Aborts the session's running turn; false when nothing was running. */
  /** Stops the conversation's running turn here, or asks the instance running it (a shared store); true when one was stopped or told. */
  stop(sessionKey: string): boolean | Promise<boolean>;
  newCallId(): string;
  /** Paired nodes, for `/nodes`; absent without a node listener. */
  nodes?: NodesCommandDeps['hub'] | undefined;
  /** The skill commands of this agent, for `/help`. */
  skillCommands?: (() => readonly SkillCommandSpec[]) | undefined;
  /** `/new`: starts a fresh session for this conversation and says which; absent where it cannot. */
  newSession?: ((route: Route) => Promise<string>) | undefined;
  /** The session's pending approvals, oldest first (`/approvals`). */
  pendingApprovals?(sessionKey: string): ApprovalRequest[] | Promise<ApprovalRequest[]>;
  /** An agent's live grants (`/approvals grants`) and their revocation by an owner (`/approvals revoke ID`). */
  grants?: { list(agentId: string): Promise<Grant[]>; revoke(id: string, by: string): Promise<RevokeResult> } | undefined;
  /** Plugin commands, listed by /help. */
  pluginCommands?: PluginCommandRegistry | undefined;
  /** DM pairing (`/pair`); absent without a store. */
  pairing?: Pick<PairingStore, 'approve' | 'deny' | 'pending'> | undefined;
  /** Usage records and budgets for `/usage`; absent where the store is not at hand. */
  usage?: UsageCommandDeps | undefined;
  /** The secret store's names for an agent (`/secrets`, owners); never values. Absent without a store. */
  secretNames?: ((agentId: string) => Promise<Array<{ name: string; scope: string; updatedAt: number }>>) | undefined;
}

export interface StatusView {
  model: string | undefined;
  running: boolean;
  queued: number;
  pendingApprovals: number;
  adapters: string[];
  uptimeMs: number;
}

/** Runs one parsed command for a routed message; the answer goes back to the same conversation. */
export async function runCommand(command: ParsedCommand, route: Route, deps: CommandDeps, signal: AbortSignal): Promise<OutboundMessage> {
  // The router already answers these as unknown for a non-owner; this holds for any other caller.
  if (OWNER_COMMANDS.has(command.name) && !route.context.senderIsOwner) {
    return { text: unknownCommandText(command.name, deps.skillCommands?.() ?? [], '/help', deps.pluginCommands, false) };
  }
  switch (command.name) {
    case 'help': {
      const plugins = [...(deps.pluginCommands?.values() ?? [])].filter((c) => !c.ownerOnly || route.context.senderIsOwner);
      return { text: helpText(route.context.model !== undefined, deps.skillCommands?.() ?? [], plugins, route.context.senderIsOwner) };
    }
    case 'tools': {
      const report = deps.toolReport(route.context);
      if (command.args === '') return { text: formatToolReport(report, route.context.senderIsOwner) };
      return { text: formatToolExplanation(command.args, report, route.context.senderIsOwner) };
    }
    case 'exec':
      return runExec(command.args, route, deps, signal);
    case 'approve': {
      const parsed = parseApproveArgs(command.args);
      if (!parsed.ok) return { text: parsed.message };
      const outcome = await deps.approve({ approvalId: parsed.id, decision: parsed.decision, userId: route.context.senderId ?? '' });
      return { text: describeClickOutcome(outcome, parsed.id) };
    }
    case 'approvals':
      return runApprovalsCommand(command.args, route, deps);
    case 'skills':
      return { text: formatSkills(deps.skills(route.context)) };
    case 'status':
      return { text: formatStatus(route, await deps.status(route)) };
    case 'stop':
      return { text: (await deps.stop(route.sessionKey)) ? 'Stopped the running turn.' : 'Nothing is running in this conversation.' };
    case 'nodes':
      return runNodesCommand(command.args, route, { hub: deps.nodes ?? (() => undefined), approve: deps.approve });
    case 'new':
      return { text: deps.newSession ? await deps.newSession(route) : NEW_ELSEWHERE_TEXT };
    case 'cron':
      return runCronCommand(command.args, route, deps, signal);
    case 'pair':
      return { text: await runPair(command.args, route, deps) };
    case 'usage':
      return { text: deps.usage ? await runUsageCommand(command.args, route, deps.usage) : 'Usage is not recorded in this process.' };
    case 'secrets': {
      if (!deps.secretNames) return { text: 'No secret store runs here.' };
      const names = await deps.secretNames(route.context.agentId);
      if (names.length === 0) return { text: `No secrets stored for agent ${route.context.agentId}.` };
      const lines = names.map((n) => `${n.name}${n.scope ? ' (one conversation)' : ''} — set ${new Date(n.updatedAt).toISOString()}`);
      return { text: [`Secrets of agent ${route.context.agentId} (names only; values are never shown):`, ...lines].join('\n') };
    }
  }
}

/**
 * `/pair` (owners): lists the codes waiting on this platform; `/pair <code>` approves one, so
 * its sender's DMs are let in from now on (`dmPolicy: pairing`). Approval is per platform: an
 * owner approves codes handed out on the platform they are an owner on.
 */
async function runPair(args: string, route: Route, deps: CommandDeps): Promise<string> {
  if (!deps.pairing) return 'Pairing is not available in this process.';
  const provider = route.replyTo.provider;
  if (args === '') {
    const pending = await deps.pairing.pending(provider);
    if (pending.length === 0) return 'No pairing requests are waiting.';
    return ['Pairing requests:', ...pending.map((p) => `• ${p.code} — ${p.userName ? `${p.userName} (${p.userId})` : p.userId}`), 'Approve one with /pair <code>.'].join('\n');
  }
  // The same decision as the owners' card buttons (pairing-decision.ts).
  const outcome = await decidePairing(deps.pairing, { provider, code: args, decision: 'approve', by: { userId: route.context.senderId ?? '', isOwner: route.context.senderIsOwner } });
  return pairingDecisionText(outcome);
}

/** `/new` on a platform whose conversations are their channel's (or DM's) one session. */
export const NEW_ELSEWHERE_TEXT = '/new works in the web chat. Here the conversation is this channel’s (or DM’s) one session.';

async function runExec(commandText: string, route: Route, deps: CommandDeps, signal: AbortSignal): Promise<OutboundMessage> {
  if (commandText === '') return { text: 'usage: /exec <command>' };
  const ran = await runCommandTool('exec', () => ({ command: commandText }), route, deps, signal);
  return ran.ok ? formatToolResult(ran.result) : { text: ran.text };
}

/**
 * A tool call a person typed — `/exec`, a skill command with `command-dispatch: tool` — run
 * without a model: the build-time gate first (a command cannot reach a tool this conversation's
 * surface does not have), then the surface of this conversation and the whole call chain
 * (owner guard, argument schema, hooks, approvals), as the model's calls go. Every command
 * that runs a tool goes through here, so such calls are marked alike.
 */
export async function runCommandTool(
  tool: string,
  args: (definition: ToolDefinition) => Record<string, unknown>,
  route: Route,
  deps: CommandDeps,
  signal: AbortSignal,
): Promise<{ ok: true; result: ToolResult } | { ok: false; text: string }> {
  const report = deps.toolReport(route.context);
  if (!report.tools.includes(tool)) {
    // A tool this sender's surface does not know at all (an owner-only one, for a non-owner, or
    // none) is not named: a skill's dispatch could otherwise tell a non-owner an owner-only tool exists.
    const hidden = !route.context.senderIsOwner && OWNER_ONLY_TOOLS.includes(tool);
    const known = !hidden && (report.removed.some((r) => r.tool === tool) || report.unavailable.some((u) => u.tool === tool));
    const name = route.context.senderIsOwner || known ? tool : 'the tool this command runs';
    return { ok: false, text: `${name} is not available here: ${whyMissing(tool, report, route.context.senderIsOwner)}.` };
  }
  if (!deps.tools) return { ok: false, text: `${tool} cannot run: the tool call path is not set up in this process.` };
  const surface = await deps.tools.surface(route.context, route.sessionKey);
  if (!surface.ok) return { ok: false, text: surface.message };
  const definition = surface.tools.find((t) => t.id === tool);
  if (!definition) return { ok: false, text: `${tool} is not available here: it cannot be loaded in this process.` };
  // Typed by a person, so the card says so; an undecided approval never holds the conversation.
  const result = await deps.tools.execute(
    { toolCallId: deps.newCallId(), tool, args: args(definition) },
    { sessionKey: route.sessionKey, turn: surface.turn ?? route.context, signal, surface: surface.tools.map((t) => t.id), via: 'command', deferApprovals: true },
  );
  return { ok: true, result };
}

/** Result text in a code block; long output is also attached whole for platforms that take files. */
export function formatToolResult(result: ToolResult, tool = 'exec'): OutboundMessage {
  const pending = result.details as { status?: unknown; approvalId?: unknown } | undefined;
  if (pending?.status === 'pending' && typeof pending.approvalId === 'string') {
    return { text: `Approval ${pending.approvalId} is pending: the ${tool === 'exec' ? 'command' : `${tool} call`} runs when an approver decides, and its result will be posted under the card.` };
  }
  const text = forPeople(
    result.content
      .map((c) => (c.type === 'text' ? c.text : `[${c.mimeType} image]`))
      .join('\n')
      .trimEnd(),
  );
  const body = text === '' ? '(no output)' : text;
  const head = result.isError ? `${tool} failed:\n` : '';
  return { text: `${head}\`\`\`\n${body.replaceAll('```', '`\u200b``')}\n\`\`\`` };
}

export function formatToolReport(report: ToolReport, senderIsOwner: boolean): string {
  const tools = [...report.tools].sort();
  const lines = [tools.length > 0 ? `Your tools here (${tools.length}): ${tools.join(', ')}` : 'No tools are available to you here.'];
  // The surface already leaves owner-only tools out for a non-owner (policy hideOwnerOnly); a
  // report from anywhere else is held to the same rule: not named, not counted.
  const removed = report.removed.filter((r) => senderIsOwner || !OWNER_ONLY_TOOLS.includes(r.tool));
  if (removed.length > 0 || report.unavailable.length > 0) lines.push('', 'Not here:');
  for (const r of removed) lines.push(`• ${r.tool} — removed by ${r.by}`);
  for (const u of report.unavailable) lines.push(`• ${u.tool} — unavailable: ${u.why}`);
  for (const w of report.warnings) lines.push(`⚠ ${w}`);
  return lines.join('\n');
}

const TOOLS_USAGE = 'usage: /tools [--explain TOOL]';

/**
 * `/tools --explain TOOL`: the verdict and the filters and steps that decided, each with its
 * rule and config key, as `warden tools --explain` prints them (steps that did not apply are
 * left out). A non-owner asking about an owner-only tool gets the answer an unknown name gets,
 * and allowlists quoted in a rule lose their owner-only names.
 */
export function formatToolExplanation(args: string, report: ToolReport, senderIsOwner: boolean): string {
  const m = /^--explain\s+(\S+)$/.exec(args.trim());
  if (!m) return TOOLS_USAGE;
  const id = normalizeToolName(m[1]!);
  const hidden = !senderIsOwner && OWNER_ONLY_TOOLS.includes(id);
  const known = report.tools.includes(id) || report.removed.some((r) => r.tool === id) || report.unavailable.some((u) => u.tool === id);
  if (hidden || !known || !report.trace) return `No tool "${m[1]}" is known here. ${TOOLS_USAGE}`;
  const explain = explainTool({ removed: report.removed, unavailable: report.unavailable, trace: report.trace }, id);
  const shown = (rule: string) =>
    senderIsOwner ? rule : withTrailingList(rule, (list) => list.split(', ').filter((n) => !OWNER_ONLY_TOOLS.includes(normalizeToolName(n))).join(', '));
  const steps = explain.steps.filter((s) => s.outcome === 'kept' || s.outcome === 'removed').map((s) => `• ${s.step}: ${s.outcome} — ${shown(s.rule)}`);
  return [explanationHead(explain), ...steps, ...(report.approvalRules?.(id) ?? [])].join('\n');
}

/**
 * Why a tool is not on a conversation's surface, as `/exec` and skill commands say it. An
 * owner-only tool, for a non-owner, gets the answer a tool that does not exist gets.
 */
export function whyMissing(tool: string, report: ToolReport, senderIsOwner: boolean): string {
  const hidden = !senderIsOwner && OWNER_ONLY_TOOLS.includes(tool);
  const removed = hidden ? undefined : report.removed.find((r) => r.tool === tool);
  if (removed) return `removed by ${removed.by}`;
  const unavailable = hidden ? undefined : report.unavailable.find((u) => u.tool === tool);
  if (unavailable) return unavailable.why;
  return 'not on this conversation’s tool surface';
}

export function describeClickOutcome(outcome: ApproveOutcome, id: string): string {
  switch (outcome.kind) {
    case 'decision-not-allowed':
      return `Approval ${id} does not offer that decision; it offers ${outcome.allowed.join(', ')}.`;
    case 'resolved':
      return `Approval ${id}: ${outcomeLabel(outcome.request, (d) => deciderIn(outcome.request.provider, d))}.`;
    case 'already-resolved':
      return `Approval ${id} was already resolved: ${outcomeLabel(outcome.request, (d) => deciderIn(outcome.request.provider, d))}.`;
    case 'not-approver':
      return 'You are not allowed to decide approvals.';
    case 'not-found':
      return `No approval ${id} is pending. It may have expired or already been resolved.`;
  }
}

/**
 * `/approvals` (pending here), `/approvals grants` (the grants that cover calls in this
 * conversation: the agent's unscoped ones and this conversation's own) and `/approvals revoke
 * ID` (owners only: a grant lets calls skip the human, so taking one away is theirs).
 */
async function runApprovalsCommand(args: string, route: Route, deps: CommandDeps): Promise<OutboundMessage> {
  const [sub, id, ...extra] = args.trim().split(/\s+/).filter(Boolean);
  if (sub === undefined) return { text: formatPendingApprovals((await deps.pendingApprovals?.(route.sessionKey)) ?? [], Date.now()) };
  if (!deps.grants) return { text: 'Grants cannot be listed here.' };
  if (sub === 'grants' && id === undefined) {
    const here = (await deps.grants.list(route.context.agentId)).filter((g) => g.sessionKey === undefined || g.sessionKey === route.sessionKey);
    if (here.length === 0) return { text: 'No grants cover calls in this conversation.' };
    return { text: [`Grants covering calls here (${here.length}):`, ...here.map((g) => `• ${grantText(g)}`), '', 'Owners revoke one with `/approvals revoke <id>`.'].join('\n') };
  }
  if (sub === 'revoke' && id !== undefined && extra.length === 0) {
    if (!route.context.senderIsOwner) return { text: 'Only an owner can revoke a grant.' };
    const result = await deps.grants.revoke(id, `${route.context.provider}:${route.context.senderId ?? ''}`);
    if (result.kind === 'not-found') return { text: `No grant ${id}.` };
    return { text: result.kind === 'revoked' ? `Revoked ${grantText(result.grant)}.` : `Already revoked: ${grantText(result.grant)}.` };
  }
  return { text: 'usage: /approvals [grants | revoke ID]' };
}

/** One grant in a line: what it covers, where, until when. */
function grantText(g: Grant): string {
  const scope = g.sessionKey !== undefined ? 'in this conversation' : 'everywhere for the agent';
  const until = g.expiresAt !== undefined ? `until ${new Date(g.expiresAt).toISOString()}` : 'until revoked';
  const args = g.argPattern !== undefined ? ` args ${g.argPattern.length > 80 ? `${g.argPattern.slice(0, 79)}…` : g.argPattern}` : '';
  return `${g.id} — ${g.tool}${args} — ${scope}, ${until}, by ${g.createdBy}`;
}

/**
 * "Allowed once by alice" — the wording cards and text answers share. `name` renders the
 * decider: for people, as the card names them (`deciderIn`); for the model, as recorded.
 */
export function outcomeLabel(request: Pick<ApprovalRequest, 'status' | 'decidedBy'>, name: (decidedBy: string) => string = (d) => d): string {
  const by = request.decidedBy ? ` by ${name(request.decidedBy)}` : '';
  switch (request.status) {
    case 'allow-once':
      return `Allowed once${by}`;
    case 'allow-always':
      return `Allowed always${by}`;
    case 'allow-conversation':
      return `Allowed for this conversation${by}`;
    case 'allow-timed':
      return `Allowed for a while${by}`;
    case 'deny':
      return `Denied${by}`;
    case 'expired':
      return 'Expired';
    case 'cancelled':
      return 'Cancelled';
    case 'interrupted':
      return 'Interrupted (Warden restarted before a decision)';
    case 'pending':
      return 'Pending';
  }
}

function formatSkills(view: SkillsView | undefined): string {
  if (!view || (view.eligible.length === 0 && view.ineligible.length === 0)) {
    return 'No skills yet. Skills are SKILL.md folders under skills/ (or the workspace’s .agents/skills); they will be listed here once added.';
  }
  const lines = [`Skills (${view.eligible.length}):`, ...view.eligible.map((s) => `• ${s.name}${s.description ? ` — ${s.description}` : ''}`)];
  if (view.ineligible.length > 0) lines.push('', 'Not eligible:', ...view.ineligible.map((s) => `• ${s.name} — ${s.why}`));
  return lines.join('\n');
}

function formatStatus(route: Route, s: StatusView): string {
  return [
    `Agent: ${route.binding ? describeBinding(route.binding) : route.agentId}`,
    `Session: ${route.sessionKey}`,
    `Model: ${s.model ?? 'none configured (commands only)'}`,
    `You: ${route.context.senderIsOwner ? 'owner' : 'member'}`,
    ...(route.access ? [`Access: ${route.access}`] : []),
    `Turn: ${s.running ? 'running' : 'idle'}${s.queued > 0 ? `, ${s.queued} queued` : ''}`,
    `Pending approvals here: ${s.pendingApprovals}`,
    `Chat: ${s.adapters.join(', ')}`,
    `Up: ${formatDuration(s.uptimeMs)}`,
  ].join('\n');
}

function formatDuration(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  return `${Math.floor(m / 60)}h ${m % 60}m`;
}

export function helpText(
  hasModel: boolean,
  skills: readonly SkillCommandSpec[] = [],
  plugins: ReadonlyArray<Pick<PluginCommand, 'name' | 'description' | 'pluginId'>> = [],
  senderIsOwner = true,
): string {
  const owners = (line: string) => (senderIsOwner ? [line] : []);
  return [
    'Commands:',
    '/tools — the tools you have here, and why others are missing',
    '/exec <command> — run a shell command (may need an approval)',
    '/approve <id> allow-once|allow-always|deny — decide an approval by text',
    '/approvals — what waits for a decision in this conversation',
    '/skills — the skills this agent knows',
    '/status — agent, model, session and queue',
    '/stop — stop the running turn',
    `/usage [me|channel${senderIsOwner ? '|all' : ''}] — what model calls cost: yours, this channel’s${senderIsOwner ? ', everyone’s' : ''}`,
    ...owners('/cron list|add|run|pause|resume|remove|runs — scheduled jobs (owners only)'),
    ...owners('/nodes [approve CODE|deny CODE|unpair NAME] — paired nodes (owners)'),
    ...owners('/pair [CODE] — DM pairing requests; approve one (owners)'),
    ...owners('/secrets — the names of stored secrets (owners; never values)'),
    '/new — start a fresh session (web chat)',
    ...plugins.map((c) => `/${c.name} — ${c.description ?? `from plugin ${c.pluginId}`}`),
    '/help — this list',
    ...(skills.length > 0
      ? ['', 'Skill commands:', ...skills.map((s) => `/${s.name} [input] — ${oneLine(s.description, 80)}${s.dispatch && (senderIsOwner || !OWNER_ONLY_TOOLS.includes(normalizeToolName(s.dispatch.tool))) ? ` (runs ${s.dispatch.tool})` : ''}`), '/skill <name> [input] — run a skill by name']
      : []),
    ...(hasModel ? [] : ['', NO_MODEL_HINT]),
  ].join('\n');
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1).trimEnd()}…`;
}

/** The answer to a plain message when no model is configured. */
export const NO_MODEL_HINT =
  'No model is configured, so I can only run commands. To chat, set `models.default` in warden.config.yaml ' +
  '(for example `anthropic/claude-sonnet-4-5`, `openai/gpt-5-mini` or `gemini/gemini-2.5-flash`) and put the ' +
  'provider’s API key in the environment or .env (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY), then restart.';

/**
 * `text` with the list in its trailing `[…]` rewritten, as `text.replace(/\[([^\]]*)\]$/, …)`
 * would — the leftmost `[` after the last inner `]` — by index, not by a pattern that rescans
 * from every `[`.
 */
function withTrailingList(text: string, rewrite: (list: string) => string): string {
  if (!text.endsWith(']')) return text;
  const open = text.indexOf('[', text.lastIndexOf(']', text.length - 2) + 1);
  if (open === -1 || open >= text.length - 1) return text;
  return `${text.slice(0, open)}[${rewrite(text.slice(open + 1, -1))}]`;
}
