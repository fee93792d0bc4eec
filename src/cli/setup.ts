import { bareDiscordToken } from '../config/platform-tokens.js';
import {
  applicationIdFromToken,
  discordInviteUrl,
  discordPermissions,
  DISCORD_INTENT_NAMES,
  DISCORD_PERMISSIONS,
  DISCORD_SCOPES,
  slackManifest,
} from './platform-setup.js';
import { EXIT, stringOption, type CommandRunner } from './args.js';
import { loadConfigForCommand } from './config.js';

/**
 * `warden discord invite [--client-id ID]`: the invite URL with exactly the permissions and
 * scopes Warden uses, and the intents to enable in the developer portal. The id comes from
 * `--client-id`, else from the configured bot token.
 */
export const discord: CommandRunner = async (args, io) => {
  if (args.positionals[0] !== 'invite') {
    io.stderr('usage: warden discord invite [--client-id ID] [--config FILE] [--json]');
    return EXIT.badInput;
  }
  let id = stringOption(args, 'client-id')?.trim();
  if (id === undefined) {
    const loaded = loadConfigForCommand(args, io);
    if (!loaded) return EXIT.badInput;
    const token = loaded.config.channels.discord?.token;
    id = applicationIdFromToken(token === undefined ? undefined : bareDiscordToken(token));
    if (id === undefined) {
      io.stderr('warden discord invite: give --client-id (the application id in the developer portal), or configure channels.discord.token');
      return EXIT.badInput;
    }
  }
  if (!/^\d{15,25}$/.test(id)) {
    io.stderr(`warden discord invite: --client-id must be a numeric Discord id, not "${id}"`);
    return EXIT.badInput;
  }
  const url = discordInviteUrl(id);
  if (args.options.has('json')) {
    io.stdout(JSON.stringify({ url, scopes: DISCORD_SCOPES, permissions: discordPermissions().toString(), intents: DISCORD_INTENT_NAMES }, null, 2));
    return EXIT.ok;
  }
  io.stdout(
    [
      url,
      '',
      `scopes: ${DISCORD_SCOPES.join(', ')}`,
      'permissions:',
      ...DISCORD_PERMISSIONS.map((p) => `  ${p.name} — ${p.why}`),
      'intents (Bot → Privileged Gateway Intents in the developer portal):',
      ...DISCORD_INTENT_NAMES.map((i) => `  ${i.name}${i.privileged ? ' — privileged: turn it on, or Warden sees empty messages' : ''}`),
    ].join('\n'),
  );
  return EXIT.ok;
};

/**
 * `warden slack manifest [--mode socket|http] [--url https://HOST/slack/events] [--name N]`:
 * an app manifest to paste at api.slack.com/apps (Create New App → From a manifest).
 * Socket Mode unless `--mode http`.
 */
export const slack: CommandRunner = async (args, io) => {
  if (args.positionals[0] !== 'manifest') {
    io.stderr('usage: warden slack manifest [--mode socket|http] [--url https://HOST/slack/events] [--name NAME]');
    return EXIT.badInput;
  }
  const mode = stringOption(args, 'mode') ?? 'socket';
  if (mode !== 'socket' && mode !== 'http') {
    io.stderr(`warden slack manifest: --mode must be socket or http, not "${mode}"`);
    return EXIT.badInput;
  }
  const url = stringOption(args, 'url');
  if (mode === 'http' && (!url || !/^https:\/\/[^\s/]+\/.*$/.test(url))) {
    io.stderr('warden slack manifest: --mode http needs --url https://HOST/slack/events (Slack only calls https addresses)');
    return EXIT.badInput;
  }
  io.stdout(JSON.stringify(slackManifest({ mode, requestUrl: url, name: stringOption(args, 'name') }), null, 2));
  return EXIT.ok;
};
