import type { WardenConfig } from '../config/schema/index.js';
import type { ToolPolicyConfig, ToolsBySenderConfig } from '../config/schema/policy.js';
import type { TurnContext } from './context.js';
import { keyPath } from './keys.js';
import { pickPolicy, type ToolPolicy } from './policy.js';
import { matchSender } from './sender.js';
import { KeyedCache } from '../util/keyed-cache.js';

/**
 * Channel scope resolution (semantics §4, with two differences from OpenClaw).
 *
 * Which scopes match: a guild by id, a channel by id (any case on Slack), by name (`general`,
 * `#general`, the slug of its display name), `*` for the rest. A thread is judged by its parent
 * channel (the context carries the parent's id and name). DMs have no group scope.
 *
 * 1. Deny accumulates. Every matched scope's policy applies (channel and guild alike): a deny
 *    at the guild holds in each of its channels, and a channel's allow only narrows what the
 *    guild leaves. Inside one scope a matching `toolsBySender` entry still replaces `tools`.
 *    OpenClaw lets the most specific scope that defines a policy decide alone, so there a
 *    channel's own `tools` block undoes its guild's deny.
 * 2. Names are chosen by others. Any guild's admin can rename a guild or channel, and any Slack
 *    member can create or rename a channel, so a key matched by name is trusted only inside a
 *    guild matched by id, or where the operator opts in (`channels.<discord|slack>.
 *    dangerouslyAllowNameMatching`, OpenClaw's name for the same switch). Elsewhere a scope
 *    matched by name can only take tools away: its policy is added to the trusted scopes' (it
 *    never replaces the `*` scope that would apply otherwise) and its other settings
 *    (requireMention, streaming, approvers) are ignored. A key shaped like a platform id
 *    (Discord snowflake, Slack `C…`/`G…`/`D…`) is never matched by name, so a channel or guild
 *    renamed to an id takes nothing.
 */

/** Where a turn (or a message) is, as the scope matchers read it. */
export interface ScopeWhere {
  provider: string;
  guildId?: string | undefined;
  guildName?: string | undefined;
  channelId?: string | undefined;
  channelName?: string | undefined;
}

/** How a scope's key matched the conversation. */
export type ScopeMatch = 'id' | 'name' | 'default';

export interface ScopeNode {
  /** Config path of the scope (`channels.discord.guilds.111.channels.general`). */
  path: string;
  tools?: ToolPolicyConfig | undefined;
  toolsBySender?: ToolsBySenderConfig | undefined;
  match: ScopeMatch;
  /**
   * False for a scope matched by a name others may choose (see above): it only adds
   * restrictions, and its settings other than the tool policy do not apply.
   */
  trusted: boolean;
}

/** One matched scope's policy as the group step applies it. */
export interface ScopeLayer {
  policy: ToolPolicy;
  /** Where it was written (`channels.discord.guilds.111.tools`, `….toolsBySender["id:7"]`). */
  path: string;
  trusted: boolean;
}

export interface ResolvedScope {
  /** Every matched scope's policy, most specific first; all of them apply. */
  layers: ScopeLayer[];
  /** The scope nodes that matched, most specific first (for --explain). */
  matched: string[];
}

/** A display name as a scope key: `My Team` → `my-team`, `#General` → `general`. */
export function slugify(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/^#/, '')
    .replace(/[^a-z0-9_]+/g, '-')
    // One `-` at most at either end now: `-+$` would be retried along a long run of them.
    .replace(/^-|-$/g, '');
}

/**
 * Keys written as a platform id are never matched by a name: a channel or guild can be called
 * `300000000000000001` or `c0123abcd`. A Discord snowflake has 17 digits or more; a Slack id is
 * upper case, which no Slack channel name can be (a lower-case `c0123abcd` key stays a name too).
 */
const DISCORD_ID = /^\d{15,}$/;
const SLACK_ID = /^[CGD][A-Z0-9]{6,}$/;

/** Whether a scope key is written as a platform id (so it is never matched by a name). */
export function isIdKey(key: string, platform: 'discord' | 'slack'): boolean {
  return (platform === 'discord' ? DISCORD_ID : SLACK_ID).test(key);
}

/** A scope as written, with whatever settings it carries besides its tool policy. */
interface ScopeLike {
  tools?: ToolPolicyConfig | undefined;
  toolsBySender?: ToolsBySenderConfig | undefined;
}

/** One matched scope: its key, its config object, how it matched and whether it is trusted. */
export interface PickedScope<S> {
  key: string;
  path: string;
  scope: S;
  match: ScopeMatch;
  trusted: boolean;
}

const own = <S>(map: Record<string, S>, key: string | undefined): key is string => key !== undefined && Object.hasOwn(map, key);

