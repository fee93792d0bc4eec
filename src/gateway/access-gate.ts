import type { WardenConfig } from '../config/index.js';
import type { RateLimitBucket } from '../config/schema/access.js';
import type { PairingStore } from '../cluster/pairing.js';
import type { RateLimiter, TakeResult } from '../cluster/rate-limit.js';
import { botLoopStep, type BotLoopCounter, type BotLoopState } from '../cluster/bot-loop.js';
import { log } from '../log/log.js';
import { metrics } from '../ops/metrics.js';
import { accessSettings, decideAccess, describeAccess, type AccessDecision, type AccessSettings, type AccessWhere, type ResolvedBotLoop } from '../policy/access.js';
import type { Principal } from '../policy/principals.js';
import { senderIsOwner } from '../turn/turn-context.js';
import { KeyedCache } from '../util/keyed-cache.js';
import type { InboundMessage, MembershipResolver } from './types.js';

export type { MembershipResolver } from './types.js';

/**
 * The inbound gate: what runs between routing a message and anything acting on it (a command,
 * a model turn). It gathers the facts the pure decision needs (memberships, pairing), asks
 * `decideAccess`, then the stateful limits (rate limits in the store, the bot loop breaker),
 * and on a refusal says what it says — once — and records it. A refused message never reaches
 * the model or a command.
 */


export interface AccessGateDeps {
  pairing?: PairingStore | undefined;
  limiter?: RateLimiter | undefined;
  /** The bot loop breaker's count (the store's, shared across instances); this process's memory when absent. */
  botLoops?: BotLoopCounter | undefined;
  audit?: { note(event: { type: string; actor?: string; subject?: string; sessionKey?: string; data: Record<string, unknown> }): void } | undefined;
  /**
   * Once-per-window notices in the store (`SharedDeliveries`): a refused sender is told once per
   * 10 minutes across every instance on it. This process's memory when absent or unreachable.
   */
  notices?: { firstTime(keys: readonly string[], ttlMs?: number): Promise<boolean> } | undefined;
  /** Per provider: memberships a message does not carry. */
  memberships?: ((provider: string) => MembershipResolver | undefined) | undefined;
  now?: () => number;
}

export const DEFAULT_DENIED_REPLY = "Sorry, you don't have access to this assistant here.";
export const PAIRING_REPLY = (code: string) =>
  `I don't know you yet. Ask an owner of this Warden to approve you with \`/pair ${code}\` (the code expires in an hour).`;
export const DEFAULT_RATE_REPLY = "You're sending messages faster than I can take them. Please try again in {retry} s.";
/** A refused sender hears the refusal at most once per this long (across the instances on one store). */
export const DENIED_REPLY_EVERY_MS = 10 * 60 * 1000;
const REMEMBERED = 10_000;

/** A pairing request this message created: the owners are shown a card to decide it. */
export interface NewPairingRequest {
  code: string;
  userId: string;
  userName?: string | undefined;
  expiresAt: number;
}

export type GateOutcome =
  | { pass: true; decision: AccessDecision & { allowed: true }; principal: Principal }
  | { pass: false; reply?: string | undefined; pairing?: NewPairingRequest | undefined };

/** The principal of a message: who sent it, with the memberships known for it. */
export async function principalOf(message: InboundMessage, resolver: MembershipResolver | undefined, needUsergroups: boolean): Promise<Principal> {
  const usergroupIds = needUsergroups && resolver ? await resolver.usergroupsOf(message.senderId, message.guildId).catch(() => undefined) : undefined;
  return { provider: message.provider, userId: message.senderId, roleIds: message.senderRoles, usergroupIds };
}

/** Whether the config names Slack user groups anywhere (the lookup is skipped otherwise). */
export function configUsesUsergroups(config: WardenConfig): boolean {
  return JSON.stringify([config.accessGroups, config.channels.slack, config.tools.toolsBySender, config.agents.list]).toLowerCase().includes('usergroup:');
}

export class AccessGate {
  private readonly toldDenied = new Map<string, number>();
  private readonly memoryLoops = new Map<string, BotLoopState>();
  /** Per config: whether it names Slack user groups (one key). */
  private readonly usergroupCache = new KeyedCache<WardenConfig, boolean>(1);
  /** Per config: `accessSettings` by conversation. */
  private readonly settingsCache = new KeyedCache<WardenConfig, AccessSettings>(REMEMBERED);

  constructor(private readonly deps: AccessGateDeps) {}

  /** The pairing store `/pair` approves codes in. */
  get pairing(): PairingStore | undefined {
    return this.deps.pairing;
  }

  private now(): number {
    return this.deps.now?.() ?? Date.now();
  }

