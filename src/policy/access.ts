import type { WardenConfig } from '../config/schema/index.js';
import type { AllowBots, BotLoopProtection, DmPolicy, GroupPolicy } from '../config/schema/access.js';
import type { ChatType } from './context.js';
import { discordScopes, slackScopes, type ScopeWhere } from './channel-scope.js';
import { describeMatch, matchPrincipal, type Principal, type PrincipalMatch } from './principals.js';

/**
 * Inbound access: whether a message may make Warden act at all (a model turn, a command), before
 * anything else looks at it. One pure function for the router, `/status`, `warden tools` and
 * `warden access check`, so each of them names the same key for the same sender.
 *
 * Order (the first rule that decides, decides):
 * 1. The web chat is let in: its own listener is loopback or token-guarded, and its person is the owner.
 * 2. A bot-authored message is dropped unless `allowBots` (channel, guild, platform: most
 *    specific wins) is true, or is `"mentions"` and the message mentions this bot (a DM counts
 *    as mentioning it: it is addressed to the bot, as in OpenClaw); an allowed bot is then judged
 *    as any sender, never as an owner.
 * 3. Owners (`owners.<platform>`) are let in everywhere, so an owner can never lock themselves
 *    out (OpenClaw: ownership grants no chat access — a documented difference).
 * 4. DMs: `dmPolicy` (default `open`): `disabled` refuses; `open` lets in; `allowlist` lets in
 *    who `allowFrom` names; `pairing` also lets in senders an owner paired, and answers others
 *    with a pairing code.
 * 5. Channels: a channel scope `enabled: false` refuses; `groupPolicy` (default `open`):
 *    `disabled` refuses; `allowlist` needs the guild (Discord) listed in `guilds` and, when the
 *    guild (or Slack) lists `channels`, the channel listed. Then, whatever the policy, a scope's
 *    `users`/`roles` (channel's replace the guild's) must name the sender when either is set.
 *
 * Only trusted scopes count (matched by id, `*`, or by name with `dangerouslyAllowNameMatching`):
 * a scope matched by a name anyone can choose never lets anyone in.
 */

export interface AccessWhere extends ScopeWhere {
  chat: ChatType;
}

export interface AccessSender extends Principal {
  /** A bot or webhook wrote the message (the platform says so: Discord `author.bot`, Slack `bot_id`). */
  isBot?: boolean | undefined;
  /** Derived from `owners` by the caller (`senderIsOwner`); never true for a bot. */
  isOwner: boolean;
  /** An owner approved this sender by pairing on this platform (the store says so). */
  paired?: boolean | undefined;
  /** The message mentions this bot (the adapter's `mentionsBot`); read only for a bot under `allowBots: "mentions"`. */
  mentionsBot?: boolean | undefined;
}

export type AccessAllowReason = 'web' | 'owner' | 'dm-open' | 'dm-allow-from' | 'paired' | 'group-open' | 'group-listed';
export type AccessDenyReason =
  | 'bot'
  | 'dm-disabled'
  | 'dm-not-allowed'
  | 'pairing-required'
  | 'group-disabled'
  | 'channel-disabled'
  | 'guild-not-listed'
  | 'channel-not-listed'
  | 'sender-not-listed';

export type AccessDecision =
  | {
      allowed: true;
      reason: AccessAllowReason;
      /** The config key that let the sender in (`channels.discord.allowFrom`, `….guilds.1.roles`). */
      path: string;
      match?: PrincipalMatch | undefined;
      /** For an allowed bot: the loop breaker that applies (resolved, defaults filled). */
      botLoop?: ResolvedBotLoop | undefined;
    }
  | {
      allowed: false;
      reason: AccessDenyReason;
      path: string;
      /** What the sender is told: the refusal text, a pairing code, or nothing (bots, disabled channels). */
      reply: 'denied' | 'pairing' | 'none';
    };

export interface ResolvedBotLoop {
  enabled: boolean;
  maxEventsPerWindow: number;
  windowSeconds: number;
  cooldownSeconds: number;
  path: string;
}

/** OpenClaw's built-in defaults for bot loop protection. */
export const BOT_LOOP_DEFAULTS = { enabled: true, maxEventsPerWindow: 20, windowSeconds: 60, cooldownSeconds: 60 } as const;

/** The effective access settings of a conversation and where each was read (for `/status`, the CLI and the audit). */
export interface AccessSettings {
  platform: 'discord' | 'slack' | 'web' | 'other';
  dmPolicy: { value: DmPolicy; path: string };
  allowFrom: { value: readonly string[] | undefined; path: string };
  groupPolicy: { value: GroupPolicy; path: string };
  allowBots: { value: AllowBots; path: string };
  botLoop: ResolvedBotLoop;
}

type PlatformBlock = NonNullable<WardenConfig['channels']['discord']> | NonNullable<WardenConfig['channels']['slack']>;
type ScopeBlock = {
  users?: string[] | undefined;
  roles?: string[] | undefined;
  enabled?: boolean | undefined;
  allowBots?: AllowBots | undefined;
  botLoopProtection?: BotLoopProtection | undefined;
};

