import { realpathSync } from 'node:fs';
import path from 'node:path';
import type { WardenConfig } from '../config/index.js';
import { envReferenceNames } from '../config/env-ref.js';
import { defaultSandboxId } from '../config/sandbox-id.js';
import { approversFor } from '../approvals/approvers.js';
import { agentWorkspace, execVerdictFor } from '../exec/check.js';
import { effectiveExecConfig, execHostOf } from '../exec/effective-config.js';
import type { ExecVerdict } from '../exec/decide.js';
import { DEFAULT_SAFE_BINS } from '../exec/safe-bins.js';
import type { ExecHost } from '../exec/sandbox.js';
import type { ExecNetworkConfig } from '../config/schema/exec.js';
import { checkUrlWithPolicy, urlPolicyFor, type UrlSurface } from '../net/index.js';
import { defaultAgentId, knownAgentIds } from '../policy/steps.js';
import { resolveToolSurface } from '../policy/surface.js';
import { resolveSkillRoots } from '../skills/roots.js';
import type { ToolMeta } from '../tools/types.js';
import { buildTurnContext, type ContextInput } from '../turn/turn-context.js';
import { budgetLoosening } from '../usage/budgets.js';
import { enabledMessageActions } from '../config/schema/message-actions.js';
import { diffConfig, dotted, startsWith, type ConfigChange } from './config-diff.js';
import { execCorpus, probeResolver, urlCorpus } from './decision-corpus.js';
import { accessLimitRules, accessWidening, actorCorpus } from './access-corpus.js';

/**
 * Whether a config change widens security — the one decision a config patch's approval rests on.
 *
 * Judged by decisions, not key names: the decisions the bot makes are computed under both
 * configs, each by the function the bot itself uses, and compared — the tool surface of every
 * context either config names (resolveToolSurface), the exec verdict of every agent over a
 * command corpus on the host each config runs commands on (execVerdictFor, what `warden exec-check` prints), the
 * URL guard's verdict for web_fetch and the browser over an address corpus (checkUrlWithPolicy,
 * what `warden url-check` prints), each agent's skill roots and whether the agent can write
 * into them (resolveSkillRoots), and who may decide approvals. Any decision that moves toward
 * allow is a widening, named with the decision that moved. Rules beside them catch what a finite
 * corpus cannot (a new allowlist entry, safe bin or hostname is widening even for a binary or
 * name the corpus lacks).
 *
 * Fail closed: a changed key is accepted only when it is judged by those comparisons (JUDGED)
 * or known to change no decision (INERT_KEYS, each with why). Every other key is a widening, as is
 * any key, anywhere, that says where a request goes or which secret it carries.
 * test/security/config-patch-widening-property.test.ts holds this over random patches from the
 * schema: each is classified widening or no decision it recomputes moved toward allow.
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

export interface ClassifyOptions {
  plugins?: readonly ToolMeta[] | undefined;
  /** The config file's folder: relative workspaces, skill and data dirs resolve against it. Default: the working directory. */
  baseDir?: string | undefined;
  env?: NodeJS.ProcessEnv | undefined;
}

/**
 * Keys that change no decision: each says why. A key belongs here only when no comparison
 * below could see it move and no permission follows from it; the property test changes each
 * at random and checks that no decision moved.
 */