/** The channel key by id (exact, or any case on Slack), by name, or `*`. */
function channelKeys(keys: string[], where: ScopeWhere, slack: boolean): { id?: string | undefined; name?: string | undefined; star?: string | undefined } {
  const id = where.channelId;
  const byId = id === undefined ? undefined : (keys.find((k) => k === id) ?? (slack ? keys.find((k) => k.toLowerCase() === id.toLowerCase()) : undefined));
  let byName: string | undefined;
  if (where.channelName) {
    const idShaped = slack ? SLACK_ID : DISCORD_ID;
    const named = keys.filter((k) => k !== '*' && !idShaped.test(k.replace(/^#/, '')));
    const name = where.channelName.trim().replace(/^#/, '').toLowerCase();
    const slug = slugify(name);
    if (name !== '' || slug !== '') {
      byName =
        named.find((k) => !k.startsWith('#') && (k.toLowerCase() === name || (slug !== '' && k.toLowerCase() === slug))) ??
        named.find((k) => k.startsWith('#') && (k.slice(1).toLowerCase() === name || (slug !== '' && slugify(k) === slug)));
    }
  }
  return { id: byId, name: byName, star: keys.includes('*') ? '*' : undefined };
}

/** Picks the channel scopes of one guild (or of Slack's map): the trusted one and a name-only one. */
function pickChannels<S>(channels: Record<string, S>, base: string, where: ScopeWhere, slack: boolean, namesTrusted: boolean, guildTrusted: boolean): PickedScope<S>[] {
  const { id, name, star } = channelKeys(Object.keys(channels), where, slack);
  const pick = (key: string, match: ScopeMatch, trusted: boolean): PickedScope<S> => ({ key, path: keyPath(base, key), scope: channels[key]!, match, trusted: trusted && guildTrusted });
  if (id !== undefined) return [pick(id, 'id', true)];
  if (name !== undefined && namesTrusted) return [pick(name, 'name', true)];
  const out: PickedScope<S>[] = [];
  if (star !== undefined) out.push(pick(star, 'default', true));
  if (name !== undefined) out.push(pick(name, 'name', false));
  return out;
}

export interface DiscordScopes<G, C> {
  /** Matched channel scopes: the trusted one first, then any name-only one. */
  channels: PickedScope<C>[];
  /** Matched guild scopes: the trusted one (id, name with opt-in, or `*`), then any name-only one. */
  guilds: PickedScope<G>[];
}

type DiscordGuild = NonNullable<WardenConfig['channels']['discord']>['guilds'][string];
type DiscordChannel = DiscordGuild['channels'][string];

/**
 * Discord: the guild by id; else by name (a key or `slug` field that slugs as the guild's name)
 * — trusted only with `dangerouslyAllowNameMatching` — and `*`. Channel name keys are trusted
 * only in a guild matched by id (or with the opt-in): a `*` guild never lends one.
 */
export function discordScopes(guilds: Record<string, DiscordGuild>, where: ScopeWhere, byName: boolean): DiscordScopes<DiscordGuild, DiscordChannel> {
  return remembered(guilds, where, byName, () => {
    const picked = pickDiscordScopes(guilds, where, byName);
    for (const p of [...picked.channels, ...picked.guilds]) Object.freeze(p);
    Object.freeze(picked.channels);
    Object.freeze(picked.guilds);
    return Object.freeze(picked);
  });
}

function pickDiscordScopes(guilds: Record<string, DiscordGuild>, where: ScopeWhere, byName: boolean): DiscordScopes<DiscordGuild, DiscordChannel> {
  const base = 'channels.discord.guilds';
  const idKey = where.guildId !== undefined && where.guildId !== '*' && own(guilds, where.guildId) ? where.guildId : undefined;
  let nameKey: string | undefined;
  const slug = where.guildName ? slugify(where.guildName) : '';
  if (idKey === undefined && slug !== '') {
    const named = Object.keys(guilds).filter((k) => k !== '*' && !DISCORD_ID.test(k));
    nameKey = named.find((k) => slugify(k) === slug) ?? named.find((k) => guilds[k]!.slug !== undefined && slugify(guilds[k]!.slug!) === slug);
  }
  const picked: { key: string; match: ScopeMatch; trusted: boolean }[] = [];
  if (idKey !== undefined) picked.push({ key: idKey, match: 'id', trusted: true });
  else if (nameKey !== undefined && byName) picked.push({ key: nameKey, match: 'name', trusted: true });
  else {
    if (own(guilds, '*')) picked.push({ key: '*', match: 'default', trusted: true });
    if (nameKey !== undefined) picked.push({ key: nameKey, match: 'name', trusted: false });
  }
  const out: DiscordScopes<DiscordGuild, DiscordChannel> = { channels: [], guilds: [] };
  for (const g of picked) {
    const path = keyPath(base, g.key);
    const guild = guilds[g.key]!;
    out.guilds.push({ key: g.key, path, scope: guild, match: g.match, trusted: g.trusted });
    const namesTrusted = g.match === 'id' || byName;
    out.channels.push(...pickChannels(guild.channels, `${path}.channels`, where, false, namesTrusted, g.trusted));
  }
  // Trusted scopes first: they are the ones whose settings apply.
  out.channels.sort((a, b) => Number(b.trusted) - Number(a.trusted));
  return out;
}

/** Slack: the channel by id, by name only with `dangerouslyAllowNameMatching`, else `*` (a name key then only restricts). */
export function slackScopes<C>(channels: Record<string, C>, where: ScopeWhere, byName: boolean): readonly PickedScope<C>[] {
  return remembered(channels, where, byName, () => Object.freeze(pickChannels(channels, 'channels.slack.channels', where, true, byName, true).map((p) => Object.freeze(p))));
}

/**
 * The scopes picked for a place are a pure function of the scope map (a config's, never changed
 * in place: a reload parses a new config) and the place's ids and names, and each message asks
 * for them several times (access gate, mention rule, streaming). They are kept per map, keyed by
 * the JSON encoding of every place field the pickers read, so a name chosen by others cannot
 * imitate another place's key; frozen, as callers share them. At most PICKED_PER_MAP places per
 * map: past that the oldest goes.
 */
const PICKED_PER_MAP = 10_000;
const pickedByMap = new KeyedCache<object, unknown>(PICKED_PER_MAP);
function remembered<T>(map: object, where: ScopeWhere, byName: boolean, pick: () => T): T {
  const key = JSON.stringify([where.guildId, where.guildName, where.channelId, where.channelName, byName]);
  return pickedByMap.get(map, key, pick) as T;
}

/**
 * The trusted scope objects for a conversation, most specific first (channel, then guild on
 * Discord): where requireMention, streaming and approvers are read. A scope matched by a name
 * others may choose is not among them.
 */
export function trustedScopes(config: Pick<WardenConfig, 'channels'>, where: ScopeWhere): { channel?: ChatScope | undefined; guild?: ChatScope | undefined } {
  const provider = where.provider.trim().toLowerCase();
  if (provider === 'discord') {
    const discord = config.channels.discord;
    if (!discord) return {};
    const picked = discordScopes(discord.guilds, where, discord.dangerouslyAllowNameMatching === true);
    return { channel: picked.channels.find((c) => c.trusted)?.scope, guild: picked.guilds.find((g) => g.trusted)?.scope };
  }
  if (provider === 'slack') {
    const slack = config.channels.slack;
    if (!slack) return {};
    return { channel: slackScopes(slack.channels, where, slack.dangerouslyAllowNameMatching === true).find((c) => c.trusted)?.scope };
  }
  return {};
}

type ChatScope = NonNullable<WardenConfig['channels']['slack']>['channels'][string];

/** The scope nodes that apply to this turn: trusted ones most specific first, then name-only ones. */
export function scopeChain(config: WardenConfig, ctx: Pick<TurnContext, 'provider' | 'chat'> & ScopeWhere): ScopeNode[] {
  const provider = ctx.provider.trim().toLowerCase();
  if (provider === 'web') {
    const web = config.channels.web;
    return web ? [{ path: 'channels.web', tools: web.tools, toolsBySender: web.toolsBySender, match: 'default', trusted: true }] : [];
  }
  if (ctx.chat === 'dm') return [];
  const node = (p: PickedScope<ScopeLike>): ScopeNode => ({ path: p.path, tools: p.scope.tools, toolsBySender: p.scope.toolsBySender, match: p.match, trusted: p.trusted });
  if (provider === 'discord') {
    const discord = config.channels.discord;
    if (!discord) return [];
    const picked = discordScopes(discord.guilds, ctx, discord.dangerouslyAllowNameMatching === true);
    const nodes = [...picked.channels.filter((c) => c.trusted), ...picked.guilds.filter((g) => g.trusted), ...picked.channels.filter((c) => !c.trusted), ...picked.guilds.filter((g) => !g.trusted)];
    return nodes.map(node);
  }
  if (provider === 'slack') {
    const slack = config.channels.slack;
    if (!slack) return [];
    return slackScopes(slack.channels, ctx, slack.dangerouslyAllowNameMatching === true).map(node);
  }
  return [];
}

/**
 * The group step's policies: every matched scope contributes, most specific first. Inside a
 * scope a matching `toolsBySender` entry replaces its `tools`; a scope with neither adds nothing.
 */
export function resolveChannelScope(config: WardenConfig, ctx: TurnContext): ResolvedScope | undefined {
  const chain = scopeChain(config, ctx);
  const matched = chain.map((n) => n.path);
  const layers: ScopeLayer[] = [];
  for (const node of chain) {
    const sender = matchSender(node.toolsBySender, ctx, `${node.path}.toolsBySender`, config.accessGroups);
    const fromSender = sender ? pickPolicy(sender.value, sender.path) : undefined;
    if (fromSender) {
      layers.push({ policy: fromSender, path: sender!.path, trusted: node.trusted });
      continue;
    }
    const policy = pickPolicy(node.tools, `${node.path}.tools`);
    if (policy) layers.push({ policy, path: `${node.path}.tools`, trusted: node.trusted });
  }
  return layers.length > 0 ? { layers, matched } : undefined;
}
