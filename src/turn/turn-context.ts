import type { WardenConfig } from '../config/index.js';
import { execHostOf } from '../exec/effective-config.js';
import { parseModelRef } from '../models/settings.js';
import type { InheritedPolicy, TurnContext } from '../policy/context.js';
import { defaultAgentId, knownAgentIds } from '../policy/steps.js';
import { TOOL_COUPLINGS } from '../policy/policy.js';
import { isOwner, WEB_LOCAL_USER } from '../policy/owners.js';

/**
 * The one builder of a turn's policy context. Every path that starts a turn — an inbound
 * message (and the chat command it may carry), a cron run, a subagent spawn, a `sessions_send`,
 * a CLI flag set — describes where the turn happens and for whom, and this module derives the
 * rest the same way each time: owner status, the model and whether it can call tools, whether
 * exec is sandboxed. The surface is then resolved from the context by `resolveToolSurface` with
 * the inputs of `app/surface-inputs.ts`, so `warden tools` and the live turn cannot drift.
 */

/** Where a turn happens: what channel scopes are resolved by. Stored with each conversation. */
export type Conversation = Pick<TurnContext, 'provider' | 'chat' | 'guildId' | 'guildName' | 'channelId' | 'channelName' | 'threadId'>;

/** Who the turn acts for. */
export interface Actor {
  id?: string | undefined;
  name?: string | undefined;
  username?: string | undefined;
  /** Discord role ids the sender holds where the message was sent (from the member object the platform sent). */
  roleIds?: readonly string[] | undefined;
  /** Slack user group ids of the sender (looked up, cached). */
  usergroupIds?: readonly string[] | undefined;
}

export interface ContextInput {
  agentId: string;
  conversation: Conversation;
  sender: Actor;
  /**
   * `false`: the turn never runs as an owner, whoever the sender is (a cron job, a child rebuilt
   * from the store, a message sent by a non-owner's turn). Otherwise owner status follows
   * `owners` for the conversation's provider; it is never granted by the caller.
   */
  mayBeOwner?: boolean | undefined;
  /** The model answering; default the agent's, else `models.default`. */
  model?: string | undefined;
  spawnDepth?: number | undefined;
  /** A ceiling from the turn that started this one (a parent, a sending session). */
  inherited?: InheritedPolicy | undefined;
  toolsAllow?: string[][] | undefined;
  disableTools?: boolean | undefined;
}

/** The model answering an agent's turns: the agent's own, else `models.default`; undefined = none. */
export function modelFor(config: WardenConfig, agentId: string): string | undefined {
  return config.agents.list.find((a) => a.id === agentId)?.model ?? config.models.default;
}

/** False when the model's provider is declared without tool calling (`models.providers.<p>.supportsTools`). */
export function modelSupportsTools(config: WardenConfig, model: string): boolean {
  const provider = parseModelRef(model)?.provider;
  return provider === undefined || config.models.providers?.[provider]?.supportsTools !== false;
}

/**
 * Owner status for a sender on a provider: `owners`, plus the web chat's local user (the person
 * at the page, who holds the install's token).
 */
export function senderIsOwner(config: WardenConfig, provider: string, senderId: string | undefined): boolean {
  if (provider.trim().toLowerCase() === 'web' && senderId === WEB_LOCAL_USER) return true;
  return isOwner(config, provider, senderId);
}

