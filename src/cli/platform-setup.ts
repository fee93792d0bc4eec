import { NATIVE_COMMANDS } from '../../adapters/common/native-commands.js';

/**
 * What a platform app needs granted for Warden to work, in one place: the Discord invite's
 * permissions and scopes, the Slack app manifest's scopes, events and commands. Each entry
 * names the call or event that needs it, so dropping a feature shows what to drop here.
 */

/** Discord permission bits Warden's adapter uses (discord.com/developers/docs/topics/permissions). */
export const DISCORD_PERMISSIONS = [
  { name: 'View Channels', bit: 10n, why: 'see the channels it answers in' },
  { name: 'Send Messages', bit: 11n, why: 'replies, approval cards' },
  { name: 'Embed Links', bit: 14n, why: 'approval cards are embeds' },
  { name: 'Attach Files', bit: 15n, why: 'long replies and full commands as files' },
  { name: 'Read Message History', bit: 16n, why: 'replies that reference an approval card' },
  { name: 'Send Messages in Threads', bit: 38n, why: 'answers in threads' },
  { name: 'Add Reactions', bit: 6n, why: 'the message tool\'s react action' },
  { name: 'Create Public Threads', bit: 35n, why: 'the message tool\'s thread-create action' },
  { name: 'Send Polls', bit: 49n, why: 'the message tool\'s poll action' },
  // Not Manage Messages: it would let the bot delete other people's messages.
  { name: 'Pin Messages', bit: 51n, why: 'the message tool\'s pin and unpin actions' },
] as const;

/** OAuth2 scopes of the invite: the bot user and its slash commands. */
export const DISCORD_SCOPES = ['bot', 'applications.commands'] as const;

/** Gateway intents the adapter requests; Message Content is privileged and must be enabled in the portal. */
export const DISCORD_INTENT_NAMES = [
  { name: 'Guilds', privileged: false },
  { name: 'Guild Messages', privileged: false },
  { name: 'Message Content', privileged: true },
  { name: 'Direct Messages', privileged: false },
] as const;

export function discordPermissions(): bigint {
  return DISCORD_PERMISSIONS.reduce((acc, p) => acc | (1n << p.bit), 0n);
}

/**
 * The application id of a bot token: its first segment is the bot user's id in base64, and a
 * bot user's id is its application's. Undefined for anything that is not shaped like one.
 */
export function applicationIdFromToken(token: string | undefined): string | undefined {
  const first = token?.trim().split('.')[0];
  if (!first) return undefined;
  const id = Buffer.from(first, 'base64').toString('utf8');
  return /^\d{15,25}$/.test(id) ? id : undefined;
}

export function discordInviteUrl(applicationId: string): string {
  const params = new URLSearchParams({ client_id: applicationId, scope: DISCORD_SCOPES.join(' '), permissions: discordPermissions().toString() });
  return `https://discord.com/oauth2/authorize?${params.toString()}`;
}

/** Bot token scopes for the Slack Web API methods and events the adapter uses. */
export const SLACK_BOT_SCOPES = [
  { scope: 'app_mentions:read', why: 'app_mention events' },
  { scope: 'channels:history', why: 'message.channels events (threads the bot is in)' },
  { scope: 'groups:history', why: 'message.groups events' },
  { scope: 'im:history', why: 'message.im events (DMs)' },
  { scope: 'mpim:history', why: 'message.mpim events' },
  { scope: 'channels:read', why: 'conversations.info and channel_rename events (channel names for the policy)' },
  { scope: 'groups:read', why: 'conversations.info and group_rename events on private channels' },
  { scope: 'im:write', why: 'conversations.open (approval cards by DM)' },
  { scope: 'chat:write', why: 'chat.postMessage, chat.update, chat.delete, chat.postEphemeral, chat.startStream/appendStream/stopStream' },
  { scope: 'files:write', why: 'files.uploadV2 (long replies)' },
  { scope: 'files:read', why: 'downloading the files people post (url_private with the bot token)' },
  { scope: 'commands', why: 'the /warden slash command' },
  { scope: 'reactions:read', why: 'reaction counts in the message tool\'s read action' },
  { scope: 'reactions:write', why: 'reactions.add / reactions.remove (react, the poll fallback)' },
  { scope: 'pins:read', why: 'pins.list (list-pins)' },
  { scope: 'pins:write', why: 'pins.add / pins.remove (pin, unpin)' },
  { scope: 'im:read', why: 'conversations.info on a DM (the message tool tells DMs from channels)' },
  { scope: 'mpim:read', why: 'conversations.info on a group DM' },
  { scope: 'usergroups:read', why: 'usergroups.list, usergroups.users.list and subteam_members_changed events (usergroup: entries in access lists)' },
] as const;

/** channel_rename and group_rename keep the cached channel names (matched by name-keyed scopes) current. */
export const SLACK_BOT_EVENTS = ['app_mention', 'message.channels', 'message.groups', 'message.im', 'message.mpim', 'channel_rename', 'group_rename', 'subteam_members_changed', 'subteam_updated', 'subteam_created'] as const;

export interface SlackManifestOptions {
  /** `socket` (no public URL) or `http` (Events API and interactivity at `requestUrl`). */
  mode: 'socket' | 'http';
  /** `https://…/slack/events` for HTTP mode. */
  requestUrl?: string | undefined;
  name?: string | undefined;
}

/** A complete Slack app manifest (api.slack.com/reference/manifests) for Warden. */
export function slackManifest(options: SlackManifestOptions): Record<string, unknown> {
  const name = options.name ?? 'Warden';
  const http = options.mode === 'http';
  const url = http ? options.requestUrl : undefined;
  const usage = NATIVE_COMMANDS.map((c) => c.name).join(' | ');
  return {
    display_information: { name, description: 'Team assistant with governed tools and approvals' },
    features: {
      app_home: { home_tab_enabled: false, messages_tab_enabled: true, messages_tab_read_only_enabled: false },
      bot_user: { display_name: name.toLowerCase(), always_online: true },
      slash_commands: [
        { command: '/warden', description: 'Warden commands: /warden help', usage_hint: usage, should_escape: false, ...(url ? { url } : {}) },
      ],
    },
    oauth_config: { scopes: { bot: SLACK_BOT_SCOPES.map((s) => s.scope) } },
    settings: {
      event_subscriptions: { ...(url ? { request_url: url } : {}), bot_events: [...SLACK_BOT_EVENTS] },
      interactivity: { is_enabled: true, ...(url ? { request_url: url } : {}) },
      org_deploy_enabled: false,
      socket_mode_enabled: !http,
      token_rotation_enabled: false,
    },
  };
}
