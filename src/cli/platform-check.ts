import type { DoctorCheck } from './doctor.js';
import { bareDiscordToken } from '../config/platform-tokens.js';
import type { DiscordConfig, SlackConfig } from '../config/schema/channels.js';
import type { OpsConfig } from '../config/schema/ops.js';
import { SLACK_BOT_SCOPES } from './platform-setup.js';
import { withoutTrailingSlashes } from '../util/trailing-slashes.js';

/**
 * `warden doctor`'s questions to the chat platforms: is the token valid and whose is it, and
 * has the app been granted what Warden needs (Discord's Message Content intent, the Slack
 * scopes `warden slack manifest` declares). The verdicts are pure functions of the platform's
 * answers; the requests are a thin shell with one deadline per platform, so doctor never
 * hangs on a platform it cannot reach and the other checks run regardless.
 */

/** Discord application flags for the privileged intents (discord.com/developers/docs/resources/application). */
export const DISCORD_APP_FLAGS = {
  GATEWAY_GUILD_MEMBERS: 1 << 14,
  GATEWAY_GUILD_MEMBERS_LIMITED: 1 << 15,
  GATEWAY_MESSAGE_CONTENT: 1 << 18,
  GATEWAY_MESSAGE_CONTENT_LIMITED: 1 << 19,
} as const;

export const DEFAULT_PLATFORM_TIMEOUT_MS = 5_000;
const DISCORD_API = 'https://discord.com/api';
const SLACK_API = 'https://slack.com/api/';

const MESSAGE_CONTENT_FIX = 'Developer Portal → your app → Bot → Privileged Gateway Intents → turn on Message Content Intent, then save';

/** Message Content is the one privileged intent Warden requests; without it Discord refuses the gateway (close 4014). */
export function discordIntentCheck(flags: number): DoctorCheck {
  if (flags & DISCORD_APP_FLAGS.GATEWAY_MESSAGE_CONTENT) return { name: 'discord intents', ok: true, detail: 'Message Content intent enabled' };
  if (flags & DISCORD_APP_FLAGS.GATEWAY_MESSAGE_CONTENT_LIMITED) {
    return { name: 'discord intents', ok: true, detail: 'Message Content intent enabled (until the app is verified, for up to 100 servers)' };
  }
  return {
    name: 'discord intents',
    ok: false,
    detail: 'Message Content intent is not enabled: Discord refuses the bot\'s gateway connection (close code 4014, "Disallowed intents")',
    fix: MESSAGE_CONTENT_FIX,
  };
}

/**
 * The shard count against Discord's recommendation (`GET /gateway/bot`). Fewer shards than
 * recommended works until a shard passes 2,500 guilds, when Discord closes it (4011); fewer
 * sessions left today than shards to open makes the start fail.
 */
export function discordShardCheck(
  setting: DiscordConfig['shards'],
  gateway: { shards: number; session_start_limit?: { remaining: number; reset_after: number } },
  shardCount?: number,
): DoctorCheck {
  const recommended = gateway.shards;
  // A list of ids: this process opens those, out of `shardCount` the bot has in all.
  const ids = Array.isArray(setting) ? setting : undefined;
  const count = setting === 'auto' ? recommended : typeof setting === 'number' ? setting : ids ? (shardCount ?? ids.length) : 1;
  const opening = ids ? ids.length : count;
  const plural = (n: number) => `${n} shard${n === 1 ? '' : 's'}`;
  const remaining = gateway.session_start_limit?.remaining;
  if (remaining !== undefined && remaining < opening) {
    const resetMin = Math.ceil((gateway.session_start_limit?.reset_after ?? 0) / 60_000);
    return { name: 'discord shards', ok: false, detail: `${plural(opening)} to open but only ${remaining} gateway sessions left today`, fix: `wait for Discord's session limit to reset (in about ${resetMin} min)` };
  }
  const configured =
    setting === 'auto' ? `auto: ${plural(count)}` : setting === undefined ? 'one connection' : ids ? `${ids.length === 1 ? 'shard' : 'shards'} ${ids.join(', ')} of ${plural(count)}` : plural(count);
  if (count >= recommended) return { name: 'discord shards', ok: true, detail: `${configured} (Discord recommends ${recommended})` };
  return { name: 'discord shards', ok: true, warn: true, detail: `${configured}, Discord recommends ${plural(recommended)}`, fix: 'set channels.discord.shards: auto (Discord closes a shard serving more than 2,500 guilds)' };
}

