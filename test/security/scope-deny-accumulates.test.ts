// A deny at a wider scope holds in every narrower one. The attacker writes (or talks an owner
// into) a narrower scope — a channel's own tools block, a sender entry, an allow-all — hoping it
// replaces the guild's deny as OpenClaw's "most specific scope decides alone" would. Every
// matched scope's policy applies; a narrower allow only narrows. Then the shipped team example,
// through the CLI every operator runs (`warden tools`, `--explain`).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli.js';
import { fate, surface } from '../../src/policy/testing.js';

const GUILD_DENY = 'channels.discord.guilds.111.tools.deny';
const guildWith = (guild: Record<string, unknown>) => ({ tools: { profile: 'coding', alsoAllow: ['browser'] }, channels: { discord: { token: 't', guilds: { '111': { tools: { deny: ['browser'] }, ...guild } } } } });
const at = (ctx: Record<string, unknown>) => ({ provider: 'discord', chat: 'channel' as const, guildId: '111', channelId: '222', channelName: 'general', senderId: '7', ...ctx });

describe('a narrower scope never undoes a wider deny', () => {
  const table: Array<[string, Record<string, unknown>, Record<string, unknown>, string, string]> = [
    ['a channel with a deny of its own', { channels: { general: { tools: { deny: ['exec'] } } } }, {}, 'browser', GUILD_DENY],
    ['a channel that allows *', { channels: { general: { tools: { allow: ['*'] } } } }, {}, 'browser', GUILD_DENY],
    ['a channel that allows the denied tool by name', { channels: { general: { tools: { allow: ['browser', 'read'] } } } }, {}, 'browser', GUILD_DENY],
    ['a channel with alsoAllow of the denied tool', { channels: { general: { tools: { alsoAllow: ['browser'] } } } }, {}, 'browser', GUILD_DENY],
    ['a channel with an empty deny list', { channels: { general: { tools: { deny: [] } } } }, {}, 'browser', GUILD_DENY],
    ['the channel keyed by id', { channels: { '222': { tools: { allow: ['*'] } } } }, {}, 'browser', GUILD_DENY],
    ['the channel keyed by #name', { channels: { '#general': { tools: { allow: ['*'] } } } }, {}, 'browser', GUILD_DENY],
    ['the * channel', { channels: { '*': { tools: { allow: ['*'] } } } }, {}, 'browser', GUILD_DENY],
    ['a sender entry in the channel allowing *', { channels: { general: { toolsBySender: { 'id:7': { allow: ['*'] } } } } }, {}, 'browser', GUILD_DENY],
    ['a wildcard sender entry in the channel', { channels: { general: { toolsBySender: { '*': { allow: ['*'] } } } } }, {}, 'browser', GUILD_DENY],
    ['a thread under the permissive channel', { channels: { general: { tools: { allow: ['*'] } } } }, { chat: 'thread', threadId: '333' }, 'browser', GUILD_DENY],
    ['a group alias of the tool denied at the guild (group:fs), allowed by name in the channel', { tools: { deny: ['group:fs'] }, channels: { general: { tools: { allow: ['write', 'read'] } } } }, {}, 'write', GUILD_DENY],
    ['a coupled tool: guild denies write, channel allows edit', { tools: { deny: ['write'] }, channels: { general: { tools: { allow: ['edit', 'read'] } } } }, {}, 'edit', GUILD_DENY],
    ['a coupled tool: guild denies exec, channel allows process', { tools: { deny: ['exec'] }, channels: { general: { tools: { allow: ['*'] } } } }, {}, 'process', GUILD_DENY],
  ];
  it.each(table)('%s', (_what, guild, ctx, tool, expected) => {
    expect(fate(surface(guildWith(guild), at(ctx)), tool)).toBe(expected);
  });

  it('a narrower allow only narrows: the channel allowlist removes what it does not name', () => {
    const result = surface(guildWith({ channels: { general: { tools: { allow: ['read'] } } } }), at({}));
    expect(fate(result, 'read')).toBe('kept');
    expect(fate(result, 'write')).toBe('group tools.allow');
    expect(fate(result, 'browser')).not.toBe('kept');
  });

  it('a guild sender entry still applies to that sender in every channel (and a channel sender entry only narrows it)', () => {
    const raw = guildWith({ toolsBySender: { 'id:7': { deny: ['web_fetch'] } }, channels: { general: { toolsBySender: { 'id:7': { allow: ['*'] } } } } });
    expect(fate(surface(raw, at({})), 'web_fetch')).toBe('channels.discord.guilds.111.toolsBySender["id:7"].deny');
    expect(fate(surface(raw, at({ senderId: '8' })), 'browser')).toBe(GUILD_DENY);
  });

  it('the trace shows each scope as its own step, the wider deny with its config key', () => {
    const trace = surface(guildWith({ channels: { general: { tools: { allow: ['*'] } } } }), at({})).trace('browser');
    const group = trace.filter((s) => s.step === 'group tools.allow');
    expect(group.map((s) => s.outcome)).toEqual(['kept', 'removed']);
    expect(group[1]).toMatchObject({ key: `${GUILD_DENY}[0]`, by: GUILD_DENY });
    expect(group[1]!.rule).toBe(`denied by ${GUILD_DENY}[0] = "browser"`);
  });
});

describe('the shipped team example (config/team.example.yaml)', () => {
  const file = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../config/team.example.yaml');
  const cwd = mkdtempSync(path.join(tmpdir(), 'warden-team-example-'));
  afterAll(() => rmSync(cwd, { recursive: true, force: true }));
  const env = { DISCORD_TOKEN: 't', SLACK_BOT_TOKEN: 'xoxb-t', SLACK_SIGNING_SECRET: 's' };
  const GUILD = '111111111111111111';
  async function tools(argv: string[]) {
    let stdout = '';
    const code = await main(['tools', '--config', file, '--provider', 'discord', '--guild', GUILD, ...argv], { cwd, env, stdout: (t) => (stdout += t), stderr: () => {} });
    return { code, stdout };
  }

  it.each([['general'], ['dev'], ['random']])('browser is not offered in #%s (the guild denies it)', async (channel) => {
    const { code, stdout } = await tools(['--channel-name', channel, '--json']);
    expect(code).toBe(0);
    const answer = JSON.parse(stdout) as { tools: string[]; removed: { tool: string; by: string }[] };
    expect(answer.tools).not.toContain('browser');
    expect(answer.removed).toContainEqual({ tool: 'browser', by: `channels.discord.guilds.${GUILD}.tools.deny` });
  });

  it('exec stays out of #general and in #dev', async () => {
    const general = JSON.parse((await tools(['--channel-name', 'general', '--json'])).stdout) as { tools: string[] };
    const dev = JSON.parse((await tools(['--channel-name', 'dev', '--json'])).stdout) as { tools: string[] };
    expect(general.tools).not.toContain('exec');
    expect(dev.tools).toContain('exec');
  });

  it('warden tools --explain browser names the guild deny and its config key', async () => {
    const { stdout } = await tools(['--channel-name', 'general', '--explain', 'browser']);
    expect(stdout).toContain(`browser: removed by channels.discord.guilds.${GUILD}.tools.deny`);
    expect(stdout).toMatch(new RegExp(`group tools\\.allow\\s+removed\\s+denied by channels\\.discord\\.guilds\\.${GUILD}\\.tools\\.deny\\[0\\] = "browser"`));
  });
});
