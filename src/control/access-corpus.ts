import type { WardenConfig } from '../config/index.js';
import { parseEntry } from '../config/schema/index.js';
import { accessSettings, decideAccess, type AccessWhere } from '../policy/access.js';
import type { Actor } from '../turn/turn-context.js';

/**
 * The people a config change's access decisions are judged on: whoever either config names in a
 * list of people (owners, `allowFrom`, scope `users`/`roles`, access group members,
 * `toolsBySender` keys) — as the user the entry names, and for a membership entry as a member of
 * that role or user group — plus someone nobody names, each also as a bot and as a paired sender.
 * Access is judged by `decideAccess` under both configs over this corpus: a refusal that turns
 * into a let-in is a widening. What a finite corpus cannot show (a wildcard, a new entry naming
 * someone new) shows up as its own member, since every entry either config writes is tried.
 */

const PROVIDERS = ['discord', 'slack'] as const;
type Provider = (typeof PROVIDERS)[number];

/** A list of people's entries in both configs, per provider (an entry without a provider prefix applies to both). */
function entriesOf(c: WardenConfig): Array<{ entry: string; provider?: Provider | undefined }> {
  const out: Array<{ entry: string; provider?: Provider | undefined }> = [];
  const push = (list: readonly string[] | undefined, provider?: Provider) => list?.forEach((entry) => out.push({ entry, provider }));
  const d = c.channels.discord;
  if (d) {
    push(d.allowFrom, 'discord');
    for (const g of Object.values(d.guilds)) {
      push(g.users, 'discord');
      push(g.roles?.map((r) => `role:${r.replace(/^role:/i, '')}`), 'discord');
      for (const ch of Object.values(g.channels)) {
        push(ch.users, 'discord');
        push(ch.roles?.map((r) => `role:${r.replace(/^role:/i, '')}`), 'discord');
      }
    }
  }
  const s = c.channels.slack;
  if (s) {
    push(s.allowFrom, 'slack');
    for (const ch of Object.values(s.channels)) push(ch.users, 'slack');
  }
  for (const group of Object.values(c.accessGroups)) {
    if (Array.isArray(group)) push(group);
    else for (const [k, list] of Object.entries(group.members)) push(list, k === 'discord' || k === 'slack' ? k : undefined);
  }
  const senderKeys = (map: Record<string, unknown> | undefined, provider?: Provider) => push(Object.keys(map ?? {}), provider);
  senderKeys(c.tools.toolsBySender);
  for (const a of c.agents.list) senderKeys(a.tools?.toolsBySender);
  for (const g of Object.values(d?.guilds ?? {})) {
    senderKeys(g.toolsBySender, 'discord');
    for (const ch of Object.values(g.channels)) senderKeys(ch.toolsBySender, 'discord');
  }
  for (const ch of Object.values(s?.channels ?? {})) senderKeys(ch.toolsBySender, 'slack');
  for (const p of PROVIDERS) push(c.owners[p], p);
  return out;
}

/** The actors of the corpus per provider (`web` and `http` get the user ids only). */
export function actorCorpus(configs: readonly WardenConfig[]): Map<string, Actor[]> {
  const out = new Map<string, Map<string, Actor>>();
  const add = (provider: string, actor: Actor) => {
    const key = JSON.stringify(actor);
    let m = out.get(provider);
    if (!m) out.set(provider, (m = new Map()));
    if (!m.has(key)) m.set(key, actor);
  };
  for (const p of [...PROVIDERS, 'web', 'http']) add(p, { id: 'someone-else' });
  for (const c of configs) {
    for (const { entry, provider } of entriesOf(c)) {
      const parsed = parseEntry(entry.startsWith('channel:') ? entry.slice(entry.lastIndexOf(':') + 1) : entry);
      const targets = provider ? [provider] : [...PROVIDERS, 'web', 'http'];
      switch (parsed.kind) {
        case 'user':
          for (const p of targets) if (!parsed.provider || parsed.provider === p) add(p, { id: parsed.id });
          break;
        case 'role':
          // A member of the role, and a user whose id is the role's (never a member).
          add('discord', { id: `member-of-${parsed.id}`, roleIds: [parsed.id] });
          add('discord', { id: parsed.id });
          break;
        case 'usergroup':
          add('slack', { id: `member-of-${parsed.id}`, usergroupIds: [parsed.id] });
          add('slack', { id: parsed.id });
          break;
        default:
          // `*` and `group:` references: the group's members are entries of their own above.
          break;
      }
    }
  }
  return new Map([...out].map(([p, m]) => [p, [...m.values()]]));
}

