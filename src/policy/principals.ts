import { parseEntry, type AccessGroupsConfig, type ParsedEntry } from '../config/schema/access-groups.js';

/**
 * A person as the platform describes them at the moment they act: their user id and the roles
 * (Discord, from the member object the platform sends) or user groups (Slack, from
 * `usergroups.users.list`) they belong to. Memberships unknown to the caller are absent, and an
 * absent membership never matches: a lookup that failed fails closed.
 */
export interface Principal {
  provider: string;
  userId: string;
  roleIds?: readonly string[] | undefined;
  usergroupIds?: readonly string[] | undefined;
}

/** Which entry let the person in, and through what, for `--explain` and audit rows. */
export interface PrincipalMatch {
  /** The entry of the list that matched, as written (`role:123`, `group:ops`, `U1`). */
  entry: string;
  via: 'anyone' | 'user' | 'role' | 'usergroup';
  /** The access group the match came through, when the entry was `group:<name>`. */
  group?: string;
  /** The group's member entry that matched, when through a group. */
  member?: string;
}

export interface MatchOptions {
  /** Whether `*` counts. Lists that say who decides (approvers, owners) never honour it. */
  wildcard?: boolean;
}

/**
 * The first entry of `entries` that names this person, directly or through an access group;
 * undefined when none does. The single place a list of people is read — allowlists, approvers,
 * `toolsBySender` role and group keys all call it, so `--explain` names the same entry the bot
 * acted on.
 */
export function matchPrincipal(
  entries: readonly string[] | undefined,
  who: Principal,
  groups: AccessGroupsConfig | undefined,
  options: MatchOptions = {},
): PrincipalMatch | undefined {
  if (!entries) return undefined;
  for (const entry of entries) {
    const parsed = parseEntry(entry);
    if (parsed.kind === 'group') {
      const members = groupMembers(groups, parsed.name, who.provider);
      for (const member of members) {
        const inner = parseEntry(member);
        // Groups cannot nest (the schema refuses it); a nested reference never matches.
        if (inner.kind === 'group') continue;
        const via = matchParsed(inner, who, options);
        if (via) return { entry, via, group: parsed.name, member };
      }
      continue;
    }
    const via = matchParsed(parsed, who, options);
    if (via) return { entry, via };
  }
  return undefined;
}

/** The members of a group that apply on a provider (a plain list applies everywhere). */
function groupMembers(groups: AccessGroupsConfig | undefined, name: string, provider: string): readonly string[] {
  if (!groups || !Object.hasOwn(groups, name)) return [];
  const group = groups[name]!;
  if (Array.isArray(group)) return group;
  const p = provider.toLowerCase();
  const shared = group.members['*'] ?? [];
  const own = Object.hasOwn(group.members, p) ? group.members[p]! : [];
  return [...shared, ...own];
}

function matchParsed(entry: Exclude<ParsedEntry, { kind: 'group' }>, who: Principal, options: MatchOptions): PrincipalMatch['via'] | undefined {
  switch (entry.kind) {
    case 'anyone':
      return options.wildcard ? 'anyone' : undefined;
    case 'user': {
      if (entry.provider !== undefined && entry.provider !== who.provider.toLowerCase()) return undefined;
      return who.userId.trim().toLowerCase() === entry.id ? 'user' : undefined;
    }
    case 'role':
      return who.provider.toLowerCase() === 'discord' && includesId(who.roleIds, entry.id) ? 'role' : undefined;
    case 'usergroup':
      return who.provider.toLowerCase() === 'slack' && includesId(who.usergroupIds, entry.id) ? 'usergroup' : undefined;
  }
}

const includesId = (ids: readonly string[] | undefined, id: string) => ids !== undefined && ids.some((x) => x.trim().toLowerCase() === id);

/** Whether any entry (through groups too) depends on memberships, so a caller knows to look them up. */
export function needsMemberships(entries: readonly string[] | undefined, groups: AccessGroupsConfig | undefined): { roles: boolean; usergroups: boolean } {
  const out = { roles: false, usergroups: false };
  const visit = (e: string) => {
    const p = parseEntry(e);
    if (p.kind === 'role') out.roles = true;
    if (p.kind === 'usergroup') out.usergroups = true;
  };
  for (const entry of entries ?? []) {
    const p = parseEntry(entry);
    if (p.kind !== 'group') {
      visit(entry);
      continue;
    }
    const g = groups && Object.hasOwn(groups, p.name) ? groups[p.name]! : undefined;
    if (!g) continue;
    for (const m of Array.isArray(g) ? g : Object.values(g.members).flat()) visit(m);
  }
  return out;
}

/** A match in words: `role:123`, `group:ops (role:123)`. */
export function describeMatch(match: PrincipalMatch): string {
  return match.group !== undefined ? `${match.entry} (${match.member})` : match.entry;
}
