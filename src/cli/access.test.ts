import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../cli.js';
import { EXIT } from './args.js';

const CONFIG = `
owners: { discord: ["42"] }
accessGroups:
  ops: ["role:900", "U7"]
channels:
  discord:
    dmPolicy: pairing
    allowFrom: ["group:ops"]
    groupPolicy: allowlist
    guilds:
      "111":
        roles: ["900"]
  slack:
    dmPolicy: allowlist
    allowFrom: ["usergroup:S1"]
    allowBots: mentions
tools:
  toolsBySender:
    "role:900": { deny: [exec] }
`;

async function run(argv: string[]) {
  const cwd = mkdtempSync(path.join(tmpdir(), 'warden-access-'));
  writeFileSync(path.join(cwd, 'warden.config.yaml'), CONFIG);
  let stdout = '';
  let stderr = '';
  const code = await main(argv, { cwd, env: {}, stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
  return { code, stdout, stderr };
}

describe('warden access check', () => {
  it.each([
    ['an owner DM', ['--provider', 'discord', '--sender', '42'], EXIT.ok, 'allowed (owner) by owners.discord'],
    ['a stranger DM under pairing', ['--provider', 'discord', '--sender', '7'], EXIT.ask, 'refused (pairing-required) by channels.discord.dmPolicy'],
    ['a paired stranger', ['--provider', 'discord', '--sender', '7', '--paired'], EXIT.ok, 'allowed (paired)'],
    ['a member with the role in the guild', ['--provider', 'discord', '--guild', '111', '--channel', '5', '--sender', '7', '--roles', '900'], EXIT.ok, 'allowed (group-listed) by channels.discord.guilds.111.roles via role:900'],
    ['a member without it', ['--provider', 'discord', '--guild', '111', '--channel', '5', '--sender', '7'], EXIT.deny, 'refused (sender-not-listed)'],
    ['an unlisted guild', ['--provider', 'discord', '--guild', '222', '--channel', '5', '--sender', '7', '--roles', '900'], EXIT.deny, 'refused (guild-not-listed)'],
    ['a bot', ['--provider', 'discord', '--guild', '111', '--channel', '5', '--sender', '7', '--roles', '900', '--bot'], EXIT.deny, 'refused (bot) by channels.discord.allowBots'],
    ['a bot that mentions this bot, under allowBots: mentions', ['--provider', 'slack', '--channel', 'C1', '--sender', 'B1', '--bot', '--mentions'], EXIT.ok, 'allowed (group-open)'],
    ['a bot that does not, under allowBots: mentions', ['--provider', 'slack', '--channel', 'C1', '--sender', 'B1', '--bot'], EXIT.deny, 'refused (bot) by channels.slack.allowBots'],
    ['a Slack user group member', ['--provider', 'slack', '--sender', 'U9', '--usergroups', 'S1'], EXIT.ok, 'via usergroup:S1'],
    ['a Slack user through an access group', ['--provider', 'slack', '--sender', 'U7'], EXIT.deny, 'refused (dm-not-allowed)'],
  ])('%s', async (_name, flags, code, text) => {
    const r = await run(['access', 'check', ...flags]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(code);
    expect(r.stdout).toContain(text);
  });

  it('--json carries the decision and the settings with their keys', async () => {
    const r = await run(['access', 'check', '--provider', 'discord', '--sender', '7', '--json']);
    expect(JSON.parse(r.stdout)).toMatchObject({ decision: { allowed: false, reason: 'pairing-required', reply: 'pairing' }, settings: { dmPolicy: { value: 'pairing', path: 'channels.discord.dmPolicy' } } });
  });

  it('bad input exits 2', async () => {
    expect((await run(['access'])).code).toBe(EXIT.badInput);
    expect((await run(['access', 'check', '--sendr', '7'])).stderr).toContain('did you mean --sender');
  });

  it('warden tools reads role keys from --roles and names the key', async () => {
    const r = await run(['tools', '--provider', 'discord', '--guild', '111', '--channel', '5', '--sender', '7', '--roles', '900', '--explain', 'exec']);
    expect(r.stdout).toContain('tools.toolsBySender["role:900"]');
    expect(r.stdout).toContain('access: allowed (group-listed) by channels.discord.guilds.111.roles via role:900');
  });
});
