import type { ChannelsConfig } from './schema/channels.js';

/**
 * One verdict on the chat platforms' tokens, read by `warden doctor` (its `discord` and `slack`
 * lines, `--offline` included) and by `warden start` (which refuses a `fail` before anything
 * connects, and logs each `warn`). Only the shape is judged here — what each platform issues
 * for that place — so a token pasted into the wrong key is named at once instead of being
 * retried against the platform forever. Whether the platform accepts it is `doctor`'s online part.
 */
export type TokenLevel = 'fail' | 'warn';

export interface TokenFinding {
  level: TokenLevel;
  /** The config key, e.g. `channels.slack.botToken`. */
  path: string;
  message: string;
}

export interface PlatformVerdict {
  platform: 'discord' | 'slack';
  /** A block without its token is not configured — by `start` (which runs the web chat) and `doctor` alike. */
  configured: boolean;
  /** One line for people: what is configured and how. */
  summary: string;
  findings: TokenFinding[];
}

/** `Bot ` is the Authorization scheme, not part of the token: discord.js adds it itself. */
const BOT_PREFIX = /^Bot\s+/i;

/** The Discord token as the client needs it: without a pasted `Bot ` prefix. */
export function bareDiscordToken(token: string): string {
  return token.replace(BOT_PREFIX, '');
}

/**
 * Discord bot tokens are three base64url parts joined by dots: the bot's id, a timestamp, an
 * HMAC. Loose bounds, since Discord has lengthened them before.
 */
function looksLikeDiscordToken(token: string): boolean {
  const parts = token.split('.');
  return parts.length === 3 && parts.every((p) => /^[A-Za-z0-9_-]+$/.test(p)) && parts[0]!.length >= 16 && parts[1]!.length >= 4 && parts[2]!.length >= 20;
}

/** Slack's token kinds by prefix, to say what was pasted where. */
const SLACK_KINDS: Array<[prefix: string, kind: string]> = [
  ['xoxb-', 'a bot token'],
  ['xapp-', 'an app-level token'],
  ['xoxp-', 'a user token'],
  ['xoxe.', 'a token rotation (refresh) token'],
  ['xoxe-', 'a token rotation (refresh) token'],
  ['xoxa-', 'a workspace app token'],
  ['xoxr-', 'a refresh token'],
  ['xoxs-', 'a session token'],
  ['xoxc-', 'a browser session token'],
];
const slackKind = (token: string) => SLACK_KINDS.find(([prefix]) => token.startsWith(prefix))?.[1];

/** What Slack shows as the Signing Secret: 32 lowercase hex digits. */
const looksLikeSigningSecret = (s: string) => /^[0-9a-f]{32}$/.test(s);

export function discordVerdict(discord: ChannelsConfig['discord']): PlatformVerdict {
  if (!discord?.token) {
    return { platform: 'discord', configured: false, summary: discord ? 'not configured (channels.discord has no token; the web chat runs unless Slack is configured)' : 'not configured', findings: [] };
  }
  const findings: TokenFinding[] = [];
  const path = 'channels.discord.token';
  const token = bareDiscordToken(discord.token);
  if (token !== discord.token) findings.push({ level: 'warn', path, message: 'starts with "Bot ": that is the Authorization scheme, not part of the token; Warden strips it — remove it from the config' });
  if (slackKind(token)) findings.push({ level: 'fail', path, message: `is a Slack token (${slackKind(token)}), not a Discord bot token` });
  else if (!looksLikeDiscordToken(token)) findings.push({ level: 'warn', path, message: 'does not look like a Discord bot token (three dot-separated parts, from Bot → Reset Token in the developer portal)' });
  return { platform: 'discord', configured: true, summary: 'token present', findings };
}

export function slackVerdict(slack: ChannelsConfig['slack']): PlatformVerdict {
  if (!slack?.botToken) {
    return { platform: 'slack', configured: false, summary: slack ? 'not configured (channels.slack has no botToken; the web chat runs unless Discord is configured)' : 'not configured', findings: [] };
  }
  const findings: TokenFinding[] = [];
  const bot = slackKind(slack.botToken);
  if (bot !== 'a bot token') {
    findings.push(
      bot
        ? { level: 'fail', path: 'channels.slack.botToken', message: `is ${bot} (${slack.botToken.slice(0, 5)}…); Warden needs the Bot User OAuth Token, xoxb-…, from OAuth & Permissions` }
        : { level: 'warn', path: 'channels.slack.botToken', message: 'does not start with xoxb-: Slack bot tokens do (OAuth & Permissions → Bot User OAuth Token)' },
    );
  }
  if (slack.appToken !== undefined) {
    const app = slackKind(slack.appToken);
    if (app !== 'an app-level token') {
      findings.push({
        level: 'fail',
        path: 'channels.slack.appToken',
        message: `${app ? `is ${app} (${slack.appToken.slice(0, 5)}…)` : 'does not start with xapp-'}; Socket Mode needs an app-level token, xapp-…, from Basic Information → App-Level Tokens (scope connections:write)`,
      });
    }
  }
  if (slack.signingSecret !== undefined && slack.appToken === undefined && !looksLikeSigningSecret(slack.signingSecret)) {
    findings.push({ level: 'warn', path: 'channels.slack.signingSecret', message: 'does not look like a Slack signing secret (32 hex digits, from Basic Information → App Credentials)' });
  }
  if (slack.signingSecret === undefined && slack.appToken === undefined) {
    findings.push({ level: 'fail', path: 'channels.slack', message: 'has a bot token but neither signingSecret (HTTP events) nor appToken (Socket Mode): Slack could deliver nothing' });
  }
  const mode = slack.appToken ? 'Socket Mode' : slack.signingSecret ? 'HTTP (signing secret)' : 'no signing secret or app token';
  return { platform: 'slack', configured: true, summary: `bot token present, ${mode}`, findings };
}

/** Both platforms' verdicts, in the order `doctor` prints them. */
export function platformTokenVerdicts(channels: Pick<ChannelsConfig, 'discord' | 'slack'>): PlatformVerdict[] {
  return [discordVerdict(channels.discord), slackVerdict(channels.slack)];
}

/** A verdict as one line: the summary, then each finding with its key. */
export function verdictLine(v: PlatformVerdict): string {
  return [v.summary, ...v.findings.map((f) => `${f.path} ${f.message}`)].join('; ');
}