export const INERT_KEYS: ReadonlyArray<readonly [path: readonly string[], why: string]> = [
  [['agents', 'defaults', 'maxToolRounds'], 'how many model rounds a turn may take; each call still passes every gate'],
  [['agents', 'list', '*', 'name'], 'a display name; agents are keyed by id everywhere'],
  [['approvals', 'target'], 'where cards are posted; who may decide them is the approvers list (compared)'],
  [['approvals', 'exec', 'timeoutSec'], 'how long a card waits; on expiry askFallback (compared) decides'],
  [['approvals', 'waitSec'], 'how long a call waits inside its turn before it is deferred; the card still decides'],
  [['approvals', 'hook', 'timeoutSec'], 'how long a hook approval waits; on expiry it is denied'],
  [['sessions'], 'how conversations queue and how long shutdown waits'],
  [['cron', 'maxConcurrent'], 'how many jobs run at once'],
  [['cron', 'keepRuns'], 'how much run history is kept'],
  [['browser', 'headless'], 'whether Chromium shows a window; every navigation passes the URL guard (compared)'],
  [['browser', 'idleTimeoutSec'], 'when an idle Chromium is closed'],
  [['browser', 'defaultProfile'], 'which user-data folder a call without a profile uses; the URL guard is the same for all'],
  [['browser', 'profiles'], 'more user-data folders (fresh ones); the URL guard is the same for all'],
  [['channels', 'discord', 'requireMention'], 'whether a message must mention the bot; anyone there could mention it, and the turn has the same sender, context and surface'],
  [['channels', 'discord', 'guilds', '*', 'requireMention'], 'as channels.discord.requireMention'],
  [['channels', 'discord', 'guilds', '*', 'channels', '*', 'requireMention'], 'as channels.discord.requireMention'],
  [['channels', 'slack', 'requireMention'], 'as channels.discord.requireMention'],
  [['channels', 'slack', 'channels', '*', 'requireMention'], 'as channels.discord.requireMention'],
  [['channels', 'discord', 'streaming'], 'whether replies are edited in place'],
  [['channels', 'discord', 'guilds', '*', 'streaming'], 'whether replies are edited in place'],
  [['channels', 'discord', 'guilds', '*', 'channels', '*', 'streaming'], 'whether replies are edited in place'],
  [['channels', 'slack', 'streaming'], 'whether replies are edited in place'],
  [['channels', 'slack', 'channels', '*', 'streaming'], 'whether replies are edited in place'],
  [['channels', 'web', 'streaming'], 'whether replies appear token by token'],
  [['channels', 'discord', 'shards'], 'how many gateway connections carry the same guilds'],
  [['channels', 'discord', 'shardCount'], 'how the same guilds are split over shards'],
  [['tools', 'loopDetection'], 'a brake on identical repeated calls; each call still passes every gate'],
  [['agents', 'list', '*', 'tools', 'loopDetection'], 'as tools.loopDetection'],
  [['tools', 'message', 'crossContext', 'marker'], 'the text that marks a cross-context post'],
  [['agents', 'list', '*', 'tools', 'message', 'crossContext', 'marker'], 'the text that marks a cross-context post'],
  [['tools', 'exec', 'timeoutSec'], 'when a running command is killed'],
  [['tools', 'exec', 'backgroundMs'], 'when a running command becomes a background job; it was allowed already'],
  [['tools', 'exec', 'maxOutputChars'], 'how much output is kept'],
  [['tools', 'exec', 'cleanupMs'], 'how long finished jobs stay listed'],
  [['agents', 'list', '*', 'tools', 'exec', 'timeoutSec'], 'as tools.exec.timeoutSec'],
  [['agents', 'list', '*', 'tools', 'exec', 'backgroundMs'], 'as tools.exec.backgroundMs'],
  [['agents', 'list', '*', 'tools', 'exec', 'maxOutputChars'], 'as tools.exec.maxOutputChars'],
  [['tools', 'web', 'fetch', 'maxChars'], 'how much of a page is returned'],
  [['tools', 'web', 'fetch', 'maxCharsCap'], 'how much of a page a call may ask for'],
  [['tools', 'web', 'fetch', 'maxResponseBytes'], 'where a body is cut'],
  [['tools', 'web', 'fetch', 'timeoutSec'], 'how long a fetch may take'],
  [['tools', 'web', 'fetch', 'maxRedirects'], 'how many hops; each hop passes the URL guard (compared) again'],
  [['tools', 'web', 'fetch', 'cacheTtlMinutes'], 'how long a fetched page is kept in memory'],
  [['tools', 'web', 'fetch', 'userAgent'], 'the User-Agent sent; the URL guard decides where it goes'],
  [['tools', 'web', 'fetch', 'readability'], 'how HTML is turned into text'],
  [['tools', 'web', 'fetch', 'firecrawl', 'onlyMainContent'], 'what Firecrawl extracts'],
  [['tools', 'web', 'fetch', 'firecrawl', 'maxAgeMs'], 'how old a Firecrawl cache answer may be'],
  [['tools', 'web', 'search', 'maxResults'], 'how many results a search returns'],
  [['tools', 'web', 'search', 'timeoutSec'], 'how long a search may take'],
  [['tools', 'web', 'search', 'cacheTtlMinutes'], 'how long a search answer is kept in memory'],
  [['models', 'contextWindow'], 'how many tokens a model reads'],
  [['models', 'maxOutputTokens'], 'how long a reply may be'],
  [['models', 'timeoutMs'], 'how long a model request may take'],
  [['models', 'retry'], 'how often a model request is retried'],
  [['models', 'providers', '*', 'contextWindow'], 'how many tokens a model reads'],
  [['models', 'providers', '*', 'maxOutputTokens'], 'how long a reply may be'],
  [['models', 'providers', '*', 'unsupportedSchemaKeywords'], 'schema keywords stripped from tool definitions; the tools are the same'],
  [['gateway', 'reload'], 'whether and how fast the file is watched; an edit to it is made on the host'],
  [['gateway', 'http', 'rateLimit'], 'how many calls a token may make per minute'],
  [['gateway', 'nodes', 'pairingTimeoutSec'], 'how long a pairing request stays open; pairing still needs an owner'],
  [['gateway', 'nodes', 'callTimeoutSec'], 'how long a node call may take'],
  [['skills', 'limits'], 'how many of the eligible, trusted skills the prompt lists; no root or skill is added'],
  [['channels', 'discord', 'deniedReply'], 'the text a refused sender is told; who is refused is the access decision (compared)'],
  [['channels', 'slack', 'deniedReply'], 'as channels.discord.deniedReply'],
  [['rateLimit', 'reply'], 'the text an over-the-limit sender is told; the limits are compared'],
];

/** Access keys of a chat scope, judged by the access decisions (accessRules) over the principal corpus. */
const SCOPE_ACCESS_KEYS = ['users', 'roles', 'enabled', 'allowBots', 'botLoopProtection'];
const PLATFORM_ACCESS_KEYS = ['dmPolicy', 'allowFrom', 'groupPolicy', 'allowBots', 'botLoopProtection'];

/** The exec keys an agent may override, judged by the verdicts and the exec rules. */
const EXEC_POLICY_KEYS = ['security', 'ask', 'askFallback', 'allowlist', 'defaultAllowlist', 'safeBins', 'safeBinTrustedDirs', 'safeBinProfiles', 'strictInlineEval', 'allowAlwaysTtlSec'];

