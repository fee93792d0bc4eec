import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { WebSocketServer, type WebSocket } from 'ws';
import type { ApprovalService } from '../../approvals/service.js';
import type { ApprovalRequester, ApprovalRequestInput } from '../../approvals/types.js';
import type { GatewayNodesConfig, WardenConfig } from '../../config/index.js';
import { log } from '../../log/log.js';
import { closeServer, listenOwn, serverUrl } from '../../net/listen.js';
import type { AuditLog } from '../../store/audit.js';
import type { ToolResult } from '../../tools/types.js';
import type { DeciderGuards } from '../decider-guards.js';
import { senderIsOwner } from '../../turn/turn-context.js';
import { CLOSE_REFUSED, CLOSE_REVOKED, nodeFrame, type GatewayFrame, type NodeCommand, type NodeFrame } from './protocol.js';
import type { NodeStore, PairedNode } from './store.js';

export interface NodeHubDeps {
  store: NodeStore;
  approvals: ApprovalService;
  guards: DeciderGuards;
  audit: AuditLog;
  /** The config owners are read from when a pairing is decided. */
  current: () => WardenConfig;
  /** The platform whose approvers get pairing cards by DM (cards render per platform). */
  cardProvider: () => string | undefined;
}

interface Session {
  name: string;
  socket: WebSocket;
  address: string | undefined;
  platform?: string | undefined;
  skills: Array<{ name: string; description: string }>;
  connectedAt: number;
  calls: Map<string, PendingCall>;
}

interface PendingCall {
  resolve: (result: ToolResult) => void;
  approvals: ApprovalRequester;
  signal?: AbortSignal | undefined;
  timer: NodeJS.Timeout;
}

interface Pairing {
  code: string;
  name: string;
  approvalId: string;
  socket: WebSocket;
}

export interface NodeView {
  name: string;
  online: boolean;
  pairedAt: string;
  pairedBy: string;
  lastSeen?: string | undefined;
  address?: string | undefined;
  platform?: string | undefined;
  commands: NodeCommand[];
  /** Skills the node publishes, prefixed with its name (`buildbox:deploy`). */
  skills: Array<{ name: string; description: string }>;
}

/** Each pairing puts a card in the owners' DMs: a few at a time. */
const MAX_PENDING_PAIRINGS = 3;

const CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
/** Eight characters from an alphabet without look-alikes, shown as `ABCD-EFGH`. */
export function pairingCode(): string {
  const bytes = randomBytes(8);
  const chars = [...bytes].map((b) => CODE_ALPHABET[b % CODE_ALPHABET.length]).join('');
  return `${chars.slice(0, 4)}-${chars.slice(4)}`;
}
const normalizeCode = (code: string) => code.trim().toUpperCase().replace(/[^A-Z0-9]/g, '');

const fail = (message: string): ToolResult => ({ content: [{ type: 'text', text: message }], details: { status: 'error', error: message }, isError: true });

/**
 * The gateway's side of `warden node`: a WebSocket listener (TLS when configured) where nodes
 * pair and stay connected. Pairing shows a one-time code on the node; an owner approves it in
 * chat (the card's button or `/nodes approve CODE`), and the node gets a token the gateway keeps
 * only as a hash. Calls go to a connected node by name; a node's approval requests come back
 * here and are asked in the chat of the call that caused them. Unpairing revokes the token and
 * drops the connection at once.
 */
export class NodeHub {
  private http: HttpServer | undefined;
  private wss: WebSocketServer | undefined;
  private readonly sessions = new Map<string, Session>();
  private readonly pairings = new Map<string, Pairing>();

  constructor(
    private readonly config: GatewayNodesConfig,
    private readonly deps: NodeHubDeps,
  ) {}

  get url(): string | undefined {
    return serverUrl(this.http, this.config.tls ? 'wss' : 'ws');
  }

  async start(): Promise<void> {
    const tls = this.config.tls;
    const http = tls ? createHttpsServer({ cert: readFileSync(tls.cert), key: readFileSync(tls.key) }) : createHttpServer();
    http.on('request', (_req, res) => {
      res.writeHead(426, { 'content-type': 'text/plain' });
      res.end('warden node listener: connect with `warden node`\n');
    });
    const wss = new WebSocketServer({ server: http, maxPayload: 4 * 1024 * 1024 });
    wss.on('connection', (socket, req) => this.accept(socket, req.socket.remoteAddress));
    await listenOwn(http, 'node listener', this.config.port, this.config.host);
    this.http = http;
    this.wss = wss;
    log.info({ url: this.url }, 'node listener ready');
  }

