import { randomUUID } from 'node:crypto';
import { accessSync, chmodSync, constants, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { platform, arch } from 'node:os';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import WebSocket from 'ws';
import type { ApprovalRequestInput, ApprovalResolution } from '../approvals/types.js';
import { isLoopbackHost, type LoadedConfig } from '../config/index.js';
import { agentWorkspace } from '../exec/check.js';
import { log } from '../log/log.js';
import { defaultAgentId } from '../policy/steps.js';
import type { GatewayFrame } from '../control/nodes/protocol.js';
import { CLOSE_REFUSED, CLOSE_REVOKED } from '../control/nodes/protocol.js';
import { buildTurnContext } from '../turn/turn-context.js';
import type { ToolImplementation, ToolResult } from '../tools/types.js';

/**
 * `warden node`: this machine as a node of a running Warden. It pairs once (a code shown here,
 * approved by an owner in chat), keeps its token in its state dir (mode 600), and then answers
 * the gateway's calls: `system.run` through this machine's own exec tool — its own
 * `tools.exec` policy, allowlist and sandbox, its approvals asked in the chat of the call —
 * `system.which` and `system.notify`.
 */
export interface NodeOptions {
  gateway: string;
  name: string;
  /** The node's own config (its `tools.exec` policy, workspace, skills). */
  loaded: LoadedConfig;
  stateDir: string;
  /** SHA-256 fingerprint of the gateway's certificate; required for wss:// (pinned, no CA). */
  fingerprint?: string | undefined;
  /** The exec tool this node runs `system.run` with (built from `loaded` when omitted). */
  exec: ToolImplementation;
  skills?: Array<{ name: string; description: string }> | undefined;
  /** Where the pairing code and notices are shown. */
  say: (line: string) => void;
}

export type NodeRun = { stop(): void; done: Promise<{ ok: boolean; reason: string }> };

interface TokenFile {
  gateway: string;
  name: string;
  token: string;
}

/** Why the gateway address cannot be used, or undefined. */
export function gatewayProblem(url: string, fingerprint: string | undefined): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `--gateway ${url} is not a URL (ws://127.0.0.1:3003 or wss://host:3003)`;
  }
  const host = u.hostname.replace(/^\[|\]$/g, '');
  if (u.protocol === 'ws:' && !isLoopbackHost(host)) return `--gateway ${url}: a gateway beyond loopback needs wss:// and --fingerprint (its certificate's SHA-256)`;
  if (u.protocol === 'wss:' && !fingerprint) return `--gateway ${url}: wss:// needs --fingerprint (the SHA-256 of the gateway's certificate)`;
  if (u.protocol !== 'ws:' && u.protocol !== 'wss:') return `--gateway ${url}: use ws:// (loopback) or wss://`;
  return undefined;
}

const normalizeFingerprint = (f: string) => f.replace(/^sha256:/i, '').replace(/[^0-9a-f]/gi, '').toUpperCase();

function tokenPath(stateDir: string): string {
  return path.join(stateDir, 'node-token.json');
}

function readToken(stateDir: string, gateway: string, name: string): string | undefined {
  const file = tokenPath(stateDir);
  if (!existsSync(file)) return undefined;
  try {
    const t = JSON.parse(readFileSync(file, 'utf8')) as TokenFile;
    return t.gateway === gateway && t.name === name ? t.token : undefined;
  } catch {
    return undefined;
  }
}

function writeToken(stateDir: string, value: TokenFile): void {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const file = tokenPath(stateDir);
  writeFileSync(file, JSON.stringify(value), { mode: 0o600 });
  chmodSync(file, 0o600);
}

/** Text from the gateway, made safe for a terminal: no control characters (escape sequences). */
export const printable = (text: string): string => text.replace(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g, ' ');

