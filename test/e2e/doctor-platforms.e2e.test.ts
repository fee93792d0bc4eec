// `warden doctor`, the real CLI (bin/warden.js), asks the platforms about the configured
// tokens — here the loopback Discord and Slack fakes — and says what is missing: an invalid
// token, the Message Content intent, Slack scopes the manifest declares, a Socket Mode app
// token. A platform that does not answer costs at most the timeout and leaves the other
// checks standing; --offline asks nothing.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SLACK_BOT_SCOPES } from '../../src/cli/platform-setup.js';
import { startDiscordFake, type DiscordFake } from '../fakes/discord/index.js';
import { startSlackFake, type SlackFake } from '../fakes/slack/index.js';

const BIN = fileURLToPath(new URL('../../bin/warden.js', import.meta.url));
const DISCORD_TOKEN = 'discord-good-token';
const SLACK_BOT = 'xoxb-good';
const SLACK_APP = 'xapp-good';

type Check = { name: string; ok: boolean; warn?: true; detail: string; fix?: string };

const fakes: Array<{ close(): Promise<void> }> = [];
let silent: Server;
const held = new Set<Socket>();
beforeAll(async () => {
  // Accepts connections and never answers: a platform behind a black-holing proxy.
  silent = createServer((socket) => void held.add(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  for (const socket of held) socket.destroy();
  await new Promise((resolve) => silent.close(resolve));
  await Promise.all(fakes.map((f) => f.close()));
});

async function discordFake(options: Parameters<typeof startDiscordFake>[0] = {}): Promise<DiscordFake> {
  const fake = await startDiscordFake({ token: DISCORD_TOKEN, ...options });
  fakes.push(fake);
  return fake;
}
async function slackFake(options: Parameters<typeof startSlackFake>[0] = {}): Promise<SlackFake> {
  const fake = await startSlackFake({ botToken: SLACK_BOT, appToken: SLACK_APP, ...options });
  fakes.push(fake);
  return fake;
}

/** Runs `warden doctor --json` on a config with these channels; exec on the host keeps the sandbox out of the verdict. */
async function doctor(channels: Record<string, unknown>, flags: string[] = []) {
  const dir = mkdtempSync(path.join(tmpdir(), 'warden-doctor-platforms-'));
  const config = path.join(dir, 'warden.config.yaml');
  writeFileSync(config, JSON.stringify({ channels, tools: { exec: { host: 'gateway' } }, dataDir: path.join(dir, 'data') }));
  const started = Date.now();
  const result = await execa('node', [BIN, 'doctor', '--json', '--config', config, ...flags], { cwd: dir, env: { WARDEN_LOG_LEVEL: 'warn', WARDEN_DATA_DIR: '' }, reject: false, timeout: 60_000 });
  const checks = (JSON.parse(result.stdout) as { checks: Check[] }).checks;
  return { code: result.exitCode, checks, ms: Date.now() - started, check: (name: string) => checks.find((c) => c.name === name) };
}

const discordBlock = (fake: DiscordFake, extra: Record<string, unknown> = {}) => ({ token: DISCORD_TOKEN, apiBaseUrl: fake.apiBaseUrl, ...extra });
const slackBlock = (fake: SlackFake, extra: Record<string, unknown> = {}) => ({ botToken: SLACK_BOT, appToken: SLACK_APP, apiUrl: fake.apiUrl, ...extra });

describe('warden doctor against the platforms', () => {
  it('all good: names the bot on each platform, the intent, the shards, the scopes and the app token', async () => {
    const discord = await discordFake({ shards: 2 });
    const slack = await slackFake();
    const run = await doctor({ discord: discordBlock(discord, { shards: 'auto' }), slack: slackBlock(slack) });
    expect(run.check('discord token')).toEqual({ name: 'discord token', ok: true, detail: `bot warden (id ${discord.bot.id})` });
    expect(run.check('discord intents')).toMatchObject({ ok: true, detail: expect.stringMatching(/^Message Content intent enabled/) });
    expect(run.check('discord shards')).toEqual({ name: 'discord shards', ok: true, detail: 'auto: 2 shards (Discord recommends 2)' });
    expect(run.check('slack token')).toEqual({ name: 'slack token', ok: true, detail: `bot @warden (${slack.bot.userId}, bot ${slack.bot.botId}) in team Fake (${slack.teamId})` });
    expect(run.check('slack scopes')).toEqual({ name: 'slack scopes', ok: true, detail: `all ${SLACK_BOT_SCOPES.length} bot scopes of warden slack manifest granted` });
    expect(run.check('slack app token')).toEqual({ name: 'slack app token', ok: true, detail: 'valid: Socket Mode can connect' });
    expect(run.checks.filter((c) => !c.ok)).toEqual([]);
    expect(run.code).toBe(0);
    // Each platform was asked with the configured token.
    expect(discord.requests.filter((r) => r.path === '/users/@me').map((r) => r.headers.authorization)).toEqual([`Bot ${DISCORD_TOKEN}`]);
    expect(slack.requests.filter((r) => r.path === '/api/apps.connections.open').map((r) => r.headers.authorization)).toEqual([`Bearer ${SLACK_APP}`]);
  });

  it('Message Content intent off: fails with where to turn it on', async () => {
    const discord = await discordFake({ applicationFlags: 0 });
    const run = await doctor({ discord: discordBlock(discord) });
    expect(run.check('discord intents')).toMatchObject({
      ok: false,
      detail: expect.stringMatching(/^Message Content intent is not enabled/),
      fix: expect.stringContaining('Bot → Privileged Gateway Intents → turn on Message Content Intent'),
    });
    expect(run.code).toBe(1);
  });

  it('fewer shards than Discord recommends: warns, and says how to follow the recommendation', async () => {
    const discord = await discordFake({ shards: 3 });
    const run = await doctor({ discord: discordBlock(discord) });
    expect(run.check('discord shards')).toMatchObject({ ok: true, warn: true, detail: 'one connection, Discord recommends 3 shards', fix: expect.stringContaining('channels.discord.shards: auto') });
  });

  it('missing Slack scopes: lists each with what needs it', async () => {
    const slack = await slackFake({ scopes: SLACK_BOT_SCOPES.map((s) => s.scope).filter((s) => s !== 'files:write' && s !== 'commands') });
    const run = await doctor({ slack: slackBlock(slack) });
    expect(run.check('slack scopes')).toMatchObject({
      ok: false,
      detail: 'missing bot scopes: files:write (files.uploadV2 (long replies)), commands (the /warden slash command)',
      fix: expect.stringContaining('reinstall the app'),
    });
    expect(run.code).toBe(1);
  });

  it('bad tokens: each platform says it rejects them', async () => {
    const discord = await discordFake();
    const slack = await slackFake();
    const run = await doctor({ discord: { ...discordBlock(discord), token: 'stale' }, slack: { ...slackBlock(slack), botToken: 'xoxb-stale', appToken: 'xapp-stale' } });
    expect(run.check('discord token')).toMatchObject({ ok: false, detail: 'Discord rejects the token (401 Unauthorized)', fix: expect.stringContaining('Reset Token') });
    expect(run.check('slack token')).toMatchObject({ ok: false, detail: 'Slack rejects the bot token (invalid_auth)' });
    // Nothing else is asked with a token the platform refused.
    expect(run.check('discord intents')).toBeUndefined();
    expect(run.check('slack scopes')).toBeUndefined();
    expect(run.code).toBe(1);

    const appOnly = await doctor({ slack: { ...slackBlock(slack), appToken: 'xapp-stale' } });
    expect(appOnly.check('slack app token')).toMatchObject({ ok: false, detail: 'Slack refuses the app token for Socket Mode (invalid_auth)' });
  });

  it('a platform that does not answer: a warning after the timeout, the other platform and checks still run', async () => {
    const slack = await slackFake();
    const port = (silent.address() as { port: number }).port;
    const run = await doctor({ discord: { token: DISCORD_TOKEN, apiBaseUrl: `http://127.0.0.1:${port}/api` }, slack: slackBlock(slack) }, ['--timeout', '1']);
    expect(run.check('discord token')).toMatchObject({ ok: true, warn: true, detail: `could not reach 127.0.0.1:${port} (no answer within 1 s): the token, intents and shards were not checked` });
    expect(run.check('slack token')?.ok).toBe(true);
    expect(run.check('data dir')?.ok).toBe(true);
    expect(run.code).toBe(0);
    // Bounded by the timeout, not by the platform.
    expect(run.ms).toBeLessThan(15_000);
  });

  it('a refused connection is a warning naming the cause', async () => {
    const refused = createServer();
    await new Promise<void>((resolve) => refused.listen(0, '127.0.0.1', resolve));
    const port = (refused.address() as { port: number }).port;
    await new Promise((resolve) => refused.close(resolve));
    const run = await doctor({ discord: { token: DISCORD_TOKEN, apiBaseUrl: `http://127.0.0.1:${port}/api` } });
    expect(run.check('discord token')).toMatchObject({ ok: true, warn: true, detail: expect.stringContaining('(ECONNREFUSED)') });
  });

  it('--offline asks no platform', async () => {
    const discord = await discordFake();
    const slack = await slackFake();
    const run = await doctor({ discord: discordBlock(discord), slack: slackBlock(slack) }, ['--offline']);
    expect(run.check('platforms')).toEqual({ name: 'platforms', ok: true, detail: 'tokens not checked against Discord or Slack (--offline)' });
    expect(discord.requests.records).toHaveLength(0);
    expect(slack.requests.records).toHaveLength(0);
    expect(run.code).toBe(0);
  });
});
