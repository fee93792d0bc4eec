import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseArgs } from './args.js';
import { discord, slack } from './setup.js';
import { applicationIdFromToken, discordInviteUrl, discordPermissions, slackManifest, SLACK_BOT_EVENTS } from './platform-setup.js';

const APP = '123456789012345678';
const TOKEN = `${Buffer.from(APP).toString('base64')}.GhIjKl.abcdefghijklmnopqrstuvwxyz0123456789AB`;

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { stdout: (s: string) => out.push(s), stderr: (s: string) => err.push(s), cwd: process.cwd(), env: {} } };
}

describe('warden discord invite', () => {
  it('permissions are exactly the ten Warden uses', () => {
    // View Channels, Send Messages, Embed Links, Attach Files, Read Message History, Send Messages in Threads;
    // for the message tool's actions Add Reactions, Create Public Threads, Send Polls, Pin Messages (never Manage Messages).
    expect(discordPermissions()).toBe((1n << 10n) | (1n << 11n) | (1n << 14n) | (1n << 15n) | (1n << 16n) | (1n << 38n) | (1n << 6n) | (1n << 35n) | (1n << 49n) | (1n << 51n));
    expect(discordInviteUrl(APP)).toBe(`https://discord.com/oauth2/authorize?client_id=${APP}&scope=bot+applications.commands&permissions=2815059004869696`);
  });

  it.each([
    ['a bot token', TOKEN, APP],
    ['no token', undefined, undefined],
    ['a token whose first part is no id', 'bm90LWFuLWlk.x.y', undefined],
    ['garbage', '...', undefined],
  ])('the application id of %s', (_name, token, expected) => {
    expect(applicationIdFromToken(token)).toBe(expected);
  });

  it('prints the URL, the permissions and the intents with Message Content marked privileged', async () => {
    const h = io();
    expect(await discord(parseArgs(['discord', 'invite', '--client-id', APP]), h.io as never)).toBe(0);
    expect(h.out.join('\n')).toContain(`client_id=${APP}`);
    expect(h.out.join('\n')).toMatch(/Message Content — privileged/);
  });

  it('refuses an id that is not numeric', async () => {
    const h = io();
    expect(await discord(parseArgs(['discord', 'invite', '--client-id', 'abc&scope=admin']), h.io as never)).not.toBe(0);
    expect(h.out).toEqual([]);
  });
});

describe('warden slack manifest', () => {
  it('Socket Mode: no request URLs, socket mode on, interactivity and /warden', () => {
    const m = slackManifest({ mode: 'socket' }) as any;
    expect(m.settings.socket_mode_enabled).toBe(true);
    expect(m.settings.interactivity).toEqual({ is_enabled: true });
    expect(m.settings.event_subscriptions).toEqual({ bot_events: [...SLACK_BOT_EVENTS] });
    expect(m.features.slash_commands.map((c: any) => c.command)).toEqual(['/warden']);
  });

  it('HTTP: events, interactivity and the command all point at the request URL', () => {
    const url = 'https://warden.example.com/slack/events';
    const m = slackManifest({ mode: 'http', requestUrl: url }) as any;
    expect(m.settings.socket_mode_enabled).toBe(false);
    expect([m.settings.event_subscriptions.request_url, m.settings.interactivity.request_url, m.features.slash_commands[0].url]).toEqual([url, url, url]);
  });

  it('grants a scope for every Web API method the adapter calls and every event it handles', () => {
    const source = readFileSync(new URL('../../adapters/slack/adapter.ts', import.meta.url), 'utf8');
    const methods = [...new Set([...source.matchAll(/web\(\)\.(\w+)\.(\w+)/g)].map((m) => `${m[1]}.${m[2]}`))].sort();
    const needs: Record<string, string[]> = {
      'chat.postMessage': ['chat:write'],
      'chat.update': ['chat:write'],
      'chat.delete': ['chat:write'],
      'chat.postEphemeral': ['chat:write'],
      'chat.startStream': ['chat:write'],
      'chat.appendStream': ['chat:write'],
      'chat.stopStream': ['chat:write'],
      'conversations.open': ['im:write'],
      'conversations.info': ['channels:read', 'groups:read'],
      'files.uploadV2': ['files:write'],
      'usergroups.list': ['usergroups:read'],
      'usergroups.users': ['usergroups:read'],
    };
    const scopes = (slackManifest({ mode: 'socket' }) as any).oauth_config.scopes.bot as string[];
    for (const method of methods) {
      expect(needs[method], `a scope for ${method}`).toBeDefined();
      for (const scope of needs[method]!) expect(scopes).toContain(scope);
    }
    // Events: app_mention needs app_mentions:read; message.* its history scope; the renames their :read scope.
    const RENAME_SCOPES: Record<string, string> = {
      channel_rename: 'channels:read',
      group_rename: 'groups:read',
      subteam_members_changed: 'usergroups:read',
      subteam_updated: 'usergroups:read',
      subteam_created: 'usergroups:read',
    };
    for (const event of SLACK_BOT_EVENTS) expect(scopes).toContain(event === 'app_mention' ? 'app_mentions:read' : (RENAME_SCOPES[event] ?? `${event.split('.')[1]}:history`));
    expect(scopes).toContain('commands');
    // Files people post are fetched from url_private with the bot token.
    expect(readFileSync(new URL('../../adapters/slack/inbound.ts', import.meta.url), 'utf8')).toContain('url_private');
    expect(scopes).toContain('files:read');
  });

  it('refuses HTTP mode without an https URL', async () => {
    const h = io();
    expect(await slack(parseArgs(['slack', 'manifest', '--mode', 'http', '--url', 'http://plain.test/slack/events']), h.io as never)).not.toBe(0);
    expect(h.err.join()).toMatch(/https/);
  });
});
