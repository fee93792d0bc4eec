import type { WardenConfig } from '../config/index.js';
import { approversFor } from '../approvals/approvers.js';
import { effectiveExecConfig, execHostOf } from '../exec/check.js';
import { DEFAULT_SAFE_BINS } from '../exec/safe-bins.js';
import { knownAgentIds } from '../policy/steps.js';
import { resolveToolSurface } from '../policy/surface.js';
import type { ToolMeta } from '../tools/types.js';
import { buildTurnContext, type ContextInput } from '../turn/turn-context.js';
import { diffConfig, dotted, startsWith, type ConfigChange } from './config-diff.js';

/**
 * Whether a config change widens security — the one decision a config patch's approval rests on.
 *
 * Pure: two effective configs in, the changed leaves and the widenings out. A widening is any
 * change that lets someone do what they could not: an owner or approver added; an exec policy
 * that asks less, allows more or leaves the sandbox; a tool on some turn's surface that was not
 * there (judged by the surface function itself over every scope, sender, model and depth either
 * config names, so a removed deny entry, a wider profile and a channel scope that shadows its
 * guild's denies all count); the browser's SSRF policy opened; the web chat's bind or token
 * changed; the HTTP API or the node listener opened; elevation, cross-context posting, session
 * visibility and plugins changed. A change to a key no rule knows to be harmless counts as
 * widening (fail closed).
 */
export interface Widening {
  /** The key path (or the context) that widened. */
  path: string;
  why: string;
}

export interface ChangeClassification {
  changes: ConfigChange[];
  widening: Widening[];
}

/** Keys whose changes cannot widen anything by themselves. */
const NEUTRAL: readonly string[][] = [
  ['models'],
  ['agents', 'defaults', 'maxToolRounds'],
  ['agents', 'list', '*', 'name'],
  ['approvals', 'target'],
  ['approvals', 'exec', 'timeoutSec'],
  ['approvals', 'hook', 'timeoutSec'],
  ['sessions'],
  ['skills'],
  ['browser', 'headless'],
  ['browser', 'idleTimeoutSec'],
  ['browser', 'defaultProfile'],
  ['browser', 'profiles'],
  ['channels', 'discord', 'requireMention'],
  ['channels', 'discord', 'guilds', '*', 'requireMention'],
  ['channels', 'discord', 'guilds', '*', 'slug'],
  ['channels', 'discord', 'guilds', '*', 'channels', '*', 'requireMention'],
  ['channels', 'slack', 'requireMention'],
  ['channels', 'slack', 'channels', '*', 'requireMention'],
  ['channels', 'web', 'port'],
  ['tools', 'web'],
  ['tools', 'media'],
  ['media'],
  ['tools', 'toolSearch'],
  ['tools', 'loopDetection'],
  ['agents', 'list', '*', 'tools', 'loopDetection'],
  ['tools', 'message', 'crossContext', 'marker'],
  ['agents', 'list', '*', 'tools', 'message', 'crossContext', 'marker'],
  ['gateway', 'reload'],
  ['gateway', 'http', 'port'],
  ['gateway', 'http', 'rateLimit'],
  ['gateway', 'nodes', 'port'],
  ['gateway', 'nodes', 'pairingTimeoutSec'],
  ['gateway', 'nodes', 'callTimeoutSec'],
];

