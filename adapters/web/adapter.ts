import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { APPROVAL_DECISIONS, type ApprovalDecision, type ApprovalRequest } from '../../src/approvals/types.js';
import { ConfigError } from '../../src/config/errors.js';
import type { WebAdapterConfig as WebConfig } from '../../src/config/schema/channels.js';
import { WEB_LOCAL_USER } from '../../src/gateway/approval-clicks.js';
import { SECRET_MAX_CHARS, type SecretPromptHandlers } from '../common/secret-prompt.js';
import { ASK_MAX_CHARS, type UserQuestionHandlers } from '../common/ask-user-prompt.js';
import type { StreamSurface } from '../../src/gateway/reply-stream.js';
import type { ChatAdapter, ClickOrigin, InboundAttachment, InboundMessage, OnApprovalClick, OutboundMessage, ReplyTarget, UserQuestionPrompt } from '../../src/gateway/types.js';
import { INBOUND_MAX_BYTES, INBOUND_MAX_FILES } from '../../src/gateway/inbound-files.js';
import { sniffFileKind } from '../../src/tools/core/fs/file-kind.js';
import { FILE_ID, webFileStore } from './file-store.js';
import { fitFiles, withNotes } from '../common/outbound-files.js';
import { log } from '../../src/log/log.js';
import { alreadyResolvedText, cardTitle, decisionLabel, NOT_APPROVER_TEXT, NOT_FOUND_TEXT, offeredDecisions, outcomeLine, progressLines, REASON_MAX, requesterLine } from '../common/approval-card.js';
import { checkBind } from './access.js';
import { RecentIds } from '../common/recent-ids.js';
import type { WebHistory } from './history.js';
import type { WebWelcome } from './welcome.js';
import { openWebFront, WEB_HEADERS, type Reply, type WebFront } from './front.js';

/** The conversation id of the web chat; there is one, shared by every open tab. */
export const WEB_CHANNEL_ID = 'web';
/** Every click and form of the page comes from the web chat's one conversation, the local user's own. */
const WEB_ORIGIN: ClickOrigin = { provider: 'web', channelId: WEB_CHANNEL_ID, dm: true };
/** Longest message the page may send. */
export const WEB_MAX_INPUT = 20_000;
/** Largest file of a reply shown in the page. */
const WEB_FILE_LIMIT = 10 * 1024 * 1024;
/** What the file store keeps (replies' files and uploads together); the oldest go first. */
export const WEB_FILES_KEPT = 500;
export const WEB_FILES_BYTES = 512 * 1024 * 1024;
/** Largest upload: what a turn takes in from one file. */
export const WEB_UPLOAD_MAX_BYTES = INBOUND_MAX_BYTES;
/** A streamed reply is one bubble, however long. */
const WEB_STREAM_LIMIT = 1_000_000;
/** What a reconnecting tab gets back. */
const HISTORY_LIMIT = 200;

export interface WebCard {
  id: string;
  title: string;
  status: ApprovalRequest['status'];
  fullText: string;
  /** `at`: a time (ms), shown in the viewer's locale and time zone; `value` is its ISO form. */
  facts: Array<{ label: string; value: string; at?: number | undefined }>;
  buttons: Array<{ decision: ApprovalDecision; label: string }>;
  /** Whether the card takes a typed reason with its deny ("Deny with reason": a text field here). */
  denyWithReason: boolean;
  /** A quorum's progress, an escalation. */
  progress: string[];
  outcome: string;
}

export { WEB_LOCAL_USER };

/** A message on the page; `id` is the page's own id of a message it sent; `approvalId` an approval's outcome, shown under its card. */
export type WebMessage = {
  role: 'user' | 'bot' | 'notice';
  text: string;
  at: number;
  id?: string | undefined;
  approvalId?: string | undefined;
  /** The streamed bubble this final reply replaces. */
  streamId?: string | undefined;
  /** Files posted with it (a reply's, or the person's uploads), served at `url` to this page. */
  files?: Array<{ url: string; name: string; mimeType: string; bytes: number }> | undefined;
};

/**
 * Frames the server sends; the page's script handles each `type`. `history` comes first on
 * every connection (and after `/new`), then `pending`; `ack` answers each message the page sent.
 */