/** The scopes the manifest declares that the token lacks; undefined when Slack did not say. */
export function slackScopeCheck(granted: string | null | undefined): DoctorCheck {
  if (granted === null || granted === undefined) return { name: 'slack scopes', ok: true, warn: true, detail: 'Slack did not report the token\'s scopes (no x-oauth-scopes header): not compared' };
  const have = new Set(granted.split(',').map((s) => s.trim()).filter(Boolean));
  const missing = SLACK_BOT_SCOPES.filter((s) => !have.has(s.scope));
  if (missing.length === 0) return { name: 'slack scopes', ok: true, detail: `all ${SLACK_BOT_SCOPES.length} bot scopes of warden slack manifest granted` };
  return {
    name: 'slack scopes',
    ok: false,
    detail: `missing bot scopes: ${missing.map((s) => `${s.scope} (${s.why})`).join(', ')}`,
    fix: 'api.slack.com/apps → your app → OAuth & Permissions → Bot Token Scopes: add them (or update the app from `warden slack manifest`), then reinstall the app to the workspace',
  };
}

type Answer = { ok: true; status: number; headers: Headers; body: any } | { ok: false; reason: string };

/** One request under the platform's deadline; a network failure or the deadline is a value, not a throw. */
async function request(url: string, init: RequestInit, signal: AbortSignal, timeoutMs: number): Promise<Answer> {
  try {
    // The token goes to the configured API only: a redirect (a proxy's, a spoofed answer's) is not followed.
    const res = await fetch(url, { ...init, signal, redirect: 'manual' });
    const text = await res.text();
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = undefined;
    }
    return { ok: true, status: res.status, headers: res.headers, body };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    if (signal.aborted) return { ok: false, reason: `no answer within ${timeoutMs / 1000} s` };
    return { ok: false, reason: e.cause?.code ?? e.cause?.message ?? e.message };
  }
}

export interface PlatformCheckOptions {
  /** Per platform, for all its requests together. */
  timeoutMs?: number;
}

/** A platform that gave no usable answer: what was not checked, never a verdict on the token. */
const unreachable = (name: string, host: string, answer: Answer | string, unchecked: string): DoctorCheck => ({
  name,
  ok: true,
  warn: true,
  detail: `${typeof answer === 'string' ? `${host} answered ${answer}` : answer.ok ? `${host} answered HTTP ${answer.status}` : `could not reach ${host} (${answer.reason})`}: ${unchecked} not checked`,
  fix: 'check the network, proxy or apiBaseUrl/apiUrl; `warden doctor --offline` skips the platform checks',
});

/** The Discord token's identity, the Message Content intent and the shard count, from Discord itself. */
export async function discordPlatformChecks(config: DiscordConfig, options: PlatformCheckOptions = {}): Promise<DoctorCheck[]> {
  if (!config.token) return [];
  const token = bareDiscordToken(config.token);
  const timeoutMs = options.timeoutMs ?? DEFAULT_PLATFORM_TIMEOUT_MS;
  const signal = AbortSignal.timeout(timeoutMs);
  const base = `${withoutTrailingSlashes(config.apiBaseUrl ?? DISCORD_API)}/v10`;
  const host = new URL(base).host;
  const get = (route: string) => request(`${base}${route}`, { headers: { authorization: `Bot ${token}`, 'user-agent': 'DiscordBot (warden doctor, 1)' } }, signal, timeoutMs);

  const me = await get('/users/@me');
  if (!me.ok) return [unreachable('discord token', host, me, 'the token, intents and shards were')];
  if (me.status === 401) {
    return [{ name: 'discord token', ok: false, detail: 'Discord rejects the token (401 Unauthorized)', fix: 'Developer Portal → your app → Bot → Reset Token, and put the new token in channels.discord.token' }];
  }
  if (me.status !== 200) return [unreachable('discord token', host, me, 'the token, intents and shards were')];
  const user = me.body as { id?: string; username?: string; bot?: boolean };
  if (user.bot !== true) return [{ name: 'discord token', ok: false, detail: `the token is a user account's (${user.username ?? '?'}), not a bot's`, fix: 'use the bot token: Developer Portal → your app → Bot → Reset Token' }];
  const checks: DoctorCheck[] = [{ name: 'discord token', ok: true, detail: `bot ${user.username} (id ${user.id})` }];

  const [app, gateway] = await Promise.all([get('/applications/@me'), get('/gateway/bot')]);
  if (app.ok && app.status === 200 && typeof app.body?.flags === 'number') checks.push(discordIntentCheck(app.body.flags as number));
  else checks.push(unreachable('discord intents', host, app, 'the Message Content intent was'));
  if (gateway.ok && gateway.status === 200 && typeof gateway.body?.shards === 'number') checks.push(discordShardCheck(config.shards, gateway.body, config.shardCount));
  else checks.push(unreachable('discord shards', host, gateway, 'the recommended shard count was'));
  return checks;
}

