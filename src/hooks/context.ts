import { parseModelRef } from '../models/settings.js';
import type { TurnContext } from '../policy/context.js';
import type { HookAgentContext, HookConversation, HookMessageContext, HookToolContext } from './types.js';

/**
 * The contexts hook handlers are given, derived from the turn's policy context (the one the
 * tool policy used) and from nothing a plugin or the model can set. OpenClaw's field names;
 * `conversation` adds where the turn happens in Warden's terms.
 */

export function conversationOfTurn(turn: TurnContext): HookConversation {
  return {
    provider: turn.provider,
    chat: turn.chat,
    ...(turn.guildId !== undefined ? { guildId: turn.guildId } : {}),
    ...(turn.guildName !== undefined ? { guildName: turn.guildName } : {}),
    ...(turn.channelId !== undefined ? { channelId: turn.channelId } : {}),
    ...(turn.channelName !== undefined ? { channelName: turn.channelName } : {}),
    ...(turn.threadId !== undefined ? { threadId: turn.threadId } : {}),
  };
}

export function agentHookContext(turn: TurnContext, sessionKey: string | undefined, extra: { runId?: string | undefined; workspaceDir?: string | undefined } = {}): HookAgentContext {
  const model = turn.model ? parseModelRef(turn.model) : undefined;
  return {
    agentId: turn.agentId,
    ...(sessionKey ? { sessionKey, sessionId: sessionKey } : {}),
    ...(extra.runId ? { runId: extra.runId } : {}),
    ...(extra.workspaceDir ? { workspaceDir: extra.workspaceDir } : {}),
    ...(model ? { modelProviderId: model.provider, modelId: model.model } : {}),
    messageProvider: turn.provider,
    channel: turn.provider,
    channelId: turn.provider,
    ...(turn.senderId !== undefined ? { senderId: turn.senderId } : {}),
    senderIsOwner: turn.senderIsOwner,
    trigger: turn.spawnDepth > 0 ? 'subagent' : 'user',
    conversation: conversationOfTurn(turn),
  };
}

export function toolHookContext(
  turn: TurnContext,
  sessionKey: string,
  call: { toolName: string; toolCallId: string; runId?: string | undefined; signal?: AbortSignal | undefined; workspaceDir?: string | undefined },
): HookToolContext {
  return {
    ...agentHookContext(turn, sessionKey, { runId: call.runId, workspaceDir: call.workspaceDir }),
    toolName: call.toolName,
    toolCallId: call.toolCallId,
    requester: { channel: turn.provider, ...(turn.senderId !== undefined ? { senderId: turn.senderId } : {}), senderIsOwner: turn.senderIsOwner },
    ...(call.signal ? { abortSignal: call.signal } : {}),
  };
}

/** The message hooks' context: OpenClaw's `channelId` is the platform, `conversationId` the platform's channel. */
export function messageHookContext(target: { provider: string; channelId?: string | undefined; dmUserId?: string | undefined }, extra: { sessionKey?: string | undefined; senderId?: string | undefined; messageId?: string | undefined; turn?: TurnContext | undefined } = {}): HookMessageContext {
  const conversationId = target.dmUserId ? `dm:${target.dmUserId}` : target.channelId;
  return {
    channelId: target.provider,
    ...(conversationId ? { conversationId } : {}),
    ...(extra.sessionKey ? { sessionKey: extra.sessionKey } : {}),
    ...(extra.senderId ? { senderId: extra.senderId } : {}),
    ...(extra.messageId ? { messageId: extra.messageId } : {}),
    ...(extra.turn ? { conversation: conversationOfTurn(extra.turn) } : {}),
  };
}