/** Connects (pairing first when there is no token), answers calls, reconnects after drops. */
export function runNode(input: NodeOptions): NodeRun {
  const options: NodeOptions = { ...input, say: (line) => input.say(printable(line)) };
  let stopped = false;
  let socket: WebSocket | undefined;
  let finish!: (r: { ok: boolean; reason: string }) => void;
  const done = new Promise<{ ok: boolean; reason: string }>((resolve) => (finish = resolve));
  let backoff = 500;

  const connect = () => {
    if (stopped) return;
    const token = readToken(options.stateDir, options.gateway, options.name);
    const ws = new WebSocket(options.gateway, { rejectUnauthorized: false, handshakeTimeout: 10_000 });
    socket = ws;
    const approvals = new Map<string, (r: ApprovalResolution) => void>();
    let verified = !options.gateway.startsWith('wss:');
    ws.on('upgrade', (res) => {
      if (verified) return;
      const cert = (res.socket as TLSSocket).getPeerCertificate?.();
      const got = cert?.fingerprint256 ? normalizeFingerprint(cert.fingerprint256) : '';
      if (got === '' || got !== normalizeFingerprint(options.fingerprint ?? '')) {
        options.say(`The gateway's certificate fingerprint is ${got || '(none)'}, not the pinned one: not connecting.`);
        ws.terminate();
        stopped = true;
        finish({ ok: false, reason: 'certificate fingerprint mismatch' });
        return;
      }
      verified = true;
    });
    ws.on('open', () => {
      if (!verified) return ws.terminate();
      backoff = 500;
      const hello = token
        ? { type: 'hello', name: options.name, token, platform: `${platform()}/${arch()}`, skills: options.skills ?? [] }
        : { type: 'pair', name: options.name, platform: `${platform()}/${arch()}` };
      ws.send(JSON.stringify(hello));
    });
    ws.on('message', (data) => {
      let frame: GatewayFrame;
      try {
        frame = JSON.parse(String(data)) as GatewayFrame;
      } catch {
        return;
      }
      switch (frame.type) {
        case 'pairing':
          options.say(`Pairing code: ${frame.code}\nAsk an owner to approve it in chat: /nodes approve ${frame.code} (or the card's button). It expires ${new Date(frame.expiresAt).toISOString()}.`);
          break;
        case 'paired':
          writeToken(options.stateDir, { gateway: options.gateway, name: options.name, token: frame.token });
          options.say(`Paired as ${frame.name}.`);
          break;
        case 'welcome':
          options.say(`Connected to ${options.gateway} as ${frame.name}.`);
          break;
        case 'refused':
        case 'revoked':
          options.say(`The gateway ${frame.type === 'revoked' ? 'unpaired this node' : 'refused this node'}: ${frame.reason}`);
          break;
        case 'decision':
          approvals.get(frame.id)?.({ id: frame.id, outcome: frame.outcome as ApprovalResolution['outcome'], decidedBy: frame.decidedBy });
          approvals.delete(frame.id);
          break;
        case 'call':
          void answer(ws, frame, approvals).catch((err: unknown) => log.error({ err }, 'node call failed'));
          break;
      }
    });
    ws.on('close', (code, reason) => {
      for (const resolve of approvals.values()) resolve({ id: '', outcome: 'cancelled' });
      approvals.clear();
      if (stopped) return;
      if (code === CLOSE_REFUSED || code === CLOSE_REVOKED) {
        stopped = true;
        finish({ ok: false, reason: String(reason) || (code === CLOSE_REVOKED ? 'unpaired' : 'refused') });
        return;
      }
      const wait = String(reason) === 'paired' ? 0 : backoff;
      backoff = Math.min(backoff * 2, 30_000);
      setTimeout(connect, wait);
    });
    ws.on('error', (err) => log.debug({ err: err.message }, 'node connection error'));
  };

  const answer = async (ws: WebSocket, call: Extract<GatewayFrame, { type: 'call' }>, approvals: Map<string, (r: ApprovalResolution) => void>) => {
    const result = await runCommand(call.command, call.args, {
      options,
      approve: (input, signal) =>
        new Promise<ApprovalResolution>((resolve) => {
          const id = randomUUID();
          approvals.set(id, resolve);
          signal?.addEventListener('abort', () => resolve({ id, outcome: 'cancelled' }), { once: true });
          ws.send(JSON.stringify({ type: 'approval', id, callId: call.id, request: input }));
        }),
    });
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify({ type: 'result', id: call.id, result }));
  };

  connect();
  return {
    stop() {
      stopped = true;
      socket?.close(1000, 'node stopping');
      finish({ ok: true, reason: 'stopped' });
    },
    done,
  };
}

const text = (t: string, isError = false, details?: unknown): ToolResult => ({ content: [{ type: 'text', text: t }], details, isError });

async function runCommand(
  command: string,
  args: Record<string, unknown>,
  deps: { options: NodeOptions; approve: (input: ApprovalRequestInput, signal?: AbortSignal) => Promise<ApprovalResolution> },
): Promise<ToolResult> {
  const { options } = deps;
  const config = options.loaded.config;
  switch (command) {
    case 'system.run': {
      if (typeof args.command !== 'string' || args.command.trim() === '') return text('system.run needs "command": the command line', true);
      const agentId = defaultAgentId(config);
      // The node's own turn context, from the one builder: provider node, never an owner.
      const turn = buildTurnContext(config, { agentId, conversation: { provider: 'node', chat: 'channel', channelId: 'gateway' }, sender: { id: 'gateway' }, mayBeOwner: false });
      const controller = new AbortController();
      const value = await options.exec.execute(
        { command: args.command, ...(typeof args.timeout === 'number' ? { timeout: args.timeout } : {}) },
        {
          toolCallId: `node-${randomUUID()}`,
          signal: controller.signal,
          turn,
          sessionKey: `agent:${agentId}:node:${options.name}`,
          workspaceDir: agentWorkspace(config, agentId, options.loaded.baseDir),
          log: log.child({ node: options.name }),
          approvals: { request: (input, signal) => deps.approve(input, signal) },
        },
      );
      return value as ToolResult;
    }
    case 'system.which': {
      const name = typeof args.name === 'string' ? args.name : '';
      if (!/^[A-Za-z0-9._+-]+$/.test(name)) return text('system.which needs "name": a program name without a path', true);
      for (const dir of (process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin').split(':')) {
        if (!path.isAbsolute(dir)) continue;
        const candidate = path.join(dir, name);
        try {
          accessSync(candidate, constants.X_OK);
          return text(candidate, false, { found: true, path: candidate });
        } catch {
          // not here
        }
      }
      return text(`${name} is not on this node's PATH`, false, { found: false });
    }
    case 'system.notify': {
      const message = typeof args.message === 'string' ? args.message.slice(0, 2000) : '';
      if (!message) return text('system.notify needs "message"', true);
      const title = typeof args.title === 'string' ? args.title.slice(0, 200) : 'Warden';
      options.say(`[${title}] ${message}`);
      return text('shown on the node', false, { shown: true });
    }
    default:
      return text(`unknown node command "${command}"`, true);
  }
}