interface PickedAccessScope {
  scope: ScopeBlock;
  path: string;
}

/** The trusted channel and guild scope of a conversation, with their config paths. */
function accessScopes(config: Pick<WardenConfig, 'channels'>, where: ScopeWhere): { channel?: PickedAccessScope | undefined; guild?: PickedAccessScope | undefined; guildChannels?: number | undefined } {
  const provider = where.provider.trim().toLowerCase();
  if (provider === 'discord' && config.channels.discord) {
    const d = config.channels.discord;
    const picked = discordScopes(d.guilds, where, d.dangerouslyAllowNameMatching === true);
    const channel = picked.channels.find((c) => c.trusted);
    const guild = picked.guilds.find((g) => g.trusted);
    return {
      channel: channel ? { scope: channel.scope, path: channel.path } : undefined,
      guild: guild ? { scope: guild.scope, path: guild.path } : undefined,
      guildChannels: guild ? Object.keys(guild.scope.channels).length : undefined,
    };
  }
  if (provider === 'slack' && config.channels.slack) {
    const s = config.channels.slack;
    const channel = slackScopes(s.channels, where, s.dangerouslyAllowNameMatching === true).find((c) => c.trusted);
    return { channel: channel ? { scope: channel.scope, path: channel.path } : undefined, guildChannels: Object.keys(s.channels).length };
  }
  return {};
}

function platformOf(config: Pick<WardenConfig, 'channels'>, provider: string): { block: PlatformBlock | undefined; name: AccessSettings['platform'] } {
  const p = provider.trim().toLowerCase();
  if (p === 'discord') return { block: config.channels.discord, name: 'discord' };
  if (p === 'slack') return { block: config.channels.slack, name: 'slack' };
  if (p === 'web') return { block: undefined, name: 'web' };
  return { block: undefined, name: 'other' };
}

/** The settings that apply in a conversation: most specific scope first, then the platform, then Warden's defaults. */
export function accessSettings(config: Pick<WardenConfig, 'channels'>, where: AccessWhere): AccessSettings {
  const { block, name } = platformOf(config, where.provider);
  const base = `channels.${name}`;
  const scopes = where.chat === 'dm' ? {} : accessScopes(config, where);
  const chain = [scopes.channel, scopes.guild].filter((s): s is PickedAccessScope => s !== undefined);
  let allowBots: AccessSettings['allowBots'] = { value: block?.allowBots ?? false, path: `${base}.allowBots` };
  for (const s of [...chain].reverse()) if (s.scope.allowBots !== undefined) allowBots = { value: s.scope.allowBots, path: `${s.path}.allowBots` };
  // Bot loop protection merges key by key, narrowest first (OpenClaw's precedence).
  const layers: Array<{ value: BotLoopProtection; path: string }> = [];
  for (const s of chain) if (s.scope.botLoopProtection) layers.push({ value: s.scope.botLoopProtection, path: `${s.path}.botLoopProtection` });
  if (block?.botLoopProtection) layers.push({ value: block.botLoopProtection, path: `${base}.botLoopProtection` });
  const pick = <K extends keyof BotLoopProtection>(k: K) => layers.find((l) => l.value[k] !== undefined)?.value[k];
  const botLoop: ResolvedBotLoop = {
    enabled: pick('enabled') ?? BOT_LOOP_DEFAULTS.enabled,
    maxEventsPerWindow: pick('maxEventsPerWindow') ?? BOT_LOOP_DEFAULTS.maxEventsPerWindow,
    windowSeconds: pick('windowSeconds') ?? BOT_LOOP_DEFAULTS.windowSeconds,
    cooldownSeconds: pick('cooldownSeconds') ?? BOT_LOOP_DEFAULTS.cooldownSeconds,
    path: layers[0]?.path ?? 'default',
  };
  return {
    platform: name,
    dmPolicy: { value: block?.dmPolicy ?? 'open', path: block?.dmPolicy !== undefined ? `${base}.dmPolicy` : `${base}.dmPolicy (default)` },
    allowFrom: { value: block?.allowFrom, path: `${base}.allowFrom` },
    groupPolicy: { value: block?.groupPolicy ?? 'open', path: block?.groupPolicy !== undefined ? `${base}.groupPolicy` : `${base}.groupPolicy (default)` },
    allowBots,
    botLoop,
  };
}

/** The decision for one sender in one conversation. Pure: the caller gathers memberships, owner and pairing status. */
/** An allowing decision; `botLoop` rides along for a bot's message (the gate counts its turns). */
function allowed(botLoop: ResolvedBotLoop | undefined, reason: AccessAllowReason, path: string, match?: PrincipalMatch): AccessDecision {
  const decision: AccessDecision & { allowed: true } = { allowed: true, reason, path };
  if (match) decision.match = match;
  if (botLoop) decision.botLoop = botLoop;
  return decision;
}

