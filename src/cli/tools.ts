import { explainApprovalRules, explanationLines, type RuleExplanation } from '../approvals/rules.js';
import { closest } from '../config/errors.js';
import { explainTool, explanationHead, type Explanation } from '../policy/explain.js';
import { ownerOnlyNames, resolveToolSurface, type ExplainStep, type SurfaceResult } from '../policy/surface.js';
import { CORE_TOOLS } from '../policy/catalog.js';
import { normalizeToolName } from '../policy/tool-names.js';
import { loadPluginRuntime } from '../plugins/runtime.js';
import { surfaceInputs } from '../app/surface-inputs.js';
import { connectMcpForCommand, reservedToolNames } from '../mcp/registry.js';
import type { WardenConfig } from '../config/index.js';
import { EXIT, stringOption, type CommandRunner } from './args.js';
import { COMMAND_USAGE } from './usage.js';
import { loadConfigForCommand } from './config.js';
import { CONTEXT_FLAGS, contextFromArgs, unknownFlagProblems } from './context.js';
import { describeBinding } from '../gateway/bindings.js';
import { decideAccess, describeAccess } from '../policy/access.js';
import type { TurnContext } from '../policy/context.js';

/**
 * `warden tools`: which tools the model gets in the given context, what the policy removed
 * (with the filter or step that did it), what is unavailable here and why, and the warnings.
 * `--explain TOOL` adds that tool's path through every filter and step.
 */

const FLAGS = ['config', 'json', 'explain', 'help', ...CONTEXT_FLAGS];

const USAGE = COMMAND_USAGE.tools!;

export const run: CommandRunner = async (args, io) => {
  if (args.options.get('help') === true) {
    io.stdout(USAGE);
    return EXIT.ok;
  }
  const json = args.options.get('json') === true;
  const problems = unknownFlagProblems(args, FLAGS, closest);
  if (args.positionals.length > 0) problems.push(`unexpected argument${args.positionals.length > 1 ? 's' : ''}: ${args.positionals.join(' ')}`);
  if (args.options.get('explain') === true) problems.push('--explain needs a tool name');
  const loaded = loadConfigForCommand(args, io);
  if (!loaded) {
    if (problems.length > 0) io.stderr(problems.map((p) => `warden tools: ${p}`).join('\n'));
    return EXIT.badInput;
  }
  const { config, baseDir } = loaded;
  const context = contextFromArgs(args, config);
  if (!context.ok) problems.push(...context.problems);

  // The inputs the running bot hands the surface function: the same plugin candidates and availability.
  const runtime = await loadPluginRuntime(config, baseDir);
  // A policy plugin that did not load: the bot would not start, so there is no surface to show.
  const refusal = runtime.refusal();
  if (refusal) {
    io.stderr(`warden tools: ${refusal}`);
    return EXIT.badInput;
  }
  // MCP servers are connected for this command (each until it answered or its connect timeout).
  const mcp = await connectMcpForCommand(config, baseDir, { reserved: reservedToolNames(() => runtime.tools) });
  try {
    return answerTools(args, io, problems, config, baseDir, context, json);
  } finally {
    await mcp?.stop();
  }
};