/** Policy keys: what they do is judged on the surfaces, not by their text. */
const SURFACE_JUDGED: readonly string[][] = [
  ['tools', 'profile'],
  ['tools', 'allow'],
  ['tools', 'alsoAllow'],
  ['tools', 'deny'],
  ['tools', 'byProvider'],
  ['tools', 'toolsBySender'],
  ['tools', 'sandbox'],
  ['tools', 'subagents'],
  ['tools', 'exec', 'applyPatch'],
  ['agents', 'list', '*', 'id'],
  ['agents', 'list', '*', 'default'],
  ['agents', 'list', '*', 'model'],
  ['agents', 'list', '*', 'tools', 'profile'],
  ['agents', 'list', '*', 'tools', 'allow'],
  ['agents', 'list', '*', 'tools', 'alsoAllow'],
  ['agents', 'list', '*', 'tools', 'deny'],
  ['agents', 'list', '*', 'tools', 'byProvider'],
  ['agents', 'list', '*', 'tools', 'toolsBySender'],
  ['agents', 'defaults', 'subagents'],
  ['channels', 'discord', 'guilds', '*', 'tools'],
  ['channels', 'discord', 'guilds', '*', 'toolsBySender'],
  ['channels', 'discord', 'guilds', '*', 'channels', '*', 'tools'],
  ['channels', 'discord', 'guilds', '*', 'channels', '*', 'toolsBySender'],
  ['channels', 'slack', 'channels', '*', 'tools'],
  ['channels', 'slack', 'channels', '*', 'toolsBySender'],
  ['channels', 'web', 'tools'],
  ['channels', 'web', 'toolsBySender'],
];

/** Keys a rule below judges; a change under them is widening only when the rule says so. */
const RULED: readonly string[][] = [
  ['owners'],
  ['approvals', 'approvers'],
  ['tools', 'exec'],
  ['agents', 'list', '*', 'tools', 'exec'],
  ['browser', 'enabled'],
  ['browser', 'ssrfPolicy'],
  ['gateway', 'http'],
  ['gateway', 'nodes'],
];

/**
 * Keys that say where a request goes or which secret it carries (`models.providers.x.baseUrl`,
 * `apiKeyEnv`, fetch `headers`), anywhere in the config: pointing a provider at another host, or
 * its key at another variable (`apiKeyEnv: DISCORD_TOKEN`), sends conversations or secrets out.
 */
const EGRESS_KEY = /^(baseUrl|apiUrl|apiBaseUrl|apiKeyEnv|url|endpoint|headers)$/i;

export function classifyConfigChange(before: WardenConfig, after: WardenConfig, options: { plugins?: readonly ToolMeta[] } = {}): ChangeClassification {
  const changes = diffConfig(before, after);
  const widening: Widening[] = [];
  const add = (path: string, why: string) => {
    if (!widening.some((w) => w.path === path && w.why === why)) widening.push({ path, why });
  };
  for (const change of changes) {
    if (change.path.some((p) => EGRESS_KEY.test(p))) {
      add(dotted(change.path), 'changes where requests go or which secret they carry');
      continue;
    }
    const under = (list: readonly string[][]) => list.some((p) => startsWith(change.path, p));
    if (under(NEUTRAL) || under(SURFACE_JUDGED) || under(RULED)) continue;
    add(dotted(change.path), 'changed, and no rule knows this key to leave security as it was');
  }
  ownersAndApprovers(before, after, add);
  execPolicies(before, after, add);
  browserPolicy(before, after, add);
  listeners(before, after, add);
  surfaces(before, after, options.plugins ?? [], add);
  return { changes, widening };
}

type Add = (path: string, why: string) => void;

const PROVIDERS = ['discord', 'slack', 'web'] as const;

function ownersAndApprovers(before: WardenConfig, after: WardenConfig, add: Add): void {
  for (const p of PROVIDERS) {
    const newOwners = (after.owners[p] ?? []).filter((id) => !(before.owners[p] ?? []).includes(id));
    if (newOwners.length > 0) add(`owners.${p}`, `adds owner ${newOwners.join(', ')}`);
    const was = approversFor({ owners: before.owners, approvers: before.approvals.approvers }, p);
    const now = approversFor({ owners: after.owners, approvers: after.approvals.approvers }, p);
    const newApprovers = now.filter((id) => !was.includes(id));
    if (newApprovers.length > 0) add(`approvals.approvers.${p}`, `adds approver ${newApprovers.join(', ')}`);
  }
}

const SECURITY_RANK = { deny: 0, allowlist: 1, full: 2 } as const;
/** How much `ask` holds back: always asks every command; off refuses misses; on-miss lets a human allow them. */
const ASK_RESTRAINT = { always: 2, off: 1, 'on-miss': 0 } as const;

