import type { WardenConfig } from '../config/index.js';
import type { ApprovalRuleConfig } from '../config/schema/approval-rules.js';
import { regexLiteral } from '../config/schema/approval-rules.js';
import { coreTool } from '../policy/catalog.js';
import type { TurnContext } from '../policy/context.js';
import { compilePolicy, entry, keeps, type CompiledPolicy } from '../policy/policy.js';
import { matchPrincipal, needsMemberships } from '../policy/principals.js';
import type { ToolMeta } from '../policy/tool-meta.js';
import { toolRisk } from '../policy/tool-risk.js';
import { compileLinearRegex, type LinearRegex } from '../util/linear-regex.js';
import { stableJson } from '../util/stable-json.js';
import { globMatch } from './glob.js';

/**
 * `approvals.rules`: the one function that says whether a tool call asks a person because of a
 * configured rule, and which rule. The call chain (live bot, `/exec`, `warden invoke`) asks it
 * at the approval step; `/tools --explain` and `warden tools --explain` read the same compiled
 * rules. First matching rule wins. Pure; compiled once per config object.
 */

export type RuleConfig = Pick<WardenConfig, 'approvals' | 'accessGroups'>;

/** A call as the rules see it. */
export interface RuleCall {
  tool: string;
  params: Record<string, unknown>;
  turn: Pick<TurnContext, 'provider' | 'agentId' | 'guildId' | 'guildName' | 'channelId' | 'channelName' | 'senderId'>;
  /** The tool's catalog entry (plugin and MCP tools: their origin); core tools are looked up. */
  meta?: ToolMeta | undefined;
}

/** The rule a call falls under, as the approval step and `--explain` report it. */
export interface RuleHit {
  index: number;
  /** `approvals.rules[2]`: named on the card, in `--explain` and in audit rows. */
  path: string;
  rule: ApprovalRuleConfig;
  /** The card's risk line: the rule's own, else the tool's. */
  risk: string;
  /**
   * Identifies the rule by what it says (not by its position): a grant made under it covers
   * calls under the same rule only, and a rule edited after the grant no longer finds it.
   */
  key: string;
}

type Matcher = (value: unknown) => boolean;

interface CompiledRule {
  index: number;
  rule: ApprovalRuleConfig;
  tools: CompiledPolicy;
  match: Array<{ path: string[]; test: Matcher }>;
  key: string;
}

interface CompiledSet {
  rules: CompiledRule[];
  /** The rules whose tools cover a tool, by tool id and origin: each call checks only those. */
  byTool: Map<string, CompiledRule[]>;
}

const cache = new WeakMap<object, CompiledSet>();

function compiledSet(config: RuleConfig): CompiledSet | undefined {
  const rules = config.approvals.rules;
  if (!rules || rules.length === 0) return undefined;
  let out = cache.get(rules);
  if (!out) {
    out = { rules: rules.map((rule, index) => compileRule(rule, index)), byTool: new Map() };
    cache.set(rules, out);
  }
  return out;
}

function compiled(config: RuleConfig): CompiledRule[] {
  return compiledSet(config)?.rules ?? [];
}

/** The rules, in order, whose tool entries cover this tool (cached: the answer depends on the tool and its origin only). */
function rulesFor(set: CompiledSet, meta: ToolMeta): CompiledRule[] {
  const source = meta.source;
  const key = `${meta.id}\u0000${source.kind}\u0000${source.kind === 'plugin' ? source.pluginId : source.kind === 'mcp' ? source.server : ''}`;
  let list = set.byTool.get(key);
  if (!list) {
    list = set.rules.filter((r) => keeps(r.tools, meta));
    // Bounded: tool names come from the catalog and the servers' listings, but a model may call unknown names.
    if (set.byTool.size > 4096) set.byTool.clear();
    set.byTool.set(key, list);
  }
  return list;
}

function compileRule(rule: ApprovalRuleConfig, index: number): CompiledRule {
  const names = rule.tool !== undefined ? [rule.tool] : (rule.tools ?? []);
  const key = rule.tool !== undefined ? `approvals.rules[${index}].tool` : `approvals.rules[${index}].tools`;
  const tools = compilePolicy({ allow: names.map((raw, i) => entry(raw, rule.tool !== undefined ? key : `${key}[${i}]`)) });
  const match = Object.entries(rule.match ?? {}).map(([path, expected]) => ({ path: path.split('.'), test: valueMatcher(expected) }));
  return { index, rule, tools, match, key: `r_${hash(stableJson(rule))}` };
}

/**
 * How one expected value is compared: a `/regex/flags` string by the linear engine (text past
 * its budget counts as a match: asking is the safe side), any other string as a case-blind
 * `*`-glob over the value's text, a number, boolean or null by equality.
 */
function valueMatcher(expected: string | number | boolean | null): Matcher {
  if (typeof expected !== 'string') return (value) => value === expected;
  const literal = regexLiteral(expected);
  if (literal?.ok) {
    const compiledRegex = compileLinearRegex(literal.source, literal.flags);
    // The schema refused a pattern the engine cannot run; one that slipped past matches everything.
    if (!compiledRegex.ok) return () => true;
    const regex: LinearRegex = compiledRegex.regex;
    return (value) => {
      const text = textOf(value);
      if (text === undefined) return false;
      const hit = regex.test(text);
      return hit === true || hit === 'too-long';
    };
  }
  const pattern = expected.toLowerCase();
  return (value) => {
    const text = textOf(value);
    return text !== undefined && globMatch(pattern, text.toLowerCase());
  };
}

