import type { AuditFinding } from '../config/audit-finding.js';
import { isLoopbackHost, parseEntry, type WardenConfig } from '../config/schema/index.js';
import { accessSettings } from './access.js';

/**
 * `warden audit`'s access findings:
 * - an open DM policy or an open channel policy on a platform reached beyond loopback (the real
 *   Discord or Slack, not a local stand-in): anyone who can DM or mention the bot gets a model
 *   turn — unbounded cost and an attack surface (warn; Warden's defaults are open, so configs
 *   written before these keys keep working, and this finding says where to close them);
 * - entries of a list of people that can never name anyone: an access group not defined, a
 *   Discord id that is not a snowflake (a name, `@alice`), a Slack id that is not `U…`/`W…`/`B…`,
 *   a `role:` entry on Slack or a `usergroup:` entry on Discord, a role id that is not a snowflake.
 */

const DISCORD_ID = /^\d{15,25}$/;
const SLACK_USER = /^[UWB][A-Z0-9]{2,}$/i;
const SLACK_GROUP = /^S[A-Z0-9]{2,}$/i;

type Platform = 'discord' | 'slack';

/** Where a platform's API is: its own host unless a base URL points elsewhere. */
function beyondLoopback(config: WardenConfig, platform: Platform): boolean {
  const url = platform === 'discord' ? config.channels.discord?.apiBaseUrl : config.channels.slack?.apiUrl;
  if (!url) return true;
  try {
    return !isLoopbackHost(new URL(url).hostname.replace(/^\[|\]$/g, ''));
  } catch {
    return true;
  }
}

/** Why an entry can never name anyone on `platform`, or undefined. */
export function entryProblem(entry: string, platform: Platform, config: WardenConfig): string | undefined {
  const parsed = parseEntry(entry);
  switch (parsed.kind) {
    case 'anyone':
      return undefined;
    case 'group':
      return Object.hasOwn(config.accessGroups, parsed.name) ? undefined : `access group "${parsed.name}" is not defined in accessGroups`;
    case 'role':
      if (platform !== 'discord') return 'role: entries name Discord roles; on Slack use usergroup:<id>';
      return DISCORD_ID.test(parsed.id) ? undefined : `"${parsed.id}" is not a Discord role id (role names are not matched)`;
    case 'usergroup':
      if (platform !== 'slack') return 'usergroup: entries name Slack user groups; on Discord use role:<id>';
      return SLACK_GROUP.test(parsed.id) ? undefined : `"${parsed.id}" is not a Slack user group id (S…)`;
    case 'user': {
      if (parsed.provider !== undefined && parsed.provider !== platform) return `names a ${parsed.provider} user, never a ${platform} one`;
      const ok = platform === 'discord' ? DISCORD_ID.test(parsed.id) : SLACK_USER.test(parsed.id);
      return ok ? undefined : `"${parsed.id}" is not a ${platform} user id (names are never matched: anyone can pick one)`;
    }
  }
}

interface NamedList {
  path: string;
  entries: readonly string[];
  platform: Platform;
}

function listsOf(config: WardenConfig): NamedList[] {
  const lists: NamedList[] = [];
  const d = config.channels.discord;
  if (d) {
    if (d.allowFrom) lists.push({ path: 'channels.discord.allowFrom', entries: d.allowFrom, platform: 'discord' });
    for (const [gk, g] of Object.entries(d.guilds)) {
      const gp = `channels.discord.guilds.${gk}`;
      if (g.users) lists.push({ path: `${gp}.users`, entries: g.users, platform: 'discord' });
      if (g.roles) lists.push({ path: `${gp}.roles`, entries: g.roles.map((r) => (r.toLowerCase().startsWith('role:') ? r : `role:${r}`)), platform: 'discord' });
      for (const [ck, c] of Object.entries(g.channels)) {
        if (c.users) lists.push({ path: `${gp}.channels.${ck}.users`, entries: c.users, platform: 'discord' });
        if (c.roles) lists.push({ path: `${gp}.channels.${ck}.roles`, entries: c.roles.map((r) => (r.toLowerCase().startsWith('role:') ? r : `role:${r}`)), platform: 'discord' });
      }
    }
  }
  const s = config.channels.slack;
  if (s) {
    if (s.allowFrom) lists.push({ path: 'channels.slack.allowFrom', entries: s.allowFrom, platform: 'slack' });
    for (const [ck, c] of Object.entries(s.channels)) if (c.users) lists.push({ path: `channels.slack.channels.${ck}.users`, entries: c.users, platform: 'slack' });
  }
  return lists;
}

export function auditAccess(config: WardenConfig): AuditFinding[] {
  const findings: AuditFinding[] = [];
  for (const platform of ['discord', 'slack'] as const) {
    const block = config.channels[platform];
    if (!block || !beyondLoopback(config, platform)) continue;
    const dm = accessSettings(config, { provider: platform, chat: 'dm' });
    if (dm.dmPolicy.value === 'open') {
      findings.push({
        id: 'access.dm-open',
        severity: 'warn',
        message: `${dm.dmPolicy.path} is open: anyone who can DM the bot on ${platform} gets a model turn`,
        fix: `set channels.${platform}.dmPolicy: pairing (owners approve newcomers with /pair) or allowlist with allowFrom`,
      });
    }
    const group = accessSettings(config, { provider: platform, chat: 'channel' });
    if (group.groupPolicy.value === 'open') {
      findings.push({
        id: 'access.group-open',
        severity: 'warn',
        message: `${group.groupPolicy.path} is open: anyone in any ${platform === 'discord' ? 'guild' : 'workspace channel'} the bot is in can make it act`,
        fix: `set channels.${platform}.groupPolicy: allowlist and list the ${platform === 'discord' ? 'guilds (with users/roles)' : 'channels (with users)'} it serves`,
      });
    }
  }
  for (const list of listsOf(config)) {
    for (const entry of list.entries) {
      // A Discord DM carries no member object: a role in the DM allowlist lets nobody in there.
      const dmRole = list.path === 'channels.discord.allowFrom' && parseEntry(entry).kind === 'role' ? 'a DM carries no roles (Discord sends no member object with it); list the user ids' : undefined;
      const problem = dmRole ?? entryProblem(entry, list.platform, config);
      if (problem) {
        findings.push({ id: 'access.entry-names-nobody', severity: 'warn', message: `${list.path} entry "${entry}" names nobody: ${problem}`, fix: `use platform ids in ${list.path}` });
      }
    }
  }
  return findings;
}