function answerTools(
  args: Parameters<CommandRunner>[0],
  io: Parameters<CommandRunner>[1],
  problems: string[],
  config: WardenConfig,
  baseDir: string,
  context: ReturnType<typeof contextFromArgs>,
  json: boolean,
): number {
  const inputs = surfaceInputs(config, baseDir);
  const explainName = stringOption(args, 'explain');
  const explainId = explainName !== undefined ? normalizeToolName(explainName) : undefined;
  if (explainId !== undefined) {
    const candidates = [...CORE_TOOLS, ...inputs.plugins];
    // For a non-owner an owner-only tool is as unknown as a misspelling, and never a suggestion.
    const hidden = context.ok && !context.ctx.senderIsOwner ? ownerOnlyNames(candidates) : new Set<string>();
    const ids = candidates.map((t) => t.id).filter((id) => !hidden.has(id));
    if (!ids.includes(explainId) || hidden.has(explainId)) {
      const hint = closest(explainId, ids);
      problems.push(`--explain: unknown tool "${explainName}"${hint ? ` (did you mean "${hint}"?)` : ''}`);
    }
  }
  if (problems.length > 0 || !context.ok) {
    io.stderr(problems.map((p) => `warden tools: ${p}`).join('\n'));
    return EXIT.badInput;
  }

  const result = resolveToolSurface(config, context.ctx, inputs);
  if (result.error) {
    if (json) io.stdout(JSON.stringify({ error: result.error }, null, 2));
    else io.stderr(`warden tools: ${result.error}`);
    return EXIT.noTools;
  }
  const warnings = [...inputs.problems, ...result.warnings];
  const explain = explainId !== undefined ? explainTool(result, explainId) : undefined;
  // The approval rules that can make the tool's calls ask here: the ones the call chain's rule step reads.
  const approvalRules = explainId !== undefined ? explainApprovalRules(config, normalizeToolName(explainId), context.ctx, inputs.plugins.find((t) => t.id === normalizeToolName(explainId))) : undefined;
  const answer = {
    tools: result.tools,
    removed: result.removed,
    unavailable: result.unavailable,
    warnings,
    agent: context.ctx.agentId,
    // How the agent was chosen when --agent was not given: the binding the router would use.
    ...(context.binding ? { binding: { matchedBy: context.binding.matchedBy, ...(context.binding.index !== undefined ? { index: context.binding.index } : {}) } } : {}),
    ...(explain ? { explain } : {}),
    // Whether this sender gets a turn here at all: the access gate's decision (`warden access check` explains it).
    access: accessLine(config, context.ctx),
    ...(approvalRules ? { approvalRules } : {}),
  };
  io.stdout(json ? JSON.stringify(answer, null, 2) : human(answer, explain, context.binding ? describeBinding(context.binding) : `${context.ctx.agentId} (--agent)`, approvalRules));
  return EXIT.ok;
}

/** The access decision for the context's sender, in words (the gate's function, as `/status` shows it). */
function accessLine(config: WardenConfig, ctx: TurnContext): string {
  const where = { provider: ctx.provider, chat: ctx.chat, guildId: ctx.guildId, guildName: ctx.guildName, channelId: ctx.channelId, channelName: ctx.channelName };
  return describeAccess(decideAccess(config, where, { provider: ctx.provider, userId: ctx.senderId ?? '', roleIds: ctx.senderRoleIds, usergroupIds: ctx.senderUsergroupIds, isOwner: ctx.senderIsOwner }));
}

function human(
  answer: { tools: string[]; removed: SurfaceResult['removed']; unavailable: SurfaceResult['unavailable']; warnings: string[]; access: string },
  explain: Explanation | undefined,
  agent: string,
  approvalRules?: RuleExplanation[],
): string {
  const lines: string[] = [`agent: ${agent}`];
  if (explain) {
    lines.push(explanationHead(explain));
    const width = Math.max(...explain.steps.map((s) => s.step.length));
    for (const s of explain.steps) lines.push(`  ${s.step.padEnd(width)}  ${s.outcome.padEnd(11)}  ${s.rule}`);
    for (const line of explanationLines(approvalRules ?? [])) lines.push(`  ${line.slice(2)}`);
    lines.push('');
  }
  lines.push(`tools (${answer.tools.length}): ${answer.tools.length > 0 ? answer.tools.join(', ') : '(none)'}`);
  const width = Math.max(0, ...answer.removed.map((r) => r.tool.length), ...answer.unavailable.map((u) => u.tool.length));
  if (answer.removed.length > 0) {
    lines.push(`removed (${answer.removed.length}):`);
    for (const r of answer.removed) lines.push(`  ${r.tool.padEnd(width)}  by ${r.by}`);
  }
  if (answer.unavailable.length > 0) {
    lines.push(`unavailable here (${answer.unavailable.length}):`);
    for (const u of answer.unavailable) lines.push(`  ${u.tool.padEnd(width)}  ${u.why}`);
  }
  if (answer.warnings.length > 0) {
    lines.push('warnings:');
    for (const w of answer.warnings) lines.push(`  - ${w}`);
  }
  lines.push(`access: ${answer.access}`);
  return lines.join('\n');
}