/** The Slack bot token's identity and scopes (auth.test), and in Socket Mode the app token (apps.connections.open). */
export async function slackPlatformChecks(config: SlackConfig, options: PlatformCheckOptions = {}): Promise<DoctorCheck[]> {
  if (!config.botToken) return [];
  const timeoutMs = options.timeoutMs ?? DEFAULT_PLATFORM_TIMEOUT_MS;
  const signal = AbortSignal.timeout(timeoutMs);
  const base = config.apiUrl ?? SLACK_API;
  const host = new URL(base).host;
  const call = (method: string, token: string) =>
    request(new URL(method, base.endsWith('/') ? base : `${base}/`).toString(), { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-www-form-urlencoded' } }, signal, timeoutMs);

  const auth = await call('auth.test', config.botToken);
  if (!auth.ok) return [unreachable('slack token', host, auth, 'the tokens and scopes were')];
  const body = auth.body as { ok?: boolean; error?: string; user?: string; user_id?: string; team?: string; team_id?: string; bot_id?: string } | undefined;
  if (!body?.ok) {
    const error = body?.error ?? `HTTP ${auth.status}`;
    if (error === 'invalid_auth' || error === 'not_authed' || error === 'account_inactive' || error === 'token_revoked') {
      return [{ name: 'slack token', ok: false, detail: `Slack rejects the bot token (${error})`, fix: 'api.slack.com/apps → your app → OAuth & Permissions → copy the Bot User OAuth Token (xoxb-…) into channels.slack.botToken' }];
    }
    return [unreachable('slack token', host, body?.error ? `error ${body.error}` : auth, 'the tokens and scopes were')];
  }
  const checks: DoctorCheck[] = [{ name: 'slack token', ok: true, detail: `bot @${body.user} (${body.user_id}${body.bot_id ? `, bot ${body.bot_id}` : ''}) in team ${body.team} (${body.team_id})` }];
  checks.push(slackScopeCheck(auth.headers.get('x-oauth-scopes')));

  if (config.appToken) {
    const socket = await call('apps.connections.open', config.appToken);
    const answer = socket.ok ? (socket.body as { ok?: boolean; error?: string } | undefined) : undefined;
    if (!socket.ok) checks.push(unreachable('slack app token', host, socket, 'the app token was'));
    else if (answer?.ok) checks.push({ name: 'slack app token', ok: true, detail: 'valid: Socket Mode can connect' });
    else {
      checks.push({
        name: 'slack app token',
        ok: false,
        detail: `Slack refuses the app token for Socket Mode (${answer?.error ?? `HTTP ${socket.status}`})`,
        fix: 'api.slack.com/apps → your app → Basic Information → App-Level Tokens: one with connections:write (xapp-…) in channels.slack.appToken, and Socket Mode turned on',
      });
    }
  }
  return checks;
}

/**
 * Each shard's state, from the running Warden's own `/readyz` on the ops listener (loopback;
 * a wildcard bind is asked on 127.0.0.1): doctor is another process and opens no gateway
 * session of its own, which would count against Discord's daily session limit.
 */
export async function runningShardsCheck(discord: DiscordConfig | undefined, ops: OpsConfig, options: PlatformCheckOptions = {}): Promise<DoctorCheck[]> {
  if (discord?.shards === undefined || !ops.enabled) return [];
  const host = ops.host === '0.0.0.0' || ops.host === '::' ? '127.0.0.1' : ops.host.includes(':') ? `[${ops.host}]` : ops.host;
  const url = `http://${host}:${ops.port}/readyz`;
  const timeoutMs = Math.min(options.timeoutMs ?? DEFAULT_PLATFORM_TIMEOUT_MS, 2_000);
  const answer = await request(url, {}, AbortSignal.timeout(timeoutMs), timeoutMs);
  const shards = answer.ok ? (answer.body as { checks?: Record<string, { ok?: boolean; detail?: unknown; reason?: unknown }> } | undefined)?.checks?.shards : undefined;
  if (!shards) return [{ name: 'discord shards now', ok: true, detail: `no running Warden reported shards at ${url}; /status in the chat lists each shard of a running one` }];
  if (shards.ok) return [{ name: 'discord shards now', ok: true, detail: String(shards.detail) }];
  return [{ name: 'discord shards now', ok: true, warn: true, detail: String(shards.reason), fix: "the running Warden reconnects a dropped shard by itself; its log says why one stays down (shard ids in 'discord shard' lines)" }];
}