  async stop(): Promise<void> {
    for (const s of this.sessions.values()) s.socket.close(1001, 'Warden is stopping');
    await Promise.all([...this.pairings.values()].map((p) => this.deps.approvals.cancel(p.approvalId, 'Warden is stopping').catch(() => undefined)));
    this.sessions.clear();
    this.pairings.clear();
    const wss = this.wss;
    const http = this.http;
    this.wss = undefined;
    this.http = undefined;
    for (const client of wss?.clients ?? []) client.terminate();
    await new Promise<void>((resolve) => (wss ? wss.close(() => resolve()) : resolve()));
    await closeServer(http);
  }

  async list(): Promise<NodeView[]> {
    return (await this.deps.store.list()).filter((n) => n.revokedAt === undefined).map((n) => this.view(n));
  }

  async describe(name: string): Promise<NodeView | undefined> {
    const n = await this.deps.store.get(name);
    return n && n.revokedAt === undefined ? this.view(n) : undefined;
  }

  /** Pairing requests waiting for an owner: name, code, approval id. */
  pending(): Array<{ name: string; code: string; approvalId: string }> {
    return [...this.pairings.values()].map((p) => ({ name: p.name, code: p.code, approvalId: p.approvalId }));
  }

  /** The approval behind a pairing code, for `/nodes approve CODE`. */
  approvalForCode(code: string): string | undefined {
    return this.pairings.get(normalizeCode(code))?.approvalId;
  }

  /** Revokes a node's token and drops its connection now. */
  async unpair(name: string, by: string): Promise<{ ok: boolean; message: string }> {
    const revoked = await this.deps.store.revoke(name, by);
    const session = this.sessions.get(name);
    if (session) {
      this.send(session.socket, { type: 'revoked', reason: `unpaired by ${by}` });
      session.socket.close(CLOSE_REVOKED, 'unpaired');
      this.drop(session, `node ${name} was unpaired`);
    }
    if (!revoked) return { ok: false, message: `no paired node "${name}"` };
    await this.deps.audit.record({ type: 'node.unpaired', actor: by, subject: name, data: {} });
    log.info({ node: name, by }, 'node unpaired');
    return { ok: true, message: `Node ${name} is unpaired: its token is revoked and its connection closed.` };
  }

  /**
   * One call on a node. The node decides under its own exec policy; when it asks for approval,
   * the request is shown in the chat of this call (`approvals`) and the decision goes back.
   */
  async invoke(name: string, command: NodeCommand, args: Record<string, unknown>, call: { approvals: ApprovalRequester; signal?: AbortSignal | undefined; actor?: string | undefined }): Promise<ToolResult> {
    const session = this.sessions.get(name);
    if (!session) {
      const known = await this.deps.store.get(name);
      if (!known || known.revokedAt !== undefined) return fail(`no paired node "${name}" (nodes list shows the paired ones)`);
      const seen = known.lastSeenAt ? ` (last seen ${new Date(known.lastSeenAt).toISOString()})` : '';
      return fail(`node ${name} is offline${seen}; the call did not run`);
    }
    const id = randomUUID();
    // Recorded before the node is asked: a call is never sent unaudited.
    await this.deps.audit.record({ type: 'node.call', actor: call.actor, subject: name, data: { id, command, args } });
    return new Promise((resolve) => {
      const timer = setTimeout(() => settle(fail(`node ${name} did not answer within ${this.config.callTimeoutSec} s`)), this.config.callTimeoutSec * 1000);
      const onAbort = () => settle(fail(`the call to node ${name} was aborted`));
      const settle = (result: ToolResult) => {
        clearTimeout(timer);
        call.signal?.removeEventListener('abort', onAbort);
        if (session.calls.delete(id)) resolve(result);
      };
      session.calls.set(id, { resolve: settle, approvals: call.approvals, signal: call.signal, timer });
      call.signal?.addEventListener('abort', onAbort, { once: true });
      this.send(session.socket, { type: 'call', id, command, args });
    });
  }

  private view(n: PairedNode): NodeView {
    const s = this.sessions.get(n.name);
    return {
      name: n.name,
      online: s !== undefined,
      pairedAt: new Date(n.pairedAt).toISOString(),
      pairedBy: n.pairedBy,
      lastSeen: s ? new Date().toISOString() : n.lastSeenAt ? new Date(n.lastSeenAt).toISOString() : undefined,
      address: s?.address ?? n.lastAddress,
      platform: s?.platform,
      commands: ['system.run', 'system.which', 'system.notify'],
      skills: (s?.skills ?? []).map((k) => ({ name: `${n.name}:${k.name}`, description: k.description })),
    };
  }

