import * as z from 'zod';
import { lazySchema } from './lazy.js';

/**
 * How far the session and message tools reach beyond their own conversation (OpenClaw's
 * `tools.sessions`, `tools.agentToAgent`, `tools.message.crossContext`).
 */

/**
 * `self`: only this session; `tree`: this session and the subagents it spawned; `agent`: the
 * agent's sessions; `all`: other agents' sessions too, under `tools.agentToAgent`. Unset: Warden's
 * rule (the agent's sessions). Whatever is set, another person's DM stays readable by owners only.
 */
export const SESSION_VISIBILITY = ['self', 'tree', 'agent', 'all'] as const;
export type SessionVisibility = (typeof SESSION_VISIBILITY)[number];

export const sessionsToolsConfig = lazySchema(() => z.strictObject({ visibility: z.enum(SESSION_VISIBILITY).optional() }));

/** Cross-agent session access under `visibility: all`: on unless disabled; `allow` must match both agents. */
export const agentToAgentConfig = lazySchema(() => z.strictObject({
  enabled: z.boolean().optional(),
  /** Agent ids or `*` globs; empty or absent = every agent. */
  allow: z.array(z.string()).optional(),
}));
export type AgentToAgentConfig = z.infer<typeof agentToAgentConfig>;

/**
 * Posting outside the current conversation. Warden's `allowedTargets` rule applies first; these
 * narrow it further (defaults true) and mark such posts with their origin.
 */
export const crossContextConfig = lazySchema(() => z.strictObject({
  /** Other conversations on the same platform. */
  allowWithinProvider: z.boolean().optional(),
  /** Conversations on another platform. */
  allowAcrossProviders: z.boolean().optional(),
  marker: z
    .strictObject({
      /** Default true. */
      enabled: z.boolean().optional(),
      /** `{channel}` is the origin conversation; default `[from {channel}] `. */
      prefix: z.string().max(200).optional(),
      suffix: z.string().max(200).optional(),
    })
    .optional(),
}));
export type CrossContextConfig = z.infer<typeof crossContextConfig>;
