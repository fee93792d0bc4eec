import type { WardenConfig } from '../config/schema/index.js';
import { CORE_TOOLS, profileAllowlist } from './catalog.js';
import { normalizeToolName, TOOL_ALIASES } from './tool-names.js';
import type { Availability, ToolMeta } from './tool-meta.js';
import type { InheritedPolicy, TurnContext } from './context.js';
import { compileGlob, isGlob } from '../config/tool-glob.js';
import { emptyAllowlistError, type AllowlistSource, type GuardReason } from './guard.js';
import { compilePolicy, decide, explicitAllow, keeps, keptVector, type CompiledPolicy, type PolicyEntry, type Verdict } from './policy.js';
import {
  MESSAGE_PROVIDER_FILTER,
  MODEL_PROVIDER_FILTER,
  OWNER_ONLY_FILTER,
  applyPatchAllowed,
  messageProviderDrops,
  messageProviderFilter,
  modelProviderFilter,
  ownerOnlyFilter,
  type FilterDecision,
} from './prefilters.js';
import { HTTP_DENY_FILTER, HTTP_PROVIDER, httpDenyFilter } from './http-surface.js';
import { buildSteps, knownAgentIds, resolveAgent, type PipelineStep } from './steps.js';
import { indexSurface, pluginOnlyWarning, unknownEntriesWarning, type SurfaceIndex } from './warnings.js';

/**
 * One turn's tool surface (semantics §3): candidates → optional-plugin selection →
 * message-provider → model-provider → owner-only → the 11 steps → `before_prompt_build`
 * toolsAllow → availability. Every tool is judged on its own, so `trace(tool)` re-runs the
 * same decisions with their explanations.
 *
 * Choices where the semantics leave room:
 * - The empty-allowlist guard judges the allowlists: it fires when they keep no candidate.
 *   Tools they keep that cannot run here (no implementation, no Chromium, no plugin runtime)
 *   go to `unavailable` with why, and a warning says when nothing at all can be offered.
 * - With `disableTools`, only runtime `toolsAllow` lists count as guard sources (as in
 *   OpenClaw): disabling tools on purpose is not an allowlist mistake.
 * - No model configured: apply_patch is removed, since no model matches its model list.
 * - A subagent context without `inherited` gets its parent's surface computed from the same
 *   context one level up, so a child never exceeds its parent even when the caller forgot.
 */

export interface SurfaceOptions {
  /** Plugin (and MCP) tool definitions to add to the core catalog (see plugins/manifest.ts). */
  plugins?: readonly ToolMeta[] | undefined;
  /**
   * Whether a tool can be offered here, answered by the caller: the policy never asks a tool's
   * implementation (`app/surface-inputs.ts` builds the answer the bot and the CLI share).
   * `undefined` = no implementation in this build. `ctx` is the turn being resolved: a plugin
   * tool's factory is built for it (and only for tools the policy kept).
   */
  implemented: (id: string, ctx?: TurnContext) => Availability | undefined;
}

export interface ExplainStep {
  /** Filter or step label (`owner-only`, `tools.profile`, `group tools.allow`, …). */
  step: string;
  outcome: 'kept' | 'removed' | 'skipped' | 'not reached';
  /** What decided, with the config line when one did: `tools.deny[0] = "exec"`. */
  rule: string;
  /** The config key path that decided, when a config key did. */
  key?: string;
  /** On the filter or step that removed the tool: the label `removed[].by` reports for it. */
  by?: string;
}

export interface SurfaceResult {
  /** Sorted ids the model gets: kept by the policy and available here. */
  tools: string[];
  removed: { tool: string; by: string }[];
  unavailable: { tool: string; why: string }[];
  warnings: string[];
  /** The empty-allowlist guard's message (CLI exit 3), or an unknown agent. */
  error?: string;
  /** A tool's path through every filter and step. */
  trace: (tool: string) => ExplainStep[];
}