  /**
   * The access rules alone (no rate limit, no bot loop count, no reply, no audit): whether this
   * sender may reach the agent where the message was said. For observers that read messages the
   * router ignores (conversations_turn's waits): the same `decideAccess` the gate applies.
   */
  async allows(config: WardenConfig, message: InboundMessage): Promise<boolean> {
    return (await this.decide(config, message)).decision.allowed;
  }

  private async decide(config: WardenConfig, message: InboundMessage) {
    const usesGroups = this.usesUsergroups(config);
    // Only a Slack sender under a config naming user groups needs a look-up (and an await).
    const principal =
      usesGroups && message.provider === 'slack'
        ? await principalOf(message, this.deps.memberships?.(message.provider), true)
        : { provider: message.provider, userId: message.senderId, roleIds: message.senderRoles, usergroupIds: undefined };
    const where = { provider: message.provider, chat: message.chatType, guildId: message.guildId, guildName: message.guildName, channelId: message.channelId, channelName: message.channelName };
    const isBot = message.senderIsBot === true;
    const owner = !isBot && senderIsOwner(config, message.provider, message.senderId);
    const settings = this.settingsFor(config, where);
    const paired =
      !isBot && !owner && message.chatType === 'dm' && settings.dmPolicy.value === 'pairing' && this.deps.pairing ? await this.deps.pairing.isPaired(message.provider, message.senderId) : false;
    // Field by field (no spread): this runs for every message, and a spread with added keys is slow in V8.
    const sender = { provider: principal.provider, userId: principal.userId, roleIds: principal.roleIds, usergroupIds: principal.usergroupIds, isBot, isOwner: owner, paired, mentionsBot: message.mentionsBot };
    const decision = decideAccess(config, where, sender, settings);
    return { decision, principal, isBot, owner, settings };
  }

  /** Whether the message may go on; when not, `reply` is what the sender is told (already rate-limited), if anything. */
  async admit(config: WardenConfig, message: InboundMessage, route: { agentId: string; sessionKey: string }): Promise<GateOutcome> {
    const { decision, principal, isBot, owner, settings } = await this.decide(config, message);
    const actor = `${message.provider}:${message.senderId}`;
    if (!decision.allowed) {
      metrics.inboundRefused.inc({ provider: message.provider, reason: decision.reason });
      if (decision.reason === 'bot') {
        log.debug({ provider: message.provider, channelId: message.channelId, senderId: message.senderId }, 'bot message ignored');
        return { pass: false };
      }
      this.deps.audit?.note({ type: 'access.denied', actor, subject: route.sessionKey, sessionKey: route.sessionKey, data: { reason: decision.reason, path: decision.path, chat: message.chatType, channelId: message.channelId, bot: isBot } });
      log.info({ actor, decision: describeAccess(decision) }, 'inbound message refused');
      if (decision.reply === 'pairing') return this.pairingRefusal(message);
      return { pass: false, reply: await this.refusalText(config, message, decision) };
    }
    // A person speaking where bots are let in resets the conversation's bot count.
    if (!isBot) {
      if (settings.allowBots.value !== false) await this.loopCounter().reset(route.sessionKey).catch((err: unknown) => log.warn({ err, sessionKey: route.sessionKey }, 'bot loop count not reset'));
    } else if (decision.botLoop && !(await this.botTurnAllowed(route.sessionKey, decision.botLoop))) {
      metrics.inboundRefused.inc({ provider: message.provider, reason: 'bot-loop' });
      this.deps.audit?.note({ type: 'access.bot_loop', actor, subject: route.sessionKey, sessionKey: route.sessionKey, data: { path: decision.botLoop.path, max: decision.botLoop.maxEventsPerWindow } });
      log.warn({ actor, sessionKey: route.sessionKey }, 'bot loop breaker: bot message dropped');
      return { pass: false };
    }
    // Without limits configured there is nothing to take (and no await on every message).
    if (!owner && config.rateLimit && this.deps.limiter) {
      const limited = await this.rateLimited(config, message, route);
      if (limited) return limited;
    }
    return { pass: true, decision, principal };
  }

  /**
   * `accessSettings` for a conversation, kept per config (a reload brings a new one): they depend
   * only on the config and where the message arrived, and building them is most of the gate's
   * work per message. A DM's depend on the platform alone.
   */
  private settingsFor(config: WardenConfig, where: AccessWhere): AccessSettings {
    // JSON-encoded: a guild or channel name (chosen by others) cannot imitate another place's key.
    const key = where.chat === 'dm' ? `dm:${where.provider}` : JSON.stringify([where.provider, where.chat, where.guildId, where.guildName, where.channelId, where.channelName]);
    return this.settingsCache.get(config, key, () => accessSettings(config, where));
  }

  private usesUsergroups(config: WardenConfig): boolean {
    return this.usergroupCache.get(config, '', () => configUsesUsergroups(config));
  }