  private send(socket: WebSocket, frame: GatewayFrame): void {
    if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(frame));
  }

  private refuse(socket: WebSocket, reason: string): void {
    this.send(socket, { type: 'refused', reason });
    socket.close(CLOSE_REFUSED, reason.slice(0, 120));
  }

  private accept(socket: WebSocket, address: string | undefined): void {
    let session: Session | undefined;
    let pairing: Pairing | undefined;
    // The first frame must say who the node is, soon.
    const hello = setTimeout(() => this.refuse(socket, 'no hello within 10 s'), 10_000);
    // One socket's frames are handled one after another, in the order they came.
    let frames: Promise<void> = Promise.resolve();
    let closed = false;
    const handle = async (data: unknown): Promise<void> => {
      if (closed) return;
      let frame: NodeFrame;
      try {
        const parsed = nodeFrame.safeParse(JSON.parse(String(data)));
        if (!parsed.success) throw new Error(parsed.error.issues[0]?.message ?? 'bad frame');
        frame = parsed.data;
      } catch (err) {
        this.refuse(socket, `malformed frame: ${(err as Error).message}`);
        return;
      }
      if (!session && !pairing) {
        clearTimeout(hello);
        if (frame.type === 'hello') session = await this.hello(socket, frame, address);
        else if (frame.type === 'pair') pairing = await this.pair(socket, frame, address, () => closed);
        else this.refuse(socket, 'say hello (with a token) or pair first');
        return;
      }
      if (!session) return this.refuse(socket, 'not paired yet');
      if (frame.type === 'result') session.calls.get(frame.id)?.resolve(frame.result as ToolResult);
      else if (frame.type === 'approval') {
        // Fails closed: a request Warden could not put to anyone is refused, so the node's call does not wait forever.
        const from = session;
        this.relayApproval(from, frame).catch((err: unknown) => {
          log.error({ err, node: from.name, approval: frame.id }, 'node approval request not relayed; refused');
          this.send(from.socket, { type: 'decision', id: frame.id, outcome: 'cancelled' });
        });
      }
    };
    socket.on('message', (data) => {
      frames = frames.then(() => handle(data)).catch((err: unknown) => {
        log.error({ err }, 'node frame could not be handled');
        this.refuse(socket, 'Warden could not handle that frame');
      });
    });
    socket.on('close', () => {
      closed = true;
      clearTimeout(hello);
      if (pairing) {
        this.pairings.delete(normalizeCode(pairing.code));
        void this.deps.approvals.cancel(pairing.approvalId, 'the node disconnected before anyone decided').catch((err: unknown) => log.warn({ err }, 'pairing request not cancelled'));
      }
      if (session && this.sessions.get(session.name) === session) this.drop(session, `node ${session.name} disconnected; the call did not finish`);
    });
    socket.on('error', (err) => log.debug({ err }, 'node socket error'));
  }

  private async hello(socket: WebSocket, frame: Extract<NodeFrame, { type: 'hello' }>, address: string | undefined): Promise<Session | undefined> {
    if (!(await this.deps.store.verify(frame.name, frame.token))) {
      await this.deps.audit.record({ type: 'node.refused', subject: frame.name, data: { address, reason: 'unknown or revoked token' } });
      this.refuse(socket, 'this node is not paired (or was unpaired): pair it again with `warden node`');
      return undefined;
    }
    const previous = this.sessions.get(frame.name);
    if (previous) {
      previous.socket.close(1000, 'replaced by a new connection');
      this.drop(previous, `node ${frame.name} reconnected; the call did not finish`);
    }
    const session: Session = { name: frame.name, socket, address, platform: frame.platform, skills: frame.skills.map((s) => ({ name: s.name, description: s.description })), connectedAt: Date.now(), calls: new Map() };
    this.sessions.set(frame.name, session);
    void this.deps.store.seen(frame.name, address).catch((err: unknown) => log.warn({ err, node: frame.name }, 'node last-seen time not recorded'));
    this.send(socket, { type: 'welcome', name: frame.name });
    log.info({ node: frame.name, address }, 'node connected');
    return session;
  }

  private async pair(socket: WebSocket, frame: Extract<NodeFrame, { type: 'pair' }>, address: string | undefined, socketClosed: () => boolean): Promise<Pairing | undefined> {
    const existing = await this.deps.store.get(frame.name);
    if (existing && existing.revokedAt === undefined) {
      this.refuse(socket, `a node named "${frame.name}" is already paired; unpair it first (/nodes unpair ${frame.name}) or pick another name`);
      return undefined;
    }
    if (this.pairings.size >= MAX_PENDING_PAIRINGS) {
      this.refuse(socket, `${MAX_PENDING_PAIRINGS} pairings are already waiting; try again later`);
      return undefined;
    }
    if ([...this.pairings.values()].some((p) => p.name === frame.name)) {
      this.refuse(socket, `a pairing for "${frame.name}" is already waiting`);
      return undefined;
    }
    const provider = this.deps.cardProvider();
    if (!provider) {
      this.refuse(socket, 'no chat platform is running where an owner could approve the pairing');
      return undefined;
    }
    const code = pairingCode();
    // Held from here, before the request is written, so a second pairing for the name (or past the limit) is refused meanwhile.
    const pairing: Pairing = { code, name: frame.name, approvalId: '', socket };
    this.pairings.set(normalizeCode(code), pairing);
    let request: Awaited<ReturnType<typeof this.deps.approvals.open>>;
    try {
      request = await this.deps.approvals.open(
      {
        kind: 'tool',
        tool: 'nodes',
        title: `Pair node "${frame.name}"`,
        preview: `A machine asks to pair as node "${frame.name}" and run commands under its own exec policy. Approve only if its screen shows ${code}.`,
        fullText: `warden node --name ${frame.name}\ncode ${code}\nfrom ${address ?? 'an unknown address'}${frame.platform ? `\nplatform ${frame.platform}` : ''}`,
        facts: [
          { label: 'Code', value: code },
          { label: 'From', value: address ?? 'unknown' },
          { label: 'Who may decide', value: 'an owner (or /nodes approve CODE)' },
        ],
        allowedDecisions: ['allow-once', 'deny'],
        timeoutMs: Math.min(this.config.pairingTimeoutSec * 1000, 600_000),
      },
      { agentId: 'nodes', sessionKey: `nodes:pairing:${frame.name}`, provider, requesterId: undefined },
      );
    } catch (err) {
      this.pairings.delete(normalizeCode(code));
      throw err;
    }
    pairing.approvalId = request.id;
    if (socketClosed()) {
      this.pairings.delete(normalizeCode(code));
      await this.deps.approvals.cancel(request.id, 'the node disconnected before anyone decided');
      return undefined;
    }
    const off = this.deps.guards.add(request.id, (by) => (senderIsOwner(this.deps.current(), by.provider, by.userId) ? undefined : `${by.provider} user ${by.userId} is not an owner; only owners pair nodes`));
    this.send(socket, { type: 'pairing', code, expiresAt: request.expiresAt });
    log.info({ node: frame.name, address, approval: request.id }, 'node asks to pair');
    this.deps.approvals.wait(request.id).then(async (resolution) => {
      off();
      this.pairings.delete(normalizeCode(code));
      if (resolution.outcome !== 'allow-once' && resolution.outcome !== 'allow-always') {
        await this.deps.audit.record({ type: 'node.pairing.refused', subject: frame.name, actor: resolution.decidedBy, data: { outcome: resolution.outcome, address } });
        if (socket.readyState === socket.OPEN) this.refuse(socket, `pairing ${resolution.outcome}${resolution.decidedBy ? ` by ${resolution.decidedBy}` : ''}`);
        return;
      }
      if (socket.readyState !== socket.OPEN) return;
      const by = resolution.decidedBy ?? 'unknown';
      const token = await this.deps.store.pair(frame.name, by);
      await this.deps.audit.record({ type: 'node.paired', subject: frame.name, actor: by, data: { address } });
      this.send(socket, { type: 'paired', name: frame.name, token });
      // The node says hello with its new token on a fresh connection.
      socket.close(1000, 'paired');
    }).catch((err: unknown) => {
      off();
      this.pairings.delete(normalizeCode(code));
      log.error({ err, node: frame.name, approval: request.id }, 'node pairing not completed');
      if (socket.readyState === socket.OPEN) this.refuse(socket, 'pairing failed inside Warden; ask again');
    });
    return pairing;
  }

  private async relayApproval(session: Session, frame: Extract<NodeFrame, { type: 'approval' }>): Promise<void> {
    const call = session.calls.get(frame.callId);
    if (!call) return this.send(session.socket, { type: 'decision', id: frame.id, outcome: 'cancelled' });
    const input: ApprovalRequestInput = {
      ...frame.request,
      title: `[node ${session.name}] ${frame.request.title}`,
      facts: [{ label: 'Node', value: session.name }, ...(frame.request.facts ?? [])],
    };
    const resolution = await call.approvals.request(input, call.signal);
    this.send(session.socket, { type: 'decision', id: frame.id, outcome: resolution.outcome, decidedBy: resolution.decidedBy });
  }

  private drop(session: Session, why: string): void {
    if (this.sessions.get(session.name) === session) this.sessions.delete(session.name);
    void this.deps.store.seen(session.name, session.address).catch((err: unknown) => log.warn({ err, node: session.name }, 'node last-seen time not recorded'));
    for (const call of [...session.calls.values()]) call.resolve(fail(why));
  }
}