/** Keys whose effect the comparisons below judge (a change under them widens only when a decision moves). */
const JUDGED: readonly string[][] = [
  // The tool surface over every context (surfaces).
  ['tools', 'profile'], ['tools', 'allow'], ['tools', 'alsoAllow'], ['tools', 'deny'], ['tools', 'byProvider'], ['tools', 'toolsBySender'],
  ['tools', 'sandbox'], ['tools', 'subagents'], ['tools', 'exec', 'applyPatch'],
  ['agents', 'list', '*', 'tools', 'profile'], ['agents', 'list', '*', 'tools', 'allow'], ['agents', 'list', '*', 'tools', 'alsoAllow'],
  ['agents', 'list', '*', 'tools', 'deny'], ['agents', 'list', '*', 'tools', 'byProvider'], ['agents', 'list', '*', 'tools', 'toolsBySender'],
  ['agents', 'list', '*', 'model'], ['models', 'default'],
  ['channels', 'discord', 'guilds', '*', 'tools'], ['channels', 'discord', 'guilds', '*', 'toolsBySender'],
  ['channels', 'discord', 'guilds', '*', 'channels', '*', 'tools'], ['channels', 'discord', 'guilds', '*', 'channels', '*', 'toolsBySender'],
  ['channels', 'slack', 'channels', '*', 'tools'], ['channels', 'slack', 'channels', '*', 'toolsBySender'],
  ['channels', 'web', 'tools'], ['channels', 'web', 'toolsBySender'],
  // Exec verdicts over the command corpus, and the exec rules (execPolicies, execVerdicts).
  ...['host', 'sandbox'].map((k) => ['tools', 'exec', k]),
  ...EXEC_POLICY_KEYS.flatMap((k) => [['tools', 'exec', k], ['agents', 'list', '*', 'tools', 'exec', k]]),
  ['tools', 'elevated'], ['agents', 'list', '*', 'tools', 'elevated'],
  // URL-guard verdicts over the address corpus (urlVerdicts, ssrfRules); listener ports move what is Warden's own.
  ['tools', 'web', 'fetch', 'ssrfPolicy'], ['browser', 'ssrfPolicy'], ['browser', 'enabled'],
  // A web tool switched back on (webToolsOn); absent and `true` are the same.
  ['tools', 'web', 'fetch', 'enabled'], ['tools', 'web', 'search', 'enabled'],
  ['channels', 'web', 'port'], ['gateway', 'http', 'port'], ['gateway', 'nodes', 'port'],
  // Listeners (listeners).
  ['channels', 'web', 'host'], ['channels', 'web', 'token'],
  ['gateway', 'http', 'enabled'], ['gateway', 'http', 'host'], ['gateway', 'http', 'token'], ['gateway', 'http', 'tokens'], ['gateway', 'http', 'tools'],
  ['gateway', 'nodes', 'enabled'], ['gateway', 'nodes', 'host'], ['gateway', 'nodes', 'tls'],
  // Who may decide (ownersAndApprovers).
  ['owners'], ['approvals', 'approvers'],
  // Which calls ask a person, and who decides them (approvalRules).
  ['approvals', 'rules'], ['approvals', 'timedGrantSec'],
  ['channels', 'discord', 'guilds', '*', 'approvals'], ['channels', 'discord', 'guilds', '*', 'channels', '*', 'approvals'], ['channels', 'slack', 'channels', '*', 'approvals'],
  // Skill roots (skillRoots) and which skills load (skillRules).
  ['skills', 'extraDirs'], ['skills', 'allowBundled'], ['skills', 'entries', '*', 'enabled'],
  // Plugins: only their narrowing forms (pluginRules).
  ['plugins', 'enabled'], ['plugins', 'allow'], ['plugins', 'deny'], ['plugins', 'entries', '*', 'enabled'],
  // Subagent depth (depthRule).
  ['agents', 'defaults', 'subagents', 'maxSpawnDepth'],
  // Who may make Warden act (accessRules): the access decision over the principal corpus, and the limits.
  ['accessGroups'], ['rateLimit'],
  ...(['discord', 'slack'] as const).flatMap((p) => PLATFORM_ACCESS_KEYS.map((k) => ['channels', p, k])),
  ...SCOPE_ACCESS_KEYS.flatMap((k) => [
    ['channels', 'discord', 'guilds', '*', k],
    ['channels', 'discord', 'guilds', '*', 'channels', '*', k],
    ['channels', 'slack', 'channels', '*', k],
  ]),
  // Spending caps (budgetRules).
  ['budgets'],
  // The message tool's actions (messageActionRules).
  ['tools', 'message', 'actions'], ['agents', 'list', '*', 'tools', 'message', 'actions'], ['channels', 'discord', 'actions'], ['channels', 'slack', 'actions'],
];

/**
 * Keys that say where a request goes or which secret it carries (`models.providers.x.baseUrl`,
 * `apiKeyEnv`, fetch `headers`), anywhere in the config, in a key path or inside a changed list:
 * pointing a provider at another host, or its key at another variable (`apiKeyEnv:
 * DISCORD_TOKEN`), sends conversations or secrets out.
 */
const EGRESS_KEY = /^(baseUrl|apiUrl|apiBaseUrl|apiKeyEnv|url|endpoint|headers)$/i;

function mentionsEgress(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(mentionsEgress);
  if (value && typeof value === 'object') return Object.entries(value).some(([k, v]) => EGRESS_KEY.test(k) || mentionsEgress(v));
  return false;
}

/**
 * `agents.list` element by element when its ids stay in place (a change to one agent's tools is
 * judged as that key), else the whole list: an agent added, removed or reordered is a new actor
 * or a new default, which no comparison covers.
 */
function changesOf(before: WardenConfig, after: WardenConfig): ConfigChange[] {
  const ids = (c: WardenConfig) => JSON.stringify(c.agents.list.map((a) => a.id));
  const sameAgents = ids(before) === ids(after);
  return diffConfig(before, after).flatMap((change) => {
    if (!sameAgents || change.path.join('.') !== 'agents.list') return [change];
    return before.agents.list.flatMap((agent, i) => diffConfig(agent, after.agents.list[i], ['agents', 'list', String(i)]));
  });
}

/**
 * The `${NAME}` references a patch writes, each a widening. At load a reference becomes the
 * variable's value, so a patch could copy a credential out of Warden's environment
 * (`${DISCORD_TOKEN}`) into a key whose value reaches the model, a chat or another host — an
 * agent's name, a marker text, the fetch User-Agent — while the comparisons above see only the
 * substituted configs and cannot tell where a value came from. Only keys are walked as written;
 * references in object keys are not substituted.
 */
export function environmentReferences(patch: unknown, at: readonly string[] = []): Widening[] {
  if (typeof patch === 'string') {
    const names = [...new Set(envReferenceNames(patch))];
    return names.length === 0 ? [] : [{ path: dotted(at), why: `reads environment variable${names.length > 1 ? 's' : ''} ${names.join(', ')} into the config, where its value could reach the model, a chat or another host` }];
  }
  if (Array.isArray(patch)) return patch.flatMap((v, i) => environmentReferences(v, [...at, String(i)]));
  if (patch && typeof patch === 'object') return Object.entries(patch).flatMap(([k, v]) => environmentReferences(v, [...at, k]));
  return [];
}