/** The text a glob or regex sees: strings as they are, numbers and booleans spelled, objects as stable JSON. */
function textOf(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value === null) return 'null';
  return stableJson(value);
}

/** The argument at a dotted path (`target.id`, `paths.0`), own properties only. */
function at(params: unknown, path: readonly string[]): unknown {
  let value: unknown = params;
  for (const part of path) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** Plugin and MCP tools the caller has no catalog entry for: their origin as the name says it. */
export function metaFor(tool: string, meta?: ToolMeta): ToolMeta {
  if (meta) return meta;
  const core = coreTool(tool);
  if (core) return core;
  const server = tool.indexOf('__') > 0 ? tool.slice(0, tool.indexOf('__')) : undefined;
  return { id: tool, label: tool, description: '', section: 'plugins', profiles: [], inWardenGroup: false, ownerOnly: false, source: server !== undefined ? { kind: 'mcp', server } : { kind: 'core' } };
}

/** Whether the conversation is one the rule's `where` names. */
function whereMatches(rule: ApprovalRuleConfig, turn: RuleCall['turn'], config: RuleConfig): boolean {
  const where = rule.where;
  if (!where) return true;
  if (where.provider !== undefined && where.provider !== turn.provider) return false;
  if (where.agent !== undefined && where.agent !== turn.agentId) return false;
  if (where.guild !== undefined && where.guild !== turn.guildId && where.guild !== turn.guildName) return false;
  if (where.channel !== undefined) {
    const name = turn.channelName !== undefined ? `#${turn.channelName}` : undefined;
    if (where.channel !== turn.channelId && where.channel.toLowerCase() !== name?.toLowerCase()) return false;
  }
  if (where.senderGroup !== undefined) {
    if (turn.senderId === undefined) return true; // nobody known: the rule asks
    const who = { provider: turn.provider, userId: turn.senderId };
    if (matchPrincipal(where.senderGroup, who, config.accessGroups) !== undefined) return true;
    // Role and user-group memberships are not known at call time: a list that needs them asks (the safe side).
    const needs = needsMemberships(where.senderGroup, config.accessGroups);
    return (needs.roles && turn.provider === 'discord') || (needs.usergroups && turn.provider === 'slack');
  }
  return true;
}

/** The first rule this call falls under, or undefined. */
export function approvalRuleFor(config: RuleConfig, call: RuleCall): RuleHit | undefined {
  const set = compiledSet(config);
  if (!set) return undefined;
  const meta = metaFor(call.tool, call.meta);
  for (const r of rulesFor(set, meta)) {
    if (!whereMatches(r.rule, call.turn, config)) continue;
    if (!r.match.every((m) => m.test(at(call.params, m.path)))) continue;
    return hit(r, call.tool, meta);
  }
  return undefined;
}

function hit(r: CompiledRule, tool: string, meta: ToolMeta): RuleHit {
  return { index: r.index, path: `approvals.rules[${r.index}]`, rule: r.rule, risk: r.rule.risk ?? toolRisk(tool, meta), key: r.key };
}

/** What `--explain` says about a tool in a conversation: the rules that can make its calls ask, first first. */
export interface RuleExplanation {
  path: string;
  /** `always`: every call of the tool here asks; `when`: calls whose arguments match. */
  applies: 'always' | 'when';
  match?: Record<string, unknown> | undefined;
  ask: 'always' | 'on-miss';
  quorum: number;
  approvers?: string[] | undefined;
  risk: string;
}

export function explainApprovalRules(config: RuleConfig, tool: string, turn: RuleCall['turn'], meta?: ToolMeta): RuleExplanation[] {
  const out: RuleExplanation[] = [];
  const m = metaFor(tool, meta);
  for (const r of compiled(config)) {
    if (!keeps(r.tools, m) || !whereMatches(r.rule, turn, config)) continue;
    const applies = r.match.length === 0 ? 'always' : 'when';
    out.push({
      path: `approvals.rules[${r.index}]`,
      applies,
      ...(applies === 'when' ? { match: r.rule.match } : {}),
      ask: r.rule.ask,
      quorum: r.rule.quorum,
      ...(r.rule.approvers ? { approvers: r.rule.approvers } : {}),
      risk: r.rule.risk ?? toolRisk(tool, m),
    });
    // Past a rule that catches every call, no later rule is ever reached.
    if (applies === 'always') break;
  }
  return out;
}

/** The explanation in one line each, as `/tools --explain` prints them. */
export function explanationLines(list: readonly RuleExplanation[]): string[] {
  return list.map((e) => {
    const when = e.applies === 'always' ? 'every call' : `calls with ${Object.entries(e.match ?? {}).map(([k, v]) => `${k} = ${JSON.stringify(v)}`).join(', ')}`;
    const who = e.approvers ? `, approvers ${e.approvers.join(', ')}` : '';
    const quorum = e.quorum > 1 ? `, ${e.quorum} approvers needed` : '';
    return `• approval: ${e.path} asks (${e.ask}) for ${when}${quorum}${who} — risk: ${e.risk}`;
  });
}

/** A short digest of the rule's text: a grant's rule key is not a secret, but two rules must never share one. */
function hash(text: string): string {
  // Taken at the first hash, not imported: loading node:crypto is some 9 ms of a command's
  // start-up, and `warden tools` imports this module for --explain alone.
  const { createHash } = process.getBuiltinModule('node:crypto');
  return createHash('sha256').update(text).digest('hex').slice(0, 24);
}
