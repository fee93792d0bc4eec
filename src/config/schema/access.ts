import * as z from 'zod';
import { lazySchema, once } from './lazy.js';
import { principalEntry } from './access-groups.js';

/**
 * Who may make Warden act, per platform, guild and channel (OpenClaw's spelling: `dmPolicy`,
 * `allowFrom`, `groupPolicy`, guild/channel `users` and `roles`, `allowBots`,
 * `botLoopProtection`). The decision is `src/policy/access.ts`; docs/access-control.md maps
 * each key to OpenClaw's and names the defaults that differ.
 */

/** `dmPolicy`: who may DM the bot. OpenClaw defaults to `pairing`; Warden to `open` (configs written before the key keep working). */
export const DM_POLICIES = ['open', 'allowlist', 'pairing', 'disabled'] as const;
export const dmPolicy = once(() => z.enum(DM_POLICIES));
export type DmPolicy = z.infer<ReturnType<typeof dmPolicy>>;

/** `groupPolicy`: how guild/workspace channels are handled. OpenClaw defaults to `allowlist`; Warden to `open`. */
export const GROUP_POLICIES = ['open', 'allowlist', 'disabled'] as const;
export const groupPolicy = once(() => z.enum(GROUP_POLICIES));
export type GroupPolicy = z.infer<ReturnType<typeof groupPolicy>>;

/**
 * `allowBots`: whether bot-authored messages get through. `false` (default) drops them; `true`
 * lets them in; `"mentions"` (OpenClaw's) lets in only a bot message that mentions this bot (a
 * bot's DM is addressed to the bot, so it counts as mentioning it). Between `false` and `true`.
 */
export const allowBots = once(() => z.union([z.boolean(), z.literal('mentions')], { error: 'expected true, false or "mentions"' }));
export type AllowBots = z.infer<ReturnType<typeof allowBots>>;

/** A list of people, each entry in the grammar of `access-groups.ts`. */
export const principalList = once(() => z.array(principalEntry()));

/** `{perMinute, burst}`: a token bucket refilled at `perMinute` a minute, holding at most `burst` (default `perMinute`). */
export const rateLimitBucket = lazySchema(() => z.strictObject({
  perMinute: z.number().positive().max(100_000),
  burst: z.number().int().min(1).max(100_000).optional(),
}));
export type RateLimitBucket = z.infer<typeof rateLimitBucket>;

/** `rateLimit`: buckets per sender, per channel (conversation) and per agent; absent = unlimited. */
export const rateLimitConfig = lazySchema(() => z.strictObject({
  sender: rateLimitBucket.optional(),
  channel: rateLimitBucket.optional(),
  agent: rateLimitBucket.optional(),
  /** What an over-the-limit sender is told, once per wait; `{retry}` becomes the seconds to wait. `false`: nothing. */
  reply: z.union([z.string().min(1).max(500), z.literal(false)]).optional(),
}));
export type RateLimitConfig = z.infer<typeof rateLimitConfig>;

/**
 * OpenClaw's bot loop protection, judged per conversation: at most `maxEventsPerWindow` bot
 * messages are answered within `windowSeconds`; past that, bot messages there are dropped for
 * `cooldownSeconds`. A person's message in the conversation resets the count.
 */
export const botLoopProtection = lazySchema(() => z.strictObject({
  enabled: z.boolean().optional(),
  maxEventsPerWindow: z.number().int().min(1).max(1000).optional(),
  windowSeconds: z.number().int().min(1).max(86_400).optional(),
  cooldownSeconds: z.number().int().min(0).max(86_400).optional(),
}));
export type BotLoopProtection = z.infer<typeof botLoopProtection>;

/** What a refused sender is told: a short text, or `false` for silence. */
export const deniedReply = once(() => z.union([z.string().min(1).max(500), z.literal(false)]));

/** Platform root keys (`channels.discord`, `channels.slack`). */
export const platformAccessFields = once(() => ({
  dmPolicy: dmPolicy().optional(),
  /** The DM allowlist (OpenClaw's canonical one): ids, `role:`, `usergroup:`, `group:`/`accessGroup:`, `*`. */
  allowFrom: principalList().optional(),
  groupPolicy: groupPolicy().optional(),
  /** Bot-authored messages are dropped unless this is `true`, or `"mentions"` and they mention the bot (a scope may set it). */
  allowBots: allowBots().optional(),
  botLoopProtection: botLoopProtection.optional(),
  deniedReply: deniedReply().optional(),
}));

/** Guild and channel scope keys: who may trigger the bot there (either list matching lets them in). */
export const scopeAccessFields = once(() => ({
  /** Senders allowed here: any entry of the principal grammar (OpenClaw: user ids). */
  users: principalList().optional(),
  /** Discord role ids allowed here (each is `role:<id>` in `users`). */
  roles: z.array(z.string().trim().min(1)).optional(),
  /** `false` turns the bot off in this channel (OpenClaw's `enabled`). */
  enabled: z.boolean().optional(),
  allowBots: allowBots().optional(),
  botLoopProtection: botLoopProtection.optional(),
}));