  /** An unknown DM under `dmPolicy: pairing`: a code for a new request (OpenClaw: about once an hour per sender), else silence. */
  private async pairingRefusal(message: InboundMessage): Promise<GateOutcome> {
    if (!this.deps.pairing) return { pass: false };
    const outcome = await this.deps.pairing.request(message.provider, message.senderId, message.senderName);
    if (outcome.kind !== 'created') return { pass: false };
    return {
      pass: false,
      reply: PAIRING_REPLY(outcome.code),
      pairing: { code: outcome.code, userId: message.senderId, userName: message.senderName, expiresAt: outcome.expiresAt },
    };
  }

  private async refusalText(config: WardenConfig, message: InboundMessage, decision: AccessDecision & { allowed: false }): Promise<string | undefined> {
    if (decision.reply === 'none') return undefined;
    const block = message.provider === 'discord' ? config.channels.discord : message.provider === 'slack' ? config.channels.slack : undefined;
    const text = block?.deniedReply;
    if (text === false) return undefined;
    const key = `${message.provider}:${message.senderId}`;
    if (!(await this.firstRefusalNotice(key))) return undefined;
    return text ?? DEFAULT_DENIED_REPLY;
  }

  /**
   * Whether this refusal is the sender's first in the window. In the store, one conditional
   * write, so instances sharing it tell a sender once between them; if the store cannot be
   * reached, this process's memory decides (a sender may then hear it once more per instance:
   * a notice, not a gate — the refusal itself never depends on this).
   */
  private async firstRefusalNotice(key: string): Promise<boolean> {
    if (this.deps.notices) {
      try {
        const first = await this.deps.notices.firstTime([`denied-reply:${key}`], DENIED_REPLY_EVERY_MS);
        // Kept in memory too, so a store outage right after does not repeat a notice already given.
        if (first) remember(this.toldDenied, key, this.now());
        return first;
      } catch (err) {
        log.warn({ err, key }, 'refusal notice not checked in the store; this process decides');
      }
    }
    const now = this.now();
    const last = this.toldDenied.get(key);
    if (last !== undefined && now - last < DENIED_REPLY_EVERY_MS) return false;
    remember(this.toldDenied, key, now);
    return true;
  }

  /** OpenClaw's window budget, per conversation: past `maxEventsPerWindow` bot turns in the window, bots are dropped for the cooldown. */
  private async botTurnAllowed(sessionKey: string, loop: ResolvedBotLoop): Promise<boolean> {
    if (!loop.enabled) return true;
    try {
      return await this.loopCounter().take(sessionKey, loop, this.now());
    } catch (err) {
      // The store is down: the bot message is dropped (fail closed).
      log.error({ err, sessionKey }, 'bot loop count not checked; bot message dropped');
      return false;
    }
  }

  /** The store's count when given; else this process's (a gate without a store: tests, embedded use). */
  private loopCounter(): BotLoopCounter {
    if (this.deps.botLoops) return this.deps.botLoops;
    const loops = this.memoryLoops;
    return {
      take: async (key, limits, now) => {
        const { allowed, next } = botLoopStep(loops.get(key) ?? { events: [], cooldownUntil: 0 }, now, limits);
        remember(loops, key, next);
        return allowed;
      },
      reset: async (key) => void loops.delete(key),
    };
  }

  private async rateLimited(config: WardenConfig, message: InboundMessage, route: { agentId: string; sessionKey: string }): Promise<GateOutcome | undefined> {
    const limits = config.rateLimit;
    const limiter = this.deps.limiter;
    if (!limits || !limiter) return undefined;
    const buckets: Array<[string, string, RateLimitBucket | undefined]> = [
      ['sender', `sender:${message.provider}:${message.senderId}`, limits.sender],
      ['channel', `channel:${message.provider}:${message.channelId}`, limits.channel],
      ['agent', `agent:${route.agentId}`, limits.agent],
    ];
    for (const [name, key, bucket] of buckets) {
      if (!bucket) continue;
      let taken: TakeResult;
      try {
        taken = await limiter.take(key, bucket);
      } catch (err) {
        // The store is down: the message is refused (fail closed), nobody is told twice.
        log.error({ err, key }, 'rate limit not checked; message refused');
        return { pass: false };
      }
      if (taken.ok) continue;
      metrics.rateLimited.inc({ provider: message.provider, bucket: name });
      this.deps.audit?.note({ type: 'access.rate_limited', actor: `${message.provider}:${message.senderId}`, subject: key, sessionKey: route.sessionKey, data: { bucket: name, retryAfterMs: taken.retryAfterMs } });
      if (!taken.tell || limits.reply === false || message.senderIsBot) return { pass: false };
      const seconds = Math.ceil(taken.retryAfterMs / 1000);
      return { pass: false, reply: (limits.reply ?? DEFAULT_RATE_REPLY).split('{retry}').join(String(seconds)) };
    }
    return undefined;
  }
}

function remember<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > REMEMBERED) map.delete(map.keys().next().value as string);
}
