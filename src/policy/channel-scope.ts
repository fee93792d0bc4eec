import type { WardenConfig } from '../config/schema/index.js';
import type { ToolPolicyConfig, ToolsBySenderConfig } from '../config/schema/policy.js';
import type { TurnContext } from './context.js';
import { keyPath } from './keys.js';
import { pickPolicy, type ToolPolicy } from './policy.js';
import { matchSender } from './sender.js';

/**
 * Channel scope resolution (semantics §4). The most specific scope that defines a policy is used
 * alone — a channel's `tools` replaces its guild's — and inside a scope a matching
 * `toolsBySender` entry beats `tools`. A thread is judged by its parent channel (the context
 * carries the parent's id and name). DMs on Discord and Slack have no group scope.
 */

export interface ScopeNode {
  /** Config path of the scope (`channels.discord.guilds.111.channels.general`). */
  path: string;
  tools?: ToolPolicyConfig | undefined;
  toolsBySender?: ToolsBySenderConfig | undefined;
}

export interface ResolvedScope {
  /** The policy of the chosen scope, and where it was written. */
  policy: ToolPolicy;
  path: string;
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

/** The scope nodes that apply to this turn, most specific first. */
export function scopeChain(config: WardenConfig, ctx: TurnContext): ScopeNode[] {
  const provider = ctx.provider.trim().toLowerCase();
  if (provider === 'web') {
    const web = config.channels.web;
    return web ? [{ path: 'channels.web', tools: web.tools, toolsBySender: web.toolsBySender }] : [];
  }
  if (ctx.chat === 'dm') return [];
  if (provider === 'discord') return discordChain(config, ctx);
  if (provider === 'slack') return slackChain(config, ctx);
  return [];
}

function discordChain(config: WardenConfig, ctx: TurnContext): ScopeNode[] {
  const guilds = config.channels.discord?.guilds;
  if (!guilds) return [];
  const guildSlug = ctx.guildName ? slugify(ctx.guildName) : undefined;
  const keys = Object.keys(guilds);
  const guildKey =
    (ctx.guildId !== undefined ? keys.find((k) => k === ctx.guildId) : undefined) ??
    (guildSlug ? keys.find((k) => k !== '*' && slugify(k) === guildSlug) : undefined) ??
    (guildSlug ? keys.find((k) => guilds[k]!.slug !== undefined && slugify(guilds[k]!.slug!) === guildSlug) : undefined) ??
    (keys.includes('*') ? '*' : undefined);
  if (guildKey === undefined) return [];
  const guild = guilds[guildKey]!;
  const guildPath = keyPath('channels.discord.guilds', guildKey);
  const chain: ScopeNode[] = [];
  const channelKey = findChannelKey(Object.keys(guild.channels), ctx, false);
  if (channelKey !== undefined) {
    const channel = guild.channels[channelKey]!;
    chain.push({ path: keyPath(`${guildPath}.channels`, channelKey), tools: channel.tools, toolsBySender: channel.toolsBySender });
  }
  chain.push({ path: guildPath, tools: guild.tools, toolsBySender: guild.toolsBySender });
  return chain;
}

function slackChain(config: WardenConfig, ctx: TurnContext): ScopeNode[] {
  const channels = config.channels.slack?.channels;
  if (!channels) return [];
  const key = findChannelKey(Object.keys(channels), ctx, true);
  if (key === undefined) return [];
  const channel = channels[key]!;
  return [{ path: keyPath('channels.slack.channels', key), tools: channel.tools, toolsBySender: channel.toolsBySender }];
}

/** Channel key: exact id (any case on Slack), then the name or slug, then `#name`, then `*`. */
function findChannelKey(keys: string[], ctx: TurnContext, idAnyCase: boolean): string | undefined {
  const id = ctx.channelId;
  if (id !== undefined) {
    const exact = keys.find((k) => k === id) ?? (idAnyCase ? keys.find((k) => k.toLowerCase() === id.toLowerCase()) : undefined);
    if (exact !== undefined) return exact;
  }
  if (ctx.channelName) {
    const name = ctx.channelName.trim().replace(/^#/, '').toLowerCase();
    const slug = slugify(name);
    const plain = keys.find((k) => !k.startsWith('#') && (k.toLowerCase() === name || k.toLowerCase() === slug));
    if (plain !== undefined) return plain;
    const hash = keys.find((k) => k.startsWith('#') && (k.slice(1).toLowerCase() === name || slugify(k) === slug));
    if (hash !== undefined) return hash;
  }
  return keys.includes('*') ? '*' : undefined;
}

/**
 * The group step's policy: walk the chain from the most specific scope; the first scope where a
 * sender entry matches or `tools` is set decides alone.
 */
export function resolveChannelScope(config: WardenConfig, ctx: TurnContext): ResolvedScope | undefined {
  const chain = scopeChain(config, ctx);
  const matched = chain.map((n) => n.path);
  for (const node of chain) {
    const sender = matchSender(node.toolsBySender, ctx, `${node.path}.toolsBySender`);
    if (sender) {
      const policy = pickPolicy(sender.value, sender.path);
      if (policy) return { policy, path: sender.path, matched };
    }
    const policy = pickPolicy(node.tools, `${node.path}.tools`);
    if (policy) return { policy, path: `${node.path}.tools`, matched };
  }
  return undefined;
}
