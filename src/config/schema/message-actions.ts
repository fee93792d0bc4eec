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