export const DISABLED_FILTER = 'disableTools';
export const OPTIONAL_PLUGIN_FILTER = 'plugin optional';
export const TOOLS_ALLOW_STEP = 'before_prompt_build toolsAllow';
export const AVAILABILITY_STEP = 'availability';

interface CompiledStep {
  step: PipelineStep;
  compiled: CompiledPolicy | undefined;
}

/*
 * Per-turn work kept by the identity of the turn's steps (`buildSteps` hands the same frozen
 * array to every turn with the same inputs): the steps compiled, each step's answers for a
 * candidate list, the optional-plugin grants, the warnings. Weak maps: a config reload or a
 * new plugin list lets the old entries go.
 */
const compiledStepsCache = new WeakMap<readonly PipelineStep[], readonly CompiledStep[]>();
const answersCache = new WeakMap<readonly CompiledStep[], WeakMap<readonly ToolMeta[], readonly (StepAnswers | undefined)[]>>();
const grantsCache = new WeakMap<readonly CompiledStep[], PolicyEntry[]>();

function compiledStepsOf(steps: readonly PipelineStep[]): readonly CompiledStep[] {
  let compiled = compiledStepsCache.get(steps);
  if (!compiled) compiledStepsCache.set(steps, (compiled = steps.map((step) => ({ step, compiled: step.policy ? compilePolicy(step.policy) : undefined }))));
  return compiled;
}

function stepAnswers(steps: readonly CompiledStep[], candidates: readonly ToolMeta[]): readonly (StepAnswers | undefined)[] {
  let byCandidates = answersCache.get(steps);
  if (!byCandidates) answersCache.set(steps, (byCandidates = new WeakMap()));
  let answers = byCandidates.get(candidates);
  if (!answers) {
    answers = steps.map(({ step, compiled }) => (compiled ? { kept: keptVector(compiled, candidates), labels: removalLabels(step, compiled, candidates) } : undefined));
    byCandidates.set(candidates, answers);
  }
  return answers;
}

/** The optional-plugin grants of a plan without runtime toolsAllow lists: the steps' alone. */
function cachedOptionalGrants(steps: readonly CompiledStep[], plan: Plan): PolicyEntry[] {
  let grants = grantsCache.get(steps);
  if (!grants) grantsCache.set(steps, (grants = optionalGrantEntries(plan)));
  return grants;
}

interface Plan {
  config: WardenConfig;
  /** The sorted candidate list this turn is judged over (the key of the per-policy caches). */
  candidates: readonly ToolMeta[];
  ctx: TurnContext;
  steps: readonly CompiledStep[];
  toolsAllow: CompiledPolicy[] | undefined;
  optionalGrants: PolicyEntry[];
  /** Decisions that do not depend on the tool, taken once per turn for the hot path. */
  drops: readonly string[] | undefined;
  applyPatch: boolean;
}

/** A filter in front of the pipeline: `removes` is the hot path, `run` the same decision explained. */
interface Filter {
  label: string;
  removes: (tool: ToolMeta, plan: Plan) => boolean;
  run: (tool: ToolMeta, plan: Plan) => FilterDecision;
  /** A filter that only some surfaces have (the HTTP deny list); `--explain` leaves it out elsewhere. */
  appliesTo?: (plan: Plan) => boolean;
}

const isOptionalPlugin = (tool: ToolMeta): boolean => tool.source.kind === 'plugin' && (tool as { optional?: boolean }).optional === true;