export async function classifyConfigChange(before: WardenConfig, after: WardenConfig, options: ClassifyOptions = {}): Promise<ChangeClassification> {
  const changes = changesOf(before, after);
  const widening: Widening[] = [];
  const add = (path: string, why: string) => {
    if (!widening.some((w) => w.path === path && w.why === why)) widening.push({ path, why });
  };
  if (changes.length === 0) return { changes, widening };
  for (const change of changes) {
    // A rule's `match.url` names what a call's argument looks like; it sends nothing anywhere (approvalRules judges rules).
    const isRule = startsWith(change.path, ['approvals', 'rules']);
    if (!isRule && (change.path.some((p) => EGRESS_KEY.test(p)) || mentionsEgress(change.before) || mentionsEgress(change.after))) {
      add(dotted(change.path), 'changes where requests go or which secret they carry');
      continue;
    }
    const under = (list: readonly (readonly string[])[]) => list.some((p) => startsWith(change.path, p));
    if (under(INERT_KEYS.map(([p]) => p)) || under(JUDGED)) continue;
    add(dotted(change.path), 'changed, and no comparison of decisions covers this key');
  }
  const ctx: Ctx = { before, after, changes, add, baseDir: options.baseDir ?? process.cwd(), env: options.env ?? process.env };
  ownersAndApprovers(ctx);
  approvalRules(before, after, add);
  execPolicies(before, after, add);
  execVerdicts(ctx);
  await urlVerdicts(ctx);
  ssrfRules(before, after, add);
  webToolsOn(ctx);
  listeners(before, after, add);
  skillRoots(ctx);
  skillRules(ctx);
  pluginRules(ctx);
  modelProviders(ctx);
  depthRule(ctx);
  accessRules(ctx);
  budgetRules(ctx);
  messageActionRules(ctx);
  surfaces(before, after, options.plugins ?? [], add);
  return { changes, widening };
}

interface Ctx {
  before: WardenConfig;
  after: WardenConfig;
  changes: ConfigChange[];
  add: Add;
  baseDir: string;
  env: NodeJS.ProcessEnv;
}

/** The changed keys under any of `prefixes`, for naming what a moved decision came from. */
function keysUnder(changes: readonly ConfigChange[], prefixes: readonly string[][], fallback: string): string {
  const keys = [...new Set(changes.filter((c) => prefixes.some((p) => startsWith(c.path, p))).map((c) => dotted(c.path)))];
  return keys.length > 0 ? keys.join(', ') : fallback;
}

/** At most this many moved decisions are listed per comparison; the rest are counted. */
const MAX_LISTED = 8;

function listCapped(add: Add, path: string, items: string[]): void {
  for (const item of items.slice(0, MAX_LISTED)) add(path, item);
  if (items.length > MAX_LISTED) add(path, `… and ${items.length - MAX_LISTED} more decisions moved toward allow`);
}

type Add = (path: string, why: string) => void;

const PROVIDERS = ['discord', 'slack', 'web'] as const;

/** Owners and approvers of each provider, and the approvers a guild or channel scope names. */
function ownersAndApprovers({ before, after, add }: Ctx): void {
  for (const p of PROVIDERS) {
    const newOwners = (after.owners[p] ?? []).filter((id) => !(before.owners[p] ?? []).includes(id));
    if (newOwners.length > 0) add(`owners.${p}`, `adds owner ${newOwners.join(', ')}`);
    const was = approversFor({ owners: before.owners, approvers: before.approvals.approvers }, p);
    const now = approversFor({ owners: after.owners, approvers: after.approvals.approvers }, p);
    const newApprovers = now.filter((id) => !was.includes(id));
    if (newApprovers.length > 0) add(`approvals.approvers.${p}`, `adds approver ${newApprovers.join(', ')}`);
  }
  // A scope's approvers replace the provider's there: each id must have been able to decide there before.
  const scopes = (c: WardenConfig) => {
    const out = new Map<string, { provider: 'discord' | 'slack'; ids: string[] | undefined }>();
    for (const [g, guild] of Object.entries(c.channels.discord?.guilds ?? {})) {
      out.set(`channels.discord.guilds[${JSON.stringify(g)}].approvals.approvers`, { provider: 'discord', ids: guild.approvals?.approvers });
      for (const [ch, channel] of Object.entries(guild.channels)) out.set(`channels.discord.guilds[${JSON.stringify(g)}].channels[${JSON.stringify(ch)}].approvals.approvers`, { provider: 'discord', ids: channel.approvals?.approvers ?? guild.approvals?.approvers });
    }
    for (const [ch, channel] of Object.entries(c.channels.slack?.channels ?? {})) out.set(`channels.slack.channels[${JSON.stringify(ch)}].approvals.approvers`, { provider: 'slack', ids: channel.approvals?.approvers });
    return out;
  };
  const was = scopes(before);
  for (const [key, scope] of scopes(after)) {
    if (!scope.ids) continue;
    const prior = was.get(key)?.ids ?? approversFor({ owners: before.owners, approvers: before.approvals.approvers }, scope.provider);
    const added = scope.ids.filter((id) => !prior.includes(id));
    if (added.length > 0) add(key, `adds approver ${added.join(', ')} for calls made there`);
  }
}

/**
 * `approvals.rules`: the first matching rule decides, so a rule's effect depends on every rule
 * before it. Not widening: rules appended after the old list (a call the old rules caught still
 * meets the same rule first; one they missed may now ask), and an old rule changed in place only
 * toward asking more — a higher quorum, `always` for `on-miss`, approvers narrowed to some of
 * the old ones — or in what changes no one's permission (expiry, which denies; escalation; the
 * risk line). Anything else — a rule removed,
 * reordered, inserted before an old one, or its tools, arguments or conversation changed — may
 * let calls through that asked before, and is widening. A longer timed grant is widening too.
 */
