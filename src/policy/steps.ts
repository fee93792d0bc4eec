import { KeyedCache } from '../util/keyed-cache.js';
import type { AgentEntry, WardenConfig } from '../config/schema/index.js';
import type { ProfileId } from '../config/schema/policy.js';
import { matchByProvider } from './by-provider.js';
import { resolveChannelScope } from './channel-scope.js';
import type { TurnContext } from './context.js';
import { entry, pickPolicy, type PolicyEntry, type ToolPolicy } from './policy.js';
import { matchSender } from './sender.js';
import { inheritedPolicy, subagentPolicy } from './subagent.js';

/**
 * The 11 labelled steps of semantics §3, built from config and context. Pure: the surface runs
 * them, `--explain` reads them.
 */

export const STEP_LABELS = {
  profile: 'tools.profile',
  providerProfile: 'tools.byProvider.profile',
  global: 'tools.allow',
  globalProvider: 'tools.byProvider.allow',
  agent: (id: string) => `agents.${id}.tools.allow`,
  agentProvider: (id: string) => `agents.${id}.tools.byProvider.allow`,
  group: 'group tools.allow',
  sender: 'tools.toolsBySender',
  sandbox: 'sandbox tools.allow',
  subagent: 'subagent tools.allow',
  inherited: 'inherited tools',
} as const;

/** What `removed[].by` says when one of the subagent step's built-in deny lists removed a tool. */
export const SUBAGENT_DENY_LABEL = 'subagent deny list';

export interface PipelineStep {
  label: string;
  policy: ToolPolicy | undefined;
  /** Where the policy came from, or why the step does not apply (for --explain). */
  source: string;
  /** A profile step: its baseline never warns, its alsoAllow extras do; it is no guard source. */
  profile?: ProfileId;
  /** Label this step reports to the empty-allowlist guard, when it has an explicit allowlist. */
  guardLabel?: string;
  /**
   * What a removal by one of the step's built-in deny rules is reported as; a deny written in
   * config is reported by its key path, anything else by `label`.
   */
  denyLabel?: string;
}

export interface ResolvedAgent {
  id: string;
  /** The `agents.list` entry, or undefined for the implicit agent of a config without a roster. */
  entry: AgentEntry | undefined;
  path: string | undefined;
}

/** The agent a context names; undefined when the roster does not know it. */
export function resolveAgent(config: WardenConfig, agentId: string): ResolvedAgent | undefined {
  const index = config.agents.list.findIndex((a) => a.id === agentId);
  if (index >= 0) return { id: agentId, entry: config.agents.list[index], path: `agents.list[${index}]` };
  if (config.agents.list.length === 0 && agentId === DEFAULT_AGENT_ID) return { id: agentId, entry: undefined, path: undefined };
  return undefined;
}

/** The agent of a config without a roster. */
export const DEFAULT_AGENT_ID = 'main';

/** The default agent: the one marked `default`, else the first listed, else the implicit `main`. */
export function defaultAgentId(config: WardenConfig): string {
  return (config.agents.list.find((a) => a.default) ?? config.agents.list[0])?.id ?? DEFAULT_AGENT_ID;
}

export function knownAgentIds(config: WardenConfig): string[] {
  return config.agents.list.length > 0 ? config.agents.list.map((a) => a.id) : [DEFAULT_AGENT_ID];
}

function profileStep(label: string, profile: ProfileId | undefined, profileKey: string, alsoAllow: readonly string[] | undefined, alsoKey: string): PipelineStep {
  if (!profile) return { label, policy: undefined, source: 'no profile set' };
  if (profile === 'full') return { label, policy: undefined, source: `${profileKey} = "full" (no restriction)` };
  const allow: PolicyEntry[] = [
    { raw: profile, name: '', key: profileKey, profile },
    ...(alsoAllow ?? []).map((raw, i) => entry(raw, `${alsoKey}[${i}]`)).filter((e) => e.name !== ''),
  ];
  return { label, policy: { allow }, profile, source: `${profileKey} = "${profile}"` };
}

/**
 * Steps 1–6 per config object (a reload's config starts afresh) and agent and model. Bounded:
 * the model is the turn's, and a session may name any model (`/model`), so over a process that
 * runs for months the keys are not limited by the config alone.
 */