function execPolicies(before: WardenConfig, after: WardenConfig, add: Add): void {
  if (execHostOf(before) === 'sandbox' && execHostOf(after) !== 'sandbox') add('tools.exec.host', 'exec leaves the sandbox for the gateway host');
  const b0 = before.tools.exec;
  const a0 = after.tools.exec;
  if (b0 && a0 && (a0.sandbox.uid !== b0.sandbox.uid || a0.sandbox.gid !== b0.sandbox.gid)) add('tools.exec.sandbox', 'the sandbox runs as another host user');
  const agents = new Set([...knownAgentIds(before), ...knownAgentIds(after)]);
  for (const agentId of agents) {
    if (!knownAgentIds(after).includes(agentId)) continue;
    const b = effectiveExecConfig(before, agentId);
    const a = effectiveExecConfig(after, agentId);
    const where = after.agents.list.find((x) => x.id === agentId)?.tools?.exec ? `agents.list[${after.agents.list.findIndex((x) => x.id === agentId)}].tools.exec` : 'tools.exec';
    if (SECURITY_RANK[a.security] > SECURITY_RANK[b.security]) add(`${where}.security`, `security ${b.security} → ${a.security} (agent ${agentId})`);
    if (ASK_RESTRAINT[a.ask] < ASK_RESTRAINT[b.ask]) add(`${where}.ask`, `ask ${b.ask} → ${a.ask} (agent ${agentId})`);
    if (SECURITY_RANK[a.askFallback] > SECURITY_RANK[b.askFallback]) add(`${where}.askFallback`, `askFallback ${b.askFallback} → ${a.askFallback} (agent ${agentId})`);
    const key = (e: { pattern: string; argPattern?: string | undefined; trustRepoConfig?: boolean | undefined }) => JSON.stringify([e.pattern, e.argPattern ?? null, e.trustRepoConfig === true]);
    const had = new Set(b.allowlist.map(key));
    for (const entry of a.allowlist) if (!had.has(key(entry))) add(`${where}.allowlist`, `allowlist entry ${entry.pattern}${entry.argPattern ? ` ${entry.argPattern}` : ''}${entry.trustRepoConfig ? ' (trustRepoConfig)' : ''} added (agent ${agentId})`);
    const binsBefore = new Set(b.safeBins ?? DEFAULT_SAFE_BINS);
    const newBins = (a.safeBins ?? DEFAULT_SAFE_BINS).filter((x) => !binsBefore.has(x));
    if (newBins.length > 0) add(`${where}.safeBins`, `safe bins ${newBins.join(', ')} added (agent ${agentId})`);
    const newDirs = a.safeBinTrustedDirs.filter((d) => !b.safeBinTrustedDirs.includes(d));
    if (newDirs.length > 0) add(`${where}.safeBinTrustedDirs`, `trusted dirs ${newDirs.join(', ')} added (agent ${agentId})`);
    if (JSON.stringify(a.safeBinProfiles) !== JSON.stringify(b.safeBinProfiles)) add(`${where}.safeBinProfiles`, `safe-bin profiles changed (agent ${agentId})`);
    if (b.strictInlineEval && !a.strictInlineEval) add(`${where}.strictInlineEval`, `inline code no longer always asks (agent ${agentId})`);
    if (b.allowAlwaysTtlSec !== undefined && (a.allowAlwaysTtlSec === undefined || a.allowAlwaysTtlSec > b.allowAlwaysTtlSec)) add(`${where}.allowAlwaysTtlSec`, `allow-always grants last longer (agent ${agentId})`);
  }
  const elevatedChanged = (c: WardenConfig) => JSON.stringify([c.tools.elevated ?? null, c.agents.list.map((x) => x.tools?.elevated ?? null)]);
  if (elevatedChanged(before) !== elevatedChanged(after)) add('tools.elevated', 'who may run commands outside the sandbox changed');
}

