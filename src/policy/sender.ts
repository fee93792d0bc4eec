import type { ToolsBySenderConfig } from '../config/schema/policy.js';
import type { AccessGroupsConfig } from '../config/schema/access-groups.js';
import { keyPath } from './keys.js';
import { describeMatch, matchPrincipal, type PrincipalMatch } from './principals.js';

/** Who sent the message, as far as `toolsBySender` keys can tell. */
export interface SenderIdentity {
  provider: string;
  senderId?: string | undefined;
  senderUsername?: string | undefined;
  senderName?: string | undefined;
  /** Discord role ids held where the message was sent (`role:<id>` keys). */
  senderRoleIds?: readonly string[] | undefined;
  /** Slack user group ids (`usergroup:<id>` keys). */
  senderUsergroupIds?: readonly string[] | undefined;
}

export interface SenderMatch {
  key: string;
  path: string;
  value: ToolsBySenderConfig[string];
  /** For a `role:`, `usergroup:` or `group:` key: what matched (`group:ops (role:9)`), for `--explain`. */
  via?: string | undefined;
}

const norm = (s: string) => s.trim().toLowerCase();

/**
 * The `toolsBySender` entry for this sender (reference §3.4). Keys: `channel:<provider>:<id>`,
 * `id:<id>` (a bare key is a legacy id), then Warden's membership keys `role:<id>` (Discord),
 * `usergroup:<id>` (Slack) and `group:<name>`/`accessGroup:<name>` (an access group), then
 * `username:<name>` (leading `@` ignored), `name:<name>` and `*`; that is also the priority.
 * Keys and values compare trimmed and case-insensitively; the first key of a kind wins. A name
 * never matches an id key. Membership keys are read by `matchPrincipal`, the one reading of a
 * list of people, so a role id never matches a user id and memberships not known never match.
 */
export function matchSender(map: ToolsBySenderConfig | undefined, who: SenderIdentity, base: string, groups?: AccessGroupsConfig): SenderMatch | undefined {
  if (!map) return undefined;
  const membership = matchMembershipKey(Object.keys(map), who, groups);
  const id = who.senderId ? norm(who.senderId) : undefined;
  const username = who.senderUsername ? norm(who.senderUsername).replace(/^@/, '') : undefined;
  const name = who.senderName ? norm(who.senderName) : undefined;
  const provider = norm(who.provider);
  let best: { rank: number; key: string; via?: string } | undefined;
  for (const key of Object.keys(map)) {
    const rank = rankKey(norm(key), { id, username, name, provider });
    if (rank !== undefined && (!best || rank < best.rank)) best = { rank, key };
  }
  if (membership && (!best || MEMBERSHIP_RANK < best.rank)) best = { rank: MEMBERSHIP_RANK, key: membership.entry, via: describeMatch(membership) };
  if (!best) return undefined;
  return { key: best.key, path: keyPath(base, best.key), value: map[best.key]!, ...(best.via !== undefined ? { via: best.via } : {}) };
}

/** Membership keys rank after ids (a person's own entry beats their role's) and before names. */
const MEMBERSHIP_RANK = 2.5;
const MEMBERSHIP_KINDS = new Set(['role', 'usergroup', 'group', 'accessgroup']);

function matchMembershipKey(keys: string[], who: SenderIdentity, groups: AccessGroupsConfig | undefined): PrincipalMatch | undefined {
  if (!who.senderId) return undefined;
  const membership = keys.filter((k) => {
    const colon = k.indexOf(':');
    return colon > 0 && MEMBERSHIP_KINDS.has(k.slice(0, colon).trim().toLowerCase());
  });
  if (membership.length === 0) return undefined;
  return matchPrincipal(membership, { provider: who.provider, userId: who.senderId, roleIds: who.senderRoleIds, usergroupIds: who.senderUsergroupIds }, groups);
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
    case 'role':
    case 'usergroup':
    case 'group':
    case 'accessgroup':
      // Membership keys: matchMembershipKey.
      return undefined;
    default:
      // Untyped (legacy) keys are ids.
      return who.id !== undefined && key === who.id ? 2 : undefined;
  }
}