export function buildTurnContext(config: WardenConfig, input: ContextInput): TurnContext {
  const c = input.conversation;
  const model = input.model ?? modelFor(config, input.agentId);
  const thread = c.chat === 'thread';
  return {
    agentId: input.agentId,
    provider: c.provider,
    chat: c.chat,
    guildId: c.chat === 'dm' ? undefined : c.guildId,
    guildName: c.chat === 'dm' ? undefined : c.guildName,
    channelId: c.channelId,
    channelName: c.channelName?.replace(/^#/, ''),
    threadId: thread ? c.threadId : undefined,
    senderId: input.sender.id,
    senderName: input.sender.name,
    senderUsername: input.sender.username,
    ...(input.sender.roleIds && input.sender.roleIds.length > 0 ? { senderRoleIds: [...input.sender.roleIds] } : {}),
    ...(input.sender.usergroupIds && input.sender.usergroupIds.length > 0 ? { senderUsergroupIds: [...input.sender.usergroupIds] } : {}),
    senderIsOwner: input.mayBeOwner !== false && senderIsOwner(config, c.provider, input.sender.id),
    model,
    ...(model !== undefined && !modelSupportsTools(config, model) ? { modelSupportsTools: false } : {}),
    spawnDepth: input.spawnDepth ?? 0,
    ...(input.inherited ? { inherited: input.inherited } : {}),
    sandboxed: execHostOf(config) === 'sandbox',
    ...(input.toolsAllow ? { toolsAllow: input.toolsAllow } : {}),
    ...(input.disableTools ? { disableTools: true } : {}),
  };
}

/** The conversation a context was built for (what a session stores, what a child keeps). */
export function conversationOf(ctx: TurnContext): Conversation {
  return {
    provider: ctx.provider,
    chat: ctx.chat,
    guildId: ctx.guildId,
    guildName: ctx.guildName,
    channelId: ctx.channelId,
    channelName: ctx.channelName,
    threadId: ctx.threadId,
  };
}

/**
 * A context built under an earlier config, rebuilt under `config` (a reload happened while its
 * turn waited): the same conversation, sender, depth and ceiling; owner status and model are
 * derived again, and the turn is never more of an owner than it was.
 */
export function refreshTurnContext(config: WardenConfig, ctx: TurnContext): TurnContext {
  return buildTurnContext(config, {
    agentId: knownAgentIds(config).includes(ctx.agentId) ? ctx.agentId : defaultAgentId(config),
    conversation: conversationOf(ctx),
    sender: actorOf(ctx),
    mayBeOwner: ctx.senderIsOwner,
    spawnDepth: ctx.spawnDepth,
    inherited: ctx.inherited,
    toolsAllow: ctx.toolsAllow,
    disableTools: ctx.disableTools,
  });
}

const actorOf = (ctx: TurnContext): Actor => ({ id: ctx.senderId, name: ctx.senderName, username: ctx.senderUsername, roleIds: ctx.senderRoleIds, usergroupIds: ctx.senderUsergroupIds });

/**
 * A subagent's context: its parent's conversation and sender (never more owner than the
 * parent), one level deeper, under the parent's ceiling. Another agent answers with its own
 * model; the same agent keeps the parent's.
 */
export function contextForSubagent(config: WardenConfig, parent: TurnContext, child: { agentId: string; inherited: InheritedPolicy }): TurnContext {
  return buildTurnContext(config, {
    agentId: child.agentId,
    conversation: conversationOf(parent),
    sender: actorOf(parent),
    mayBeOwner: parent.senderIsOwner,
    model: child.agentId === parent.agentId ? parent.model : undefined,
    spawnDepth: parent.spawnDepth + 1,
    inherited: intersectCeilings(parent.inherited, child.inherited),
  });
}

/**
 * The context of a turn another session's turn starts with `sessions_send`: the target
 * conversation's stored context decides the channel policy, the SENDING turn's sender is who it
 * acts for (never more owner than they are, never the target's last sender), and the sending
 * turn's surface is its ceiling.
 */
export function contextForSessionMessage(
  config: WardenConfig,
  target: { agentId: string; conversation: Conversation },
  from: TurnContext,
  ceiling: InheritedPolicy,
): TurnContext {
  return buildTurnContext(config, {
    agentId: target.agentId,
    conversation: target.conversation,
    sender: actorOf(from),
    mayBeOwner: from.senderIsOwner,
    spawnDepth: from.spawnDepth,
    inherited: intersectCeilings(from.inherited, ceiling),
  });
}

/**
 * The context a deferred call runs under once decided, and its follow-up turn: the original
 * turn's conversation and requester — never the approver, never more owner than they are now —
 * with the surface that turn had as its ceiling, so a decision made later (after a restart, a
 * config change) can never reach a tool the original turn did not have.
 */
export function contextForDeferredCall(config: WardenConfig, call: { agentId: string; turn: TurnContext; surface: readonly string[] }): TurnContext {
  const t = call.turn;
  // An allowlist naming a leader keeps its followers (exec keeps process): deny the ones the turn lacked.
  const lacked = TOOL_COUPLINGS.map((c) => c.tool).filter((tool) => !call.surface.includes(tool));
  return buildTurnContext(config, {
    agentId: call.agentId,
    conversation: conversationOf(t),
    sender: actorOf(t),
    mayBeOwner: t.senderIsOwner,
    spawnDepth: t.spawnDepth,
    inherited: intersectCeilings(t.inherited, { allow: [...call.surface], deny: lacked }),
    ...(t.toolsAllow ? { toolsAllow: t.toolsAllow } : {}),
    ...(t.disableTools ? { disableTools: true } : {}),
  });
}

/**
 * Two ceilings at once: a tool passes only if both allow it; the denies add up. `undefined`
 * allow means "no restrictive allowlist" and leaves the other's.
 */
export function intersectCeilings(a: InheritedPolicy | undefined, b: InheritedPolicy | undefined): InheritedPolicy | undefined {
  if (!a) return b;
  if (!b) return a;
  const allow = a.allow === undefined ? b.allow : b.allow === undefined ? a.allow : a.allow.filter((t) => b.allow!.includes(t));
  const deny = [...new Set([...a.deny, ...b.deny])];
  return { ...(allow === undefined ? {} : { allow }), deny };
}