function browserPolicy(before: WardenConfig, after: WardenConfig, add: Add): void {
  if (!before.browser.enabled && after.browser.enabled) add('browser.enabled', 'the browser is turned on');
  const b = before.browser.ssrfPolicy ?? {};
  const a = after.browser.ssrfPolicy ?? {};
  if (!b.allowPrivateNetwork && a.allowPrivateNetwork) add('browser.ssrfPolicy.allowPrivateNetwork', 'the browser may reach private networks');
  for (const key of ['allowRfc2544BenchmarkRange', 'allowIpv6UniqueLocalRange'] as const) if (!b[key] && a[key]) add(`browser.ssrfPolicy.${key}`, 'a blocked address range is opened');
  const newNames = (a.allowedHostnames ?? []).filter((h) => !(b.allowedHostnames ?? []).includes(h));
  if (newNames.length > 0) add('browser.ssrfPolicy.allowedHostnames', `${newNames.join(', ')} may resolve to private addresses`);
  const bl = b.hostnameAllowlist ?? [];
  const al = a.hostnameAllowlist ?? [];
  if (bl.length > 0 && (al.length === 0 || al.some((h) => !bl.includes(h)))) add('browser.ssrfPolicy.hostnameAllowlist', 'the browser may navigate to more hosts');
}

function listeners(before: WardenConfig, after: WardenConfig, add: Add): void {
  const bw = before.channels.web;
  const aw = after.channels.web;
  if (bw.host !== aw.host) add('channels.web.host', `the web chat binds ${aw.host} instead of ${bw.host}`);
  if (bw.token !== aw.token) add('channels.web.token', 'the web chat token changes');
  const bh = before.gateway?.http;
  const ah = after.gateway?.http;
  if (ah?.enabled) {
    if (!bh?.enabled) add('gateway.http.enabled', 'the HTTP tools API is turned on');
    else {
      if (bh.host !== ah.host) add('gateway.http.host', `the HTTP tools API binds ${ah.host} instead of ${bh.host}`);
      if (bh.token !== ah.token || JSON.stringify(bh.tokens ?? {}) !== JSON.stringify(ah.tokens ?? {})) add('gateway.http.token', 'the HTTP API tokens change');
    }
    const allowed = (ah.tools?.allow ?? []).filter((t) => !(bh?.tools?.allow ?? []).includes(t));
    if (allowed.length > 0) add('gateway.http.tools.allow', `${allowed.join(', ')} taken off the HTTP deny list`);
  }
  const bn = before.gateway?.nodes;
  const an = after.gateway?.nodes;
  if (an?.enabled) {
    if (!bn?.enabled) add('gateway.nodes.enabled', 'nodes may pair with this Warden');
    else {
      if (bn.host !== an.host) add('gateway.nodes.host', `the node listener binds ${an.host} instead of ${bn.host}`);
      if (JSON.stringify(bn.tls ?? null) !== JSON.stringify(an.tls ?? null)) add('gateway.nodes.tls', 'the node listener certificate changes');
    }
  }
}

/**
 * The contexts both configs name — each agent, provider, guild and channel scope (by id and by
 * name), each sender a `toolsBySender` key or `owners` names, each model, subagent depth 0 and 1 —
 * and for each, the tools the new config's surface has that the old one's lacked.
 */
function surfaces(before: WardenConfig, after: WardenConfig, plugins: readonly ToolMeta[], add: Add): void {
  const inputs = { plugins, implemented: () => ({ ok: true as const }) };
  const beforeAgents = new Set(knownAgentIds(before));
  for (const input of contexts(before, after)) {
    const next = resolveToolSurface(after, buildTurnContext(after, input), inputs);
    if (next.error) continue;
    const agentBefore = beforeAgents.has(input.agentId) ? input.agentId : knownAgentIds(before)[0]!;
    const prev = resolveToolSurface(before, buildTurnContext(before, { ...input, agentId: agentBefore }), inputs);
    const had = new Set(prev.error ? [] : prev.tools);
    const gained = next.tools.filter((t) => !had.has(t));
    if (gained.length > 0) add(describeContext(input), `${gained.join(', ')} newly on the tool surface`);
  }
}