export function decideAccess(
  config: Pick<WardenConfig, 'channels' | 'accessGroups'>,
  where: AccessWhere,
  sender: AccessSender,
  /** `accessSettings(config, where)` when the caller already has it (the gate reads it too): built once per message. */
  settings: AccessSettings = accessSettings(config, where),
): AccessDecision {
  if (settings.platform === 'web') return { allowed: true, reason: 'web', path: 'channels.web' };
  const base = `channels.${settings.platform}`;
  const isBot = sender.isBot === true;
  if (isBot && !botLetIn(settings.allowBots.value, where.chat, sender.mentionsBot === true)) return { allowed: false, reason: 'bot', path: settings.allowBots.path, reply: 'none' };
  const botLoop = isBot ? settings.botLoop : undefined;
  // A bot is never an owner, whatever id it carries.
  if (sender.isOwner && !isBot) return allowed(botLoop, 'owner', `owners.${settings.platform}`);
  const groups = config.accessGroups;

  if (where.chat === 'dm') {
    const policy = settings.dmPolicy.value;
    if (policy === 'disabled') return { allowed: false, reason: 'dm-disabled', path: settings.dmPolicy.path, reply: 'denied' };
    if (policy === 'open') return allowed(botLoop, 'dm-open', settings.dmPolicy.path);
    const match = matchPrincipal(settings.allowFrom.value, sender, groups, { wildcard: true });
    if (match) return allowed(botLoop, 'dm-allow-from', settings.allowFrom.path, match);
    if (policy === 'pairing') {
      if (sender.paired && !isBot) return allowed(botLoop, 'paired', `${base}.dmPolicy (paired)`);
      // A bot never gets a pairing code: nobody is there to hand it to an owner.
      return { allowed: false, reason: 'pairing-required', path: settings.dmPolicy.path, reply: isBot ? 'none' : 'pairing' };
    }
    return { allowed: false, reason: 'dm-not-allowed', path: settings.allowFrom.path, reply: isBot ? 'none' : 'denied' };
  }

  const scopes = accessScopes(config, where);
  if (scopes.channel?.scope.enabled === false) return { allowed: false, reason: 'channel-disabled', path: `${scopes.channel.path}.enabled`, reply: 'none' };
  const policy = settings.groupPolicy.value;
  const reply = isBot ? 'none' : 'denied';
  if (policy === 'disabled') return { allowed: false, reason: 'group-disabled', path: settings.groupPolicy.path, reply: 'none' };
  if (policy === 'allowlist') {
    if (settings.platform === 'discord' && !scopes.guild) return { allowed: false, reason: 'guild-not-listed', path: `${base}.guilds`, reply: 'none' };
    if ((scopes.guildChannels ?? 0) > 0 && !scopes.channel) {
      const listPath = settings.platform === 'discord' && scopes.guild ? `${scopes.guild.path}.channels` : `${base}.channels`;
      return { allowed: false, reason: 'channel-not-listed', path: listPath, reply: 'none' };
    }
  }
  // Sender lists: the channel's replace the guild's (OpenClaw: channel entries override guild-level values).
  const listed = [scopes.channel, scopes.guild].find((s) => s !== undefined && (s.scope.users !== undefined || s.scope.roles !== undefined));
  if (listed) {
    const byUser = matchPrincipal(listed.scope.users, sender, groups, { wildcard: true });
    if (byUser) return allowed(botLoop, 'group-listed', `${listed.path}.users`, byUser);
    // `roles` holds role ids (OpenClaw's spelling); a `role:` prefix written there is accepted too.
    const roleEntries = (listed.scope.roles ?? []).map((r) => (r.toLowerCase().startsWith('role:') ? r : `role:${r}`));
    const byRole = matchPrincipal(roleEntries, sender, groups);
    if (byRole) return allowed(botLoop, 'group-listed', `${listed.path}.roles`, byRole);
    return { allowed: false, reason: 'sender-not-listed', path: `${listed.path}.${listed.scope.users !== undefined ? 'users' : 'roles'}`, reply };
  }
  return allowed(botLoop, policy === 'allowlist' ? 'group-listed' : 'group-open', policy === 'allowlist' ? (scopes.channel?.path ?? scopes.guild?.path ?? `${base}.channels`) : settings.groupPolicy.path);
}

/**
 * Whether `allowBots` lets a bot's message through the first rule. `"mentions"` needs the message
 * to mention this bot, except in a DM, which is addressed to the bot already (OpenClaw's
 * reading). A mention does not make a bot an owner nor skip any later rule.
 */
export function botLetIn(allowBots: AllowBots, chat: ChatType, mentionsBot: boolean): boolean {
  if (allowBots === 'mentions') return chat === 'dm' || mentionsBot;
  return allowBots;
}

/** A decision in words, for `/status`, `warden access check` and logs. */
export function describeAccess(decision: AccessDecision): string {
  if (decision.allowed) {
    const via = decision.match ? ` via ${describeMatch(decision.match)}` : '';
    return `allowed (${decision.reason}) by ${decision.path}${via}`;
  }
  return `refused (${decision.reason}) by ${decision.path}`;
}
