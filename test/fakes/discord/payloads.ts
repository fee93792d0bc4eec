import type { APIUser } from 'discord-api-types/v10';

/** A text channel (type 0) or a public thread (type 11, with its parent) the fake knows. */
export interface FakeChannel {
  id: string;
  name: string;
  type: 0 | 11;
  parentId?: string;
  /** A channel @everyone (the bot included) may not view: an overwrite denying View Channel. */
  hidden?: boolean;
}

/** @everyone's permissions in the fake's guilds: View Channel, Send Messages, Read Message History (Discord's defaults include them). */
export const EVERYONE_PERMISSIONS = String(0x400 | 0x800 | 0x10000);
/** View Channel. */
const VIEW_CHANNEL = String(0x400);

export interface FakeGuild {
  id: string;
  name: string;
  channels: FakeChannel[];
  /** Roles besides @everyone. */
  roles?: FakeRole[];
  /** Role ids of members, by user id: what guild events carry in `member.roles`. */
  members?: Record<string, string[]>;
  /** Members holding the Administrator permission: Discord offers them commands registered with `default_member_permissions`. */
  admins?: string[];
}

export const MESSAGE_LIMIT = 2000;
const EMBED_DESCRIPTION_LIMIT = 4096;
const CUSTOM_ID_LIMIT = 100;
const EMBED_TOTAL_LIMIT = 6_000;

export const defaultGuild: FakeGuild = {
  id: '300000000000000001',
  name: 'Test Guild',
  channels: [
    { id: '300000000000000002', name: 'general', type: 0 },
    { id: '300000000000000003', name: 'dev', type: 0 },
    { id: '300000000000000004', name: 'release-plan', type: 11, parentId: '300000000000000003' },
  ],
};

export const fakeUser = (id: string, username: string): APIUser => ({
  id,
  username,
  discriminator: '0',
  global_name: username[0]!.toUpperCase() + username.slice(1),
  avatar: null,
});

/** Discord's own limits; a bot that ignores them gets the same 400 as in production. */
export function discordRejects(body: any): string | undefined {
  if (typeof body?.content === 'string' && body.content.length > MESSAGE_LIMIT) return `content: must be ${MESSAGE_LIMIT} or fewer in length`;
  for (const embed of body?.embeds ?? []) {
    if (typeof embed.description === 'string' && embed.description.length > EMBED_DESCRIPTION_LIMIT) return 'embeds.description too long';
    const fields = (embed.fields ?? []) as Array<{ name: string; value: string }>;
    if (fields.length > 25 || fields.some((f) => f.value.length > 1024 || f.name.length > 256)) return 'embeds.fields invalid';
    const total = [embed.title, embed.description, embed.footer?.text, ...fields.flatMap((f) => [f.name, f.value])].reduce((n, t) => n + (t?.length ?? 0), 0);
    if (total > EMBED_TOTAL_LIMIT) return 'embeds: total length over 6000';
  }
  for (const row of body?.components ?? []) {
    for (const c of row.components ?? []) if (typeof c.custom_id === 'string' && c.custom_id.length > CUSTOM_ID_LIMIT) return 'custom_id too long';
  }
  return undefined;
}

/** A channel or thread as the gateway and REST describe it. */
export function channelPayload(c: FakeChannel, guildId: string): Record<string, unknown> {
  if (c.type === 0) return { id: c.id, type: 0, name: c.name, guild_id: guildId, position: 0, permission_overwrites: c.hidden ? [{ id: guildId, type: 0, allow: '0', deny: VIEW_CHANNEL }] : [] };
  return {
    id: c.id,
    type: 11,
    name: c.name,
    guild_id: guildId,
    parent_id: c.parentId,
    thread_metadata: { archived: false, auto_archive_duration: 1440, locked: false },
  };
}

/** A guild role as GUILD_CREATE lists it. */
export interface FakeRole {
  id: string;
  name: string;
}

export function rolePayload(role: FakeRole, position: number): Record<string, unknown> {
  return { id: role.id, name: role.name, color: 0, hoist: false, position, permissions: position === 0 ? EVERYONE_PERMISSIONS : '0', managed: false, mentionable: false, flags: 0 };
}
