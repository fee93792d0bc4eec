import type { InboundMessage } from './inbound.js';

/**
 * The session a message belongs to (semantics §4):
 * - channel: `agent:<agentId>:<provider>:channel:<channelId>`
 * - thread:  the parent channel's key + `:thread:<threadId>`
 * - DM:      `agent:<agentId>:<provider>:direct:<userId>`, one session per user — two people's
 *   DMs never share a transcript (OpenClaw folds every DM into one main session by default).
 * - a fresh DM session (`/new` in the web chat): the DM's key + `:session:<sessionId>`; the
 *   earlier sessions keep their keys and transcripts.
 *
 * Peer ids are lower-cased as OpenClaw does, so an id written in either case maps to one
 * session; platform ids are case-insensitive in practice (Slack `C…`/`U…`, numeric snowflakes).
 */
export function sessionKeyFor(
  agentId: string,
  message: Pick<InboundMessage, 'provider' | 'chatType' | 'channelId' | 'threadId' | 'senderId'> & Partial<Pick<InboundMessage, 'sessionId'>>,
): string {
  const base = `agent:${agentId.toLowerCase()}:${message.provider}`;
  if (message.chatType === 'dm') return `${base}:direct:${peer(message.senderId)}${message.sessionId ? `:session:${peer(message.sessionId)}` : ''}`;
  const channel = `${base}:channel:${peer(message.channelId)}`;
  if (message.chatType === 'thread' && message.threadId) return `${channel}:thread:${peer(message.threadId)}`;
  return channel;
}

/** Ids go into a colon-separated key: trim, lower-case, and keep a colon from forging segments. */
function peer(id: string): string {
  return id.trim().toLowerCase().replaceAll(':', '%3a');
}

/** The parts of a session key, for `/status` and logs; undefined for a key Warden did not build. */
export function parseSessionKey(key: string):
  | { agentId: string; provider: string; kind: 'direct' | 'channel'; peerId: string; threadId?: string; sessionId?: string }
  | undefined {
  const m = /^agent:([^:]+):([^:]+):(direct|channel):([^:]+)(?::thread:([^:]+))?(?::session:([^:]+))?$/.exec(key);
  if (!m) return undefined;
  const [, agentId, provider, kind, peerId, threadId, sessionId] = m;
  if (sessionId && kind !== 'direct') return undefined;
  return { agentId: agentId!, provider: provider!, kind: kind as 'direct' | 'channel', peerId: peerId!, ...(threadId ? { threadId } : {}), ...(sessionId ? { sessionId } : {}) };
}
