import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/index.js';
import type { WardenConfig } from '../config/schema/index.js';
import { auditAccess } from './access-audit.js';

function config(raw: Record<string, unknown>): WardenConfig {
  const parsed = parseConfig(raw);
  if (!parsed.ok) throw parsed.error;
  return parsed.value.config;
}

const ids = (c: WardenConfig) => auditAccess(c).map((f) => `${f.id}: ${f.message}`);

describe('auditAccess', () => {
  it('open DM and channel policies on the real Discord are warnings', () => {
    expect(ids(config({ channels: { discord: { token: 't' } } }))).toEqual([
      'access.dm-open: channels.discord.dmPolicy (default) is open: anyone who can DM the bot on discord gets a model turn',
      'access.group-open: channels.discord.groupPolicy (default) is open: anyone in any guild the bot is in can make it act',
    ]);
  });

  it('closed policies, or a platform on loopback (a local stand-in), are not', () => {
    expect(ids(config({ channels: { discord: { token: 't', dmPolicy: 'pairing', groupPolicy: 'allowlist' }, slack: { botToken: 'x', dmPolicy: 'disabled', groupPolicy: 'disabled' } } }))).toEqual([]);
    expect(ids(config({ channels: { discord: { token: 't', apiBaseUrl: 'http://127.0.0.1:9/api' } } }))).toEqual([]);
  });

  it.each([
    ['an undefined access group', { allowFrom: ['group:ops'] }, 'access group "ops" is not defined'],
    ['a name instead of an id', { allowFrom: ['@alice'] }, 'is not a discord user id'],
    ['a role name', { guilds: { '1': { roles: ['admins'] } } }, '"admins" is not a Discord role id'],
    ['a role in the Discord DM allowlist', { allowFrom: ['role:300000000000000077'] }, 'a DM carries no roles'],
    ['a Slack group on Discord', { allowFrom: ['usergroup:S1'] }, 'usergroup: entries name Slack user groups'],
    ['a Slack user on Discord', { allowFrom: ['slack:U1'] }, 'names a slack user, never a discord one'],
  ])('reports %s', (_n, discord, text) => {
    const found = ids(config({ channels: { discord: { token: 't', apiBaseUrl: 'http://127.0.0.1:9/api', ...discord } } }));
    expect(found).toHaveLength(1);
    expect(found[0]).toContain(text);
  });

  it('well-formed entries are not reported', () => {
    const c = config({
      accessGroups: { ops: ['1'] },
      channels: {
        discord: { token: 't', apiBaseUrl: 'http://127.0.0.1:9/api', allowFrom: ['400000000000000001', 'discord:400000000000000002', 'group:ops', '*'], guilds: { '1': { roles: ['300000000000000077'] } } },
        slack: { botToken: 'x', apiUrl: 'http://127.0.0.1:9/api/', allowFrom: ['U0000ALICE', 'usergroup:S0000ENG'] },
      },
    });
    expect(ids(c)).toEqual([]);
  });
});