const FILTERS: readonly Filter[] = [
  {
    label: DISABLED_FILTER,
    removes: (_t, p) => p.ctx.disableTools === true,
    run: (_t, p) => (p.ctx.disableTools ? { kept: false, rule: 'tools are disabled for this run' } : { kept: true, rule: 'tools are enabled' }),
  },
  { label: OPTIONAL_PLUGIN_FILTER, removes: (t, p) => isOptionalPlugin(t) && !optionalPluginFilter(t, p).kept, run: optionalPluginFilter },
  { label: MESSAGE_PROVIDER_FILTER, removes: (t, p) => p.drops !== undefined && p.drops.includes(t.id), run: (t, p) => messageProviderFilter(t, p.ctx) },
  {
    label: MODEL_PROVIDER_FILTER,
    removes: (t, p) => p.ctx.modelSupportsTools === false || (t.id === 'apply_patch' && t.source.kind === 'core' && !p.applyPatch),
    run: (t, p) => modelProviderFilter(t, p.ctx, p.config),
  },
  { label: OWNER_ONLY_FILTER, removes: (t, p) => t.ownerOnly && !p.ctx.senderIsOwner, run: (t, p) => ownerOnlyFilter(t, p.ctx) },
  {
    label: HTTP_DENY_FILTER,
    appliesTo: (p) => p.ctx.provider === HTTP_PROVIDER,
    removes: (t, p) => p.ctx.provider === HTTP_PROVIDER && !httpDenyFilter(t.id, p.ctx, p.config).kept,
    run: (t, p) => httpDenyFilter(t.id, p.ctx, p.config),
  },
];
const FILTER_LABELS: ReadonlySet<string> = new Set(FILTERS.map((f) => f.label));

/** The filters that can remove anything in this turn: the others are skipped for every tool. */
function activeFilters(plan: Plan): readonly Filter[] {
  const { ctx } = plan;
  return FILTERS.filter((f) => {
    switch (f.label) {
      case DISABLED_FILTER:
        return ctx.disableTools === true;
      case MESSAGE_PROVIDER_FILTER:
        return plan.drops !== undefined && plan.drops.length > 0;
      case OWNER_ONLY_FILTER:
        return !ctx.senderIsOwner;
      default:
        return true;
    }
  });
}

export function resolveToolSurface(config: WardenConfig, ctx: TurnContext, options: SurfaceOptions): SurfaceResult {
  const agent = resolveAgent(config, ctx.agentId);
  if (!agent) {
    return {
      tools: [],
      removed: [],
      unavailable: [],
      warnings: [],
      error: `unknown agent "${ctx.agentId}"; known agents: ${knownAgentIds(config).join(', ')}`,
      trace: () => [],
    };
  }
  // A subagent whose parent surface is not given inherits the surface its parent has in this context.
  if (ctx.spawnDepth > 0 && ctx.inherited === undefined) {
    const parent = resolveToolSurface(config, { ...ctx, spawnDepth: ctx.spawnDepth - 1 }, options);
    ctx = { ...ctx, inherited: inheritFrom(parent) };
  }

  const { candidates, byId } = candidateSet(options.plugins);
  const steps = buildSteps(config, ctx, agent);
  const compiledSteps = compiledStepsOf(steps);
  const plan: Plan = {
    config,
    candidates,
    ctx,
    steps: compiledSteps,
    toolsAllow: ctx.toolsAllow?.map((list, i) =>
      compilePolicy(
        list.length === 0
          ? { deny: [{ raw: '*', name: '*', key: `toolsAllow[${i}] is empty: no tools`, builtin: true }] }
          : { allow: list.map((raw, j) => ({ raw, name: normalizeToolName(raw), key: `toolsAllow[${i}][${j}]`, builtin: true })) },
      ),
    ),
    optionalGrants: [],
    drops: messageProviderDrops(ctx),
    applyPatch: applyPatchAllowed(ctx, config),
  };
  plan.optionalGrants = plan.toolsAllow ? optionalGrantEntries(plan) : cachedOptionalGrants(compiledSteps, plan);
  const availability = availabilityOf(options, ctx);

  const removed: SurfaceResult['removed'] = [];
  const unavailable: SurfaceResult['unavailable'] = [];
  const tools: string[] = [];
  const preRemoved: string[] = [];
  const removedExec: string[] = [];
  let keptByPolicy = 0;
  const answers = stepAnswers(compiledSteps, candidates);
  const filters = activeFilters(plan);
  // Candidates are sorted by id, so every list below comes out sorted.
  for (let i = 0; i < candidates.length; i++) {
    const tool = candidates[i]!;
    const by = removedBy(tool, i, plan, filters, answers);
    if (by !== undefined) {
      removed.push({ tool: tool.id, by });
      if (tool.id === 'exec' || tool.id === 'process') removedExec.push(`${tool.id}:${by}`);
      // An owner-only tool counts as known to the allowlist diagnostics for everyone: a non-owner's
      // warnings must read as an owner's do, never name it as "unknown" (see hideOwnerOnly).
      if (FILTER_LABELS.has(by) && !tool.ownerOnly) preRemoved.push(tool.id);
      continue;
    }
    keptByPolicy++;
    const available = availability(tool);
    if (available.ok) tools.push(tool.id);
    else unavailable.push({ tool: tool.id, why: available.why });
  }

  const warnings = cachedWarnings(plan, candidates, preRemoved, removedExec, byId, removed);
  const result: SurfaceResult = {
    tools,
    removed,
    unavailable,
    warnings,
    trace: (name) => {
      const tool = byId.get(normalizeToolName(name));
      if (!tool) return [];
      const record: ExplainStep[] = [];
      if (judge(tool, plan, record) === undefined) {
        const available = availability(tool);
        record.push(
          available.ok
            ? { step: AVAILABILITY_STEP, outcome: 'kept', rule: 'implementation present and prerequisites hold' }
            : { step: AVAILABILITY_STEP, outcome: 'removed', rule: `unavailable: ${available.why}` },
        );
      }
      return record;
    },
  };
  // The guard judges the allowlists: tools they kept that cannot run here are reported under
  // `unavailable` (with why), not blamed on the allowlist.
  const error = guardError(plan, keptByPolicy, byId);
  if (!error && tools.length === 0 && keptByPolicy > 0) {
    result.warnings.push(`no tool can be offered here: the policy keeps ${keptByPolicy} tool(s) but none is available (see unavailable)`);
  }
  if (error) result.error = error;
  return ctx.senderIsOwner ? result : hideOwnerOnly(result, candidates);
}

