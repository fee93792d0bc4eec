import type { ProfileId } from '../config/schema/policy.js';
import { BUNDLE_MCP, CORE_GROUPS, coreGroupName, coreTool, PLUGINS_GROUP } from './catalog.js';
import { normalizeToolName } from './tool-names.js';
import type { ToolMeta } from './tool-meta.js';
import { compileGlob, isGlob } from '../config/tool-glob.js';
import { KeyedCache } from '../util/keyed-cache.js';

/**
 * One policy `{allow?, deny?}` and its matcher (semantics §2). Entries remember where they were
 * written (`key`) so that every decision can name the config line that made it.
 */

/** An allow/deny entry: the text as written, its normalised name, its config key path. */
export interface PolicyEntry {
  raw: string;
  name: string;
  key: string;
  /** A profile's baseline: matches every tool whose definition names this profile. */
  profile?: ProfileId;
  /** The implicit `*` an alsoAllow-only scope stands for. */
  implicit?: boolean;
  /** A built-in rule rather than a config line; `key` then describes the rule. */
  builtin?: boolean;
}

export interface ToolPolicy {
  allow?: PolicyEntry[] | undefined;
  deny?: PolicyEntry[] | undefined;
}

/** A config scope as written: `{allow, alsoAllow, deny}` (extra keys such as `profile` are ignored). */
export interface PolicyScope {
  allow?: readonly string[] | undefined;
  alsoAllow?: readonly string[] | undefined;
  deny?: readonly string[] | undefined;
}

export function entry(raw: string, key: string): PolicyEntry {
  return { raw, name: normalizeToolName(raw), key };
}

const listEntries = (list: readonly string[] | undefined, key: string): PolicyEntry[] =>
  (list ?? []).map((raw, i) => entry(raw, `${key}[${i}]`)).filter((e) => e.name !== '');

/** Per scope object, by key path: a scope is read under one path or a few (a bound only for safety). */
const scopeCache = new KeyedCache<object, ToolPolicy | undefined>(64);

/**
 * The policy a config scope stands for (semantics §2, reference §2.2): alsoAllow alone means
 * `allow: ["*", …]`; with allow it unions; nothing set means no policy. `allow: []` alone is a
 * defined policy that keeps everything. Cached per scope object: configs are immutable once loaded.
 */
export function pickPolicy(scope: PolicyScope | undefined, key: string): ToolPolicy | undefined {
  if (!scope) return undefined;
  return scopeCache.get(scope, key, () => buildPolicy(scope, key));
}

function buildPolicy(scope: PolicyScope, key: string): ToolPolicy | undefined {
  const allow = listEntries(scope.allow, `${key}.allow`);
  const also = listEntries(scope.alsoAllow, `${key}.alsoAllow`);
  const deny = listEntries(scope.deny, `${key}.deny`);
  const hasAllow = scope.allow !== undefined;
  if (!hasAllow && also.length === 0 && scope.deny === undefined) return undefined;
  const policy: ToolPolicy = {};
  if (also.length > 0) {
    policy.allow = allow.length > 0 ? [...allow, ...also] : [{ raw: '*', name: '*', key: `${key}.alsoAllow`, implicit: true }, ...also];
  } else if (hasAllow) policy.allow = allow;
  if (scope.deny !== undefined) policy.deny = deny;
  return policy;
}

/** Whether a policy carries an allowlist someone wrote (not empty, not only alsoAllow's implicit `*`). */
export function explicitAllow(policy: ToolPolicy | undefined): PolicyEntry[] {
  if (!policy?.allow || policy.allow.some((e) => e.implicit)) return [];
  return policy.allow;
}

interface CompiledList {
  all: PolicyEntry | undefined;
  exact: Map<string, PolicyEntry>;
  pluginIds: Map<string, PolicyEntry>;
  tests: { entry: PolicyEntry; test: (tool: ToolMeta) => boolean }[];
  /** Entries naming a tool of an MCP server (`github__create_issue`, `github__list_*`), by server. */
  mcpServers: Map<string, PolicyEntry>;
  size: number;
}

export interface CompiledPolicy {
  policy: ToolPolicy;
  allow: CompiledList | undefined;
  deny: CompiledList | undefined;
}

const compiledCache = new WeakMap<ToolPolicy, CompiledPolicy>();

export function compilePolicy(policy: ToolPolicy): CompiledPolicy {
  let compiled = compiledCache.get(policy);
  if (!compiled) {
    compiled = { policy, allow: policy.allow ? compileList(policy.allow) : undefined, deny: policy.deny ? compileList(policy.deny) : undefined };
    compiledCache.set(policy, compiled);
  }
  return compiled;
}

