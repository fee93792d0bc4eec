import * as z from 'zod';
import { lazySchema } from './lazy.js';

/**
 * The message tool's actions, with OpenClaw's names (`tools.message.actions.allow`). `send` is
 * what the tool always did; the others act on messages and conversations.
 */
export const MESSAGE_ACTIONS = ['send', 'react', 'thread-create', 'thread-reply', 'pin', 'unpin', 'list-pins', 'poll', 'edit', 'delete', 'read', 'download-file'] as const;
export type MessageAction = (typeof MESSAGE_ACTIONS)[number];

/**
 * Warden's default allowlist: posting only, as before actions existed. OpenClaw exposes every
 * action when `allow` is unset; Warden does not, because `read` and `download-file` bring other
 * people's words and files into the model's context and the workspace, and `delete`/`pin`
 * change what a channel sees. Each is turned on by name.
 */
export const DEFAULT_MESSAGE_ACTIONS: readonly MessageAction[] = ['send'];

export const messageActionsConfig = lazySchema(() => z.strictObject({
  /** The actions the message tool may take; unset: `["send"]`. `"*"` is every action. */
  allow: z.array(z.enum([...MESSAGE_ACTIONS, '*'])).optional(),
}));

/** The actions a config allows, `*` expanded. */
export function allowedMessageActions(actions: { allow?: readonly string[] | undefined } | undefined): readonly MessageAction[] {
  const allow = actions?.allow;
  if (allow === undefined) return DEFAULT_MESSAGE_ACTIONS;
  return allow.includes('*') ? MESSAGE_ACTIONS : MESSAGE_ACTIONS.filter((a) => allow.includes(a));
}

/**
 * OpenClaw's per-platform action groups (`channels.discord.actions.*`, `channels.slack.actions.*`)
 * that gate actions Warden has, and the actions each gates. Unset is enabled, as in OpenClaw: a
 * group only narrows what `tools.message.actions.allow` lets through. Slack has no `threads` or
 * `polls` group; a thread or a poll there is a message, so `messages` gates them.
 */
export const ACTION_GROUPS = {
  discord: {
    reactions: ['react'],
    messages: ['read', 'edit', 'delete', 'download-file'],
    threads: ['thread-create', 'thread-reply'],
    pins: ['pin', 'unpin', 'list-pins'],
    polls: ['poll'],
  },
  slack: {
    reactions: ['react'],
    messages: ['read', 'edit', 'delete', 'download-file', 'thread-create', 'thread-reply', 'poll'],
    pins: ['pin', 'unpin', 'list-pins'],
  },
} as const satisfies Record<'discord' | 'slack', Record<string, readonly MessageAction[]>>;

/**
 * OpenClaw's other groups, for actions Warden does not have (moderation, roles, member info …).
 * They are accepted only as `false`, which is what Warden does anyway; `true` is refused, naming
 * the key, rather than silently having no effect.
 */
const OTHER_GROUPS = {
  discord: ['search', 'memberInfo', 'roleInfo', 'channelInfo', 'channels', 'voiceStatus', 'events', 'stickers', 'emojiUploads', 'stickerUploads', 'permissions', 'roles', 'moderation', 'presence'],
  slack: ['memberInfo', 'emojiList'],
} as const;

const groupsSchema = (provider: 'discord' | 'slack') =>
  z.strictObject({
    ...Object.fromEntries(Object.keys(ACTION_GROUPS[provider]).map((g) => [g, z.boolean().optional()])),
    ...Object.fromEntries(OTHER_GROUPS[provider].map((g) => [g, z.literal(false, { error: `Warden has no ${provider} "${g}" actions; only false is accepted here` }).optional()])),
  });

/** `channels.discord.actions`: OpenClaw's Discord action groups. */
export const discordActionGroups = lazySchema(() => groupsSchema('discord'));
/** `channels.slack.actions`: OpenClaw's Slack action groups. */
export const slackActionGroups = lazySchema(() => groupsSchema('slack'));

/** What the message-action decision reads from a config (structural, so any layer can hand it). */
export interface MessageActionSettings {
  tools: { message?: { actions?: { allow?: readonly string[] | undefined } | undefined } | undefined };
  agents: { list: ReadonlyArray<{ id: string; tools?: { message?: { actions?: { allow?: readonly string[] | undefined } | undefined } | undefined } | undefined }> };
  channels: { discord?: { actions?: Record<string, boolean | undefined> | undefined } | undefined; slack?: { actions?: Record<string, boolean | undefined> | undefined } | undefined };
}

/** The allowlist an agent's turns use: the agent's own `tools.message.actions` replaces the global one, as OpenClaw's agent tool overrides do. */
export function messageActionAllowlist(config: MessageActionSettings, agentId: string): { key: string; allowed: readonly MessageAction[] } {
  const index = config.agents.list.findIndex((a) => a.id === agentId);
  const own = index >= 0 ? config.agents.list[index]!.tools?.message?.actions : undefined;
  if (own !== undefined) return { key: `agents.list[${index}].tools.message.actions.allow`, allowed: allowedMessageActions(own) };
  return { key: 'tools.message.actions.allow', allowed: allowedMessageActions(config.tools.message?.actions) };
}

/** The platform group that turns `action` off on `provider`, as its key path; undefined when none does. */
export function actionGroupRefusal(config: MessageActionSettings, provider: string, action: MessageAction): string | undefined {
  if (provider !== 'discord' && provider !== 'slack') return undefined;
  const groups: Record<string, readonly MessageAction[]> = ACTION_GROUPS[provider];
  const settings = config.channels[provider]?.actions;
  for (const [group, actions] of Object.entries(groups)) {
    if (actions.includes(action) && settings?.[group] === false) return `channels.${provider}.actions.${group}`;
  }
  return undefined;
}

/**
 * Why `agentId`'s turns may not take `action` on `provider` by configuration (the allowlist, then
 * the platform's group), or undefined when the config lets it. Where the action may reach is
 * decided after this, by `decideMessageAction`.
 */
export function messageActionConfigRefusal(config: MessageActionSettings, agentId: string, provider: string, action: MessageAction): string | undefined {
  const list = messageActionAllowlist(config, agentId);
  if (!list.allowed.includes(action)) return `the message action "${action}" is not enabled (${list.key}: ${list.allowed.length > 0 ? list.allowed.join(', ') : 'none'})`;
  const group = actionGroupRefusal(config, provider, action);
  if (group) return `the message action "${action}" is turned off on ${provider} (${group}: false)`;
  return undefined;
}

/** The actions the config lets `agentId` take on `provider` (what the control plane compares). */
export function enabledMessageActions(config: MessageActionSettings, agentId: string, provider: string): MessageAction[] {
  return MESSAGE_ACTIONS.filter((a) => messageActionConfigRefusal(config, agentId, provider, a) === undefined);
}