function approvalRules(before: WardenConfig, after: WardenConfig, add: Add): void {
  const was = before.approvals.rules ?? [];
  const now = after.approvals.rules ?? [];
  if (after.approvals.timedGrantSec > before.approvals.timedGrantSec) {
    add('approvals.timedGrantSec', `an "Allow for …" grant lasts longer (${before.approvals.timedGrantSec} s → ${after.approvals.timedGrantSec} s)`);
  }
  if (now.length < was.length) {
    add('approvals.rules', `removes ${was.length - now.length} rule${was.length - now.length > 1 ? 's' : ''}: calls they asked for may run without asking`);
    return;
  }
  was.forEach((b, i) => {
    const a = now[i]!;
    const why = ruleLoosening(b, a);
    if (why !== undefined) add(`approvals.rules[${i}]`, why);
  });
}

type Rule = NonNullable<WardenConfig['approvals']['rules']>[number];

/** Why rule `a` (in the place of `b`) may ask less than `b`, or undefined when it asks at least as much. */
function ruleLoosening(b: Rule, a: Rule): string | undefined {
  const same = (x: unknown, y: unknown) => JSON.stringify(x ?? null) === JSON.stringify(y ?? null);
  if (!same(b.tool, a.tool) || !same(b.tools, a.tools)) return 'changes which tools the rule covers';
  if (!same(b.match, a.match)) return 'changes which arguments the rule covers';
  if (!same(b.where, a.where)) return 'changes which conversations the rule covers';
  if (a.quorum < b.quorum) return `needs fewer approvers (${b.quorum} → ${a.quorum})`;
  if (b.ask === 'always' && a.ask !== 'always') return 'lets a grant answer for the rule (ask: always → on-miss)';
  if (b.approvers === undefined ? a.approvers !== undefined : a.approvers === undefined || a.approvers.some((e) => !b.approvers!.includes(e))) {
    return 'changes who may decide the rule’s calls';
  }
  return undefined;
}

const SECURITY_RANK = { deny: 0, allowlist: 1, full: 2 } as const;
/** How far a sandboxed command reaches: nothing, the allowlist, every public name. */
const NETWORK_RANK = { none: 0, allowlist: 1, open: 2 } as const;

/**
 * `tools.exec.sandbox.network`: a wider mode, a new allow entry, a new private range, or asking
 * where a miss was refused (a human may then let it through) widens. `askTimeoutSec` does not:
 * an unanswered card refuses the connection.
 */
function sandboxNetwork(b: ExecNetworkConfig, a: ExecNetworkConfig, add: Add): void {
  const at = 'tools.exec.sandbox.network';
  if (NETWORK_RANK[a.mode] > NETWORK_RANK[b.mode]) add(`${at}.mode`, `sandboxed commands reach ${a.mode === 'open' ? 'every public host' : 'the hosts on the allowlist'} (was ${b.mode})`);
  if (a.mode === 'none') return;
  const had = new Set(b.allow.map((e) => e.trim().toLowerCase()));
  const added = a.allow.filter((e) => !had.has(e.trim().toLowerCase()));
  if (added.length > 0) add(`${at}.allow`, `sandboxed commands may connect to ${added.join(', ')}`);
  const cidrs = new Set(b.allowCidrs.map((c) => c.trim().toLowerCase()));
  const newCidrs = a.allowCidrs.filter((c) => !cidrs.has(c.trim().toLowerCase()));
  if (newCidrs.length > 0) add(`${at}.allowCidrs`, `sandboxed commands may reach the private ranges ${newCidrs.join(', ')}`);
  if (b.ask === 'off' && a.ask === 'on-miss' && a.mode === 'allowlist') add(`${at}.ask`, 'a connection to a name off the allowlist asks an approver instead of being refused');
}
/** How much `ask` holds back: always asks every command; off refuses misses; on-miss lets a human allow them. */
const ASK_RESTRAINT = { always: 2, off: 1, 'on-miss': 0 } as const;