export const configStepCache = new KeyedCache<WardenConfig, PipelineStep[]>(256);

/** Steps 1–6 depend only on config, agent and model: cached per config object. */
function configSteps(config: WardenConfig, agent: ResolvedAgent, model: string | undefined): PipelineStep[] {
  return configStepCache.get(config, JSON.stringify([agent.id, model ?? null]), () => computeConfigSteps(config, agent, model));
}

function computeConfigSteps(config: WardenConfig, agent: ResolvedAgent, model: string | undefined): PipelineStep[] {

  const tools = config.tools;
  const agentTools = agent.entry?.tools;
  const agentToolsPath = agent.path ? `${agent.path}.tools` : undefined;

  const profileFromAgent = agentTools?.profile !== undefined;
  const alsoFromAgent = agentTools?.alsoAllow !== undefined;
  const step1 = profileStep(
    STEP_LABELS.profile,
    agentTools?.profile ?? tools.profile,
    profileFromAgent ? `${agentToolsPath}.profile` : 'tools.profile',
    alsoFromAgent ? agentTools!.alsoAllow : tools.alsoAllow,
    alsoFromAgent ? `${agentToolsPath}.alsoAllow` : 'tools.alsoAllow',
  );

  const globalProvider = matchByProvider(tools.byProvider, model, 'tools.byProvider');
  const agentProvider = agentToolsPath ? matchByProvider(agentTools?.byProvider, model, `${agentToolsPath}.byProvider`) : undefined;
  const providerProfileFrom = agentProvider?.value.profile !== undefined ? agentProvider : globalProvider?.value.profile !== undefined ? globalProvider : undefined;
  const step2 = providerProfileFrom
    ? profileStep(STEP_LABELS.providerProfile, providerProfileFrom.value.profile, `${providerProfileFrom.path}.profile`, providerProfileFrom.value.alsoAllow, `${providerProfileFrom.path}.alsoAllow`)
    : { label: STEP_LABELS.providerProfile, policy: undefined, source: model ? `no byProvider profile for ${model}` : 'no model' };

  const policyStep = (label: string, policy: ToolPolicy | undefined, source: string, none: string): PipelineStep =>
    policy ? { label, policy, source, guardLabel: label } : { label, policy: undefined, source: none };

  const agentLabel = STEP_LABELS.agent(agent.id);
  const agentProviderLabel = STEP_LABELS.agentProvider(agent.id);
  const steps = [
    step1,
    step2,
    policyStep(STEP_LABELS.global, pickPolicy(tools, 'tools'), 'tools.allow / tools.alsoAllow / tools.deny', 'no global allow or deny'),
    policyStep(
      STEP_LABELS.globalProvider,
      globalProvider ? pickPolicy(globalProvider.value, globalProvider.path) : undefined,
      globalProvider?.path ?? '',
      model ? `no tools.byProvider entry for ${model}` : 'no model',
    ),
    policyStep(agentLabel, agentToolsPath ? pickPolicy(agentTools, agentToolsPath) : undefined, agentToolsPath ?? '', `agent "${agent.id}" sets no allow or deny`),
    policyStep(
      agentProviderLabel,
      agentProvider ? pickPolicy(agentProvider.value, agentProvider.path) : undefined,
      agentProvider?.path ?? '',
      `no byProvider entry of agent "${agent.id}" for ${model ?? 'this turn (no model)'}`,
    ),
  ];
  return steps;
}

const NO_INHERITED: object = {};
const turnStepCache = new WeakMap<WardenConfig, WeakMap<object, Map<string, readonly PipelineStep[]>>>();
/** Bound on the contexts remembered per config and parent surface (a busy server has a few hundred). */
const TURN_STEP_CACHE_MAX = 1024;

/**
 * Every step for this turn, in order: the same (frozen) array for every turn with the same
 * inputs, so the surface can keep per-step answers by identity. The key is every context field
 * `computeSteps` reads, JSON-encoded (names are chosen by others: no separator they could
 * write into a name can make two contexts share a key); the parent surface by identity.
 */
