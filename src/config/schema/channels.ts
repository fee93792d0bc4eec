import * as z from 'zod';
import { lazySchema, once } from './lazy.js';
import { scopePolicyFields, toolPolicyConfig, toolsBySender } from './policy.js';
import { platformAccessFields, scopeAccessFields } from './access.js';
import { discordActionGroups, slackActionGroups } from './message-actions.js';

/** A token or secret; an empty value (`${TOKEN:-}` with the variable unset) means "not configured". */
const secret = once(() => z
  .string()
  .optional()
  .transform((v) => (v === '' ? undefined : v)));

/**
 * What a guild, team or channel scope sets besides its tool policy: whether replies stream
 * (edited in place as the model writes) and who approves calls made there. The most specific
 * scope that sets a key decides, as for `requireMention`.
 */
let scopeFields: ReturnType<typeof buildChatScopeFields> | undefined;
const chatScopeFields = () => (scopeFields ??= buildChatScopeFields());
function buildChatScopeFields() {
  return {
    ...scopePolicyFields(),
    streaming: z.boolean().optional(),
    /** Approvers for calls made in this scope (platform user ids); replaces `approvals.approvers.<platform>` here. */
    approvals: z.strictObject({ approvers: z.array(z.string().min(1)) }).optional(),
    /** Who may trigger the bot here (`access.ts`): `users`, `roles`, `enabled`, `allowBots`, `botLoopProtection`. */
    ...scopeAccessFields(),
  };
}

const discordChannelScope = lazySchema(() => z.strictObject({ ...chatScopeFields() }));

const discordGuildScope = lazySchema(() => z.strictObject({
  /** A readable name for the guild; a guild key may use it instead of the id. */
  slug: z.string().optional(),
  ...chatScopeFields(),
  channels: z.record(z.string(), discordChannelScope).default({}),
}));

const SHARDS_ERROR = 'must be "auto", a whole number of shards (at least 1), or a list of shard ids with shardCount';
const SHARD_ID_ERROR = 'shard ids are whole numbers from 0';
const SHARD_COUNT_ERROR = 'must be a whole number of shards, at least 1';

export const discordConfig = lazySchema(() => z.strictObject({
  token: secret(),
  /** REST base for proxies and tests (`http://127.0.0.1:PORT/api`). */
  apiBaseUrl: z.url().optional(),
  requireMention: z.boolean().default(true),
  ...platformAccessFields(),
  /** Replies stream into one message edited in place; a guild or channel scope may turn it off. */
  streaming: z.boolean().default(true),
  guilds: z.record(z.string(), discordGuildScope).default({}),
  /**
   * Trust guild and channel scopes matched by name (a guild key or `slug` that slugs as the
   * guild's name; a channel name key in a guild not matched by id). Off: such a scope can only
   * remove tools, since any guild's admin chooses its names.
   */
  dangerouslyAllowNameMatching: z.boolean().optional(),
  /**
   * Gateway shards: `auto` (Discord's recommended count) or a number, all run by this process;
   * or a list of the shard ids this process runs, out of `shardCount` (several processes on one
   * shared store splitting the shards between them); absent is one connection. Discord requires
   * sharding past 2,500 guilds.
   */
  shards: z
    .union([z.literal('auto'), z.number().int({ error: SHARDS_ERROR }).min(1, { error: SHARDS_ERROR }), z.array(z.number({ error: SHARD_ID_ERROR }).int({ error: SHARD_ID_ERROR }).min(0, { error: SHARD_ID_ERROR })).min(1, { error: 'must list at least one shard id' })], { error: SHARDS_ERROR })
    .optional(),
  /** How many shards the bot has across every process, with `shards` listing this process's ids. */
  shardCount: z.number({ error: SHARD_COUNT_ERROR }).int({ error: SHARD_COUNT_ERROR }).min(1, { error: SHARD_COUNT_ERROR }).optional(),
  /** OpenClaw's Discord action groups: each narrows the message tool's actions here (unset: enabled). */
  actions: discordActionGroups.optional(),
}).superRefine((discord, ctx) => {
  // A list of ids means nothing without the count Discord assigns guilds by, and a count
  // beside "auto" or a number would contradict it.
  if (Array.isArray(discord.shards)) {
    if (discord.shardCount === undefined) ctx.addIssue({ code: 'custom', path: ['shardCount'], message: 'required when shards lists shard ids' });
    else {
      const bad = discord.shards.filter((id) => id >= discord.shardCount!);
      if (bad.length > 0) ctx.addIssue({ code: 'custom', path: ['shards'], message: `shard ids must be below shardCount (${discord.shardCount}): ${bad.join(', ')}` });
    }
    if (new Set(discord.shards).size !== discord.shards.length) ctx.addIssue({ code: 'custom', path: ['shards'], message: 'lists a shard id twice' });
  } else if (discord.shardCount !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['shardCount'], message: 'only with shards as a list of shard ids (shards: N already says the count)' });
  }
}));

const slackChannelScope = lazySchema(() => z.strictObject({ ...chatScopeFields() }));

export const slackConfig = lazySchema(() => z.strictObject({
  botToken: secret(),
  signingSecret: secret(),
  appToken: secret(),
  /** Web API base for proxies and tests (`http://127.0.0.1:PORT/api/`). */
  apiUrl: z.url().optional(),
  /** HTTP receiver port when signingSecret is set. */
  port: z.number().int().min(0).max(65535).default(3001),
  /** HTTP receiver address; loopback unless set, for a reverse proxy in front (0.0.0.0 to expose it). */
  host: z.string().min(1).default('127.0.0.1'),
  requireMention: z.boolean().default(true),
  ...platformAccessFields(),
  /** Replies stream into one message updated in place; a channel scope may turn it off. */
  streaming: z.boolean().default(true),
  channels: z.record(z.string(), slackChannelScope).default({}),
  /** Trust channel scopes keyed by name (`#general`, `general`). Off: they can only remove tools, since members choose channel names. */
  dangerouslyAllowNameMatching: z.boolean().optional(),
  /** OpenClaw's Slack action groups: each narrows the message tool's actions here (unset: enabled). */
  actions: slackActionGroups.optional(),
}));

export const webConfig = lazySchema(() => z.strictObject({
  host: z.string().default('127.0.0.1'),
  port: z.number().int().min(0).max(65535).default(3000),
  /** Required when host is not a loopback address. */
  token: secret(),
  tools: toolPolicyConfig.optional(),
  toolsBySender: toolsBySender.optional(),
  /** Replies appear token by token. */
  streaming: z.boolean().default(true),
}));

export const channelsConfig = lazySchema(() => z.strictObject({
  discord: discordConfig.optional(),
  slack: slackConfig.optional(),
  web: webConfig.prefault({}),
}));
export type ChannelsConfig = z.infer<typeof channelsConfig>;
export type DiscordConfig = z.infer<typeof discordConfig>;
export type SlackConfig = z.infer<typeof slackConfig>;
export type WebConfig = z.infer<typeof webConfig>;

/** Keys added after the adapters' first release; an adapter built from a partial block applies their defaults. */
type Later<C, K extends keyof C> = Omit<C, K> & Partial<Pick<C, K>>;
export type DiscordAdapterConfig = Later<DiscordConfig, 'streaming'>;
export type SlackAdapterConfig = Later<SlackConfig, 'streaming'>;
export type WebAdapterConfig = Later<WebConfig, 'streaming'>;