function compileList(entries: readonly PolicyEntry[]): CompiledList {
  const list: CompiledList = { all: undefined, exact: new Map(), pluginIds: new Map(), tests: [], mcpServers: new Map(), size: entries.length };
  const setFirst = (map: Map<string, PolicyEntry>, name: string, e: PolicyEntry) => {
    if (!map.has(name)) map.set(name, e);
  };
  for (const e of entries) {
    const { name } = e;
    if (e.profile) {
      const profile = e.profile;
      const mcpToo = profile === 'coding' || profile === 'messaging';
      list.tests.push({ entry: e, test: (t) => t.profiles.includes(profile) || (mcpToo && t.source.kind === 'mcp') });
    } else if (name === '*') list.all ??= e;
    // MCP tools are plugin-kind (OpenClaw gives them the plugin id `bundle-mcp`): group:plugins has them too.
    else if (name === PLUGINS_GROUP) list.tests.push({ entry: e, test: (t) => t.source.kind === 'plugin' || t.source.kind === 'mcp' });
    else if (name === BUNDLE_MCP) list.tests.push({ entry: e, test: (t) => t.source.kind === 'mcp' });
    else if (coreGroupName(name)) {
      for (const member of CORE_GROUPS.get(coreGroupName(name)!)!) setFirst(list.exact, member, e);
    } else if (isGlob(name)) {
      const test = compileGlob(name);
      list.tests.push({ entry: e, test: (t) => test(t.id) });
    } else {
      setFirst(list.exact, name, e);
      setFirst(list.pluginIds, name, e);
    }
    const server = mcpServerOf(name);
    if (server !== undefined) setFirst(list.mcpServers, server, e);
  }
  return list;
}

/** The server an entry's literal `<server>__` prefix names (`github__create_issue` → `github`). */
function mcpServerOf(name: string): string | undefined {
  const at = name.indexOf('__');
  if (at <= 0) return undefined;
  const server = name.slice(0, at);
  return /^[a-z0-9_-]+$/.test(server) ? server : undefined;
}

function matchList(list: CompiledList, tool: ToolMeta): PolicyEntry | undefined {
  const exact = list.exact.get(tool.id);
  if (exact) return exact;
  if (tool.source.kind === 'plugin') {
    const byPlugin = list.pluginIds.get(tool.source.pluginId);
    if (byPlugin) return byPlugin;
  }
  if (list.all) return list.all;
  for (const { entry: e, test } of list.tests) if (test(tool)) return e;
  return undefined;
}

/**
 * As matchList, for an allowlist: a placeholder for a server whose tools are not listed yet
 * (`github__*`) is kept by any entry naming one of that server's tools, since the tool it names
 * may be among them. A deny entry naming one tool never removes the placeholder.
 */
function matchAllow(list: CompiledList, tool: ToolMeta): PolicyEntry | undefined {
  const own = matchList(list, tool);
  if (own || tool.source.kind !== 'mcp' || !tool.source.placeholder) return own;
  return list.mcpServers.get(tool.source.server);
}

/**
 * Tools that can do what another tool does (semantics §2). A policy that denies the leader
 * denies its followers too, so a deny cannot be sidestepped by a tool next to it:
 * - `shares`: an entry that matches the leader matches the follower, in deny and allow lists
 *   alike (`deny: [write]` removes `edit` and `apply_patch`; `allow: [write]` keeps them). The
 *   follower can still be named on its own (`allow: [edit]` without write keeps edit: editing
 *   existing files is a narrower grant than writing any).
 * - `requires`: as `shares`, and the follower is kept only where the leader is kept. `process`
 *   drives jobs that `exec` started — writing to a shell's stdin runs commands — so
 *   `allow: [process]` without exec removes process too (fail closed: a job left from a turn
 *   that had exec, or from before a config change, stays out of reach when exec is gone).
 * - `deny`: only a deny entry that matches the leader matches the follower. `image` and `pdf`
 *   hand a workspace file's content to the model as `read` does, so `deny: [read]` removes
 *   them; but they are tools of their own (a vision call, PDF text), and `allow: [read]` does
 *   not ask for them.
 * Only core tools couple: a plugin tool that happens to be called `edit` is not Warden's edit.
 */
export interface ToolCoupling {
  tool: string;
  follows: string;
  mode: 'shares' | 'requires' | 'deny';
}

export const TOOL_COUPLINGS: readonly ToolCoupling[] = Object.freeze([
  { tool: 'apply_patch', follows: 'write', mode: 'shares' },
  { tool: 'edit', follows: 'write', mode: 'shares' },
  { tool: 'process', follows: 'exec', mode: 'requires' },
  { tool: 'image', follows: 'read', mode: 'deny' },
  { tool: 'pdf', follows: 'read', mode: 'deny' },
]);

interface Leader {
  coupling: ToolCoupling;
  meta: ToolMeta;
}

const LEADERS: ReadonlyMap<string, Leader> = new Map(
  TOOL_COUPLINGS.map((c) => {
    const meta = coreTool(c.follows);
    if (!meta) throw new Error(`tool coupling ${c.tool} → ${c.follows}: ${c.follows} is not a core tool`);
    return [c.tool, { coupling: c, meta }] as const;
  }),
);