export type ServerFrame =
  | { type: 'history'; session: string; items: Array<{ kind: 'message'; message: WebMessage } | { kind: 'card'; card: WebCard }>; welcome?: WebWelcome | undefined }
  | { type: 'message'; message: WebMessage }
  | { type: 'card'; card: WebCard }
  | { type: 'pending'; cards: WebCard[] }
  | { type: 'ack'; id: string; status: 'accepted' | 'duplicate' | 'refused'; reason?: string }
  | { type: 'typing'; on: boolean }
  /** A reply as it is written: the whole text so far of bubble `id` ('' removes it); the final reply follows as a `message` with `streamId`. */
  | { type: 'stream'; id: string; text: string }
  /** The secrets tool's private form: the page shows a password field; the value comes back in a `secret` frame. */
  | { type: 'secret'; prompt: { id: string; name: string; reason: string } }
  /** The ask_user tool's questions: buttons per option and a text field; answers come back in `answer` frames. */
  | { type: 'question'; prompt: { id: string; questions: UserQuestionPrompt['questions'] } }
  /** A question answered: the page replaces its buttons with `summary`. */
  | { type: 'question-answered'; id: string; question: number; summary: string };

export interface WebAdapterDeps {
  onApprovalClick: OnApprovalClick;
  /** The access token every request must carry (`webChatToken`: `channels.web.token` or the per-install one). */
  token: string;
  /** The store behind the page: current session, history, delivered message ids. Without it, memory only. */
  history?: WebHistory | undefined;
  /** The approval requests waiting for a decision (the pending panel shows the web chat's). */
  pendingApprovals?: (() => Promise<ApprovalRequest[]>) | undefined;
  /** Where files served to the page are kept (under the data dir), so links outlive a restart. Without it, memory. */
  filesDir?: string | undefined;
  /** The empty page's welcome card (model, workspace, commands to try), read at each history frame so a reload shows the current config. */
  welcome?: (() => WebWelcome) | undefined;
  /** The secrets tool's form: its submissions (secret-prompt.ts); absent: no form offered. */
  secretPrompts?: SecretPromptHandlers | undefined;
  /** The ask_user tool's questions: clicks and typed answers (ask-user-prompt.ts); absent: no questions offered. */
  userQuestions?: UserQuestionHandlers | undefined;
  /**
   * The listener `warden start` opened before the rest of Warden loaded (`openWebFront`), taken
   * over at `start` and closed at `stop`; without it, `start` opens its own.
   */
  front?: WebFront | undefined;
}

/** The page's message ids: what `crypto.randomUUID()` gives, or anything of that shape. */
const MESSAGE_ID = /^[A-Za-z0-9-]{8,64}$/;

/** A fresh session's id: time-ordered and unguessable enough to never repeat. */
const newSessionId = () => `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;

export interface WebAdapter extends ChatAdapter {
  readonly provider: 'web';
  /** `http://host:port/` once started. */
  readonly url: string | undefined;
  /** The ready-to-open address with the token, `http://host:port/?token=…`, once started. */
  readonly openUrl: string | undefined;
}

/** Decisions are recorded as `<provider>:<userId>`; the local user reads as "you". */
const youName = (id: string) => (id === WEB_LOCAL_USER || id === `web:${WEB_LOCAL_USER}` ? 'you' : id);

export function webCard(request: ApprovalRequest): WebCard {
  const facts = [
    { label: 'Agent', value: request.agentId },
    ...(requesterLine(request, youName) ? [{ label: 'Requested by', value: requesterLine(request, youName) }] : []),
    ...request.facts,
    { label: 'Expires', value: new Date(request.expiresAt).toISOString(), at: request.expiresAt },
    { label: 'ID', value: request.id },
  ];
  return {
    id: request.id,
    title: cardTitle(request),
    status: request.status,
    fullText: request.fullText,
    facts,
    buttons: offeredDecisions(request).map((decision) => ({ decision, label: decisionLabel(decision, request.timedGrantSec) })),
    denyWithReason: request.allowedDecisions.includes('deny'),
    progress: progressLines(request, youName),
    outcome: outcomeLine(request, youName),
  };
}

/**
 * The local web chat: one page served on `channels.web.host:port` (127.0.0.1:3000 by default)
 * with live updates over a WebSocket. Every tab shows the same conversation; the person at
 * the page is the local owner and approver, so every request — the page, its script and
 * style, the health check, the WebSocket that carries messages and approval clicks — must
 * carry the access token, on loopback too: other local users and processes can reach
 * loopback. A non-loopback bind is refused unless `channels.web.token` is configured.
 */
