import path from 'node:path';
import type { WardenConfig } from '../config/schema/index.js';
import { sessionKeyFor } from '../policy/session-key.js';
import { parseModelRef } from '../models/settings.js';
import type { TurnContext } from '../policy/context.js';
import type { PluginToolContext } from './sdk.js';

/**
 * A tool factory's runtime context (reference §9.5), derived from the turn's policy context —
 * the one the tool policy decided the surface from — and the config. Nothing a plugin or the
 * model writes goes into it: owner status comes from `owners`, the workspace from the agent's
 * config, `sandboxed` from `tools.exec.host`.
 */
export function pluginToolContext(turn: TurnContext, config: WardenConfig, baseDir: string): PluginToolContext {
  const model = turn.model ? parseModelRef(turn.model) : undefined;
  const agent = config.agents.list.find((a) => a.id === turn.agentId);
  const to = turn.chat === 'dm' ? (turn.senderId !== undefined ? `dm:${turn.senderId}` : undefined) : turn.channelId;
  return {
    agentId: turn.agentId,
    sessionKey: sessionKeyFor(turn.agentId, {
      provider: turn.provider as 'discord' | 'slack' | 'web',
      chatType: turn.chat,
      channelId: turn.channelId ?? '',
      threadId: turn.threadId,
      senderId: turn.senderId ?? '',
    }),
    messageChannel: turn.provider,
    provider: turn.provider,
    chat: turn.chat,
    ...(turn.guildId !== undefined ? { guildId: turn.guildId } : {}),
    ...(turn.channelId !== undefined ? { channelId: turn.channelId } : {}),
    ...(turn.channelName !== undefined ? { channelName: turn.channelName } : {}),
    ...(turn.threadId !== undefined ? { threadId: turn.threadId } : {}),
    ...(turn.senderId !== undefined ? { requesterSenderId: turn.senderId, senderId: turn.senderId } : {}),
    senderIsOwner: turn.senderIsOwner,
    workspaceDir: path.resolve(baseDir, agent?.workspace ?? config.agents.defaults.workspace),
    sandboxed: turn.sandboxed === true,
    ...(model ? { activeModel: { provider: model.provider, modelId: model.model, modelRef: turn.model! } } : {}),
    spawnDepth: turn.spawnDepth,
    deliveryContext: { channel: turn.provider, ...(to !== undefined ? { to } : {}), ...(turn.threadId !== undefined ? { threadId: turn.threadId } : {}) },
  };
}

/** The same context always gives the same key (the factory cache's). */
export function contextKey(ctx: PluginToolContext): string {
  return JSON.stringify([
    ctx.agentId,
    ctx.sessionKey,
    ctx.provider,
    ctx.chat,
    ctx.guildId,
    ctx.channelId,
    ctx.channelName,
    ctx.threadId,
    ctx.senderId,
    ctx.senderIsOwner,
    ctx.workspaceDir,
    ctx.sandboxed,
    ctx.activeModel?.modelRef,
    ctx.spawnDepth,
  ]);
}