/** Rules on the exec blocks themselves: what a finite command corpus cannot show (an entry for a binary it lacks). */
function execPolicies(before: WardenConfig, after: WardenConfig, add: Add): void {
  if (execHostOf(before) === 'sandbox' && execHostOf(after) !== 'sandbox') add('tools.exec.host', 'exec leaves the sandbox for the gateway host');
  // Absent is the default identity (65533 or WARDEN_SANDBOX_ID): a first explicit other uid is a change of who the sandbox is on the host.
  const b0 = effectiveExecConfig(before).sandbox;
  const a0 = effectiveExecConfig(after).sandbox;
  const [bu, bg, au, ag] = [b0.uid, b0.gid, a0.uid, a0.gid].map((id) => id ?? defaultSandboxId());
  if (au !== bu || ag !== bg) add('tools.exec.sandbox', `the sandbox runs as host uid ${au}:${ag} instead of ${bu}:${bg}`);
  if (a0.allowSharedUid && !b0.allowSharedUid) add('tools.exec.sandbox.allowSharedUid', 'sandboxed commands start while another host process runs as the sandbox uid and could control them');
  sandboxNetwork(b0.network, a0.network, add);
  for (const agentId of knownAgentIds(after)) {
    const b = effectiveExecConfig(before, agentId);
    const a = effectiveExecConfig(after, agentId);
    const where = after.agents.list.find((x) => x.id === agentId)?.tools?.exec ? `agents.list[${after.agents.list.findIndex((x) => x.id === agentId)}].tools.exec` : 'tools.exec';
    if (SECURITY_RANK[a.security] > SECURITY_RANK[b.security]) add(`${where}.security`, `security ${b.security} → ${a.security} (agent ${agentId})`);
    if (ASK_RESTRAINT[a.ask] < ASK_RESTRAINT[b.ask]) add(`${where}.ask`, `ask ${b.ask} → ${a.ask} (agent ${agentId})`);
    if (SECURITY_RANK[a.askFallback] > SECURITY_RANK[b.askFallback]) add(`${where}.askFallback`, `askFallback ${b.askFallback} → ${a.askFallback} (agent ${agentId})`);
    if (!b.defaultAllowlist && a.defaultAllowlist) add(`${where}.defaultAllowlist`, `the default read-only commands run without asking (agent ${agentId})`);
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

const DECISION_RANK = { deny: 0, ask: 1, allow: 2 } as const;
/** The config with exec forced onto `host`: a config without `tools.exec.host` runs wherever bubblewrap is, or is not. */
function onHost(config: WardenConfig, host: ExecHost): WardenConfig {
  const exec = config.tools.exec ?? effectiveExecConfig(config);
  return { ...config, tools: { ...config.tools, exec: { ...exec, host } } };
}

/**
 * The exec verdict of every command of the corpus, for every agent, on the host each config runs
 * commands on, through execVerdictFor — the verdict `warden exec-check` and the exec tool give
 * once exec is on the turn's surface (whether it is, is the surface comparison's). A
 * verdict that moves toward allow, an allowed command that now runs differently (its enforced
 * rewrite changed), or an ask that now offers allow-always, is a widening. The verdict reads the
 * config only through the agent's effective exec block, its workspace and the host: where those
 * are equal the verdicts are equal, and are not computed twice.
 */
function execVerdicts({ before, after, changes, add, baseDir }: Ctx): void {
  const hb = execHostOf(before);
  const ha = execHostOf(after);
  const b = onHost(before, hb);
  const a = onHost(after, ha);
  const inputs = (c: WardenConfig, id: string, host: ExecHost) => JSON.stringify([effectiveExecConfig(c, id), agentWorkspace(c, id, baseDir), host]);
  const turn = (c: WardenConfig, id: string) => buildTurnContext(c, { agentId: id, conversation: { provider: 'web', chat: 'dm', channelId: 'exec-corpus' }, sender: {}, mayBeOwner: false });
  let corpus: string[] | undefined;
  const beforeAgents = new Set(knownAgentIds(before));
  for (const agentId of knownAgentIds(after)) {
    const agentBefore = beforeAgents.has(agentId) ? agentId : defaultAgentId(before);
    if (inputs(before, agentBefore, hb) === inputs(after, agentId, ha)) continue;
    corpus ??= execCorpus([before, after]);
    const index = after.agents.list.findIndex((x) => x.id === agentId);
    const where = keysUnder(changes, [['tools', 'exec'], ['agents', 'list', String(index)], ['agents', 'defaults', 'workspace']], 'tools.exec');
    const tb = turn(b, agentBefore);
    const ta = turn(a, agentId);
    const moved: string[] = [];
    for (const command of corpus) {
      const change = verdictWidens(execVerdictFor(b, command, tb, { baseDir }), execVerdictFor(a, command, ta, { baseDir }));
      if (change) moved.push(`exec: \`${command}\` ${change} (agent ${agentId}${ha === hb ? '' : `, ${hb} → ${ha} host`})`);
    }
    listCapped(add, where, moved);
  }
}

/** How a verdict moved toward allow, or undefined when it did not. */
export function verdictWidens(before: ExecVerdict, after: ExecVerdict): string | undefined {
  if (DECISION_RANK[after.decision] > DECISION_RANK[before.decision]) return `${before.decision} → ${after.decision}`;
  if (after.decision === 'allow' && before.decision === 'allow' && after.rewritten !== before.rewritten) return `allowed, now runs as ${after.rewritten ?? '(as given)'} instead of ${before.rewritten ?? '(as given)'}`;
  if (after.decision === 'ask' && before.decision === 'ask' && after.allowAlways.offered && !before.allowAlways.offered) return 'ask, now offering allow-always';
  return undefined;
}

const URL_SURFACES: readonly UrlSurface[] = ['web_fetch', 'browser'];

/**
 * The URL guard's verdict for web_fetch and the browser over the address corpus, each name
 * answered by one fixed address at a time (no DNS: the verdict is a function of the configs),
 * through checkUrlWithPolicy — what `warden url-check`, web_fetch and the browser use.
 */
async function urlVerdicts({ before, after, changes, add }: Ctx): Promise<void> {
  let corpus: ReturnType<typeof urlCorpus> | undefined;
  for (const surface of URL_SURFACES) {
    const pb = urlPolicyFor(before, surface);
    const pa = urlPolicyFor(after, surface);
    // The verdict reads the config only through this policy: equal policies, equal verdicts.
    if (JSON.stringify(pb) === JSON.stringify(pa)) continue;
    const prefix = surface === 'web_fetch' ? ['tools', 'web', 'fetch'] : ['browser'];
    const where = keysUnder(changes, [prefix, ['channels'], ['gateway'], ['ops']], surface === 'web_fetch' ? 'tools.web.fetch.ssrfPolicy' : 'browser.ssrfPolicy');
    corpus ??= urlCorpus([before, after]);
    const verdicts = await Promise.all(
      corpus.map(async (probe) => {
        const resolve = probeResolver(probe);
        const [vb, va] = await Promise.all([checkUrlWithPolicy(probe.url, surface, pb, resolve), checkUrlWithPolicy(probe.url, surface, pa, resolve)]);
        return !vb.allowed && va.allowed ? `${surface}: ${probe.url}${probe.answer ? ` (resolving to ${probe.answer.address})` : ''} blocked → allowed` : undefined;
      }),
    );
    listCapped(add, where, verdicts.filter((v): v is string => v !== undefined));
  }
}

/** web_fetch and web_search are on unless `enabled: false`: only switching one back on counts. */
function webToolsOn({ before, after, add }: Ctx): void {
  for (const tool of ['fetch', 'search'] as const) {
    if (before.tools.web?.[tool]?.enabled === false && after.tools.web?.[tool]?.enabled !== false) add(`tools.web.${tool}.enabled`, `web_${tool} is switched back on`);
  }
}

/** What the address corpus cannot show: a name the corpus lacks, allowed or unblocked. */
function ssrfRules(before: WardenConfig, after: WardenConfig, add: Add): void {
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
  const fb = before.tools.web?.fetch?.ssrfPolicy ?? {};
  const fa = after.tools.web?.fetch?.ssrfPolicy ?? {};
  for (const key of ['allowRfc2544BenchmarkRange', 'allowIpv6UniqueLocalRange'] as const) if (!fb[key] && fa[key]) add(`tools.web.fetch.ssrfPolicy.${key}`, 'web_fetch: a blocked address range is opened');
  const unblocked = (fb.blockedHostnames ?? []).filter((h) => !(fa.blockedHostnames ?? []).includes(h));
  if (unblocked.length > 0) add('tools.web.fetch.ssrfPolicy.blockedHostnames', `web_fetch may reach ${unblocked.join(', ')} again`);
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

/** The real path of `dir`, or of its deepest existing ancestor with the rest appended: symlinks resolved as far as they exist. */
function realDir(dir: string): string {
  const rest: string[] = [];
  let at = path.resolve(dir);
  for (;;) {
    try {
      return path.join(realpathSync(at), ...rest.reverse());
    } catch {
      const parent = path.dirname(at);
      if (parent === at) return path.resolve(dir);
      rest.push(path.basename(at));
      at = parent;
    }
  }
}

const within = (child: string, parent: string) => child === parent || child.startsWith(parent.endsWith(path.sep) ? parent : parent + path.sep);

/**
 * Each agent's skill roots (resolveSkillRoots, as the skill loader reads them), symlinks resolved:
 * a root the agent did not have before is a widening — skill text is trusted and each skill is a
 * /command — and so is a root the agent can write: one inside or around any agent's workspace.
 */
function skillRoots({ before, after, changes, add, baseDir, env }: Ctx): void {
  const where = keysUnder(changes, [['skills'], ['agents'], ['dataDir']], 'skills');
  const workspaces = (c: WardenConfig) => knownAgentIds(c).map((id) => realDir(path.resolve(baseDir, c.agents.list.find((a) => a.id === id)?.workspace ?? c.agents.defaults.workspace)));
  const agentWritable = [...new Set([...workspaces(before), ...workspaces(after)])];
  const beforeAgents = new Set(knownAgentIds(before));
  for (const agentId of knownAgentIds(after)) {
    const rb = resolveSkillRoots(before, beforeAgents.has(agentId) ? agentId : defaultAgentId(before), { baseDir, env });
    const ra = resolveSkillRoots(after, agentId, { baseDir, env });
    if (!ra.ok) continue;
    const had = new Set(rb.ok ? rb.value.roots.map((r) => realDir(r.dir)) : []);
    const workspace = realDir(ra.value.workspace);
    for (const root of ra.value.roots) {
      const dir = realDir(root.dir);
      if (had.has(dir)) continue;
      const writable = root.source === 'workspace' ? workspace : agentWritable.find((w) => within(dir, w) || within(w, dir));
      add(where, `skills: new ${root.source} root ${dir} (agent ${agentId})${writable ? `, which the agent can write (workspace ${writable})` : ''}: its SKILL.md files become trusted instructions and /commands`);
    }
  }
}

/** Which skills may load: more bundled skills allowed, or a skill switched back on. */
function skillRules({ before, after, add }: Ctx): void {
  const bb = before.skills.allowBundled;
  const ab = after.skills.allowBundled;
  if (bb !== undefined && (ab === undefined || ab.some((s) => !bb.includes(s)))) add('skills.allowBundled', `more bundled skills may load${ab ? `: ${ab.filter((s) => !bb.includes(s)).join(', ')}` : ' (all of them)'}`);
  for (const [name, entry] of Object.entries(before.skills.entries)) {
    if (entry.enabled === false && after.skills.entries[name]?.enabled !== false) add(`skills.entries.${name}.enabled`, `skill ${name} is switched back on`);
  }
}

/** Plugins run code in Warden's process: only changes that load fewer of them pass. */
function pluginRules({ before, after, add }: Ctx): void {
  const b = before.plugins;
  const a = after.plugins;
  if (!b.enabled && a.enabled) add('plugins.enabled', 'plugins load again');
  if (b.allow !== undefined && (a.allow === undefined || a.allow.some((id) => !b.allow!.includes(id)))) add('plugins.allow', `more plugins may load${a.allow ? `: ${a.allow.filter((id) => !b.allow!.includes(id)).join(', ')}` : ' (every discovered one)'}`);
  const undenied = b.deny.filter((id) => !a.deny.includes(id));
  if (undenied.length > 0) add('plugins.deny', `${undenied.join(', ')} may load again`);
  for (const [id, entry] of Object.entries(b.entries)) {
    if (entry.enabled === false && a.entries[id]?.enabled !== false) add(`plugins.entries.${id}.enabled`, `plugin ${id} is switched back on`);
  }
}

/** Conversations sent to another model provider leave for another company's servers. */
function modelProviders({ before, after, add }: Ctx): void {
  const provider = (model: string | undefined) => model?.split('/')[0];
  if (provider(after.models.default) !== provider(before.models.default)) add('models.default', `conversations go to provider ${provider(after.models.default) ?? '(none)'} instead of ${provider(before.models.default) ?? '(none)'}`);
  after.agents.list.forEach((agent, i) => {
    const was = before.agents.list.find((x) => x.id === agent.id)?.model;
    if (agent.model !== undefined && provider(agent.model) !== provider(was ?? before.models.default)) add(`agents.list[${i}].model`, `agent ${agent.id}'s conversations go to provider ${provider(agent.model)}`);
  });
}

/**
 * Who may make Warden act: every access decision (`decideAccess`, what the gate, `/status` and
 * `warden access check` use) over the principal corpus that moved from refused to let in, and
 * the limits that are counts (rate limits raised or removed, the bot loop breaker loosened).
 */
function accessRules({ before, after, changes, add }: Ctx): void {
  const prefixes = [['accessGroups'], ['owners'], ['channels', 'discord'], ['channels', 'slack']];
  const moved = accessWidening(before, after);
  if (moved.length > 0) listCapped(add, keysUnder(changes, prefixes, 'channels'), moved);
  for (const rule of accessLimitRules(before, after)) add(rule.path, rule.why);
}

/** A budget removed, raised, narrowed or turned from refuse to ask lets calls run that were refused (prices are judged as models.providers keys). */
function budgetRules({ before, after, add }: Ctx): void {
  for (const why of budgetLoosening(before.budgets, after.budgets)) add('budgets', why);
}

/**
 * The message tool's actions: for each agent either config names and each platform, every
 * action the new config enables that the old one did not — by the global or the agent's own
 * `tools.message.actions.allow` (unset is `send` only, `*` is every action) or a platform action
 * group (`channels.<platform>.actions.*`) turned back on — is widening: reacting, pinning,
 * deleting and above all reading other conversations and downloading their files are new powers
 * of the model. The comparison is `enabledMessageActions`, the function the gate decides by.
 * Removing actions is not widening.
 */
function messageActionRules({ before, after, add }: Ctx): void {
  const agents = [...new Set([...knownAgentIds(before), ...knownAgentIds(after)])];
  const found = new Map<string, { actions: Set<string>; where: Set<string> }>();
  for (const agentId of agents) {
    for (const provider of ['discord', 'slack', 'web']) {
      const was = enabledMessageActions(before, agentId, provider);
      const added = enabledMessageActions(after, agentId, provider).filter((a) => !was.includes(a));
      if (added.length === 0) continue;
      const index = after.agents.list.findIndex((a) => a.id === agentId);
      const own = index >= 0 && JSON.stringify(after.agents.list[index]!.tools?.message?.actions) !== JSON.stringify(before.agents.list.find((a) => a.id === agentId)?.tools?.message?.actions);
      const groups = provider !== 'web' && JSON.stringify(after.channels[provider as 'discord' | 'slack']?.actions) !== JSON.stringify(before.channels[provider as 'discord' | 'slack']?.actions);
      const path = own ? `agents.list[${index}].tools.message.actions.allow` : groups ? `channels.${provider}.actions` : 'tools.message.actions.allow';
      const entry = found.get(path) ?? { actions: new Set<string>(), where: new Set<string>() };
      added.forEach((a) => entry.actions.add(a));
      entry.where.add(`agent ${agentId} on ${provider}`);
      found.set(path, entry);
    }
  }
  for (const [path, { actions, where }] of found) add(path, `the message tool may newly ${[...actions].join(', ')} (${[...where].join('; ')})`);
}

/** The surface comparison enumerates depths 0 and 1; a deeper limit lets subagents spawn where it did not look. */
function depthRule({ before, after, add }: Ctx): void {
  const b = before.agents.defaults.subagents.maxSpawnDepth;
  const a = after.agents.defaults.subagents.maxSpawnDepth;
  if (a > b) add('agents.defaults.subagents.maxSpawnDepth', `subagents may spawn ${a} deep instead of ${b}`);
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
  if (input.sender.roleIds) parts.push(`roles ${input.sender.roleIds.join(',')}`);
  if (input.sender.usergroupIds) parts.push(`user groups ${input.sender.usergroupIds.join(',')}`);
  if (input.model) parts.push(`model ${input.model}`);
  if (input.spawnDepth) parts.push(`subagent depth ${input.spawnDepth}`);
  return parts.join(', ');
}

function contexts(before: WardenConfig, after: WardenConfig): ContextInput[] {
  const configs = [before, after];
  const agents = knownAgentIds(after);
  const models = new Set<string | undefined>([undefined]);
  const senders = new Map<string, Set<string | undefined>>();
  // Members of roles, user groups and access groups the lists of people name (access-corpus.ts).
  const members = actorCorpus(configs);
  const scopes: Array<{ provider: string; guildId?: string; channelId?: string; channelName?: string }> = [];
  for (const p of [...PROVIDERS, 'http']) senders.set(p, new Set([undefined, 'someone-else']));
  const guildIds = new Set<string>(['unlisted-guild']);
  const channelKeys = new Set<string>(['unlisted-channel']);
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
      guildIds.add(guildId);
      for (const [key, channel] of Object.entries(guild.channels)) {
        senderKeys('discord', channel.toolsBySender);
        channelKeys.add(key);
      }
    }
    for (const [key, channel] of Object.entries(c.channels.slack?.channels ?? {})) {
      senderKeys('slack', channel.toolsBySender);
      scopes.push({ provider: 'slack', channelId: key, channelName: key.replace(/^#/, '') });
      scopes.push({ provider: 'slack', channelId: key });
    }
    senderKeys('web', c.channels.web.toolsBySender);
  }
  // Every channel key in every guild: a scope keyed by a channel's name (or under guild `*`) applies wherever that name does.
  for (const guildId of guildIds) {
    scopes.push({ provider: 'discord', guildId });
    for (const key of channelKeys) {
      scopes.push({ provider: 'discord', guildId, channelId: key, channelName: key.replace(/^#/, '') });
      scopes.push({ provider: 'discord', guildId, channelId: key });
    }
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
        const actorsOf = (p: string) => [...[...senders.get(p)!].map((id) => ({ id })), ...(members.get(p) ?? []).filter((a) => a.roleIds || a.usergroupIds || !senders.get(p)!.has(a.id))];
        for (const p of [...PROVIDERS, 'http']) {
          for (const sender of actorsOf(p)) push({ agentId, model, spawnDepth: depth, conversation: { provider: p, chat: 'dm', channelId: `dm-${sender.id ?? 'anon'}` }, sender });
        }
        for (const scope of scopes) {
          for (const sender of actorsOf(scope.provider)) {
            push({ agentId, model, spawnDepth: depth, conversation: { provider: scope.provider, chat: 'channel', guildId: scope.guildId, channelId: scope.channelId, channelName: scope.channelName }, sender });
          }
        }
      }
    }
  }
  return out;
}
