import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { GatewayIntentBits, type APIMessage, type APIUser } from 'discord-api-types/v10';
import { channelPayload, defaultGuild, discordRejects, fakeUser, rolePayload, type FakeChannel, type FakeGuild } from './payloads.js';
import { parseBody, readBody, RequestLog, sendJson, snowflakes, type RecordedRequest, type RouteOverride } from '../recorder.js';

/** The permissions the fake gives every guild member in an interaction (no Administrator). */
const MEMBER_PERMISSIONS = '2248473465835073';
/** Discord's Administrator permission bit. */
const ADMINISTRATOR = 8n;

export interface DiscordFakeOptions {
  guilds?: FakeGuild[];
  bot?: { id: string; username: string };
  /** Heartbeat interval announced in HELLO. */
  heartbeatMs?: number;
  /** Shards `/gateway/bot` recommends (default 1), what `shards: auto` starts. */
  shards?: number;
  /** `session_start_limit.max_concurrency`: identifies allowed per 5 s (Discord gives large bots 16). */
  maxConcurrency?: number;
  /** The one token the fake accepts; others get 401 as Discord answers them. Default: any. */
  token?: string;
  /**
   * Further bot applications in the same guilds, each with its own token: a gateway connection
   * identifying with one is that bot (one shard), its REST posts are authored by it, and a guild
   * message one bot posts is delivered to every other bot (author.bot = true), as Discord does.
   * The first bot (`bot`) must then be given `token` too, so posts can be told apart.
   */
  otherBots?: Array<{ id: string; username: string; token: string }>;
  /** The application's `flags` (`GET /applications/@me`); default: Message Content enabled (limited). */
  applicationFlags?: number;
}

/** Discord's application flag bits for privileged intents (discord.com/developers/docs/resources/application). */
export const APPLICATION_FLAGS = {
  GATEWAY_GUILD_MEMBERS: 1 << 14,
  GATEWAY_GUILD_MEMBERS_LIMITED: 1 << 15,
  GATEWAY_MESSAGE_CONTENT: 1 << 18,
  GATEWAY_MESSAGE_CONTENT_LIMITED: 1 << 19,
} as const;

/** The shard a guild's events go to: Discord's `(guild_id >> 22) % num_shards`; DMs go to shard 0. */
export function shardOfGuild(guildId: string | undefined, count: number): number {
  return guildId === undefined ? 0 : Number((BigInt(guildId) >> 22n) % BigInt(count));
}

/** One identified gateway session: a shard of the bot. */
interface GatewaySession {
  socket: WebSocket;
  intents: number;
  shard: [number, number];
  sessionId: string;
  seq: number;
  /** Dispatches sent while the socket was down, replayed on resume. */
  missed: string[];
}

/** A gateway frame the fake received from the client. */
export interface GatewayFrame {
  op: number;
  d: any;
  at: number;
  /** The shard whose socket sent it, once that socket has identified or resumed. */
  shard?: number | undefined;
}

/**
 * A loopback Discord: REST under `/api/v10` and a gateway on the same port. It plays HELLO,
 * READY and GUILD_CREATE per shard (each IDENTIFY's `shard: [id, count]` gets the guilds
 * `(guild_id >> 22) % count` assigns it, and their events), enforces the intents the client
 * asked for, rejects what Discord
 * would reject (content over 2,000 characters, oversized embeds and custom ids), keeps every
 * message the bot posts so a click can refer to it, and records every request.
 */
export class DiscordFake {
  readonly requests = new RequestLog<RecordedRequest>();
  readonly frames = new RequestLog<GatewayFrame>();
  readonly guilds: FakeGuild[];
  readonly bot: APIUser;
  /** Messages by id: what the bot posted (and edited), and what users sent through the fake. */
  readonly messages = new Map<string, APIMessage>();
  /** Bytes of files users posted, by attachment id. */
  readonly userFiles = new Map<string, Buffer>();
  /** The guilds' custom emoji, id → name (a reaction with any other `name:id` is Unknown Emoji). */
  readonly customEmoji = new Map<string, string>();
  /** Threads created through REST, in order, with the message they started from and who made them. */
  readonly threadsCreated: Array<FakeChannel & { fromMessage?: string | undefined; by: string }> = [];
  private readonly overrides: Array<{ match: (r: RecordedRequest) => boolean; handle: RouteOverride }> = [];
  private readonly sockets = new Set<WebSocket>();
  private readonly nextId = snowflakes(500_000_000_000_000_000n);
  private readonly dmChannels = new Map<string, string>();
  /** Interactions sent, so callback and webhook routes can find the message they act on. */
  private readonly interactions: Array<{ token: string; messageId: string | undefined; channelId: string }> = [];
  /** The application's global commands, as registered through REST (ids added, as Discord does). */
  readonly commands: Array<Record<string, any>> = [];
  private readonly server = createServer((req, res) => void this.handleHttp(req, res));
  private readonly wss = new WebSocketServer({ server: this.server });
  /** Identified sessions by shard id. */
  private readonly sessions = new Map<number, GatewaySession>();
  private readonly shardOfSocket = new WeakMap<WebSocket, number>();
  private readonly heartbeatMs: number;
  /** What `/gateway/bot` recommends. */
  recommendedShards: number;
  private readonly maxConcurrency: number;
  private readonly token: string | undefined;
  /** The further bot applications, by token, and their one gateway session each. */
  private readonly otherBots = new Map<string, APIUser>();
  private readonly otherSessions = new Map<string, GatewaySession>();
  /** The application's flags, as `GET /applications/@me` reports them. */
  applicationFlags: number;
  /** When true, heartbeats go unanswered: the client declares the connection a zombie and resumes. */
  silentHeartbeats = false;

