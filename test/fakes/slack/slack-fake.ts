import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { WebSocketServer, type WebSocket } from 'ws';
import { SLACK_BOT_SCOPES } from '../../../src/cli/platform-setup.js';
import { parseBody, readBody, RequestLog, sendJson, type RecordedRequest, type RouteOverride } from '../recorder.js';

/**
 * Connections the sender keeps open to each receiver (kept alive between requests). A burst of
 * hundreds of events sent at once would otherwise open, and the receiver accept, a socket for
 * each; beyond these, a request waits for a free connection, in the order sent.
 */
const SENDER_CONNECTIONS = 16;

export interface SlackFakeOptions {
  teamId?: string;
  /** Channel ids to names, for `conversations.info`. */
  channels?: Record<string, string>;
  bot?: { userId: string; botId: string };
  /** The one bot (xoxb-) and app (xapp-) token accepted; others get `invalid_auth`. Default: any of the right kind. */
  botToken?: string;
  appToken?: string;
  /** The bot token's scopes, sent in `x-oauth-scopes` as Slack does; default: every scope the manifest declares. */
  scopes?: readonly string[];
  /**
   * chat.startStream / appendStream / stopStream: `true` serves them (a workspace with native
   * streaming); an error code (`unknown_method`, `not_allowed`, `missing_scope` …) is what
   * chat.startStream answers instead. Default `unknown_method`, a workspace without them.
   */
  nativeStreaming?: true | string;
  /** The channels (of `channels`) the bot is a member of, for conversations.list's `is_member`; default: all of them. */
  memberOf?: readonly string[];
  /** Archived channels (of `channels`): conversations.list leaves them out when asked to. */
  archived?: readonly string[];
  /** User groups (`S…` id → member user ids), served by usergroups.list and usergroups.users.list. */
  usergroups?: Record<string, string[]>;
}

/** A message the app posted (or updated), as the fake keeps it. */
export interface SlackMessage {
  channel: string;
  ts: string;
  text: string;
  blocks?: any[];
  thread_ts?: string;
  /** A native stream's message: true until chat.stopStream. */
  streaming?: boolean;
  /** Reactions on it, as reactions.add made them. */
  reactions?: Array<{ name: string; users: string[]; count: number }>;
  pinned?: boolean;
}

/** A message a person sent (messageEvent), kept for history, reactions, pins and files. */
export interface SlackUserMessage extends SlackMessage {
  user: string;
  files?: any[];
}

/** A frame a Socket Mode client sent (acknowledgements carry `envelope_id`). */
export interface SocketFrame {
  envelope_id?: string;
  payload?: unknown;
  at: number;
}

export const TEAM_ID = 'T0000FAKE';
export const APP_ID = 'A0000FAKE';
const TEXT_LIMIT = 40_000;
const SECTION_TEXT_LIMIT = 3_000;
const STREAM_TEXT_LIMIT = 12_000;

/**
 * A loopback Slack: the Web API under `/api/<method>` (form or JSON bodies, Bearer auth),
 * a `response_url` sink, the external file-upload step, Socket Mode on `/link/`, and a sender
 * of signed Events API and interactivity requests for an app's HTTP receiver. Enforces the
 * limits Slack enforces (text 40,000, section text 3,000) and records every request.
 */
export class SlackFake {
  readonly requests = new RequestLog<RecordedRequest>();
  readonly socketFrames = new RequestLog<SocketFrame>();
  readonly messages = new Map<string, SlackMessage>();
  /** What people sent through messageEvent, by `channel:ts`. */
  readonly userMessages = new Map<string, SlackUserMessage>();
  readonly teamId: string;
  readonly bot: { userId: string; botId: string };
  readonly channels: Record<string, string>;
  private readonly memberOf: readonly string[] | undefined;
  private readonly archived: readonly string[];
  nativeStreaming: true | string;
  readonly uploads = new Map<string, { filename: string; content: string }>();
  /** Files people "posted", served at their url_private with the bot token, by path. */
  readonly hostedFiles = new Map<string, { data: Buffer; mimetype: string }>();
  private readonly overrides: Array<{ match: (r: RecordedRequest) => boolean; handle: RouteOverride }> = [];
  private readonly server = createServer((req, res) => void this.handleHttp(req, res));
  private readonly wss = new WebSocketServer({ server: this.server });
  private readonly sockets = new Set<WebSocket>();
  private readonly sender = new Agent({ connections: SENDER_CONNECTIONS });
  private counter = 0;
  private tsCounter = 0;
  private readonly tokens: { bot: string | undefined; app: string | undefined };
  /** The bot token's granted scopes. */
  scopes: readonly string[];
  /** User groups by id; a test edits them and sends `subteamMembersChanged`, as Slack does. */
  readonly usergroups: Record<string, string[]>;