export function buildSteps(config: WardenConfig, ctx: TurnContext, agent: ResolvedAgent): readonly PipelineStep[] {
  let byParent = turnStepCache.get(config);
  if (!byParent) turnStepCache.set(config, (byParent = new WeakMap()));
  const parent = ctx.inherited ?? NO_INHERITED;
  let byKey = byParent.get(parent);
  if (!byKey) byParent.set(parent, (byKey = new Map()));
  const key = JSON.stringify([
    agent.id,
    ctx.model,
    ctx.provider,
    ctx.chat,
    ctx.guildId,
    ctx.guildName,
    ctx.channelId,
    ctx.channelName,
    ctx.senderId,
    ctx.senderName,
    ctx.senderUsername,
    ctx.senderRoleIds,
    ctx.senderUsergroupIds,
    ctx.sandboxed === true,
    ctx.spawnDepth,
  ]);
  let steps = byKey.get(key);
  if (!steps) {
    if (byKey.size >= TURN_STEP_CACHE_MAX) byKey.clear();
    byKey.set(key, (steps = Object.freeze(computeSteps(config, ctx, agent))));
  }
  return steps;
}

/** Every step for this turn, in order, computed afresh (`buildSteps` remembers them). */
export function computeSteps(config: WardenConfig, ctx: TurnContext, agent: ResolvedAgent): PipelineStep[] {
  const steps = [...configSteps(config, agent, ctx.model)];

  // Every matched scope is a step of its own: a wider scope's deny holds in a narrower one.
  const scope = resolveChannelScope(config, ctx);
  if (scope) {
    for (const layer of scope.layers) {
      const source = layer.trusted ? layer.path : `${layer.path} (matched by name only: it can only remove tools)`;
      steps.push({ label: STEP_LABELS.group, policy: layer.policy, source, guardLabel: STEP_LABELS.group });
    }
  } else {
    steps.push({ label: STEP_LABELS.group, policy: undefined, source: ctx.chat === 'dm' && ctx.provider !== 'web' ? 'direct message: no channel scope' : 'no channel scope defines a policy' });
  }

  const agentSender = agent.path ? matchSender(agent.entry?.tools?.toolsBySender, ctx, `${agent.path}.tools.toolsBySender`, config.accessGroups) : undefined;
  const sender = agentSender ?? matchSender(config.tools.toolsBySender, ctx, 'tools.toolsBySender', config.accessGroups);
  const senderPolicy = sender ? pickPolicy(sender.value, sender.path) : undefined;
  steps.push(
    senderPolicy
      ? { label: STEP_LABELS.sender, policy: senderPolicy, source: sender!.via !== undefined && sender!.via !== sender!.key ? `${sender!.path} via ${sender!.via}` : sender!.path, guardLabel: STEP_LABELS.sender }
      : { label: STEP_LABELS.sender, policy: undefined, source: 'no toolsBySender entry matches the sender' },
  );

  const sandbox = ctx.sandboxed ? pickPolicy(config.tools.sandbox?.tools, 'tools.sandbox.tools') : undefined;
  steps.push(
    sandbox
      ? { label: STEP_LABELS.sandbox, policy: sandbox, source: 'tools.sandbox.tools', guardLabel: STEP_LABELS.sandbox }
      : { label: STEP_LABELS.sandbox, policy: undefined, source: ctx.sandboxed ? 'tools.sandbox.tools not set' : 'exec is not sandboxed in this session' },
  );

  const subagent = subagentPolicy(config, ctx.spawnDepth);
  steps.push(
    subagent
      ? { label: STEP_LABELS.subagent, policy: subagent, source: `subagent at depth ${ctx.spawnDepth} (maxSpawnDepth ${config.agents.defaults.subagents.maxSpawnDepth})`, guardLabel: STEP_LABELS.subagent, denyLabel: SUBAGENT_DENY_LABEL }
      : { label: STEP_LABELS.subagent, policy: undefined, source: 'main session (depth 0)' },
  );

  const inherited = inheritedPolicy(ctx.inherited);
  steps.push(
    inherited
      ? { label: STEP_LABELS.inherited, policy: inherited, source: "the parent session's final surface", guardLabel: 'inherited tools.allow' }
      : { label: STEP_LABELS.inherited, policy: undefined, source: 'no parent session' },
  );
  return steps;
}