  constructor(options: DiscordFakeOptions = {}) {
    this.guilds = options.guilds ?? [defaultGuild];
    const bot = options.bot ?? { id: '100000000000000001', username: 'warden' };
    this.bot = { ...fakeUser(bot.id, bot.username), bot: true };
    this.heartbeatMs = options.heartbeatMs ?? 41_250;
    this.recommendedShards = options.shards ?? 1;
    this.maxConcurrency = options.maxConcurrency ?? 1;
    this.token = options.token;
    for (const b of options.otherBots ?? []) this.otherBots.set(b.token, { ...fakeUser(b.id, b.username), bot: true });
    if (this.otherBots.size > 0 && this.token === undefined) throw new Error('otherBots needs the first bot\'s token');
    this.applicationFlags = options.applicationFlags ?? APPLICATION_FLAGS.GATEWAY_MESSAGE_CONTENT_LIMITED;
    this.wss.on('connection', (socket) => this.handleSocket(socket));
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** What `channels.discord.apiBaseUrl` should be set to. */
  get apiBaseUrl(): string {
    return `http://127.0.0.1:${this.port}/api`;
  }

  listen(): Promise<this> {
    return new Promise((resolve) => this.server.listen(0, '127.0.0.1', () => resolve(this)));
  }

  /** Answer requests matching `match` yourself (a status, an error body) instead of the fake. */
  override(match: (r: RecordedRequest) => boolean, handle: RouteOverride): void {
    this.overrides.unshift({ match, handle });
  }

  /** Resolves when the client has identified; returns the intents it asked for. */
  async identifiedIntents(ms = 5_000): Promise<number> {
    const frame = await this.frames.waitFor((f) => f.op === 2, ms, 'IDENTIFY');
    return frame.d.intents as number;
  }

  channel(id: string): FakeChannel | undefined {
    for (const guild of this.guilds) {
      const found = guild.channels.find((c) => c.id === id);
      if (found) return found;
    }
    return undefined;
  }

  private guildOf(channelId: string): FakeGuild | undefined {
    return this.guilds.find((g) => g.channels.some((c) => c.id === channelId));
  }

  /** The DM channel id between the bot and a user (created on first use, as Discord does). */
  dmChannelOf(userId: string): string {
    let id = this.dmChannels.get(userId);
    if (!id) {
      id = this.nextId();
      this.dmChannels.set(userId, id);
    }
    return id;
  }

  /** Bot messages posted to a channel, oldest first. */
  botMessagesIn(channelId: string): APIMessage[] {
    return [...this.messages.values()].filter((m) => m.channel_id === channelId && m.author.id === this.bot.id);
  }

  /** The shard count the client identified with (1 before it has). */
  get shardCount(): number {
    return [...this.sessions.values()][0]?.shard[1] ?? 1;
  }

  /** The shard that receives a guild's events (and DMs, with no guild: shard 0). */
  shardOf(guildId: string | undefined): number {
    return shardOfGuild(guildId, this.shardCount);
  }

  /** Shard ids with an identified session, ascending. */
  get identifiedShards(): number[] {
    return [...this.sessions.keys()].sort((a, b) => a - b);
  }

  /**
   * Closes one shard's socket as Discord does when it drops a connection (4000: unknown error,
   * resumable); the client reconnects and resumes that shard's session.
   */
  dropShard(shardId: number, code = 4000): void {
    const session = this.sessions.get(shardId);
    if (!session) throw new Error(`shard ${shardId} has not identified`);
    session.socket.close(code, 'dropped by the fake');
  }

  // ---- pushing events to the client ----

  /**
   * Sends a dispatch to the shard Discord would send it to (unless `shardId` says which): the
   * one serving `d.guild_id`, shard 0 for events outside a guild.
   */
  dispatch(t: string, d: unknown, shardId = this.shardOf((d as { guild_id?: string } | null)?.guild_id)): void {
    const session = this.sessions.get(shardId);
    if (!session) throw new Error(`no identified gateway client on shard ${shardId}`);
    const frame = JSON.stringify({ op: 0, t, s: ++session.seq, d });
    // While the shard is disconnected Discord keeps its events for the resume to replay.
    if (session.socket.readyState === session.socket.OPEN) session.socket.send(frame);
    else session.missed.push(frame);
  }

  private hasIntent(bit: number, guildId: string | undefined): boolean {
    return ((this.sessions.get(this.shardOf(guildId))?.intents ?? 0) & bit) === bit;
  }

  /** The member object guild events carry for a user: their roles, as the gateway sends them. */
  /** A member's permission bitset in the guild: the usual member set, plus Administrator for `admins`. */
  private memberPermissions(guild: FakeGuild, userId: string): string {
    const base = BigInt(MEMBER_PERMISSIONS);
    return (guild.admins?.includes(userId) ? base | ADMINISTRATOR : base).toString();
  }

  private memberOf(guild: FakeGuild, userId: string): { roles: string[]; joined_at: string; deaf: boolean; mute: boolean; flags: number } {
    return { roles: [...(guild.members?.[userId] ?? [])], joined_at: new Date(0).toISOString(), deaf: false, mute: false, flags: 0 };
  }

  /**
   * A user posts a message. `channelId` may be a guild channel, a known thread, or — with
   * `dm: true` — omitted (the user's DM channel). `uncachedThread` sends a thread message as
   * Discord does for a thread the client never saw (only `channel_type`, no announcement).
   * Returns the message, or undefined when the client's intents mean Discord would not send it.
   */
  userMessage(input: {
    author: APIUser;
    content: string;
    channelId?: string;
    dm?: boolean;
    mentionBot?: boolean;
    uncachedThread?: boolean;
    authorIsBot?: boolean;
    /** Posted through a webhook: Discord sets `webhook_id`, and the author is whatever name and avatar the poster chose. */
    webhookId?: string;
    /** Files the user posts; served by the fake at their `url` (Discord's CDN stand-in). */
    attachments?: Array<{ name: string; contentType: string; data: Buffer; voice?: boolean }>;
  }): APIMessage | undefined {
    const channelId = input.dm ? this.dmChannelOf(input.author.id) : input.channelId;
    if (!channelId) throw new Error('userMessage needs channelId or dm');
    const guild = input.dm ? undefined : this.guildOf(channelId);
    if (input.dm ? !this.hasIntent(GatewayIntentBits.DirectMessages, undefined) : !this.hasIntent(GatewayIntentBits.GuildMessages, guild?.id)) return undefined;
    const mentions = input.mentionBot || input.content.includes(`<@${this.bot.id}>`) ? [this.bot] : [];
    const content = this.hasIntent(GatewayIntentBits.MessageContent, guild?.id) || mentions.length > 0 || input.dm ? input.content : '';
    const message = {
      id: this.nextId(),
      channel_id: channelId,
      author: input.authorIsBot ? { ...input.author, bot: true } : input.author,
      content,
      timestamp: new Date().toISOString(),
      edited_timestamp: null,
      tts: false,
      mention_everyone: false,
      mentions,
      mention_roles: [],
      attachments: (input.attachments ?? []).map((a) => {
        const id = this.nextId();
        this.userFiles.set(id, a.data);
        const url = `http://127.0.0.1:${this.port}/attachments/${id}/${encodeURIComponent(a.name)}`;
        return { id, filename: a.name, content_type: a.contentType, size: a.data.length, url, proxy_url: url };
      }),
      embeds: [],
      components: [],
      pinned: false,
      type: 0,
      flags: (input.attachments ?? []).some((a) => a.voice) ? 1 << 13 : 0,
    } as unknown as APIMessage;
    this.messages.set(message.id, message);
    const extra: Record<string, unknown> = {};
    // A guild message carries the author's member object (roles included), without its user; a webhook's has none.
    if (guild) Object.assign(extra, { guild_id: guild.id, ...(input.webhookId ? { webhook_id: input.webhookId } : { member: this.memberOf(guild, input.author.id) }) });
    if (input.dm) extra.channel_type = 1;
    else if (input.uncachedThread) extra.channel_type = 11;
    this.dispatch('MESSAGE_CREATE', { ...message, ...extra });
    return message;
  }

  /** A guild admin renames the guild (GUILD_UPDATE, as Discord sends it to every member bot). */
  renameGuild(guildId: string, name: string): void {
    const guild = this.guilds.find((g) => g.id === guildId);
    if (!guild) throw new Error(`no guild ${guildId}`);
    guild.name = name;
    this.dispatch('GUILD_UPDATE', { id: guild.id, name, unavailable: false, guild_id: guild.id });
  }

  /** A guild admin renames a channel or thread (CHANNEL_UPDATE). */
  renameChannel(channelId: string, name: string): void {
    const guild = this.guildOf(channelId);
    const channel = guild?.channels.find((c) => c.id === channelId);
    if (!guild || !channel) throw new Error(`no guild channel ${channelId}`);
    channel.name = name;
    this.dispatch(channel.type === 11 ? 'THREAD_UPDATE' : 'CHANNEL_UPDATE', channelPayload(channel, guild.id));
  }

  /** Announces a thread created after READY (threads in GUILD_CREATE need no announcement). */
  createThread(thread: FakeChannel & { type: 11; parentId: string }): void {
    const guild = this.guildOf(thread.parentId);
    if (!guild) throw new Error(`no guild has channel ${thread.parentId}`);
    guild.channels.push(thread);
    this.dispatch('THREAD_CREATE', { ...channelPayload(thread, guild.id), newly_created: true });
  }

  /**
   * A user clicks a button on a message the bot posted. Returns the interaction id and token,
   * which name the callback and webhook routes the client will call.
   */
  click(input: { message: APIMessage; customId: string; user: APIUser }): { id: string; token: string } {
    const id = this.nextId();
    const token = `itoken-${id}`;
    const channelId = input.message.channel_id;
    const guild = this.guildOf(channelId);
    const base = {
      id,
      application_id: this.bot.id,
      type: 3,
      token,
      version: 1,
      channel_id: channelId,
      message: input.message,
      data: { custom_id: input.customId, component_type: 2 },
      app_permissions: '2248473465835073',
      locale: 'en-US',
      entitlements: [],
      attachment_size_limit: 10_485_760,
    };
    const scoped = guild
      ? {
          guild_id: guild.id,
          guild_locale: 'en-US',
          channel: { id: channelId, type: this.channel(channelId)?.type ?? 0 },
          member: { user: input.user, permissions: '2248473465835073', ...this.memberOf(guild, input.user.id) },
          authorizing_integration_owners: { '0': guild.id },
          context: 0,
        }
      : {
          channel: { id: channelId, type: 1 },
          user: input.user,
          authorizing_integration_owners: { '1': input.user.id },
          context: 1,
        };
    this.interactions.push({ token, messageId: input.message.id, channelId });
    this.dispatch('INTERACTION_CREATE', { ...base, ...scoped });
    return { id, token };
  }

  /** Modals the bot opened (interaction callback type 9), in order, with the interaction they answered. */
  readonly modals: Array<{ interactionId: string; token: string; channelId: string; customId: string; title: string; components: any[]; data: { custom_id: string; title: string; components: any[] } }> = [];

  /** Waits for the bot to open a modal in answer to an interaction (callback type 9). */
  async modalFor(interactionId: string, ms = 5_000): Promise<{ custom_id: string; title: string; components: any[] }> {
    await this.requests.waitFor((r) => r.method === 'POST' && r.path.startsWith(`/interactions/${interactionId}/`) && r.body?.type === 9, ms, `modal of ${interactionId}`);
    return this.modals.find((m) => m.interactionId === interactionId)!.data;
  }

  /**
   * A user submits a modal the bot opened (MODAL_SUBMIT, type 5) — from a button on `message`,
   * or in `channelId` (default: the channel of the newest modal with that custom id) — with the
   * text inputs' values by custom id, as Discord sends it: action rows of text inputs.
   */
  submitModal(input: { message?: APIMessage; customId: string; user: APIUser; values: Record<string, string>; channelId?: string }): { id: string; token: string } {
    const modal = [...this.modals].reverse().find((m) => m.customId === input.customId);
    const channelId = input.message?.channel_id ?? input.channelId ?? modal?.channelId;
    if (!channelId) throw new Error(`no modal ${input.customId} was opened; say channelId`);
    const id = this.nextId();
    const token = `itoken-${id}`;
    const guild = this.guildOf(channelId);
    this.interactions.push({ token, messageId: input.message?.id, channelId });
    this.dispatch('INTERACTION_CREATE', {
      id,
      application_id: this.bot.id,
      type: 5,
      token,
      version: 1,
      channel_id: channelId,
      ...(input.message ? { message: input.message } : {}),
      data: { custom_id: input.customId, components: Object.entries(input.values).map(([custom_id, value]) => ({ type: 1, components: [{ type: 4, custom_id, value }] })) },
      app_permissions: '2248473465835073',
      locale: 'en-US',
      entitlements: [],
      attachment_size_limit: 10_485_760,
      ...this.interactionScope(channelId, input.user, guild === undefined),
    });
    return { id, token };
  }

  /**
   * A user runs a registered slash command (CHAT_INPUT, string options) in a guild channel,
   * a known thread or — with `dm: true` — their DM with the bot. Throws for a command the
   * application has not registered: Discord would never deliver it. The deferred or direct
   * reply becomes a bot message in that channel, which later webhook edits change.
   */
  command(input: { name: string; options?: Record<string, string>; user: APIUser; channelId?: string; dm?: boolean }): { id: string; token: string } {
    const registered = this.commands.find((c) => c.name === input.name);
    if (!registered) throw new Error(`/${input.name} is not registered (registered: ${this.commands.map((c) => c.name).join(', ') || 'none'})`);
    // Discord offers a command only in the contexts it was registered for (0 guild, 1 the bot's DM).
    const context = input.dm ? 1 : 0;
    if (Array.isArray(registered.contexts) && !registered.contexts.includes(context)) throw new Error(`/${input.name} is not offered ${input.dm ? 'in DMs' : 'in guilds'} (contexts ${JSON.stringify(registered.contexts)})`);
    const channelId = input.dm ? this.dmChannelOf(input.user.id) : input.channelId;
    if (!channelId) throw new Error('command needs channelId or dm');
    // In a guild Discord offers a command with `default_member_permissions` only to members
    // holding those permissions, or Administrator; "0" means administrators only. Not in DMs.
    const guild = input.dm ? undefined : this.guildOf(channelId);
    const needs = registered.default_member_permissions as string | null | undefined;
    if (guild && needs != null) {
      const held = BigInt(this.memberPermissions(guild, input.user.id));
      const admin = (held & ADMINISTRATOR) !== 0n;
      if (!admin && (needs === '0' || (held & BigInt(needs)) !== BigInt(needs))) throw new Error(`/${input.name} is not offered to ${input.user.id} in guild ${guild.id} (default_member_permissions ${needs})`);
    }
    const id = this.nextId();
    const token = `itoken-${id}`;
    const options = Object.entries(input.options ?? {}).map(([name, value]) => ({ name, type: 3, value }));
    this.interactions.push({ token, messageId: undefined, channelId });
    this.dispatch('INTERACTION_CREATE', {
      id,
      application_id: this.bot.id,
      type: 2,
      token,
      version: 1,
      channel_id: channelId,
      data: { id: registered.id, name: input.name, type: 1, options },
      app_permissions: '2248473465835073',
      locale: 'en-US',
      entitlements: [],
      attachment_size_limit: 10_485_760,
      ...this.interactionScope(channelId, input.user, input.dm === true),
    });
    return { id, token };
  }

  private interactionScope(channelId: string, user: APIUser, dm: boolean): Record<string, unknown> {
    const guild = dm ? undefined : this.guildOf(channelId);
    if (!guild) return { channel: { id: channelId, type: 1 }, user, authorizing_integration_owners: { '1': user.id }, context: 1 };
    const channel = this.channel(channelId);
    return {
      guild_id: guild.id,
      guild_locale: 'en-US',
      channel: channel ? channelPayload(channel, guild.id) : { id: channelId, type: 0 },
      member: { user, permissions: this.memberPermissions(guild, user.id), ...this.memberOf(guild, user.id) },
      authorizing_integration_owners: { '0': guild.id },
      context: 0,
    };
  }

  /** The bot's messages answering an interaction: the original reply, then any follow-ups. */
  interactionReplies(token: string): RecordedRequest[] {
    return this.requests.filter((r) => r.path.includes(`/${token}`));
  }

  /** Waits for the client's answer to an interaction (`type` 4 reply, 5/6 defer, 7 update). */
  interactionCallback(interactionId: string, ms?: number): Promise<RecordedRequest> {
    return this.requests.waitFor((r) => r.method === 'POST' && r.path.startsWith(`/interactions/${interactionId}/`), ms, `callback of ${interactionId}`);
  }

  // ---- gateway ----

  private handleSocket(socket: WebSocket): void {
    this.sockets.add(socket);
    // The session outlives its socket: a resume continues it and replays what it missed.
    socket.on('close', () => this.sockets.delete(socket));
    socket.send(JSON.stringify({ op: 10, d: { heartbeat_interval: this.heartbeatMs }, s: null, t: null }));
    socket.on('message', (data) => {
      const frame = JSON.parse(String(data)) as { op: number; d: any };
      this.frames.add({ ...frame, at: Date.now(), shard: frame.op === 2 ? (frame.d?.shard?.[0] ?? 0) : this.shardOfSocket.get(socket) });
      if (frame.op === 1 && !this.silentHeartbeats) socket.send(JSON.stringify({ op: 11, d: null, s: null, t: null }));
      else if (frame.op === 2) this.onIdentify(socket, frame.d);
      else if (frame.op === 6) this.onResume(socket, frame.d);
    });
  }

  private onResume(socket: WebSocket, d: { session_id?: string }): void {
    const session = [...this.sessions.values()].find((s) => s.sessionId === d.session_id);
    // An unknown session is invalid (op 9, not resumable): the client identifies afresh.
    if (!session) return void socket.send(JSON.stringify({ op: 9, d: false, s: null, t: null }));
    this.silentHeartbeats = false;
    session.socket = socket;
    this.shardOfSocket.set(socket, session.shard[0]);
    for (const frame of session.missed.splice(0)) socket.send(frame);
    socket.send(JSON.stringify({ op: 0, t: 'RESUMED', s: ++session.seq, d: {} }));
  }

  private onIdentify(socket: WebSocket, d: { intents: number; shard?: [number, number]; token?: string }): void {
    const other = this.otherBots.get(bareToken(d.token));
    if (other) return this.identifyOtherBot(socket, d, other);
    const [id, count] = d.shard ?? [0, 1];
    // Discord closes a connection whose shard is not one of `count` (4010 Invalid shard).
    if (!Number.isInteger(id) || !Number.isInteger(count) || count < 1 || id < 0 || id >= count) return void socket.close(4010, 'Invalid shard');
    // A client identifying with another shard count replaces every session of the old layout.
    for (const [other, s] of this.sessions) if (s.shard[1] !== count) this.sessions.delete(other);
    const session: GatewaySession = { socket, intents: d.intents, shard: [id, count], sessionId: `fake-session-${id + 1}`, seq: 0, missed: [] };
    this.sessions.set(id, session);
    this.shardOfSocket.set(socket, id);
    const url = `ws://127.0.0.1:${this.port}`;
    const guilds = this.guilds.filter((g) => shardOfGuild(g.id, count) === id);
    this.dispatch(
      'READY',
      {
        v: 10,
        user: this.bot,
        guilds: guilds.map((g) => ({ id: g.id, unavailable: true })),
        session_id: session.sessionId,
        resume_gateway_url: url,
        shard: [id, count],
        application: { id: this.bot.id, flags: this.applicationFlags },
      },
      id,
    );
    for (const guild of guilds) {
      this.dispatch(
        'GUILD_CREATE',
        {
          id: guild.id,
          name: guild.name,
          unavailable: false,
          channels: guild.channels.filter((c) => c.type === 0).map((c) => channelPayload(c, guild.id)),
          threads: guild.channels.filter((c) => c.type === 11).map((c) => channelPayload(c, guild.id)),
          // The guild's roles, @everyone (the guild's own id) first, as Discord lists them.
          roles: [{ id: guild.id, name: '@everyone' }, ...(guild.roles ?? [])].map((r, position) => rolePayload(r, position)),
          // Discord always lists the bot's own member (what its permissions are computed from).
          members: [{ user: this.bot, ...this.memberOf(guild, this.bot.id) }],
          emojis: [],
          stickers: [],
        },
        id,
      );
    }
  }

  /** A further bot application's connection: READY as that bot, every guild, one shard. */
  private identifyOtherBot(socket: WebSocket, d: { intents: number }, bot: APIUser): void {
    const session: GatewaySession = { socket, intents: d.intents, shard: [0, 1], sessionId: `fake-session-bot-${bot.id}`, seq: 0, missed: [] };
    this.otherSessions.set(bot.id, session);
    const url = `ws://127.0.0.1:${this.port}`;
    this.sendTo(session, 'READY', { v: 10, user: bot, guilds: this.guilds.map((g) => ({ id: g.id, unavailable: true })), session_id: session.sessionId, resume_gateway_url: url, shard: [0, 1], application: { id: bot.id, flags: this.applicationFlags } });
    for (const guild of this.guilds) {
      this.sendTo(session, 'GUILD_CREATE', {
        id: guild.id,
        name: guild.name,
        unavailable: false,
        channels: guild.channels.filter((c) => c.type === 0).map((c) => channelPayload(c, guild.id)),
        threads: guild.channels.filter((c) => c.type === 11).map((c) => channelPayload(c, guild.id)),
        roles: [{ id: guild.id, name: '@everyone' }, ...(guild.roles ?? [])].map((r, position) => rolePayload(r, position)),
        members: [],
        emojis: [],
        stickers: [],
      });
    }
  }

  private sendTo(session: GatewaySession, t: string, d: unknown): void {
    const frame = JSON.stringify({ op: 0, t, s: ++session.seq, d });
    if (session.socket.readyState === session.socket.OPEN) session.socket.send(frame);
    else session.missed.push(frame);
  }

  /** The bot a REST request is made as: a further bot by its token, else the first bot. */
  private botOf(r: RecordedRequest): APIUser {
    return this.otherBots.get(bareToken(r.headers.authorization)) ?? this.bot;
  }

  /** A guild message a bot posted, delivered to every other bot in the guild (only with `otherBots`). */
  private relayBotMessage(message: APIMessage, author: APIUser): void {
    const guild = this.guildOf(message.channel_id);
    if (this.otherBots.size === 0 || !guild) return;
    const everyBot = [this.bot, ...this.otherBots.values()];
    const mentions = everyBot.filter((b) => message.content.includes(`<@${b.id}>`));
    const payload = { ...message, mentions, guild_id: guild.id, member: this.memberOf(guild, author.id) };
    for (const bot of everyBot) {
      if (bot.id === author.id) continue;
      if (bot.id === this.bot.id) this.dispatch('MESSAGE_CREATE', payload);
      else {
        const session = this.otherSessions.get(bot.id);
        if (session) this.sendTo(session, 'MESSAGE_CREATE', payload);
      }
    }
  }

  // ---- REST ----

  private async handleHttp(req: import('node:http').IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const raw = await readBody(req);
    const { body, files } = await parseBody(raw, req.headers['content-type']);
    const record: RecordedRequest = {
      method: req.method ?? 'GET',
      path: decodeURIComponent(url.pathname.replace(/^\/api\/v\d+/, '')),
      query: url.searchParams,
      headers: req.headers,
      raw,
      body,
      files,
      at: Date.now(),
    };
    this.requests.add(record);
    for (const o of this.overrides) if (o.match(record) && (await o.handle(record, res))) return;
    this.route(record, res);
  }

  private route(r: RecordedRequest, res: ServerResponse): void {
    const { method, path } = r;
    const file = method === 'GET' ? /^\/attachments\/(\d+)\/.+$/.exec(path) : null;
    if (file) {
      const data = this.userFiles.get(file[1]!);
      if (!data) return sendJson(res, 404, { message: '404: Not Found' });
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': data.length }).end(data);
      return;
    }
    const auth = r.headers.authorization;
    if (auth !== undefined && (!/^Bot .+/.test(auth) || (this.token !== undefined && auth !== `Bot ${this.token}` && !this.otherBots.has(bareToken(auth))))) return sendJson(res, 401, { message: '401: Unauthorized', code: 0 });
    let m: RegExpMatchArray | null;
    if (method === 'GET' && path === '/gateway/bot') {
      return sendJson(res, 200, {
        url: `ws://127.0.0.1:${this.port}`,
        shards: this.recommendedShards,
        session_start_limit: { total: 1000, remaining: 999, reset_after: 14_400_000, max_concurrency: this.maxConcurrency },
      });
    }
    if (method === 'GET' && path === '/users/@me') return sendJson(res, 200, { ...this.botOf(r), verified: true, mfa_enabled: false, flags: 0 });
    if (method === 'GET' && path === '/applications/@me') {
      const me = this.botOf(r);
      return sendJson(res, 200, { id: me.id, name: me.username, description: '', bot_public: true, bot_require_code_grant: false, flags: this.applicationFlags, bot: me });
    }
    if (method === 'POST' && (m = path.match(/^\/channels\/(\d+)\/typing$/))) return sendJson(res, 204, undefined);
    if (method === 'POST' && (m = path.match(/^\/channels\/(\d+)\/messages$/))) {
      const invalid = discordRejects(r.body);
      if (invalid) return sendJson(res, 400, { code: 50035, message: `Invalid Form Body: ${invalid}` });
      const author = this.botOf(r);
      const message = this.storeBotMessage(m[1]!, r.body, r.files, author);
      this.relayBotMessage(message, author);
      return sendJson(res, 200, message);
    }
    if (this.routeMessageActions(r, res)) return;
    if (method === 'PATCH' && (m = path.match(/^\/channels\/(\d+)\/messages\/(\d+)$/))) {
      const existing = this.messages.get(m[2]!);
      if (!existing || existing.channel_id !== m[1]) return sendJson(res, 404, { code: 10008, message: 'Unknown Message' });
      // Discord lets a bot edit only what it wrote (deleting others' needs Manage Messages, which the fake grants).
      if (existing.author.id !== this.botOf(r).id) return sendJson(res, 403, { code: 50005, message: 'Cannot edit a message authored by another user' });
      const invalid = discordRejects(r.body);
      if (invalid) return sendJson(res, 400, { code: 50035, message: `Invalid Form Body: ${invalid}` });
      return sendJson(res, 200, this.editMessage(existing, r.body));
    }
    if (method === 'DELETE' && (m = path.match(/^\/channels\/(\d+)\/messages\/(\d+)$/))) {
      const existing = this.messages.get(m[2]!);
      if (!existing || existing.channel_id !== m[1]) return sendJson(res, 404, { code: 10008, message: 'Unknown Message' });
      this.messages.delete(m[2]!);
      return sendJson(res, 204, undefined);
    }
    if (method === 'GET' && (m = path.match(/^\/channels\/(\d+)$/))) {
      const dmUser = [...this.dmChannels].find(([, id]) => id === m![1])?.[0];
      if (dmUser) return sendJson(res, 200, { id: m[1], type: 1, last_message_id: null, recipients: [fakeUser(dmUser, `user${dmUser.slice(-4)}`)] });
      const channel = this.channel(m[1]!);
      const guild = this.guildOf(m[1]!);
      if (!channel || !guild) return sendJson(res, 404, { code: 10003, message: 'Unknown Channel' });
      return sendJson(res, 200, channelPayload(channel, guild.id));
    }
    if (method === 'POST' && path === '/users/@me/channels') {
      const userId = String(r.body?.recipient_id);
      return sendJson(res, 200, { id: this.dmChannelOf(userId), type: 1, last_message_id: null, recipients: [fakeUser(userId, `user${userId.slice(-4)}`)] });
    }
    if ((m = path.match(/^\/applications\/(\d+)\/commands$/))) {
      if (m[1] !== this.bot.id) return sendJson(res, 403, { code: 50001, message: 'Missing Access' });
      if (method === 'GET') return sendJson(res, 200, this.commands);
      if (method === 'PUT') {
        // As Discord stores them: unset permissions are null (everyone), unset contexts every context.
        this.commands.splice(
          0,
          this.commands.length,
          ...(r.body as Array<Record<string, any>>).map((c) => ({ ...c, id: this.nextId(), application_id: this.bot.id, version: this.nextId(), default_member_permissions: c.default_member_permissions ?? null, contexts: c.contexts ?? [0, 1, 2], nsfw: false })),
        );
        return sendJson(res, 200, this.commands);
      }
    }
    if (method === 'POST' && (m = path.match(/^\/interactions\/(\d+)\/([^/]+)\/callback$/))) {
      if (r.query.get('with_response') === 'true') return sendJson(res, 200, { interaction: { id: m[1], type: 3 }, resource: { type: r.body?.type } });
      // A reply (4) or deferred reply (5) to a command becomes the interaction's original message.
      const pending = this.interactions.find((i) => i.token === m![2] && i.messageId === undefined);
      if (pending && (r.body?.type === 4 || r.body?.type === 5)) pending.messageId = this.storeBotMessage(pending.channelId, { content: '', ...r.body.data }, r.files).id;
      // An update (type 7) edits the message the button sits on.
      if (r.body?.type === 7) this.editInteractionMessage(m[2]!, r.body.data);
      // A modal (type 9): Discord shows it to the clicker; the test submits it with submitModal.
      if (r.body?.type === 9) {
        const problem = modalProblem(r.body.data);
        if (problem) return sendJson(res, 400, { code: 50035, message: `Invalid Form Body: ${problem}` });
        this.modals.push({ interactionId: m[1]!, token: m[2]!, channelId: this.interactionChannel(m[2]!) ?? '0', customId: String(r.body.data.custom_id), title: String(r.body.data.title ?? ''), components: r.body.data.components ?? [], data: r.body.data });
      }
      return sendJson(res, 204, undefined);
    }
    if (method === 'POST' && (m = path.match(/^\/webhooks\/(\d+)\/([^/]+)$/))) {
      return sendJson(res, 200, this.storeBotMessage(this.interactionChannel(m[2]!) ?? '0', r.body, r.files));
    }
    if (method === 'PATCH' && (m = path.match(/^\/webhooks\/(\d+)\/([^/]+)\/messages\/@original$/))) {
      const edited = this.editInteractionMessage(m[2]!, r.body);
      if (!edited) return sendJson(res, 404, { code: 10008, message: 'Unknown Message' });
      return sendJson(res, 200, edited);
    }
    sendJson(res, 404, { code: 0, message: `fake has no route ${method} ${path}` });
  }

  private storeBotMessage(channelId: string, body: any, files: RecordedRequest['files'], author: APIUser = this.bot): APIMessage {
    const message = {
      id: this.nextId(),
      channel_id: channelId,
      author,
      content: body?.content ?? '',
      timestamp: new Date().toISOString(),
      edited_timestamp: null,
      tts: false,
      mention_everyone: false,
      mentions: [],
      mention_roles: [],
      attachments: files.map((f, i) => ({ id: String(i), filename: f.name, size: f.content.length, url: `http://127.0.0.1:${this.port}/attachments/${f.name}`, proxy_url: '' })),
      embeds: body?.embeds ?? [],
      components: body?.components ?? [],
      pinned: false,
      type: 0,
      flags: typeof body?.flags === 'number' ? body.flags : 0,
      ...(body?.poll ? { poll: { ...body.poll, expiry: new Date(Date.now() + Number(body.poll.duration ?? 24) * 3_600_000).toISOString(), results: { is_finalized: false, answer_counts: [] } } } : {}),
    } as unknown as APIMessage;
    this.messages.set(message.id, message);
    return message;
  }

  /** Messages of a channel (or thread), oldest first. */
  messagesIn(channelId: string): APIMessage[] {
    return [...this.messages.values()].filter((msg) => msg.channel_id === channelId);
  }

  /**
   * Reactions, threads from messages, pins, history and single-message reads, as Discord's REST
   * answers them: a message is found only under its own channel (else 10008 Unknown Message), a
   * custom emoji must be one of the guild's (else 10014 Unknown Emoji), a poll is validated as
   * Discord does (2–10 answers, question ≤ 300, answers ≤ 55, duration ≤ 768 h).
   */
  private routeMessageActions(r: RecordedRequest, res: ServerResponse): boolean {
    const { method, path } = r;
    let m: RegExpMatchArray | null;
    const unknown = () => (sendJson(res, 404, { code: 10008, message: 'Unknown Message' }), true);
    const messageIn = (channelId: string, id: string) => {
      const found = this.messages.get(id);
      return found && found.channel_id === channelId ? found : undefined;
    };
    if ((m = path.match(/^\/channels\/(\d+)\/messages\/(\d+)\/reactions\/([^/]+)\/@me$/)) && (method === 'PUT' || method === 'DELETE')) {
      const message = messageIn(m[1]!, m[2]!);
      if (!message) return unknown();
      const emoji = m[3]!;
      const custom = /^(\w{2,32}):(\d{17,20})$/.exec(emoji);
      if (custom && !(this.customEmoji.get(custom[2]!) === custom[1])) return (sendJson(res, 400, { code: 10014, message: 'Unknown Emoji' }), true);
      if (!custom && (emoji.length > 32 || /[\sA-Za-z]/.test(emoji))) return (sendJson(res, 400, { code: 10014, message: 'Unknown Emoji' }), true);
      const list = ((message as any).reactions ??= []) as Array<{ emoji: { id: string | null; name: string }; count: number; me: boolean }>;
      const key = (e: { id: string | null; name: string }) => (e.id ? `${e.name}:${e.id}` : e.name);
      const existing = list.find((x) => key(x.emoji) === emoji);
      if (method === 'PUT' && !existing) list.push({ emoji: custom ? { id: custom[2]!, name: custom[1]! } : { id: null, name: emoji }, count: 1, me: true });
      if (method === 'DELETE' && existing?.me) {
        existing.count--;
        existing.me = false;
        if (existing.count === 0) list.splice(list.indexOf(existing), 1);
      }
      return (sendJson(res, 204, undefined), true);
    }
    if (method === 'POST' && (m = path.match(/^\/channels\/(\d+)\/(?:messages\/(\d+)\/)?threads$/))) {
      const guild = this.guildOf(m[1]!);
      if (!guild || this.channel(m[1]!)?.type !== 0) return (sendJson(res, 400, { code: 50024, message: 'Cannot execute action on this channel type' }), true);
      if (m[2] !== undefined && !messageIn(m[1]!, m[2])) return unknown();
      const name = String(r.body?.name ?? '');
      if (name.length < 1 || name.length > 100) return (sendJson(res, 400, { code: 50035, message: 'Invalid Form Body: name' }), true);
      const thread: FakeChannel & { type: 11; parentId: string } = { id: m[2] ?? this.nextId(), name, type: 11, parentId: m[1]! };
      this.createThread(thread);
      this.threadsCreated.push({ ...thread, fromMessage: m[2], by: this.botOf(r).id });
      return (sendJson(res, 201, channelPayload(thread, guild.id)), true);
    }
    if ((m = path.match(/^\/channels\/(\d+)\/(?:pins|messages\/pins)\/(\d+)$/)) && (method === 'PUT' || method === 'DELETE')) {
      const message = messageIn(m[1]!, m[2]!);
      if (!message) return unknown();
      this.messages.set(message.id, { ...message, pinned: method === 'PUT' });
      return (sendJson(res, 204, undefined), true);
    }
    if (method === 'GET' && (m = path.match(/^\/channels\/(\d+)\/pins$/))) {
      return (sendJson(res, 200, this.messagesIn(m[1]!).filter((x) => x.pinned).reverse()), true);
    }
    if (method === 'GET' && (m = path.match(/^\/channels\/(\d+)\/messages\/(\d+)$/))) {
      const message = messageIn(m[1]!, m[2]!);
      return message ? (sendJson(res, 200, message), true) : unknown();
    }
    if (method === 'GET' && (m = path.match(/^\/channels\/(\d+)\/messages$/))) {
      const limit = Math.min(Math.max(Number(r.query.get('limit') ?? 50), 1), 100);
      // Newest first, as Discord answers.
      return (sendJson(res, 200, this.messagesIn(m[1]!).reverse().slice(0, limit)), true);
    }
    if (method === 'POST' && r.body?.poll && (m = path.match(/^\/channels\/(\d+)\/messages$/))) {
      const poll = r.body.poll;
      const answers = Array.isArray(poll.answers) ? poll.answers : [];
      const bad =
        typeof poll.question?.text !== 'string' || poll.question.text.length > 300 ? 'poll.question' :
        answers.length < 1 || answers.length > 10 || answers.some((a: any) => typeof a?.poll_media?.text !== 'string' || a.poll_media.text.length > 55) ? 'poll.answers' :
        poll.duration !== undefined && (poll.duration < 1 || poll.duration > 768) ? 'poll.duration' : undefined;
      if (bad) return (sendJson(res, 400, { code: 50035, message: `Invalid Form Body: ${bad}` }), true);
    }
    return false;
  }

  private editMessage(existing: APIMessage, body: any): APIMessage {
    const edited = { ...existing, edited_timestamp: new Date().toISOString() } as any;
    for (const key of ['content', 'embeds', 'components'] as const) if (body && key in body) edited[key] = body[key];
    this.messages.set(existing.id, edited);
    return edited;
  }

  private interactionMessage(token: string): APIMessage | undefined {
    const found = this.interactions.find((i) => i.token === token);
    return found?.messageId ? this.messages.get(found.messageId) : undefined;
  }

  private interactionChannel(token: string): string | undefined {
    return this.interactions.find((i) => i.token === token)?.channelId;
  }

  private editInteractionMessage(token: string, data: any): APIMessage | undefined {
    const message = this.interactionMessage(token);
    return message ? this.editMessage(message, data) : undefined;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Starts a Discord fake on a free loopback port. */
export function startDiscordFake(options?: DiscordFakeOptions): Promise<DiscordFake> {
  return new DiscordFake(options).listen();
}

/** What Discord refuses in a modal: no custom id or title, no text inputs, more than five rows. */
function modalProblem(data: any): string | undefined {
  if (typeof data?.custom_id !== 'string' || data.custom_id === '' || data.custom_id.length > 100) return 'data.custom_id';
  if (typeof data.title !== 'string' || data.title === '' || data.title.length > 45) return 'data.title';
  if (!Array.isArray(data.components) || data.components.length === 0 || data.components.length > 5) return 'data.components';
  for (const row of data.components) {
    const inner = row?.type === 1 ? row.components : row?.type === 18 ? [row.component] : undefined;
    if (!Array.isArray(inner) || inner.some((c: any) => c?.type !== 4 || typeof c.custom_id !== 'string')) return 'data.components: text inputs expected';
  }
  return undefined;
}

/** A token as the client sends it: `Bot <token>` in a header, bare in IDENTIFY. */
function bareToken(value: string | string[] | undefined): string {
  const v = Array.isArray(value) ? value[0] : value;
  return (v ?? '').replace(/^Bot /, '');
}