function describeContext(input: ContextInput): string {
  const c = input.conversation;
  const parts = [`agent ${input.agentId}`, `${c.provider} ${c.chat}`];
  if (c.guildId) parts.push(`guild ${c.guildId}`);
  if (c.channelName) parts.push(`#${c.channelName}`);
  else if (c.channelId) parts.push(`channel ${c.channelId}`);
  parts.push(input.sender.id ? `sender ${input.sender.id}` : 'any sender');
  if (input.model) parts.push(`model ${input.model}`);
  if (input.spawnDepth) parts.push(`subagent depth ${input.spawnDepth}`);
  return parts.join(', ');
}

function contexts(before: WardenConfig, after: WardenConfig): ContextInput[] {
  const configs = [before, after];
  const agents = knownAgentIds(after);
  const models = new Set<string | undefined>([undefined]);
  const senders = new Map<string, Set<string | undefined>>();
  const scopes: Array<{ provider: string; guildId?: string; channelId?: string; channelName?: string }> = [];
  for (const p of [...PROVIDERS, 'http']) senders.set(p, new Set([undefined, 'someone-else']));
  const senderKeys = (provider: string | undefined, record: Record<string, unknown> | undefined) => {
    for (const key of Object.keys(record ?? {})) {
      const m = /^(?:channel:([^:]+):)?(?:id:)?([^:]+)$/.exec(key);
      if (!m || m[2] === '*') continue;
      for (const p of provider ? [provider] : senders.keys()) if (!m[1] || m[1] === p) senders.get(p)!.add(m[2]);
    }
  };
  for (const c of configs) {
    models.add(c.models.default);
    for (const a of c.agents.list) {
      models.add(a.model);
      senderKeys(undefined, a.tools?.toolsBySender);
      for (const k of Object.keys(a.tools?.byProvider ?? {})) if (k.includes('/')) models.add(k);
    }
    for (const k of Object.keys(c.tools.byProvider ?? {})) if (k.includes('/')) models.add(k);
    senderKeys(undefined, c.tools.toolsBySender);
    for (const p of PROVIDERS) for (const id of c.owners[p] ?? []) senders.get(p)!.add(id);
    for (const [guildId, guild] of Object.entries(c.channels.discord?.guilds ?? {})) {
      senderKeys('discord', guild.toolsBySender);
      scopes.push({ provider: 'discord', guildId });
      for (const [key, channel] of Object.entries(guild.channels)) {
        senderKeys('discord', channel.toolsBySender);
        scopes.push({ provider: 'discord', guildId, channelId: key, channelName: key.replace(/^#/, '') });
        scopes.push({ provider: 'discord', guildId, channelId: key });
      }
    }
    for (const [key, channel] of Object.entries(c.channels.slack?.channels ?? {})) {
      senderKeys('slack', channel.toolsBySender);
      scopes.push({ provider: 'slack', channelId: key, channelName: key.replace(/^#/, '') });
      scopes.push({ provider: 'slack', channelId: key });
    }
    senderKeys('web', c.channels.web.toolsBySender);
  }
  for (const p of [...PROVIDERS, 'http']) scopes.push({ provider: p, channelId: 'unlisted-channel', guildId: p === 'discord' ? 'unlisted-guild' : undefined });
  const out: ContextInput[] = [];
  const seen = new Set<string>();
  for (const agentId of agents) {
    for (const model of models) {
      for (const depth of [0, 1]) {
        const push = (input: ContextInput) => {
          const key = JSON.stringify(input);
          if (!seen.has(key)) {
            seen.add(key);
            out.push(input);
          }
        };
        for (const p of [...PROVIDERS, 'http']) {
          for (const id of senders.get(p)!) push({ agentId, model, spawnDepth: depth, conversation: { provider: p, chat: 'dm', channelId: `dm-${id ?? 'anon'}` }, sender: { id } });
        }
        for (const scope of scopes) {
          for (const id of senders.get(scope.provider)!) {
            push({ agentId, model, spawnDepth: depth, conversation: { provider: scope.provider, chat: 'channel', guildId: scope.guildId, channelId: scope.channelId, channelName: scope.channelName }, sender: { id } });
          }
        }
      }
    }
  }
  return out;
}