/** The coupling a tool follows, when it is a core tool that follows another. */
export function couplingOf(tool: ToolMeta): ToolCoupling | undefined {
  return tool.source.kind === 'core' ? LEADERS.get(tool.id)?.coupling : undefined;
}

const leaderOf = (tool: ToolMeta): Leader | undefined => (tool.source.kind === 'core' ? LEADERS.get(tool.id) : undefined);

/** The entry that matches the tool itself, else one that matches the tool it follows. */
function matchCoupled(list: CompiledList, tool: ToolMeta): { entry: PolicyEntry; via?: string } | undefined {
  const own = matchList(list, tool);
  if (own) return { entry: own };
  const leader = leaderOf(tool);
  const byLeader = leader && matchList(list, leader.meta);
  return byLeader ? { entry: byLeader, via: leader.coupling.follows } : undefined;
}

/**
 * `via` names the tool whose entry decided (the follower matched through its leader).
 * `requires` on a not-allowed verdict names the leader the allowlist does not keep, when that
 * is why the follower was removed.
 */
export type Verdict =
  | { kept: true; reason: 'no-allowlist' }
  | { kept: true; reason: 'allowed'; entry: PolicyEntry; via?: string }
  | { kept: false; reason: 'denied'; entry: PolicyEntry; via?: string }
  | { kept: false; reason: 'not-allowed'; requires?: string };

/**
 * Semantics §2: deny matches → removed; no or empty allowlist → kept; allow matches → kept;
 * else removed. A follower matches its leader's deny entries; its leader's allow entries too
 * unless it couples on the deny side only; and a `requires` follower is allowed only when its
 * leader is.
 */
export function decide(policy: CompiledPolicy, tool: ToolMeta): Verdict {
  if (policy.deny && policy.deny.size > 0) {
    const hit = matchCoupled(policy.deny, tool);
    if (hit) return { kept: false, reason: 'denied', ...hit };
  }
  if (!policy.allow || policy.allow.size === 0) return { kept: true, reason: 'no-allowlist' };
  const leader = leaderOf(tool);
  if (leader?.coupling.mode === 'requires') {
    const byLeader = matchList(policy.allow, leader.meta);
    if (!byLeader) return { kept: false, reason: 'not-allowed', requires: leader.coupling.follows };
    const own = matchList(policy.allow, tool);
    return own ? { kept: true, reason: 'allowed', entry: own } : { kept: true, reason: 'allowed', entry: byLeader, via: leader.coupling.follows };
  }
  if (leader?.coupling.mode === 'deny') {
    const own = matchList(policy.allow, tool);
    return own ? { kept: true, reason: 'allowed', entry: own } : { kept: false, reason: 'not-allowed' };
  }
  if (!leader) {
    const own = matchAllow(policy.allow, tool);
    return own ? { kept: true, reason: 'allowed', entry: own } : { kept: false, reason: 'not-allowed' };
  }
  const hit = matchCoupled(policy.allow, tool);
  if (hit) return { kept: true, reason: 'allowed', ...hit };
  return { kept: false, reason: 'not-allowed' };
}

function matchesCoupled(list: CompiledList, tool: ToolMeta): boolean {
  if (matchList(list, tool) !== undefined) return true;
  const leader = leaderOf(tool);
  return leader !== undefined && matchList(list, leader.meta) !== undefined;
}

/** `decide(policy, tool).kept` without building a verdict: the per-turn hot path. */
export function keeps(policy: CompiledPolicy, tool: ToolMeta): boolean {
  if (policy.deny && policy.deny.size > 0 && matchesCoupled(policy.deny, tool)) return false;
  if (!policy.allow || policy.allow.size === 0) return true;
  const leader = leaderOf(tool);
  if (leader?.coupling.mode === 'requires') return matchList(policy.allow, leader.meta) !== undefined;
  if (leader?.coupling.mode === 'deny') return matchList(policy.allow, tool) !== undefined;
  return leader ? matchesCoupled(policy.allow, tool) : matchAllow(policy.allow, tool) !== undefined;
}

/**
 * `keeps(policy, tool)` for every tool of a candidate list, as one byte per tool (1 = kept).
 * Both are immutable once built (a loaded config's policies, the plugin loader's list), so the
 * answer is computed once per pair and each turn only reads it.
 */
const keptCache = new WeakMap<CompiledPolicy, WeakMap<readonly ToolMeta[], Uint8Array>>();

export function keptVector(policy: CompiledPolicy, tools: readonly ToolMeta[]): Uint8Array {
  let byTools = keptCache.get(policy);
  if (!byTools) keptCache.set(policy, (byTools = new WeakMap()));
  let kept = byTools.get(tools);
  if (!kept) {
    kept = new Uint8Array(tools.length);
    for (let i = 0; i < tools.length; i++) kept[i] = keeps(policy, tools[i]!) ? 1 : 0;
    byTools.set(tools, kept);
  }
  return kept;
}
