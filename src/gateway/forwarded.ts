import type { AttachmentRef, InboundAttachment, InboundMessage } from '../policy/inbound.js';
import type { Route } from './router.js';

/**
 * A routed message as its place in the conversation's line records it on a shared store, so
 * that the instance running the conversation (the owner it was forwarded to, or a survivor
 * when the instance it reached died) can run it. Only plain data travels: the route as the
 * receiving instance decided it after admission (who sent it, where the answer goes, why the
 * sender was let in), and its files as the platform described them (never their bytes: the
 * runner fetches them again through its own adapter when the turn runs). The runner rebuilds
 * the turn's context under its own config.
 */
export interface ForwardedMessage {
  v: 1;
  route: Omit<Route, 'attachments'> & { files?: AttachmentRef[] };
}

/**
 * Whether a message can run on another instance than the one it reached. A file can when the
 * platform gave its URL (the runner's adapter fetches it again). Not: native slash commands
 * (answered through the interaction the receiving adapter holds: its token or response_url
 * is not recorded), the web chat (its socket is in the receiving process).
 */
export function forwardable(message: Pick<InboundMessage, 'provider' | 'attachments' | 'invocationId'>): boolean {
  return message.provider !== 'web' && message.invocationId === undefined && (message.attachments ?? []).every((a) => typeof a.url === 'string' && a.url !== '');
}

/** A file as recorded: its description, without the receiving adapter's fetch. */
function refOf(a: AttachmentRef): AttachmentRef {
  return {
    id: a.id,
    name: a.name,
    ...(a.mimeType !== undefined ? { mimeType: a.mimeType } : {}),
    ...(a.size !== undefined ? { size: a.size } : {}),
    ...(a.voice !== undefined ? { voice: a.voice } : {}),
    ...(a.url !== undefined ? { url: a.url } : {}),
  };
}

export function encodeForwarded(route: Route): string {
  const { attachments, ...plain } = route;
  const files = (attachments ?? []).map(refOf);
  return JSON.stringify({ v: 1, route: { ...plain, ...(files.length > 0 ? { files } : {}) } } satisfies ForwardedMessage);
}

export type DecodedForwarded = { ok: true; route: Route; files: AttachmentRef[] } | { ok: false; error: string };

/** The recorded message, or an error naming what is wrong (a row written by another version, or damaged). */
export function decodeForwarded(payload: string): DecodedForwarded {
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload);
  } catch {
    return { ok: false, error: 'payload: not JSON' };
  }
  if (typeof parsed !== 'object' || parsed === null || (parsed as { v?: unknown }).v !== 1) return { ok: false, error: 'payload.v: not 1' };
  const recorded = (parsed as { route?: unknown }).route as (Partial<Route> & { files?: unknown }) | undefined;
  if (typeof recorded !== 'object' || recorded === null) return { ok: false, error: 'payload.route: missing' };
  for (const key of ['agentId', 'sessionKey', 'text'] as const) if (typeof recorded[key] !== 'string') return { ok: false, error: `payload.route.${key}: not a string` };
  if (typeof recorded.context !== 'object' || recorded.context === null) return { ok: false, error: 'payload.route.context: missing' };
  const replyTo = recorded.replyTo;
  if (typeof replyTo !== 'object' || replyTo === null || typeof replyTo.provider !== 'string' || typeof replyTo.channelId !== 'string') return { ok: false, error: 'payload.route.replyTo: missing its provider or channelId' };
  const files = filesOf(recorded.files);
  if (!files.ok) return files;
  const { files: _files, attachments: _attachments, ...route } = recorded;
  return { ok: true, route: route as Route, files: files.files };
}

function filesOf(raw: unknown): { ok: true; files: AttachmentRef[] } | { ok: false; error: string } {
  if (raw === undefined) return { ok: true, files: [] };
  if (!Array.isArray(raw)) return { ok: false, error: 'payload.route.files: not a list' };
  const files: AttachmentRef[] = [];
  for (const [i, f] of raw.entries()) {
    const at = `payload.route.files[${i}]`;
    if (typeof f !== 'object' || f === null) return { ok: false, error: `${at}: not an object` };
    const file = f as Record<string, unknown>;
    for (const key of ['id', 'name', 'url'] as const) if (typeof file[key] !== 'string') return { ok: false, error: `${at}.${key}: not a string` };
    if (file.mimeType !== undefined && typeof file.mimeType !== 'string') return { ok: false, error: `${at}.mimeType: not a string` };
    if (file.size !== undefined && !(typeof file.size === 'number' && Number.isSafeInteger(file.size) && file.size >= 0)) return { ok: false, error: `${at}.size: not a byte count` };
    if (file.voice !== undefined && typeof file.voice !== 'boolean') return { ok: false, error: `${at}.voice: not a boolean` };
    files.push(refOf(file as unknown as AttachmentRef));
  }
  return { ok: true, files };
}

/**
 * The recorded files as this instance takes them in: fetched by its adapter for the message's
 * platform, as that adapter fetches its own messages' files (its file hosts, its token, the
 * same limits). Without that adapter here, each file is one the model is told could not be
 * fetched, and why — as for any download that fails.
 */
export function attachmentsFrom(files: readonly AttachmentRef[], provider: string, adapter: { attachmentFrom?(ref: AttachmentRef): InboundAttachment } | undefined): InboundAttachment[] {
  return files.map((ref) =>
    adapter?.attachmentFrom
      ? adapter.attachmentFrom(ref)
      : { ...ref, download: async () => ({ ok: false as const, error: `this instance has no ${provider} connection to fetch it from` }) },
  );
}