  constructor(options: SlackFakeOptions = {}) {
    this.teamId = options.teamId ?? TEAM_ID;
    this.bot = options.bot ?? { userId: 'UBOT00001', botId: 'BBOT00001' };
    this.channels = options.channels ?? { C0000GEN: 'general', C0000DEV: 'dev' };
    this.memberOf = options.memberOf;
    this.archived = options.archived ?? [];
    this.tokens = { bot: options.botToken, app: options.appToken };
    this.scopes = options.scopes ?? SLACK_BOT_SCOPES.map((s) => s.scope);
    this.nativeStreaming = options.nativeStreaming ?? 'unknown_method';
    this.usergroups = options.usergroups ?? {};
    this.wss.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('message', (data) => this.socketFrames.add({ ...(JSON.parse(String(data)) as object), at: Date.now() }));
      socket.send(JSON.stringify({ type: 'hello', num_connections: this.sockets.size, debug_info: { host: 'fake' }, connection_info: { app_id: APP_ID } }));
    });
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** What `channels.slack.apiUrl` should be set to. */
  get apiUrl(): string {
    return `http://127.0.0.1:${this.port}/api/`;
  }

  listen(): Promise<this> {
    return new Promise((resolve) => this.server.listen(0, '127.0.0.1', () => resolve(this)));
  }

  override(match: (r: RecordedRequest) => boolean, handle: RouteOverride): void {
    this.overrides.unshift({ match, handle });
  }

  /** Recorded Web API calls of one method. */
  calls(method: string): RecordedRequest[] {
    return this.requests.filter((r) => r.path === `/api/${method}`);
  }

  waitForCall(method: string, predicate: (body: any) => boolean = () => true, ms?: number): Promise<RecordedRequest> {
    return this.requests.waitFor((r) => r.path === `/api/${method}` && predicate(r.body), ms, method);
  }

  /** Slack message timestamps: unique, increasing, in Slack's `seconds.micro` form. */
  nextTs(): string {
    this.tsCounter++;
    return `${1_700_000_000 + this.tsCounter}.${String(this.tsCounter).padStart(6, '0')}`;
  }

  nextEventId(): string {
    return `Ev${String(++this.counter).padStart(8, '0')}`;
  }

  // ---- building what Slack sends to an app ----

  /** An `event_callback` envelope around an event. */
  envelope(event: Record<string, unknown>, eventId = this.nextEventId()): Record<string, unknown> {
    return {
      token: 'legacy',
      team_id: this.teamId,
      api_app_id: APP_ID,
      type: 'event_callback',
      event_id: eventId,
      event_time: Math.floor(Date.now() / 1000),
      authorizations: [{ enterprise_id: null, team_id: this.teamId, user_id: this.bot.userId, is_bot: true, is_enterprise_install: false }],
      is_ext_shared_channel: false,
      event,
    };
  }

  /** A member renames a channel: `conversations.info` answers the new name, and the app gets `channel_rename` (`group_rename` for a private `G…` one). */
  renameEvent(channel: string, name: string): Record<string, unknown> {
    this.channels[channel] = name;
    return { type: channel.startsWith('G') ? 'group_rename' : 'channel_rename', channel: { id: channel, name, name_normalized: name, created: 1700000000 }, event_ts: this.nextTs() };
  }

  /** Members of a user group change (the test edited `usergroups`): Slack's `subteam_members_changed`. */
  subteamMembersChanged(subteam: string, added: string[] = [], removed: string[] = []): Record<string, unknown> {
    return {
      type: 'subteam_members_changed',
      subteam_id: subteam,
      team_id: this.teamId,
      date_previous_update: 1700000000,
      date_update: Math.floor(Date.now() / 1000),
      added_users: added,
      added_users_count: String(added.length),
      removed_users: removed,
      removed_users_count: String(removed.length),
      event_ts: this.nextTs(),
    };
  }

  /** A user's message event: in a channel, a DM (`D…` channel) or a thread (`threadTs`). */
  messageEvent(input: { user: string; text: string; channel: string; threadTs?: string; type?: 'message' | 'app_mention'; ts?: string; extra?: Record<string, unknown> }): Record<string, unknown> {
    const ts = input.ts ?? this.nextTs();
    const dm = input.channel.startsWith('D');
    const files = (input.extra as { files?: any[] } | undefined)?.files;
    this.userMessages.set(`${input.channel}:${ts}`, { channel: input.channel, ts, text: input.text, user: input.user, ...(input.threadTs ? { thread_ts: input.threadTs } : {}), ...(files ? { files } : {}) });
    return {
      type: input.type ?? 'message',
      channel: input.channel,
      ...(input.type === 'app_mention' ? {} : { channel_type: dm ? 'im' : 'channel' }),
      user: input.user,
      text: input.text,
      ts,
      event_ts: ts,
      team: this.teamId,
      ...(input.threadTs ? { thread_ts: input.threadTs } : {}),
      ...input.extra,
    };
  }

  /**
   * A file a person posted, as it appears in a message event's `files`: served by this fake at
   * its `url_private` / `url_private_download` to a request with the bot token (Slack answers
   * others with a redirect to its sign-in page).
   */
  hostFile(input: { name: string; mimetype: string; data: Buffer; subtype?: string }): Record<string, unknown> {
    const id = `F${String(++this.counter).padStart(8, '0')}`;
    const base = `/files-pri/${this.teamId}-${id}/${encodeURIComponent(input.name)}`;
    this.hostedFiles.set(base, { data: input.data, mimetype: input.mimetype });
    this.hostedFiles.set(`/files-pri/${this.teamId}-${id}/download/${encodeURIComponent(input.name)}`, { data: input.data, mimetype: input.mimetype });
    return {
      id,
      name: input.name,
      title: input.name,
      mimetype: input.mimetype,
      filetype: input.name.split('.').pop() ?? '',
      size: input.data.length,
      mode: 'hosted',
      ...(input.subtype ? { subtype: input.subtype } : {}),
      url_private: `http://127.0.0.1:${this.port}${base}`,
      url_private_download: `http://127.0.0.1:${this.port}/files-pri/${this.teamId}-${id}/download/${encodeURIComponent(input.name)}`,
    };
  }

  /** Trigger ids handed out with interactions, not yet used to open a view (each opens one). */
  private readonly triggers = new Set<string>();
  /** Views (modals) the app opened with views.open, in order. */
  readonly views: Array<Record<string, any> & { id: string }> = [];

  /**
   * A `view_submission` payload: the user submits a modal the app opened (`view`, or by `viewId`), with the values of
   * its input blocks by block id and action id, as Slack sends them in `view.state.values`.
   */
  viewSubmission(input: { view?: Record<string, any> & { id: string }; viewId?: string; user: string; values: Record<string, Record<string, string>> }): Record<string, unknown> {
    const view = input.view ?? this.views.find((v) => v.id === input.viewId);
    if (!view) throw new Error(`no view ${input.viewId} was opened`);
    const values = Object.fromEntries(Object.entries(input.values).map(([block, actions]) => [block, Object.fromEntries(Object.entries(actions).map(([action, value]) => [action, { type: 'plain_text_input', value }]))]));
    return {
      type: 'view_submission',
      api_app_id: APP_ID,
      token: 'legacy',
      trigger_id: `${++this.counter}.444.fake`,
      user: { id: input.user, username: input.user.toLowerCase(), name: input.user.toLowerCase(), team_id: this.teamId },
      team: { id: this.teamId, domain: 'fake' },
      enterprise: null,
      is_enterprise_install: false,
      view: { private_metadata: '', ...view, team_id: this.teamId, state: { values }, hash: `h${this.counter}`, app_id: APP_ID, bot_id: this.bot.botId },
      response_urls: [],
    };
  }

  /** A `block_actions` payload for a click on a button of a message the app posted. */
  blockActions(input: { message: SlackMessage; actionId: string; value: string; user: string }): Record<string, unknown> {
    const id = ++this.counter;
    this.triggers.add(`${id}.222.fake`);
    return {
      type: 'block_actions',
      api_app_id: APP_ID,
      token: 'legacy',
      trigger_id: `${id}.222.fake`,
      user: { id: input.user, username: input.user.toLowerCase(), name: input.user.toLowerCase(), team_id: this.teamId },
      team: { id: this.teamId, domain: 'fake' },
      enterprise: null,
      is_enterprise_install: false,
      channel: { id: input.message.channel, name: this.channels[input.message.channel] ?? 'directmessage' },
      container: { type: 'message', message_ts: input.message.ts, channel_id: input.message.channel, is_ephemeral: false },
      message: { type: 'message', user: this.bot.userId, bot_id: this.bot.botId, ts: input.message.ts, text: input.message.text, blocks: input.message.blocks ?? [] },
      state: { values: {} },
      response_url: `http://127.0.0.1:${this.port}/response/act${id}`,
      actions: [{ type: 'button', action_id: input.actionId, block_id: 'actions', value: input.value, text: { type: 'plain_text', text: input.actionId }, action_ts: `${Date.now() / 1000}` }],
    };
  }

  /**
   * A slash-command payload as Slack posts it (form fields), with a response_url on this fake:
   * what the app sends there is recorded under `/response/<trigger id>`.
   */
  slashCommand(input: { command: string; text: string; user: string; channel: string }): Record<string, string> {
    const id = ++this.counter;
    const triggerId = `${id}.333.fake`;
    const dm = input.channel.startsWith('D');
    return {
      token: 'legacy',
      team_id: this.teamId,
      team_domain: 'fake',
      channel_id: input.channel,
      channel_name: dm ? 'directmessage' : (this.channels[input.channel] ?? 'privategroup'),
      user_id: input.user,
      user_name: input.user.toLowerCase(),
      command: input.command,
      text: input.text,
      api_app_id: APP_ID,
      is_enterprise_install: 'false',
      response_url: `http://127.0.0.1:${this.port}/response/${triggerId}`,
      trigger_id: triggerId,
    };
  }

  /** Posts to a slash command's response_url the app made, in order. */
  responses(triggerId: string): RecordedRequest[] {
    return this.requests.filter((r) => r.path === `/response/${triggerId}`);
  }

  // ---- delivering to an app's HTTP receiver ----

  /**
   * POSTs a signed request to the app, exactly as Slack signs it. Options break the signature
   * on purpose (wrong secret, stale timestamp, body changed after signing) or mark a retry.
   */
  async deliver(
    url: string,
    body: string,
    contentType: string,
    options: { secret: string; timestamp?: number; retryNum?: number; tamper?: boolean; unsigned?: boolean },
  ): Promise<Response> {
    const ts = options.timestamp ?? Math.floor(Date.now() / 1000);
    const signature = `v0=${createHmac('sha256', options.secret).update(`v0:${ts}:${body}`).digest('hex')}`;
    const headers: Record<string, string> = { 'content-type': contentType };
    if (!options.unsigned) {
      headers['x-slack-request-timestamp'] = String(ts);
      headers['x-slack-signature'] = signature;
    }
    if (options.retryNum !== undefined) {
      headers['x-slack-retry-num'] = String(options.retryNum);
      headers['x-slack-retry-reason'] = 'http_timeout';
    }
    // undici's request on the fake's own keep-alive connections, the answer read whole: a
    // web Response for the caller as before, without the Fetch machinery around each request
    // (the harness shares the machine's cores with what the throughput benches measure).
    const answer = await request(url, { method: 'POST', headers, body: options.tamper ? `${body} ` : body, dispatcher: this.sender });
    const text = await answer.body.text();
    const answerHeaders = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      if (Array.isArray(value)) for (const v of value) answerHeaders.append(name, v);
      else if (value !== undefined) answerHeaders.set(name, value);
    }
    return new Response(text.length > 0 ? text : null, { status: answer.statusCode, headers: answerHeaders });
  }

  sendEvent(url: string, envelope: Record<string, unknown>, options: Parameters<SlackFake['deliver']>[3]): Promise<Response> {
    return this.deliver(url, JSON.stringify(envelope), 'application/json', options);
  }

  sendAction(url: string, payload: Record<string, unknown>, options: Parameters<SlackFake['deliver']>[3]): Promise<Response> {
    return this.deliver(url, `payload=${encodeURIComponent(JSON.stringify(payload))}`, 'application/x-www-form-urlencoded', options);
  }

  /** Slack sends slash commands form-encoded, signed like every request. */
  sendCommand(url: string, payload: Record<string, string>, options: Parameters<SlackFake['deliver']>[3]): Promise<Response> {
    return this.deliver(url, new URLSearchParams(payload).toString(), 'application/x-www-form-urlencoded', options);
  }

  // ---- Socket Mode ----

  /**
   * Pushes an envelope to one connected Socket Mode client; resolves with its acknowledgement.
   * With several connections open (several instances of an app, or one app's extra
   * connections), Slack hands each envelope to one of them: here in turn (round-robin over the
   * open ones in the order they connected), or to connection `to` when given. Each envelope's
   * frame records which connection got it (`connection`, 0-based in connection order).
   */
  async pushSocket(type: 'events_api' | 'interactive', payload: Record<string, unknown>, retryAttempt = 0, to?: number): Promise<SocketFrame & { connection: number }> {
    const open = [...this.sockets].filter((s) => s.readyState === s.OPEN);
    if (open.length === 0) throw new Error('no Socket Mode client is connected');
    const connection = to ?? this.nextSocket++ % open.length;
    const socket = open[connection];
    if (!socket) throw new Error(`no Socket Mode connection ${connection} (${open.length} open)`);
    const envelopeId = `env-${++this.counter}`;
    socket.send(JSON.stringify({ envelope_id: envelopeId, type, accepts_response_payload: false, retry_attempt: retryAttempt, retry_reason: retryAttempt ? 'timeout' : '', payload }));
    return { ...(await this.socketFrames.waitFor((f) => f.envelope_id === envelopeId, 5_000, `ack of ${envelopeId}`)), connection };
  }

  /** Which connection the next round-robin envelope goes to. */
  private nextSocket = 0;

  get socketClients(): number {
    return this.sockets.size;
  }

  // ---- Web API ----

  private async handleHttp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const raw = await readBody(req);
    const { body, files } = await parseBody(raw, req.headers['content-type']);
    const record: RecordedRequest = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: req.headers, raw, body, files, at: Date.now() };
    this.requests.add(record);
    for (const o of this.overrides) if (o.match(record) && (await o.handle(record, res))) return;
    if (url.pathname.startsWith('/response/')) return sendJson(res, 200, { ok: true });
    if (url.pathname.startsWith('/files-pri/')) {
      const file = this.hostedFiles.get(url.pathname);
      if (!file) return sendJson(res, 404, { ok: false, error: 'file_not_found' });
      if (!/^Bearer xoxb-/.test(req.headers.authorization ?? '')) {
        res.writeHead(302, { location: `http://127.0.0.1:${this.port}/signin?redir=${encodeURIComponent(url.pathname)}` }).end();
        return;
      }
      res.writeHead(200, { 'content-type': file.mimetype, 'content-length': file.data.length }).end(file.data);
      return;
    }
    if (url.pathname.startsWith('/upload/')) {
      const upload = this.uploads.get(url.pathname.slice('/upload/'.length));
      // web-api sends the bytes as a multipart form; other clients may post them raw.
      if (upload) upload.content = files[0]?.content ?? raw.toString('utf8');
      return sendJson(res, upload ? 200 : 404, upload ? { ok: true } : { ok: false });
    }
    const method = url.pathname.match(/^\/api\/(.+)$/)?.[1];
    if (!method) return sendJson(res, 404, { ok: false, error: 'unknown_path' });
    const auth = req.headers.authorization ?? '';
    const wantsAppToken = method === 'apps.connections.open';
    if (!(wantsAppToken ? /^Bearer xapp-/ : /^Bearer xoxb-/).test(auth)) return sendJson(res, 200, { ok: false, error: 'not_authed' });
    const accepted = wantsAppToken ? this.tokens.app : this.tokens.bot;
    if (accepted !== undefined && auth !== `Bearer ${accepted}`) return sendJson(res, 200, { ok: false, error: 'invalid_auth' });
    // Slack names a bot token's scopes on every Web API answer.
    sendJson(res, 200, this.apiMethod(method, body ?? {}), wantsAppToken ? {} : { 'x-oauth-scopes': this.scopes.join(',') });
  }

  private apiMethod(method: string, args: any): Record<string, unknown> {
    switch (method) {
      case 'auth.test':
        return { ok: true, url: 'https://fake.slack.com/', team: 'Fake', user: 'warden', team_id: this.teamId, user_id: this.bot.userId, bot_id: this.bot.botId };
      case 'apps.connections.open':
        return { ok: true, url: `ws://127.0.0.1:${this.port}/link/?ticket=fake` };
      case 'chat.postMessage': {
        const invalid = this.invalidMessage(args);
        if (invalid) return { ok: false, error: invalid };
        const message: SlackMessage = { channel: args.channel, ts: this.nextTs(), text: args.text ?? '', blocks: args.blocks, thread_ts: args.thread_ts };
        this.messages.set(`${message.channel}:${message.ts}`, message);
        return { ok: true, channel: message.channel, ts: message.ts, message: { type: 'message', user: this.bot.userId, bot_id: this.bot.botId, ...message } };
      }
      case 'chat.update': {
        const key = `${args.channel}:${args.ts}`;
        const existing = this.messages.get(key);
        if (!existing) return { ok: false, error: this.userMessages.has(key) ? 'cant_update_message' : 'message_not_found' };
        // A stream still open is grown by appendStream, not edited.
        if (existing.streaming) return { ok: false, error: 'cant_update_message' };
        const invalid = this.invalidMessage(args);
        if (invalid) return { ok: false, error: invalid };
        this.messages.set(key, { ...existing, text: args.text ?? existing.text, blocks: args.blocks ?? existing.blocks });
        return { ok: true, channel: args.channel, ts: args.ts, text: args.text };
      }
      case 'chat.delete': {
        const key = `${args.channel}:${args.ts}`;
        if (!this.messages.delete(key)) return { ok: false, error: this.userMessages.has(key) ? 'cant_delete_message' : 'message_not_found' };
        return { ok: true, channel: args.channel, ts: args.ts };
      }
      case 'chat.startStream':
      case 'chat.appendStream':
      case 'chat.stopStream':
        return this.streamMethod(method, args);
      case 'chat.postEphemeral':
        return { ok: true, message_ts: this.nextTs() };
      case 'views.open': {
        // Slack checks the trigger (from an interaction, used once) and the view's shape.
        if (typeof args.trigger_id !== 'string' || !this.triggers.delete(args.trigger_id)) return { ok: false, error: 'invalid_trigger_id' };
        const view = typeof args.view === 'string' ? JSON.parse(args.view) : args.view;
        const problem = viewProblem(view);
        if (problem) return { ok: false, error: 'invalid_arguments', response_metadata: { messages: [`[ERROR] ${problem}`] } };
        const opened = { id: `V${String(++this.counter).padStart(8, '0')}`, ...view };
        this.views.push(opened);
        return { ok: true, view: opened };
      }
      case 'reactions.add':
      case 'reactions.remove':
      case 'pins.add':
      case 'pins.remove':
      case 'pins.list':
      case 'conversations.history':
      case 'conversations.replies':
        return this.messageActionMethod(method, args);
      case 'conversations.info': {
        if (typeof args.channel === 'string' && args.channel.startsWith('D')) return { ok: true, channel: { id: args.channel, is_channel: false, is_im: true, user: `U${args.channel.slice(1)}` } };
        const name = this.channels[args.channel];
        if (!name) return { ok: false, error: 'channel_not_found' };
        return { ok: true, channel: { id: args.channel, name, is_channel: true, is_im: false } };
      }
      case 'conversations.list': {
        // Slack's shape: every channel of the asked types, `is_member` per channel, paged by an opaque cursor (limit default 100, max 1000).
        const types = String(args.types ?? 'public_channel').split(',');
        if (!this.scopes.includes('channels:read')) return { ok: false, error: 'missing_scope', needed: 'channels:read', provided: this.scopes.join(',') };
        const all = Object.entries(this.channels)
          .filter(([id]) => (id.startsWith('G') ? types.includes('private_channel') : types.includes('public_channel')))
          .filter(([id]) => !(args.exclude_archived === true || args.exclude_archived === 'true') || !this.archived.includes(id));
        const limit = Math.min(1000, Math.max(1, Number(args.limit ?? 100)));
        const start = args.cursor ? Number(Buffer.from(String(args.cursor), 'base64').toString().replace(/^next:/, '')) : 0;
        if (!Number.isInteger(start) || start < 0) return { ok: false, error: 'invalid_cursor' };
        const page = all.slice(start, start + limit);
        const more = start + limit < all.length;
        return {
          ok: true,
          channels: page.map(([id, name]) => ({ id, name, is_channel: !id.startsWith('G'), is_private: id.startsWith('G'), is_archived: this.archived.includes(id), is_member: this.memberOf === undefined || this.memberOf.includes(id) })),
          response_metadata: { next_cursor: more ? Buffer.from(`next:${start + limit}`).toString('base64') : '' },
        };
      }
      case 'conversations.open':
        return { ok: true, channel: { id: `D${String(args.users).replace(/^U/, '')}` } };
      case 'files.getUploadURLExternal': {
        const fileId = `F${String(++this.counter).padStart(8, '0')}`;
        this.uploads.set(fileId, { filename: args.filename, content: '' });
        return { ok: true, upload_url: `http://127.0.0.1:${this.port}/upload/${fileId}`, file_id: fileId };
      }
      case 'usergroups.list':
        // Slack's shape; `include_users` is not asked for (the adapter reads members per group).
        if (!this.scopes.includes('usergroups:read')) return { ok: false, error: 'missing_scope', needed: 'usergroups:read', provided: this.scopes.join(',') };
        return {
          ok: true,
          usergroups: Object.entries(this.usergroups).map(([id, users]) => ({
            id,
            team_id: this.teamId,
            is_usergroup: true,
            name: id.toLowerCase(),
            handle: id.toLowerCase(),
            date_delete: 0,
            user_count: users.length,
          })),
        };
      case 'usergroups.users.list': {
        if (!this.scopes.includes('usergroups:read')) return { ok: false, error: 'missing_scope', needed: 'usergroups:read', provided: this.scopes.join(',') };
        const users = Object.hasOwn(this.usergroups, args.usergroup) ? this.usergroups[args.usergroup] : undefined;
        return users ? { ok: true, users: [...users] } : { ok: false, error: 'no_such_subteam' };
      }
      case 'files.completeUploadExternal':
        return { ok: true, files: (args.files ?? []).map((f: { id: string; title?: string }) => ({ id: f.id, title: f.title ?? '' })) };
      default:
        return { ok: true };
    }
  }

  /** Every message of a channel, the app's and people's, oldest first. */
  messagesIn(channel: string): Array<SlackMessage & { user?: string; files?: any[] }> {
    const all = [...[...this.messages.values()].map((m) => ({ ...m, user: this.bot.userId, bot_id: this.bot.botId })), ...this.userMessages.values()];
    return all.filter((m) => m.channel === channel).sort((a, b) => Number(a.ts) - Number(b.ts));
  }

  /**
   * Reactions, pins and history as Slack's Web API answers them: a message is found by channel
   * and ts together (else `message_not_found`), a reaction name must be an emoji shortcode
   * (else `invalid_name`) and is added once per user (`already_reacted`), history is newest
   * first, replies oldest first with the parent, `latest`/`oldest`/`inclusive` bound both.
   */
  private messageActionMethod(method: string, args: any): Record<string, unknown> {
    const key = `${args.channel}:${args.timestamp ?? args.ts}`;
    const target = this.messages.get(key) ?? this.userMessages.get(key);
    const shaped = (m: SlackMessage & { user?: string }) => ({ type: 'message', ...m, user: m.user ?? this.bot.userId, ...(this.messages.has(`${m.channel}:${m.ts}`) ? { bot_id: this.bot.botId } : {}), reactions: m.reactions?.map((r) => ({ name: r.name, users: r.users, count: r.count })) });
    const bounded = (list: Array<SlackMessage & { user?: string }>) =>
      list.filter((m) => {
        const t = Number(m.ts);
        const inc = args.inclusive === true || args.inclusive === 'true';
        if (args.latest !== undefined && (inc ? t > Number(args.latest) : t >= Number(args.latest))) return false;
        if (args.oldest !== undefined && (inc ? t < Number(args.oldest) : t <= Number(args.oldest))) return false;
        return true;
      });
    const limit = Math.min(Math.max(Number(args.limit ?? 100), 1), 1000);
    // The scope each method needs, as Slack checks it.
    const needed = method.startsWith('reactions.') ? 'reactions:write' : method === 'pins.list' ? 'pins:read' : method.startsWith('pins.') ? 'pins:write' : undefined;
    if (needed && !this.scopes.includes(needed)) return { ok: false, error: 'missing_scope', needed, provided: this.scopes.join(',') };
    switch (method) {
      case 'reactions.add':
      case 'reactions.remove': {
        if (!target) return { ok: false, error: 'message_not_found' };
        if (typeof args.name !== 'string' || !/^[a-z0-9_+'-]{1,100}$/.test(args.name)) return { ok: false, error: 'invalid_name' };
        const list = (target.reactions ??= []);
        const found = list.find((r) => r.name === args.name);
        if (method === 'reactions.add') {
          if (found?.users.includes(this.bot.userId)) return { ok: false, error: 'already_reacted' };
          if (found) (found.users.push(this.bot.userId), found.count++);
          else list.push({ name: args.name, users: [this.bot.userId], count: 1 });
        } else {
          if (!found?.users.includes(this.bot.userId)) return { ok: false, error: 'no_reaction' };
          found.users = found.users.filter((u) => u !== this.bot.userId);
          found.count--;
          if (found.count === 0) list.splice(list.indexOf(found), 1);
        }
        return { ok: true };
      }
      case 'pins.add':
      case 'pins.remove':
        if (!target) return { ok: false, error: 'message_not_found' };
        if (method === 'pins.add' && target.pinned) return { ok: false, error: 'already_pinned' };
        if (method === 'pins.remove' && !target.pinned) return { ok: false, error: 'no_pin' };
        target.pinned = method === 'pins.add';
        return { ok: true };
      case 'pins.list':
        return { ok: true, items: this.messagesIn(args.channel).filter((m) => m.pinned).map((m) => ({ type: 'message', channel: m.channel, message: shaped(m) })) };
      case 'conversations.history': {
        if (!this.channels[args.channel] && !String(args.channel).startsWith('D')) return { ok: false, error: 'channel_not_found' };
        // Top-level messages only (thread replies stay in their thread), newest first.
        const top = this.messagesIn(args.channel).filter((m) => !m.thread_ts || m.thread_ts === m.ts);
        const list = bounded(top).reverse().slice(0, limit);
        return { ok: true, messages: list.map(shaped), has_more: false };
      }
      case 'conversations.replies': {
        const thread = this.messagesIn(args.channel).filter((m) => m.ts === args.ts || m.thread_ts === args.ts);
        if (thread.length === 0) return { ok: false, error: 'thread_not_found' };
        return { ok: true, messages: bounded(thread).slice(0, limit).map(shaped), has_more: false };
      }
    }
    return { ok: false, error: 'unknown_method' };
  }

  /**
   * Slack's native streaming, with the checks Slack makes: startStream needs a channel and a
   * thread to reply in, and outside a DM the recipient user and team; markdown_text is at most
   * 12,000 characters; appendStream needs markdown_text (or chunks); append and stop work only
   * on a message still streaming, and a stopped stream is a plain message chat.update can edit.
   */
  private streamMethod(method: string, args: any): Record<string, unknown> {
    const invalid = (field: string) => ({ ok: false, error: 'invalid_arguments', response_metadata: { messages: [`[ERROR] missing required field: ${field}`] } });
    if (typeof args.markdown_text === 'string' && args.markdown_text.length > STREAM_TEXT_LIMIT) return { ok: false, error: 'msg_too_long' };
    if (!args.channel) return invalid('channel');
    if (method === 'chat.startStream') {
      if (this.nativeStreaming !== true) return { ok: false, error: this.nativeStreaming };
      if (!args.thread_ts) return invalid('thread_ts');
      const dm = String(args.channel).startsWith('D');
      if (!dm && !args.recipient_user_id) return invalid('recipient_user_id');
      if (!dm && !args.recipient_team_id) return invalid('recipient_team_id');
      if (!dm && !this.channels[args.channel]) return { ok: false, error: 'channel_not_found' };
      const message: SlackMessage = { channel: args.channel, ts: this.nextTs(), text: args.markdown_text ?? '', thread_ts: args.thread_ts, streaming: true };
      this.messages.set(`${message.channel}:${message.ts}`, message);
      return { ok: true, channel: message.channel, ts: message.ts };
    }
    if (!args.ts) return invalid('ts');
    const key = `${args.channel}:${args.ts}`;
    const existing = this.messages.get(key);
    if (!existing) return { ok: false, error: 'message_not_found' };
    if (!existing.streaming) return { ok: false, error: 'message_not_in_streaming_state' };
    if (method === 'chat.appendStream' && typeof args.markdown_text !== 'string' && !args.chunks) return invalid('markdown_text');
    const text = existing.text + (typeof args.markdown_text === 'string' ? args.markdown_text : '');
    this.messages.set(key, { ...existing, text, ...(method === 'chat.stopStream' ? { streaming: false } : {}) });
    return { ok: true, channel: args.channel, ts: args.ts };
  }

  private invalidMessage(args: any): string | undefined {
    if (typeof args.text === 'string' && args.text.length > TEXT_LIMIT) return 'msg_too_long';
    if (!args.text && !args.blocks) return 'no_text';
    for (const block of args.blocks ?? []) {
      if (block.type === 'section' && typeof block.text?.text === 'string' && block.text.text.length > SECTION_TEXT_LIMIT) return 'invalid_blocks';
    }
    return undefined;
  }

  /** Closes the fake. Stop the app first: a Socket Mode client cut off mid-close hangs ~30 s. */
  async close(): Promise<void> {
    for (const socket of this.sockets) socket.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await this.sender.destroy();
  }
}

export function startSlackFake(options?: SlackFakeOptions): Promise<SlackFake> {
  return new SlackFake(options).listen();
}

/** What Slack refuses in views.open: not a modal, no title, no blocks, an input block without a label or element. */
function viewProblem(view: any): string | undefined {
  if (view?.type !== 'modal') return 'view.type must be modal';
  if (view.title?.type !== 'plain_text' || typeof view.title.text !== 'string' || view.title.text.length > 24) return 'view.title must be plain_text of at most 24 characters';
  if (!Array.isArray(view.blocks) || view.blocks.length === 0) return 'view.blocks';
  if (view.blocks.some((b: any) => b.type === 'input') && view.submit?.type !== 'plain_text') return 'a view with inputs needs submit';
  for (const b of view.blocks) if (b.type === 'input' && (!b.label || !b.element?.action_id)) return 'input block needs label and element.action_id';
  if (typeof view.private_metadata === 'string' && view.private_metadata.length > 3000) return 'private_metadata too long';
  return undefined;
}