/**
 * Owner-only tools do not exist for a non-owner (README: never visible to anyone but an owner):
 * not in `removed` (not even counted), not explained by `trace`, not named by a warning or the
 * guard's error — so `/tools`, `warden tools --sender`, `/exec` and skill commands, and the call
 * chain's refusal of a model's call all read for them exactly as for a tool that does not exist.
 * One place, so every output path built on the surface inherits it.
 */
export function hideOwnerOnly(result: SurfaceResult, candidates: readonly ToolMeta[]): SurfaceResult {
  const { hidden, names } = ownerOnlyMatcher(candidates);
  if (hidden.size === 0) return result;
  const error = result.error !== undefined && !names.test(result.error) ? result.error : undefined;
  return {
    tools: result.tools.filter((t) => !hidden.has(t)),
    removed: result.removed.filter((r) => !hidden.has(r.tool)),
    unavailable: result.unavailable.filter((u) => !hidden.has(u.tool)),
    // A second line behind the diagnostics above: a warning that names one is not shown at all.
    warnings: result.warnings.filter((w) => !names.test(w)),
    ...(error !== undefined ? { error } : {}),
    trace: (name) => (hidden.has(normalizeToolName(name)) ? [] : result.trace(name)),
  };
}

const ownerOnlyCache = new WeakMap<readonly ToolMeta[], { hidden: Set<string>; names: RegExp }>();

/** The owner-only names of a candidate list and the pattern that finds one in a text, built once per list. */
function ownerOnlyMatcher(candidates: readonly ToolMeta[]): { hidden: ReadonlySet<string>; names: RegExp } {
  let found = ownerOnlyCache.get(candidates);
  if (!found) {
    const hidden = ownerOnlyNames(candidates);
    // Without the `g` flag `test` keeps no state between calls, so one pattern serves every turn.
    const names = new RegExp(`(?<![\\w-])(?:${[...hidden].map(escapeRegExp).join('|')})(?![\\w-])`, 'i');
    ownerOnlyCache.set(candidates, (found = { hidden, names }));
  }
  return found;
}

