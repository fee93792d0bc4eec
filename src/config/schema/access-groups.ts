import * as z from 'zod';
import { lazySchema, once } from './lazy.js';

/**
 * One entry of a list of people, as every such list in the config spells it (`allowFrom`,
 * approvers, `toolsBySender` keys, access groups):
 *
 * - `<id>`, `id:<id>`, `user:<id>` or `<provider>:<id>` (OpenClaw's `discord:123…`) — one user;
 *   the provider form matches on that provider only;
 * - `role:<id>` — members of a Discord role (role ids only; names are chosen by any guild admin);
 * - `usergroup:<id>` — members of a Slack user group (`S…`);
 * - `group:<name>` or `accessGroup:<name>` (OpenClaw's spelling) — an entry of `accessGroups`;
 * - `*` — anyone (meaningful only where a list says who is let in).
 */
export const principalEntry = once(() => z.string().trim().min(1, 'an empty entry names nobody'));

/**
 * `accessGroups.<name>`: a named list of people, usable wherever a list of people is. Either a
 * plain list of entries (they apply on every provider) or OpenClaw's static form
 * `{type: "message.senders", members: {"*": [...], discord: [...], slack: [...]}}`. A group
 * grants nothing by itself; it matters where a list references it. Groups may not reference
 * other groups, so membership is one lookup and never a cycle.
 */
const groupMembers = once(() => z.array(principalEntry()));

export const accessGroupConfig = lazySchema(() => z.union([
  groupMembers(),
  z.strictObject({
    type: z.literal('message.senders'),
    members: z.record(z.string(), groupMembers()),
  }),
]));
export type AccessGroupConfig = z.infer<typeof accessGroupConfig>;

const GROUP_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

export const accessGroupsConfig = lazySchema(() => z
  .record(z.string(), z.unknown())
  .superRefine((groups, ctx) => {
    for (const [name, value] of Object.entries(groups)) {
      if (!GROUP_NAME.test(name)) {
        ctx.addIssue({ code: 'custom', path: [name], message: 'a group name is letters, digits, ".", "_" or "-"' });
      }
      if (value !== null && typeof value === 'object' && !Array.isArray(value) && (value as { type?: unknown }).type === 'discord.channelAudience') {
        ctx.addIssue({
          code: 'custom',
          path: [name, 'type'],
          message: 'Warden does not resolve "discord.channelAudience" groups (a REST lookup per message); list the members or a role:<id>',
        });
      }
    }
  })
  .pipe(z.record(z.string(), accessGroupConfig))
  .superRefine((groups, ctx) => {
    for (const [name, group] of Object.entries(groups)) {
      const lists = Array.isArray(group) ? [['', group] as const] : Object.entries(group.members);
      for (const [key, list] of lists) {
        list.forEach((entry, i) => {
          if (parseEntry(entry).kind === 'group') {
            ctx.addIssue({
              code: 'custom',
              path: key === '' ? [name, i] : [name, 'members', key, i],
              message: 'an access group may not reference another group; list its members here',
            });
          }
        });
      }
    }
  }));
export type AccessGroupsConfig = z.infer<typeof accessGroupsConfig>;

/** What an entry names, parsed once. */
export type ParsedEntry =
  | { kind: 'anyone' }
  | { kind: 'user'; id: string; provider?: string }
  | { kind: 'role'; id: string }
  | { kind: 'usergroup'; id: string }
  | { kind: 'group'; name: string };

const PROVIDER_PREFIXES = new Set(['discord', 'slack', 'web']);

/** The parse of one entry; ids and kinds compare case-insensitively (as owners do). */
export function parseEntry(raw: string): ParsedEntry {
  const entry = raw.trim();
  if (entry === '*') return { kind: 'anyone' };
  const colon = entry.indexOf(':');
  if (colon <= 0) return { kind: 'user', id: entry.toLowerCase() };
  const kind = entry.slice(0, colon).toLowerCase();
  const rest = entry.slice(colon + 1).trim();
  switch (kind) {
    case 'role':
      return { kind: 'role', id: rest.toLowerCase() };
    case 'usergroup':
      return { kind: 'usergroup', id: rest.toLowerCase() };
    case 'group':
    case 'accessgroup':
      return { kind: 'group', name: rest };
    case 'id':
    case 'user':
      return { kind: 'user', id: rest.toLowerCase() };
    default:
      if (PROVIDER_PREFIXES.has(kind)) return { kind: 'user', id: rest.toLowerCase(), provider: kind };
      // Not a known prefix: a whole id that happens to hold a colon.
      return { kind: 'user', id: entry.toLowerCase() };
  }
}

/** Every group an entry list references that `accessGroups` does not define, for config checks. */
export function unknownGroupRefs(entries: readonly string[], groups: AccessGroupsConfig | undefined): string[] {
  const missing: string[] = [];
  for (const entry of entries) {
    const parsed = parseEntry(entry);
    if (parsed.kind === 'group' && !(groups && Object.hasOwn(groups, parsed.name))) missing.push(parsed.name);
  }
  return missing;
}
