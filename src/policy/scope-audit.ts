import type { WardenConfig } from '../config/schema/index.js';
import type { AuditFinding } from '../config/audit-finding.js';
import { isIdKey } from './channel-scope.js';
import { keyPath } from './keys.js';

/**
 * `warden audit` on scopes keyed by a name others choose (policy/channel-scope.ts): a Discord
 * guild keyed by slug or with a `slug` field, a channel name key under a guild not keyed by id
 * (`*` or a slug), a Slack `#name` or `name` key. Without `dangerouslyAllowNameMatching` such a
 * scope only removes tools, and what else it sets is ignored — the finding says what; with the
 * opt-in anyone who renames a guild or channel to match takes the whole scope.
 */

interface NamedScope {
  path: string;
  name: string;
  platform: 'discord' | 'slack';
  /** Settings a name match does not apply without the opt-in. */
  ignored: string[];
}

interface ScopeSettings {
  requireMention?: boolean | undefined;
  streaming?: boolean | undefined;
  approvals?: unknown;
}

const settingsOf = (scope: ScopeSettings): string[] =>
  (['requireMention', 'streaming', 'approvals'] as const).filter((k) => scope[k] !== undefined);

function namedScopes(config: WardenConfig): NamedScope[] {
  const out: NamedScope[] = [];
  const guilds = config.channels.discord?.guilds ?? {};
  for (const [key, guild] of Object.entries(guilds)) {
    const path = keyPath('channels.discord.guilds', key);
    const byId = key !== '*' && isIdKey(key, 'discord');
    if (key !== '*' && !byId) out.push({ path, name: `a guild named "${key}"`, platform: 'discord', ignored: [...settingsOf(guild), ...(Object.keys(guild.channels).length > 0 ? ['its channels (they only restrict)'] : [])] });
    if (guild.slug !== undefined) out.push({ path: `${path}.slug`, name: `a guild named "${guild.slug}"`, platform: 'discord', ignored: byId ? ['everything (a guild matched by its slug field only restricts)'] : [] });
    // Channel name keys are trusted inside a guild keyed by id: only that guild's admins name its channels.
    if (byId) continue;
    for (const [ck, channel] of Object.entries(guild.channels)) {
      if (ck === '*' || isIdKey(ck.replace(/^#/, ''), 'discord')) continue;
      out.push({ path: keyPath(`${path}.channels`, ck), name: `a channel named "${ck.replace(/^#/, '')}"`, platform: 'discord', ignored: settingsOf(channel) });
    }
  }
  for (const [key, channel] of Object.entries(config.channels.slack?.channels ?? {})) {
    if (key === '*' || isIdKey(key, 'slack')) continue;
    out.push({ path: keyPath('channels.slack.channels', key), name: `a channel named "${key.replace(/^#/, '')}"`, platform: 'slack', ignored: settingsOf(channel) });
  }
  return out;
}

export function auditNameKeyedScopes(config: WardenConfig): AuditFinding[] {
  const findings: AuditFinding[] = [];
  for (const scope of namedScopes(config)) {
    const optIn = scope.platform === 'discord' ? config.channels.discord?.dangerouslyAllowNameMatching === true : config.channels.slack?.dangerouslyAllowNameMatching === true;
    const who = scope.platform === 'discord' ? 'any guild admin who gives' : 'any workspace member who gives';
    const fix = scope.platform === 'discord' ? 'key the scope by the guild id (and channels by id, or by name inside a guild keyed by id)' : 'key the scope by the channel id (C…/G…)';
    if (optIn) {
      findings.push({
        id: 'channels.name-keyed-scope',
        severity: 'warn',
        message: `${scope.path} is matched by name (channels.${scope.platform}.dangerouslyAllowNameMatching): ${who} ${scope.name} its policy and settings`,
        fix: `${fix}, and turn channels.${scope.platform}.dangerouslyAllowNameMatching off`,
      });
    } else {
      const ignored = scope.ignored.length > 0 ? `; ignored: ${scope.ignored.join(', ')}` : '';
      findings.push({
        id: 'channels.name-keyed-scope',
        severity: 'warn',
        message: `${scope.path} is keyed by a name others choose: ${who} ${scope.name} gets its restrictions only, and renaming the one you meant escapes them${ignored}`,
        fix,
      });
    }
  }
  return findings;
}
