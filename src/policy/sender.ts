import type { ToolsBySenderConfig } from '../config/schema/policy.js';
import { keyPath } from './keys.js';

/** Who sent the message, as far as `toolsBySender` keys can tell. */
export interface SenderIdentity {
  provider: string;
  senderId?: string | undefined;
  senderUsername?: string | undefined;
  senderName?: string | undefined;
}

export interface SenderMatch {
  key: string;
  path: string;
  value: ToolsBySenderConfig[string];
}

const norm = (s: string) => s.trim().toLowerCase();

/**
 * The `toolsBySender` entry for this sender (reference §3.4). Keys: `channel:<provider>:<id>`,
 * `id:<id>` (a bare key is a legacy id), `username:<name>` (leading `@` ignored), `name:<name>`
 * and `*`; that is also the priority. Keys and values compare trimmed and case-insensitively;
 * the first key of a kind wins. A name never matches an id key.
 */
export function matchSender(map: ToolsBySenderConfig | undefined, who: SenderIdentity, base: string): SenderMatch | undefined {
  if (!map) return undefined;
  const id = who.senderId ? norm(who.senderId) : undefined;
  const username = who.senderUsername ? norm(who.senderUsername).replace(/^@/, '') : undefined;
  const name = who.senderName ? norm(who.senderName) : undefined;
  const provider = norm(who.provider);
  let best: { rank: number; key: string } | undefined;
  for (const key of Object.keys(map)) {
    const rank = rankKey(norm(key), { id, username, name, provider });
    if (rank !== undefined && (!best || rank < best.rank)) best = { rank, key };
  }
  if (!best) return undefined;
  return { key: best.key, path: keyPath(base, best.key), value: map[best.key]! };
}

function rankKey(
  key: string,
  who: { id: string | undefined; username: string | undefined; name: string | undefined; provider: string },
): number | undefined {
  if (key === '*') return 5;
  const colon = key.indexOf(':');
  const kind = colon > 0 ? key.slice(0, colon) : undefined;
  const rest = colon > 0 ? key.slice(colon + 1).trim() : key;
  switch (kind) {
    case 'channel': {
      const sep = rest.indexOf(':');
      if (sep <= 0 || !who.id) return undefined;
      return rest.slice(0, sep).trim() === who.provider && rest.slice(sep + 1).trim() === who.id ? 0 : undefined;
    }
    case 'id':
      return who.id !== undefined && rest === who.id ? 1 : undefined;
    case 'username':
      return who.username !== undefined && rest.replace(/^@/, '') === who.username ? 3 : undefined;
    case 'name':
      return who.name !== undefined && rest === who.name ? 4 : undefined;
    case 'e164':
      return undefined;
    default:
      // Untyped (legacy) keys are ids.
      return who.id !== undefined && key === who.id ? 2 : undefined;
  }
}