/** Where access is judged: DMs, and every guild/channel scope either config names (by id and by name), plus unlisted ones. */
function wheres(configs: readonly WardenConfig[]): AccessWhere[] {
  const out: AccessWhere[] = [];
  const guilds = new Set(['unlisted-guild']);
  const channels = new Set(['unlisted-channel']);
  const slackChannels = new Set(['unlisted-channel']);
  for (const c of configs) {
    for (const [g, guild] of Object.entries(c.channels.discord?.guilds ?? {})) {
      guilds.add(g);
      for (const ch of Object.keys(guild.channels)) channels.add(ch);
    }
    for (const ch of Object.keys(c.channels.slack?.channels ?? {})) slackChannels.add(ch);
  }
  for (const p of PROVIDERS) out.push({ provider: p, chat: 'dm', channelId: 'dm' });
  for (const guildId of guilds) for (const ch of channels) {
    out.push({ provider: 'discord', chat: 'channel', guildId, channelId: ch, channelName: ch.replace(/^#/, '') });
    out.push({ provider: 'discord', chat: 'channel', guildId, channelId: ch });
  }
  for (const ch of slackChannels) {
    out.push({ provider: 'slack', chat: 'channel', guildId: 'T', channelId: ch, channelName: ch.replace(/^#/, '') });
    out.push({ provider: 'slack', chat: 'channel', guildId: 'T', channelId: ch });
  }
  return out;
}

const isOwner = (c: WardenConfig, provider: string, id: string | undefined) =>
  id !== undefined && ((c.owners as Record<string, readonly string[] | undefined>)[provider] ?? []).some((o) => o.trim().toLowerCase() === id.trim().toLowerCase());

/** Every access decision that moved from refused to let in, with where and who. */
export function accessWidening(before: WardenConfig, after: WardenConfig): string[] {
  const actors = actorCorpus([before, after]);
  const moved: string[] = [];
  for (const where of wheres([before, after])) {
    for (const actor of actors.get(where.provider) ?? []) {
      // A bot is tried with and without a mention of this bot (`allowBots: "mentions"` sits between false and true).
      for (const [isBot, mentionsBot] of [[false, false], [true, false], [true, true]] as const) {
        for (const paired of [false, true]) {
          const sender = (c: WardenConfig) => ({ provider: where.provider, userId: actor.id ?? '', roleIds: actor.roleIds, usergroupIds: actor.usergroupIds, isBot, mentionsBot, paired, isOwner: !isBot && isOwner(c, where.provider, actor.id) });
          const b = decideAccess(before, where, sender(before));
          if (b.allowed) continue;
          const a = decideAccess(after, where, sender(after));
          if (!a.allowed) continue;
          const place = where.chat === 'dm' ? `${where.provider} DMs` : `${where.provider} ${where.guildId ? `guild ${where.guildId} ` : ''}${where.channelName ? `#${where.channelName}` : `channel ${where.channelId}`}`;
          const who = `${isBot ? (mentionsBot ? 'bot (mentioning this bot) ' : 'bot ') : ''}${paired ? 'paired ' : ''}${actor.id}${actor.roleIds ? ` (role ${actor.roleIds.join(',')})` : ''}${actor.usergroupIds ? ` (user group ${actor.usergroupIds.join(',')})` : ''}`;
          moved.push(`${who} in ${place}: refused (${b.reason}) → let in by ${a.path}`);
        }
      }
    }
  }
  return moved;
}

/** Rules a decision corpus cannot show: limits and the bot loop breaker are counts, not yes/no. */
export function accessLimitRules(before: WardenConfig, after: WardenConfig): Array<{ path: string; why: string }> {
  const out: Array<{ path: string; why: string }> = [];
  for (const bucket of ['sender', 'channel', 'agent'] as const) {
    const b = before.rateLimit?.[bucket];
    const a = after.rateLimit?.[bucket];
    if (!b) continue;
    const burst = (x: { perMinute: number; burst?: number | undefined }) => x.burst ?? Math.max(1, Math.floor(x.perMinute));
    if (!a) out.push({ path: `rateLimit.${bucket}`, why: `the ${bucket} rate limit is removed` });
    else if (a.perMinute > b.perMinute || burst(a) > burst(b)) out.push({ path: `rateLimit.${bucket}`, why: `the ${bucket} rate limit is raised` });
  }
  // The loop breaker of every place either config names, for an allowed bot.
  for (const where of wheres([before, after])) {
    const b = accessSettings(before, where).botLoop;
    const a = accessSettings(after, where).botLoop;
    const looser = (b.enabled && !a.enabled) || a.maxEventsPerWindow > b.maxEventsPerWindow || a.windowSeconds < b.windowSeconds || a.cooldownSeconds < b.cooldownSeconds;
    if (looser) out.push({ path: a.path === 'default' ? b.path : a.path, why: 'bot loop protection is loosened' });
  }
  return out;
}