/** Ids of the owner-only candidates, and every alias that names one (`automations` → cron). */
export function ownerOnlyNames(candidates: readonly ToolMeta[]): Set<string> {
  const ids = new Set(candidates.filter((t) => t.ownerOnly).map((t) => t.id));
  for (const [alias, id] of Object.entries(TOOL_ALIASES)) if (ids.has(id)) ids.add(alias);
  return ids;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** What a child session inherits from this (parent) surface: its final tools as a ceiling and its removals as denies. */
export function inheritFrom(parent: SurfaceResult): InheritedPolicy {
  return { allow: [...parent.tools], deny: parent.removed.map((r) => r.tool) };
}

interface CandidateSet {
  candidates: readonly ToolMeta[];
  byId: ReadonlyMap<string, ToolMeta>;
}

const candidateCache = new WeakMap<readonly ToolMeta[], CandidateSet>();
const CORE_ONLY = makeCandidateSet([]);

/** Core + plugin tools sorted by id; cached per plugin list (the loader's array is reused turn after turn). */
function candidateSet(plugins: readonly ToolMeta[] | undefined): CandidateSet {
  if (!plugins || plugins.length === 0) return CORE_ONLY;
  let set = candidateCache.get(plugins);
  if (!set) candidateCache.set(plugins, (set = makeCandidateSet(plugins)));
  return set;
}

function makeCandidateSet(plugins: readonly ToolMeta[]): CandidateSet {
  const byId = new Map<string, ToolMeta>(CORE_TOOLS.map((t) => [t.id, t]));
  for (const tool of plugins) {
    // The manifest loader already reports conflicts; a duplicate that still arrives is dropped, never merged.
    if (!byId.has(tool.id)) byId.set(tool.id, tool);
  }
  const candidates = [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { candidates, byId };
}

/**
 * What `removed[].by` says for a removal by a pipeline step: the deny list's config key path
 * when a deny entry written in config removed the tool (`tools.deny`,
 * `agents.list[0].tools.deny`, `channels.discord.guilds.111.tools.deny`), since that is the line
 * to change; otherwise the step's label (an allowlist or profile that does not keep it, or a
 * built-in deny rule). The step itself stays named in the trace.
 */
export function removalLabel(step: Pick<PipelineStep, 'label' | 'denyLabel'>, verdict: Verdict): string {
  if (verdict.reason !== 'denied') return step.label;
  const e = verdict.entry;
  return e.builtin ? (step.denyLabel ?? step.label) : e.key.replace(/\[\d+\]$/, '');
}

const labelCache = new WeakMap<CompiledPolicy, WeakMap<readonly ToolMeta[], Map<string, (string | undefined)[]>>>();

/**
 * Where a step's `removalLabel(step, decide(compiled, tool))` answers are kept, one slot per
 * candidate, filled on first use: per policy, candidate list and the step's labels.
 */
function removalLabels(step: PipelineStep, compiled: CompiledPolicy, candidates: readonly ToolMeta[]): (string | undefined)[] {
  let byCandidates = labelCache.get(compiled);
  if (!byCandidates) labelCache.set(compiled, (byCandidates = new WeakMap()));
  let byStep = byCandidates.get(candidates);
  if (!byStep) byCandidates.set(candidates, (byStep = new Map()));
  const key = `${step.label}\u0000${step.denyLabel ?? ''}`;
  let labels = byStep.get(key);
  if (!labels) byStep.set(key, (labels = new Array<string | undefined>(candidates.length)));
  return labels;
}

/** Each step's answers for every candidate: kept or not (`keptVector`), and the removal labels so far. */
interface StepAnswers {
  kept: Uint8Array;
  labels: (string | undefined)[];
}

/**
 * The label of the filter or step that removes candidate `index`, or undefined when the policy
 * keeps it; `kept` holds each step's answer for every candidate (`keptVector`).
 */
function removedBy(tool: ToolMeta, index: number, plan: Plan, filters: readonly Filter[], answers: readonly (StepAnswers | undefined)[]): string | undefined {
  for (const filter of filters) if (filter.removes(tool, plan)) return filter.label;
  for (let s = 0; s < answers.length; s++) {
    const a = answers[s];
    if (a && a.kept[index] === 0) {
      const { step, compiled } = plan.steps[s]!;
      return (a.labels[index] ??= removalLabel(step, decide(compiled!, tool)));
    }
  }
  if (plan.toolsAllow) for (const compiled of plan.toolsAllow) if (!keeps(compiled, tool)) return TOOLS_ALLOW_STEP;
  return undefined;
}

/** One tool through every filter and step, every decision written down (the trace; `removedBy` is the hot path). */
function judge(tool: ToolMeta, plan: Plan, record: ExplainStep[]): string | undefined {
  let removedBy: string | undefined;
  const skip = (step: string) => record.push({ step, outcome: 'not reached', rule: `already removed by ${removedBy}` });
  for (const filter of FILTERS) {
    if (filter.appliesTo && !filter.appliesTo(plan)) continue;
    if (removedBy) {
      skip(filter.label);
      continue;
    }
    const d = filter.run(tool, plan);
    record.push({ step: filter.label, outcome: d.kept ? 'kept' : 'removed', rule: d.rule, ...(d.key ? { key: d.key } : {}), ...(d.kept ? {} : { by: filter.label }) });
    if (!d.kept) removedBy = filter.label;
  }
  for (const { step, compiled } of plan.steps) {
    if (removedBy) skip(step.label);
    else if (!compiled) record.push({ step: step.label, outcome: 'skipped', rule: step.source });
    else {
      const verdict = decide(compiled, tool);
      const explained = explainVerdict(step, verdict, compiled, tool);
      record.push(explained);
      if (!verdict.kept) removedBy = explained.by;
    }
  }
  if (plan.toolsAllow) {
    if (removedBy) skip(TOOLS_ALLOW_STEP);
    else {
      for (const compiled of plan.toolsAllow) {
        const verdict = decide(compiled, tool);
        if (!verdict.kept) {
          removedBy = TOOLS_ALLOW_STEP;
          // Runtime lists are no config: whatever in them removed the tool, the step's label is what removed[] reports.
          record.push({ ...explainVerdict({ label: TOOLS_ALLOW_STEP, policy: compiled.policy, source: 'runtime toolsAllow' }, verdict, compiled, tool), by: TOOLS_ALLOW_STEP });
          break;
        }
      }
      if (!removedBy) record.push({ step: TOOLS_ALLOW_STEP, outcome: 'kept', rule: 'every toolsAllow list names it' });
    }
  }
  return removedBy;
}

const describe = (e: PolicyEntry): string =>
  e.implicit ? `${e.key} (a scope with only alsoAllow allows every tool)` : e.builtin ? `${e.key}: "${e.raw}"` : `${e.key} = ${JSON.stringify(e.raw)}`;

function explainVerdict(step: PipelineStep, verdict: Verdict, compiled: CompiledPolicy, tool: ToolMeta): ExplainStep {
  const label = step.label;
  const follows = (how: string, via: string | undefined) => (via ? `${how}; ${tool.id} follows ${via}` : how);
  switch (verdict.reason) {
    case 'no-allowlist':
      return { step: label, outcome: 'kept', rule: `no deny entry matches and there is no allowlist (${step.source})` };
    case 'allowed': {
      const e = verdict.entry;
      const how = e.profile ? `profile "${e.profile}" includes it (${e.key} = "${e.profile}")` : `allowed by ${describe(e)}`;
      return { step: label, outcome: 'kept', rule: follows(how, verdict.via), ...(e.builtin ? {} : { key: e.key }) };
    }
    case 'denied': {
      const e = verdict.entry;
      return { step: label, outcome: 'removed', rule: follows(`denied by ${describe(e)}`, verdict.via), ...(e.builtin ? {} : { key: e.key }), by: removalLabel(step, verdict) };
    }
    case 'not-allowed': {
      const not = verdict.requires ? `${tool.id} follows ${verdict.requires}, which is not` : 'not';
      const allow = compiled.policy.allow ?? [];
      const profile = allow.find((e) => e.profile);
      if (profile) {
        return { step: label, outcome: 'removed', rule: `${not} in profile "${profile.profile}" (${profile.key} = "${profile.profile}") nor its alsoAllow`, key: profile.key, by: label };
      }
      const first = allow[0];
      const key = first && !first.builtin ? first.key.replace(/\[\d+\]$/, '') : undefined;
      const list = allow.map((e) => e.raw).join(', ');
      return {
        step: label,
        outcome: 'removed',
        rule: `${not} in the allowlist${key ? ` ${key}` : ` of ${step.source}`} [${list}]`,
        ...(key ? { key } : {}),
        by: label,
      };
    }
  }
}

function optionalPluginFilter(tool: ToolMeta, plan: Plan): FilterDecision {
  if (tool.source.kind !== 'plugin' || !(tool as { optional?: boolean }).optional) return { kept: true, rule: 'not an optional plugin tool' };
  const pluginId = tool.source.pluginId;
  const grant = plan.optionalGrants.find(
    (e) => e.name === '*' || e.name === 'group:plugins' || e.name === tool.id || e.name === pluginId || (isGlob(e.name) && compileGlob(e.name)(tool.id)),
  );
  return grant
    ? { kept: true, rule: `optional plugin tool named by ${describe(grant)}`, ...(grant.builtin ? {} : { key: grant.key }) }
    : { kept: false, rule: `optional plugin tool: no allowlist names ${tool.id}, plugin ${pluginId}, group:plugins or *` };
}

/** Entries that may select an optional plugin tool: every written allow/alsoAllow entry. */
function optionalGrantEntries(plan: Plan): PolicyEntry[] {
  const out: PolicyEntry[] = [];
  for (const { step } of plan.steps) for (const e of step.policy?.allow ?? []) if (!e.implicit && !e.profile) out.push(e);
  for (const compiled of plan.toolsAllow ?? []) out.push(...(compiled.policy.allow ?? []));
  return out;
}

function availabilityOf(options: SurfaceOptions, ctx: TurnContext): (tool: ToolMeta) => Availability {
  return (tool) => {
    const found = options.implemented(tool.id, ctx);
    if (found) return found;
    return { ok: false, why: tool.source.kind === 'core' ? 'not implemented in this build' : 'plugin runtime not loaded' };
  };
}

function guardError(plan: Plan, kept: number, byId: ReadonlyMap<string, ToolMeta>): string | undefined {
  const { ctx } = plan;
  // For a non-owner an allowlist entry naming an owner-only tool names nothing (hideOwnerOnly).
  const named = (raw: string) => ctx.senderIsOwner || byId.get(normalizeToolName(raw))?.ownerOnly !== true;
  const runtime: AllowlistSource[] = (ctx.toolsAllow ?? [])
    .map((l) => l.filter(named))
    .filter((l) => l.length > 0)
    .map((entries) => ({ label: 'runtime toolsAllow', entries }));
  if (ctx.disableTools) return emptyAllowlistError(runtime, kept, 'disabled');
  const sources: AllowlistSource[] = [];
  for (const { step } of plan.steps) {
    const entries = step.guardLabel ? explicitAllow(step.policy).filter((e) => named(e.raw)) : [];
    if (entries.length > 0) sources.push({ label: step.guardLabel!, entries: entries.map((e) => e.raw) });
  }
  sources.push(...runtime);
  const reason: GuardReason = ctx.modelSupportsTools === false ? 'no-tool-support' : 'no-match';
  return emptyAllowlistError(sources, kept, reason);
}

const warningCache = new WeakMap<readonly CompiledStep[], WeakMap<readonly ToolMeta[], Map<string, string[]>>>();

/**
 * Warnings depend on the config, the agent, the candidates, the steps and what the pre-filters
 * removed — not on the rest of the context — so a busy channel computes them once.
 */
function cachedWarnings(
  plan: Plan,
  candidates: readonly ToolMeta[],
  preRemoved: string[],
  removedExec: string[],
  byId: ReadonlyMap<string, ToolMeta>,
  removed: SurfaceResult['removed'],
): string[] {
  // The steps (by identity) stand for the config, the agent and every step's source.
  let byCandidates = warningCache.get(plan.steps);
  if (!byCandidates) warningCache.set(plan.steps, (byCandidates = new WeakMap()));
  let byKey = byCandidates.get(candidates);
  if (!byKey) byCandidates.set(candidates, (byKey = new Map()));
  // exec and process removals, as `id:by`, in candidate order (the order `removed` has them in).
  const key = preRemoved.length === 0 && removedExec.length === 0 ? '' : `${preRemoved.join(',')}\u0000${removedExec.join(',')}`;
  let warnings = byKey.get(key);
  if (!warnings) {
    const preSet = new Set(preRemoved);
    warnings = collectWarnings(plan, indexSurface(candidates.filter((t) => !preSet.has(t.id))), byId, removed);
    if (byKey.size > 256) byKey.clear();
    byKey.set(key, warnings);
  }
  return [...warnings];
}

function collectWarnings(plan: Plan, surface: SurfaceIndex, byId: ReadonlyMap<string, ToolMeta>, removed: SurfaceResult['removed']): string[] {
  const warnings = new Set<string>();
  const profileStepActive = plan.steps[0]?.compiled !== undefined;
  for (const { step } of plan.steps) {
    const allow = step.policy?.allow;
    if (!allow) continue;
    let entries = allow.filter((e) => !e.profile && !e.implicit && !e.builtin);
    if (step.profile) {
      // A profile's own baseline never warns (apply_patch missing on a non-OpenAI model is expected); extras do.
      const baseline = new Set(profileAllowlist(step.profile) ?? []);
      entries = entries.filter((e) => !baseline.has(e.name));
    } else if (allow.some((e) => e.implicit) && profileStepActive && step.label !== 'tools.byProvider.allow') {
      // alsoAllow-only scopes repeat the profile's extras, which the profile step already judged.
      continue;
    }
    const unknown = unknownEntriesWarning(step.label, entries, surface);
    if (unknown) warnings.add(unknown);
    if (!step.profile && !allow.some((e) => e.implicit || e.name === '*')) {
      const pluginOnly = pluginOnlyWarning(step.label, entries, surface);
      if (pluginOnly) warnings.add(pluginOnly);
    }
  }
  const widening = implicitWideningWarning(plan, byId, removed);
  if (widening) warnings.add(widening);
  return [...warnings];
}

/**
 * `tools.exec` configured while the profile removes exec: OpenClaw once granted exec from that
 * alone; Warden does not, and says so when it looks intended.
 */
function implicitWideningWarning(plan: Plan, byId: ReadonlyMap<string, ToolMeta>, removed: SurfaceResult['removed']): string | undefined {
  if (!plan.config.tools.exec) return undefined;
  const profile = plan.steps[0]?.step;
  if (!profile?.policy || !byId.has('exec')) return undefined;
  const byProfile = removed.filter((r) => (r.tool === 'exec' || r.tool === 'process') && r.by === profile.label).map((r) => r.tool);
  if (!byProfile.includes('exec')) return undefined;
  return `tools policy: profile "${profile.profile}" (agent "${plan.ctx.agentId}") has a configured tools.exec section, which does not grant exec by itself. Add alsoAllow: [${byProfile.map((t) => JSON.stringify(t)).join(', ')}] explicitly if the agent should run commands.`;
}
