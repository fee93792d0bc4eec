import { describe, expect, it } from 'vitest';
import { bareDiscordToken, discordVerdict, slackVerdict, verdictLine } from './platform-tokens.js';

// Shaped like real tokens, made up: a Discord bot token is base64(id).timestamp.hmac.
const DISCORD = 'MTIzNDU2Nzg5MDEyMzQ1Njc4.GaBcDe.abcdefghijklmnopqrstuvwxyz0123456789AB';
const SIGNING = '0123456789abcdef0123456789abcdef';

describe('the Discord token verdict (doctor and start)', () => {
  it.each([
    ['no block', undefined, { configured: false, line: 'not configured' }],
    ['a block with an empty token (${DISCORD_TOKEN:-} unset)', { token: undefined }, { configured: false, line: 'not configured (channels.discord has no token; the web chat runs unless Slack is configured)' }],
    ['a well-shaped token', { token: DISCORD }, { configured: true, line: 'token present' }],
    ['a "Bot " prefix', { token: `Bot ${DISCORD}` }, { configured: true, line: 'token present; channels.discord.token starts with "Bot ": that is the Authorization scheme, not part of the token; Warden strips it — remove it from the config', levels: ['warn'] }],
    ['a Slack bot token', { token: 'xoxb-1-2-abc' }, { configured: true, line: 'token present; channels.discord.token is a Slack token (a bot token), not a Discord bot token', levels: ['fail'] }],
    ['something else', { token: 'abc123' }, { configured: true, line: 'token present; channels.discord.token does not look like a Discord bot token (three dot-separated parts, from Bot → Reset Token in the developer portal)', levels: ['warn'] }],
  ] as const)('%s', (_name, block, want) => {
    const v = discordVerdict(block as never);
    expect(v.configured).toBe(want.configured);
    expect(verdictLine(v)).toBe(want.line);
    expect(v.findings.map((f) => f.level)).toEqual('levels' in want ? want.levels : []);
  });

  it('strips the "Bot " prefix the client must not get twice', () => {
    expect(bareDiscordToken(`Bot ${DISCORD}`)).toBe(DISCORD);
    expect(bareDiscordToken(`bot  ${DISCORD}`)).toBe(DISCORD);
    expect(bareDiscordToken(DISCORD)).toBe(DISCORD);
  });
});

describe('the Slack token verdict (doctor and start)', () => {
  it.each([
    ['no block', undefined, 'not configured', []],
    ['a block without a bot token', { signingSecret: SIGNING }, 'not configured (channels.slack has no botToken; the web chat runs unless Discord is configured)', []],
    ['Socket Mode, right tokens', { botToken: 'xoxb-1-2-abc', appToken: 'xapp-1-A1-2-abc' }, 'bot token present, Socket Mode', []],
    ['HTTP, right secret', { botToken: 'xoxb-1-2-abc', signingSecret: SIGNING }, 'bot token present, HTTP (signing secret)', []],
    ['a user token as the bot token', { botToken: 'xoxp-1-2-abc', appToken: 'xapp-1-A1-2-abc' },
      'bot token present, Socket Mode; channels.slack.botToken is a user token (xoxp-…); Warden needs the Bot User OAuth Token, xoxb-…, from OAuth & Permissions', ['fail']],
    ['the app token as the bot token', { botToken: 'xapp-1-A1-2-abc', appToken: 'xapp-1-A1-2-abc' },
      'bot token present, Socket Mode; channels.slack.botToken is an app-level token (xapp-…); Warden needs the Bot User OAuth Token, xoxb-…, from OAuth & Permissions', ['fail']],
    ['an app token that is no token', { botToken: 'xoxb-1-2-abc', appToken: 'abc123' },
      'bot token present, Socket Mode; channels.slack.appToken does not start with xapp-; Socket Mode needs an app-level token, xapp-…, from Basic Information → App-Level Tokens (scope connections:write)', ['fail']],
    ['the bot token as the app token', { botToken: 'xoxb-1-2-abc', appToken: 'xoxb-1-2-abc' },
      'bot token present, Socket Mode; channels.slack.appToken is a bot token (xoxb-…); Socket Mode needs an app-level token, xapp-…, from Basic Information → App-Level Tokens (scope connections:write)', ['fail']],
    ['a signing secret of the wrong shape', { botToken: 'xoxb-1-2-abc', signingSecret: 'letmein' },
      'bot token present, HTTP (signing secret); channels.slack.signingSecret does not look like a Slack signing secret (32 hex digits, from Basic Information → App Credentials)', ['warn']],
    ['a bot token of no known kind', { botToken: 'abc', appToken: 'xapp-1' },
      'bot token present, Socket Mode; channels.slack.botToken does not start with xoxb-: Slack bot tokens do (OAuth & Permissions → Bot User OAuth Token)', ['warn']],
    ['a bot token and nothing to receive with', { botToken: 'xoxb-1' },
      'bot token present, no signing secret or app token; channels.slack has a bot token but neither signingSecret (HTTP events) nor appToken (Socket Mode): Slack could deliver nothing', ['fail']],
  ] as const)('%s', (_name, block, line, levels) => {
    const v = slackVerdict(block as never);
    expect(verdictLine(v)).toBe(line);
    expect(v.findings.map((f) => f.level)).toEqual(levels);
  });
});
