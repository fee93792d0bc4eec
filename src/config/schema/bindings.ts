import * as z from 'zod';
import { lazySchema, once } from './lazy.js';

/**
 * OpenClaw's `bindings`: which agent answers a message, by where it arrives. A binding only
 * picks the agent; admission (mention gating) and the tool policy are decided as for any
 * message. Every field given in `match` must match (AND); `src/gateway/bindings.ts` decides.
 */

const idValue = once(() => z.union([z.string(), z.number()]).transform((v) => String(v).trim()).pipe(z.string().min(1, 'must not be empty')));

/** `direct` (a DM), `group` or `channel` (a guild or Slack channel; the two are one kind to Warden). */
export const BINDING_PEER_KINDS = ['direct', 'group', 'channel'] as const;

export const bindingMatch = lazySchema(() => z.strictObject({
  /** `discord`, `slack` or `web` (OpenClaw's `webchat` is read as `web`). */
  channel: z
    .string()
    .transform((v) => v.trim().toLowerCase())
    .pipe(z.string().min(1, 'the platform a binding applies to')),
  /** OpenClaw's channel account; Warden runs one account per platform, named `default`. `*` is any. */
  accountId: z.string().optional(),
  peer: z.strictObject({ kind: z.enum(BINDING_PEER_KINDS), id: idValue() }).optional(),
  /** Discord guild id. */
  guildId: idValue().optional(),
  /** Slack workspace (team) id. */
  teamId: idValue().optional(),
  /** Discord role ids: any one of them held by the sender matches (with `guildId`). */
  roles: z.array(idValue()).optional(),
}));

export const bindingEntry = lazySchema(() => z.strictObject({
  agentId: z.string().min(1),
  /** A note for the reader (OpenClaw's `comment`). */
  comment: z.string().optional(),
  match: bindingMatch,
  /** OpenClaw's per-binding session scope and ACP bindings: refused by name (`checkBindings`). */
  session: z.unknown().optional(),
  type: z.unknown().optional(),
}));

export const bindingsConfig = lazySchema(() => z.array(bindingEntry));
export type BindingEntry = z.infer<typeof bindingEntry>;
export type BindingMatch = z.infer<typeof bindingMatch>;

const UNSUPPORTED = {
  session: "OpenClaw's `bindings[].session` is not supported by Warden: every DM is its sender's own session and every channel and thread its own",
  type: "OpenClaw's `bindings[].type` is not supported by Warden: there are no ACP agents; a binding routes messages only",
} as const;

/** What the schema cannot say alone: a binding names a configured agent and a platform Warden has. */
export function checkBindings(
  config: { bindings: BindingEntry[]; agents: { list: Array<{ id: string }> } },
  ctx: z.RefinementCtx,
): void {
  const agents = config.agents.list.length > 0 ? config.agents.list.map((a) => a.id) : ['main'];
  config.bindings.forEach((binding, i) => {
    for (const key of Object.keys(UNSUPPORTED) as Array<keyof typeof UNSUPPORTED>) {
      if (binding[key] !== undefined) ctx.addIssue({ code: 'custom', path: ['bindings', i, key], message: UNSUPPORTED[key] });
    }
    if (!agents.some((a) => a.toLowerCase() === binding.agentId.trim().toLowerCase())) {
      ctx.addIssue({ code: 'custom', path: ['bindings', i, 'agentId'], message: `unknown agent "${binding.agentId}"; configured agents: ${agents.join(', ')}` });
    }
    const channel = binding.match.channel === 'webchat' ? 'web' : binding.match.channel;
    if (!['discord', 'slack', 'web'].includes(channel)) {
      ctx.addIssue({ code: 'custom', path: ['bindings', i, 'match', 'channel'], message: `Warden has no ${binding.match.channel} adapter; expected discord, slack or web` });
    }
  });
}