/** What the page may upload: what a turn takes in (images, text, PDF, JSON, audio), or a type the browser does not know. */
export function uploadTypeAllowed(mimeType: string): boolean {
  return /^(image\/[a-z0-9.+-]+|text\/[a-z0-9.+-]+|audio\/[a-z0-9.+-]+|application\/(pdf|json|octet-stream|x-yaml|yaml|xml|x-ndjson))$/.test(mimeType);
}

/**
 * How a stored file is served: raster images (by their bytes, whatever was declared) and audio
 * that is not text show inline with their type; anything else, SVG and HTML included, which
 * could run script on this origin, is a download of opaque bytes. The page's nosniff header
 * keeps the browser from guessing otherwise.
 */
export function servedAs(declared: string, data: Buffer): { type: string; inline: boolean } {
  const kind = sniffFileKind(data);
  if (kind.kind === 'image' && /^image\/(png|jpeg|gif|webp)$/.test(declared)) return { type: kind.mimeType, inline: true };
  if (/^audio\/[a-z0-9.+-]+$/.test(declared) && kind.kind === 'binary') return { type: declared, inline: true };
  return { type: 'application/octet-stream', inline: false };
}

export function createWebAdapter(config: WebConfig, deps: WebAdapterDeps): WebAdapter {
  const bind = checkBind(config.host, config.token);
  if (!bind.ok) throw new ConfigError(undefined, [{ path: bind.path, message: bind.message }]);
  const token = deps.token;
  if (!token) throw new Error('the web chat needs an access token');
  const logger = log.child({ adapter: 'web' });
  const history: ServerFrame[] = [];
  const cards = new Map<string, WebCard>();
  const store = deps.history;
  // Without a store, ids are remembered for this process only.
  const seen = new RecentIds();
  const firstDelivery = async (id: string): Promise<boolean> => (store ? store.firstDelivery(id) : seen.firstTime(id));
  /** The session the page is in; undefined = the web user's first one. */
  let sessionId: string | undefined;
  const sessionKey = () => store?.sessionKeyOf(sessionId) ?? '';
  const sockets = new Set<WebSocket>();
  let front: WebFront | undefined;
  let wss: WebSocketServer | undefined;
  let url: string | undefined;
  let openUrl: string | undefined;
  let onMessage: ((message: InboundMessage) => Promise<void>) | undefined;
  let typingCount = 0;

  /** Files of replies and uploads, by an unguessable id. */
  const files = webFileStore({ dir: deps.filesDir, maxFiles: WEB_FILES_KEPT, maxBytes: WEB_FILES_BYTES });

  const remember = (frame: ServerFrame) => {
    history.push(frame);
    if (history.length > HISTORY_LIMIT) history.splice(0, history.length - HISTORY_LIMIT);
  };

  const broadcast = (frame: ServerFrame) => {
    const data = JSON.stringify(frame);
    for (const socket of sockets) if (socket.readyState === WebSocket.OPEN) socket.send(data);
  };

  const say = (message: WebMessage) => {
    const frame: ServerFrame = { type: 'message', message };
    remember(frame);
    broadcast(frame);
  };

  const notice = (socket: WebSocket, text: string) =>
    socket.send(JSON.stringify({ type: 'message', message: { role: 'notice', text, at: Date.now() } } satisfies ServerFrame));

  const showCard = async (request: ApprovalRequest): Promise<void> => {
    const card = webCard(request);
    const isNew = !cards.has(card.id);
    cards.set(card.id, card);
    // A card of another session (one left before /new) is updated where it is, never added here.
    if (isNew && (!store || request.sessionKey === sessionKey())) remember({ type: 'card', card });
    broadcast({ type: 'card', card });
    broadcast(await pendingFrame(request));
  };

  /**
   * What waits for a decision in the web chat: the approval service's pending requests of the
   * web chat (every session of it, so a card left behind by /new can still be decided), with
   * the request at hand in its latest state.
   */
  async function pendingFrame(latest?: ApprovalRequest): Promise<ServerFrame> {
    const listed = ((await deps.pendingApprovals?.()) ?? []).filter((r) => r.provider === 'web' && r.id !== latest?.id);
    if (latest && latest.provider === 'web' && latest.status === 'pending') listed.push(latest);
    listed.sort((a, b) => a.createdAt - b.createdAt);
    return { type: 'pending', cards: listed.map(webCard) };
  }

  function historyFrame(): ServerFrame {
    // Cards are shown in their latest state at the place they first appeared.
    const items = history.map((f) =>
      f.type === 'card' ? { kind: 'card' as const, card: cards.get(f.card.id) ?? f.card } : { kind: 'message' as const, message: (f as { message: WebMessage }).message },
    );
    return { type: 'history', session: sessionKey(), items, ...(deps.welcome ? { welcome: deps.welcome() } : {}) };
  }

  /** The page's log starts from the store: the session's conversation and cards before this start. */
  async function loadSession(): Promise<void> {
    const items = store ? await store.load(sessionId, HISTORY_LIMIT) : [];
    history.length = 0;
    for (const item of items) {
      if (item.kind === 'message') remember({ type: 'message', message: item.message });
      else {
        const card = webCard(item.request);
        cards.set(card.id, card);
        remember({ type: 'card', card });
      }
    }
  }

  /**
   * What the listener hands on (its access checks passed): uploads, the files of replies and
   * uploads, and the 404 of anything else. The page, its script and `/healthz` are the listener's.
   */
  function chatRequest(req: http.IncomingMessage, res: http.ServerResponse, requestUrl: URL, reply: Reply): void {
    if (req.method === 'POST' && requestUrl.pathname === '/upload') {
      upload(req, requestUrl, reply);
      return;
    }
    const file = req.method === 'GET' || req.method === 'HEAD' ? /^\/files\/([0-9a-f]{24})$/.exec(requestUrl.pathname) : null;
    const found = file ? files.get(file[1]!) : undefined;
    if (!found) {
      reply(404, 'text/plain; charset=utf-8', 'not found');
      return;
    }
    const { type, inline } = servedAs(found.mimeType, found.data);
    res.writeHead(200, {
      ...WEB_HEADERS,
      // Even opened on its own, a served file is a sandboxed document with no script.
      'content-security-policy': `${WEB_HEADERS['content-security-policy']}; sandbox`,
      'content-type': type,
      'content-disposition': `${inline ? 'inline' : 'attachment'}; filename="${found.name.replace(/[^\w.-]/g, '_')}"`,
      'cache-control': 'private, max-age=3600',
    });
    res.end(req.method === 'HEAD' ? undefined : found.data);
  }

  const admissions = new WeakMap<WebSocket, Promise<unknown>>();
  function inArrivalOrder<T>(socket: WebSocket, step: () => Promise<T>): Promise<T> {
    const run = (admissions.get(socket) ?? Promise.resolve()).then(step);
    admissions.set(socket, run.catch(() => undefined));
    return run;
  }

  /** Acknowledges a chat message (or refuses it) and hands it on; `delivered` settles when the gateway took it. */
  async function admitMessage(socket: WebSocket, rawText: string, rawId: unknown, rawFiles: unknown): Promise<{ delivered: Promise<void> | undefined } | undefined> {
    const id = typeof rawId === 'string' && MESSAGE_ID.test(rawId) ? rawId : undefined;
    const ack = (status: 'accepted' | 'duplicate' | 'refused', reason?: string) => {
      if (id) socket.send(JSON.stringify({ type: 'ack', id, status, ...(reason ? { reason } : {}) } satisfies ServerFrame));
    };
    const text = rawText.trim();
    const uploads = uploadsOf(rawFiles);
    if (!uploads.ok) {
      ack('refused', uploads.reason);
      return undefined;
    }
    if (text === '' && uploads.list.length === 0) {
      ack('refused', 'empty message');
      return undefined;
    }
    if (text.length > WEB_MAX_INPUT) {
      const reason = `That message is ${text.length.toLocaleString('en-US')} characters; the limit is ${WEB_MAX_INPUT.toLocaleString('en-US')}.`;
      if (id) ack('refused', reason);
      else notice(socket, reason);
      return undefined;
    }
    // Sent again after a reconnect that lost the acknowledgement: it already ran.
    if (id && !(await firstDelivery(id))) {
      ack('duplicate');
      return undefined;
    }
    ack('accepted');
    const shown = uploads.list.map((u) => ({ url: `/files/${u.id}`, name: u.name, mimeType: u.mimeType, bytes: u.data.length }));
    say({ role: 'user', text, at: Date.now(), ...(id ? { id } : {}), ...(shown.length > 0 ? { files: shown } : {}) });
    const attachments: InboundAttachment[] = uploads.list.map((u) => ({
      id: u.id,
      name: u.name,
      mimeType: u.mimeType,
      size: u.data.length,
      voice: false,
      download: async (maxBytes) => (u.data.length > maxBytes ? { ok: false, error: `larger than ${maxBytes} bytes` } : { ok: true, data: u.data }),
    }));
    const delivered = onMessage?.({
      provider: 'web',
      chatType: 'dm',
      channelId: WEB_CHANNEL_ID,
      senderId: WEB_LOCAL_USER,
      senderName: 'you',
      text,
      mentionsBot: true,
      messageId: id ?? randomUUID(),
      receivedAt: Date.now(),
      ...(attachments.length > 0 ? { attachments } : {}),
      ...(sessionId ? { sessionId } : {}),
    });
    return { delivered };
  }

  /**
   * POST /upload?name=<file name>, the file's bytes as the body: kept in the file store for the
   * page's next message, answered with its id. The declared size is checked before reading and
   * the bytes counted while reading; the type is the browser's, checked against what a turn
   * takes in (and sniffed again before anything trusts it).
   */
  function upload(req: http.IncomingMessage, requestUrl: URL, reply: (status: number, type: string, body: string) => void): void {
    const refuse = (status: number, error: string) => {
      reply(status, 'application/json', JSON.stringify({ error }));
      req.resume();
    };
    const name = (requestUrl.searchParams.get('name') ?? '').slice(0, 200) || 'file';
    const mimeType = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase() || 'application/octet-stream';
    const declared = Number(req.headers['content-length'] ?? Number.NaN);
    const tooLarge = `${name} is larger than the ${WEB_UPLOAD_MAX_BYTES / (1024 * 1024)} MB upload limit.`;
    if (!uploadTypeAllowed(mimeType)) return refuse(415, `${name} is ${mimeType}; the web chat takes images, text, PDF, JSON and audio files.`);
    if (Number.isFinite(declared) && declared > WEB_UPLOAD_MAX_BYTES) return refuse(413, tooLarge);
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      if (over) return;
      size += chunk.length;
      if (size > WEB_UPLOAD_MAX_BYTES) {
        over = true;
        chunks.length = 0;
        // Answered now; the rest of the body is read and dropped.
        reply(413, 'application/json', JSON.stringify({ error: tooLarge }));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (over) return;
      const data = Buffer.concat(chunks);
      if (data.length === 0) return refuse(400, `${name} is empty.`);
      const id = files.put({ name, mimeType, data }, 'upload');
      reply(201, 'application/json', JSON.stringify({ id, name, mimeType, bytes: data.length }));
    });
    req.on('error', (err) => logger.debug({ err }, 'upload aborted'));
  }

  /** The page's uploads named in a message frame: ids of uploads in the store, at most a message's worth. */
  function uploadsOf(ids: unknown): { ok: true; list: Array<{ id: string; name: string; mimeType: string; data: Buffer }> } | { ok: false; reason: string } {
    if (ids === undefined) return { ok: true, list: [] };
    if (!Array.isArray(ids) || ids.length > INBOUND_MAX_FILES) return { ok: false, reason: `at most ${INBOUND_MAX_FILES} files go with one message` };
    const list = [];
    for (const id of ids) {
      const found = typeof id === 'string' && FILE_ID.test(id) ? files.get(id) : undefined;
      if (!found || found.kind !== 'upload') return { ok: false, reason: 'an attached file is no longer there; attach it again' };
      list.push({ id, name: found.name, mimeType: found.mimeType, data: found.data });
    }
    return { ok: true, list };
  }

  async function handleFrame(socket: WebSocket, raw: RawData): Promise<void> {
    let frame: unknown;
    try {
      frame = JSON.parse(raw.toString());
    } catch {
      notice(socket, 'The page sent something that is not JSON; reload it.');
      return;
    }
    const f = frame as { type?: unknown; text?: unknown; id?: unknown; decision?: unknown; files?: unknown; value?: unknown; reason?: unknown; question?: unknown; option?: unknown };
    if (f.type === 'answer' && typeof f.id === 'string' && Number.isInteger(f.question) && deps.userQuestions) {
      // The page's one person is the local user; the app checks it is the person asked and the question is open.
      const at = { id: f.id, question: f.question as number, userId: WEB_LOCAL_USER, origin: WEB_ORIGIN };
      let outcome: Awaited<ReturnType<UserQuestionHandlers['choose']>>;
      if (Number.isInteger(f.option)) outcome = await deps.userQuestions.choose({ ...at, option: f.option as number });
      else if (typeof f.value === 'string') {
        const opened = await deps.userQuestions.open(at);
        outcome = opened.ok ? await deps.userQuestions.submit({ ...at, value: f.value.slice(0, ASK_MAX_CHARS) }) : opened;
      } else outcome = { ok: false, text: 'The page sent an answer with neither an option nor text; reload it.' };
      notice(socket, outcome.text);
      if (outcome.ok) broadcast({ type: 'question-answered', id: f.id, question: at.question, summary: outcome.summary });
      return;
    }
    if (f.type === 'secret' && typeof f.id === 'string' && typeof f.value === 'string' && deps.secretPrompts) {
      // The value goes to the store and nowhere else: never echoed, remembered or logged.
      const value = f.value.slice(0, SECRET_MAX_CHARS);
      const opened = await deps.secretPrompts.open({ id: f.id, userId: WEB_LOCAL_USER, origin: WEB_ORIGIN });
      const outcome = opened.ok ? await deps.secretPrompts.submit({ id: f.id, userId: WEB_LOCAL_USER, value, origin: WEB_ORIGIN }) : opened;
      notice(socket, outcome.text);
      return;
    }
    if (f.type === 'message' && typeof f.text === 'string') {
      // Admitted in arrival order per socket (the duplicate check waits on the store), so acks
      // and turns keep the order the page sent them in; the turn itself runs outside that order.
      const text = f.text;
      const admitted = await inArrivalOrder(socket, () => admitMessage(socket, text, f.id, f.files));
      await admitted?.delivered;
      return;
    }
    if (f.type === 'approve' && typeof f.id === 'string' && (APPROVAL_DECISIONS as readonly unknown[]).includes(f.decision)) {
      // A reason rides only with a deny, as the card's text field sends it.
      const reason = f.decision === 'deny' && typeof f.reason === 'string' && f.reason.trim() !== '' ? f.reason.slice(0, REASON_MAX) : undefined;
      const outcome = await deps.onApprovalClick({ approvalId: f.id, decision: f.decision as ApprovalDecision, userId: WEB_LOCAL_USER, origin: WEB_ORIGIN, ...(reason !== undefined ? { reason } : {}) });
      switch (outcome.kind) {
        case 'resolved':
          await showCard(outcome.request);
          return;
        case 'already-resolved':
          await showCard(outcome.request);
          notice(socket, alreadyResolvedText(outcome.request, youName));
          return;
        case 'not-approver': {
          notice(socket, outcome.text ?? NOT_APPROVER_TEXT);
          // The page disabled the buttons on click; give it the unchanged card back.
          const card = cards.get(f.id);
          if (card) socket.send(JSON.stringify({ type: 'card', card } satisfies ServerFrame));
          return;
        }
        case 'not-found':
          notice(socket, NOT_FOUND_TEXT);
          return;
      }
    }
    notice(socket, 'The page sent a frame this server does not know; reload it.');
  }

  /** The web chat has one person, the local user: the form goes to every open tab, never into the history. */
  async function askSecret(_target: ReplyTarget, prompt: { id: string; name: string; reason: string; requesterId: string }): Promise<void> {
    if (sockets.size === 0) throw new Error('no web chat page is open to show the form');
    broadcast({ type: 'secret', prompt: { id: prompt.id, name: prompt.name, reason: prompt.reason } });
  }

  /** ask_user: the questions go to every open tab (the web chat has one person). */
  async function askUser(_target: ReplyTarget, prompt: UserQuestionPrompt): Promise<void> {
    if (sockets.size === 0) throw new Error('no web chat page is open to show the question');
    broadcast({ type: 'question', prompt: { id: prompt.id, questions: prompt.questions } });
  }

  const adapter: WebAdapter = {
    ...(deps.secretPrompts ? { askSecret } : {}),
    ...(deps.userQuestions ? { askUser } : {}),
    provider: 'web',
    get url() {
      return url;
    },
    get openUrl() {
      return openUrl;
    },
    async start(handler) {
      if (front) throw new Error('the web chat is already started');
      onMessage = handler;
      // `warden start` opened the listener before the rest of Warden loaded; its requests that
      // need the chat have waited for this. Otherwise the listener opens once the history is read.
      front = deps.front;
      sessionId = await store?.currentSessionId();
      await loadSession();
      front ??= await openWebFront(config, token);
      const server = new WebSocketServer({ noServer: true, maxPayload: WEB_MAX_INPUT * 4 + 1024 });
      wss = server;
      front.attach({
        request: chatRequest,
        upgrade: (req, socket, head) =>
          server.handleUpgrade(req, socket, head, (ws) => {
            sockets.add(ws);
            ws.on('close', () => sockets.delete(ws));
            ws.on('error', (err) => logger.debug({ err }, 'web socket error'));
            ws.on('message', (raw) => {
              handleFrame(ws, raw).catch((err: unknown) => {
                logger.error({ err }, 'web chat frame failed');
                if (ws.readyState === WebSocket.OPEN) notice(ws, 'Something went wrong handling that; see the Warden log.');
              });
            });
            ws.send(JSON.stringify(historyFrame()));
            void pendingFrame().then(
              (pending) => {
                if (ws.readyState !== WebSocket.OPEN) return;
                ws.send(JSON.stringify(pending));
                if (typingCount > 0) ws.send(JSON.stringify({ type: 'typing', on: true } satisfies ServerFrame));
              },
              (err: unknown) => logger.error({ err }, 'web chat: pending approvals unavailable'),
            );
          }),
      });
      url = front.url;
      openUrl = front.openUrl;
      logger.info({ url }, 'web chat listening');
    },
    async send(_target: ReplyTarget, message: OutboundMessage) {
      const { fit, notes } = fitFiles(message.files, { maxBytes: WEB_FILE_LIMIT, maxFiles: 10 });
      const body = withNotes(message.text, notes);
      const text = message.attachment ? `${body}\n\n${message.attachment.name}:\n\`\`\`\n${message.attachment.content}\n\`\`\`` : body;
      const shown = fit.map((f) => ({ url: `/files/${files.put(f, 'out')}`, name: f.name, mimeType: f.mimeType, bytes: f.data.length }));
      say({ role: 'bot', text, at: Date.now(), ...(message.linkedApproval ? { approvalId: message.linkedApproval } : {}), ...(shown.length > 0 ? { files: shown } : {}) });
    },
    streamTo(): StreamSurface | undefined {
      // Every change is sent as it comes (token by token); a socket write is cheap and ordered.
      return {
        limit: WEB_STREAM_LIMIT,
        minIntervalMs: 0,
        async post(text) {
          const id = randomUUID();
          broadcast({ type: 'stream', id, text });
          return id;
        },
        async edit(id, text) {
          broadcast({ type: 'stream', id, text });
        },
        async remove(id) {
          broadcast({ type: 'stream', id, text: '' });
        },
        async complete(ids, text) {
          if (text !== '') say({ role: 'bot', text, at: Date.now(), ...(ids[0] ? { streamId: ids[0] } : {}) });
        },
      };
    },
    typing() {
      typingCount++;
      if (typingCount === 1) broadcast({ type: 'typing', on: true });
      let done = false;
      return () => {
        if (done) return;
        done = true;
        typingCount--;
        if (typingCount === 0) broadcast({ type: 'typing', on: false });
      };
    },
    async newSession() {
      sessionId = newSessionId();
      await loadSession();
      broadcast(historyFrame());
      return sessionId;
    },
    approvals: {
      provider: 'web',
      async show(request) {
        if (request.provider === 'web') await showCard(request);
      },
      async update(request) {
        if (request.provider === 'web' || cards.has(request.id)) await showCard(request);
      },
    },
    async stop() {
      for (const socket of sockets) socket.close(1001, 'Warden is stopping');
      wss?.close();
      await front?.close();
      front = undefined;
      sockets.clear();
    },
  };
  return adapter;
}
