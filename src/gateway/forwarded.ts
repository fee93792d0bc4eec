import type { InboundMessage } from '../policy/inbound.js';
import type { Route } from './router.js';

/**
 * A routed message as its place in the conversation's line records it on a shared store, so
 * that the instance running the conversation (the owner it was forwarded to, or a survivor
 * when the instance it reached died) can run it. Only plain data travels: the route as the
 * receiving instance decided it after admission (who sent it, where the answer goes, why the
 * sender was let in). The runner rebuilds the turn's context under its own config.
 */
export interface ForwardedMessage {
  v: 1;
  route: Route;
}

/**
 * Whether a message can run on another instance than the one it reached. Not: files (their
 * download is the receiving adapter's handle), native slash commands (answered through the
 * receiving adapter's invocation), the web chat (its socket is in the receiving process).
 */
export function forwardable(message: Pick<InboundMessage, 'provider' | 'attachments' | 'invocationId'>): boolean {
  return message.provider !== 'web' && (message.attachments?.length ?? 0) === 0 && message.invocationId === undefined;
}

export function encodeForwarded(route: Route): string {
  const { attachments: _files, ...plain } = route;
  return JSON.stringify({ v: 1, route: plain } satisfies ForwardedMessage);
}

/** The recorded message, or an error naming what is wrong (a row written by another version, or damaged). */
export function decodeForwarded(payload: string): { ok: true; route: Route } | { ok: false; error: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload);
  } catch {
    return { ok: false, error: 'payload: not JSON' };
  }
  if (typeof parsed !== 'object' || parsed === null || (parsed as { v?: unknown }).v !== 1) return { ok: false, error: 'payload.v: not 1' };
  const route = (parsed as { route?: unknown }).route as Partial<Route> | undefined;
  if (typeof route !== 'object' || route === null) return { ok: false, error: 'payload.route: missing' };
  for (const key of ['agentId', 'sessionKey', 'text'] as const) if (typeof route[key] !== 'string') return { ok: false, error: `payload.route.${key}: not a string` };
  if (typeof route.context !== 'object' || route.context === null) return { ok: false, error: 'payload.route.context: missing' };
  const replyTo = route.replyTo;
  if (typeof replyTo !== 'object' || replyTo === null || typeof replyTo.provider !== 'string' || typeof replyTo.channelId !== 'string') return { ok: false, error: 'payload.route.replyTo: missing its provider or channelId' };
  return { ok: true, route: route as Route };
}
