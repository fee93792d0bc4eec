import type { WardenConfig } from '../config/schema/index.js';
import { log as rootLog } from '../log/log.js';
import { configuredListeners } from '../net/own-listeners.js';
import type { Availability, ToolImplementation, ToolMeta } from '../tools/types.js';
import { approvalDecision, approvalRequest } from './approval.js';
import type { McpTool } from './catalog.js';
import { McpConnection, type ConnectionDeps, type ServerStatus } from './connection.js';
import { placeholderId, toolId } from './names.js';
import { mapCallResult } from './results.js';
import { serverSettings } from './settings.js';
import type { TransportSeams } from './transport.js';

/**
 * Every configured MCP server of one running Warden (or one CLI command): their connections,
 * and their tools as surface candidates. The manager owns the child processes: `stop` closes
 * them all. Tools are `<server>__<tool>` (names.ts), assigned over all servers sorted by safe
 * name and tool name, as OpenClaw materialises them, and kept clear of `reserved` names (core,
 * Tool Search and plugin tools). `tools()` keeps its identity until a server's tools or state
 * change, so the surface's candidate cache holds between changes.
 *
 * A server that has not listed its tools yet (connecting, failing) is one placeholder
 * candidate, `<server>__*`, never available: `/tools` and `warden tools` show it with why.
 */

interface Entry {
  id: string;
  connection: McpConnection;
  tool: McpTool;
}

export interface McpManagerOptions {
  /** Names MCP tools must not take (core, Tool Search and plugin tool ids). */
  reserved?: (() => Iterable<string>) | undefined;
  seams?: TransportSeams | undefined;
  backoff?: ConnectionDeps['backoff'];
  secretEnv?: ConnectionDeps['secretEnv'];
}

export class McpManager {
  private connections = new Map<string, McpConnection>();
  private built: { metas: ToolMeta[]; entries: Map<string, Entry>; placeholders: Map<string, McpConnection> } | undefined;
  private readonly impls = new WeakMap<McpTool, ToolImplementation>();
  private readonly listeners = new Set<() => void>();
  private started = false;
  private config: WardenConfig;
  private readonly log = rootLog.child({ component: 'mcp' });

  constructor(
    config: WardenConfig,
    private readonly baseDir: string,
    private readonly options: McpManagerOptions = {},
  ) {
    this.config = config;
    for (const settings of serverSettings(config, baseDir)) this.connections.set(settings.name, this.connection(settings));
  }

  private connection(settings: ReturnType<typeof serverSettings>[number]): McpConnection {
    return new McpConnection(settings, {
      log: this.log,
      ownListeners: () => configuredListeners(this.config),
      onChange: () => this.changed(),
      seams: this.options.seams,
      backoff: this.options.backoff,
      secretEnv: this.options.secretEnv,
    });
  }

  /** Whether the config declares any server. */
  get configured(): boolean {
    return this.connections.size > 0;
  }

  /** Starts connecting every enabled server in the background; returns at once. */
  start(): void {
    if (this.started) return;
    this.started = true;
    for (const c of this.connections.values()) c.start();
  }

  /** Settles once every server's first attempt connected or failed, or after `timeoutMs`. */
  async ready(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all([...this.connections.values()].map((c) => c.settled)), new Promise<void>((r) => (timer = setTimeout(r, timeoutMs)))]);
    clearTimeout(timer);
  }

  /** Waits (at most `timeoutMs`) for the server of an MCP tool id to be connected; resolves at once for any other id. */
  async whenToolReady(id: string, timeoutMs: number): Promise<void> {
    const server = [...this.connections.values()].find((c) => id.startsWith(`${c.settings.safeName}__`));
    if (server) await server.whenConnected(timeoutMs);
  }

  async stop(): Promise<void> {
    await Promise.allSettled([...this.connections.values()].map((c) => c.stop()));
  }

  /**
   * A reloaded config: servers whose settings did not change keep their connection; changed
   * ones are restarted, removed ones stopped, new ones started.
   */
  async reconfigure(config: WardenConfig): Promise<void> {
    this.config = config;
    const next = new Map(serverSettings(config, this.baseDir).map((s) => [s.name, s]));
    const stops: Promise<void>[] = [];
    for (const [name, c] of this.connections) {
      const s = next.get(name);
      if (s && s.fingerprint === c.settings.fingerprint) continue;
      this.connections.delete(name);
      stops.push(c.stop());
    }
    for (const [name, s] of next) {
      if (this.connections.has(name)) {
        // Same connection; approvals and timeouts follow the new settings.
        Object.assign(this.connections.get(name)!.settings, { approval: s.approval, timeoutMs: s.timeoutMs, connectTimeoutMs: s.connectTimeoutMs, parallel: s.parallel });
        continue;
      }
      const c = this.connection(s);
      this.connections.set(name, c);
      if (this.started) c.start();
    }
    this.changed();
    await Promise.allSettled(stops);
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  private changed(): void {
    this.built = undefined;
    for (const l of this.listeners) {
      try {
        l();
      } catch (err) {
        this.log.warn({ err }, 'MCP change listener failed');
      }
    }
  }

  statuses(): ServerStatus[] {
    return [...this.connections.values()].map((c) => c.status());
  }

  /** The tools of one server (by its config or safe name), with their ids: `warden mcp tools`. */
  toolsOf(server: string): Array<{ id: string; tool: McpTool; approval: ReturnType<typeof approvalDecision> }> | undefined {
    const c = [...this.connections.values()].find((x) => x.settings.name === server || x.settings.safeName === server.toLowerCase());
    if (!c) return undefined;
    const { entries } = this.build();
    return [...entries.values()].filter((e) => e.connection === c).map((e) => ({ id: e.id, tool: e.tool, approval: approvalDecision(e.tool.annotations, c.settings.approval(e.tool.name)) }));
  }

  /** Surface candidates: every known MCP tool, and a placeholder for each server that has listed none yet. */
  tools(): readonly ToolMeta[] {
    return this.build().metas;
  }

  isMcpTool(id: string): boolean {
    return this.build().entries.has(id);
  }

  /** Whether an MCP tool (or placeholder) can be called now; undefined for any other id. */
  availability(id: string): Availability | undefined {
    const built = this.build();
    const entry = built.entries.get(id);
    if (entry) return entry.connection.state === 'connected' ? { ok: true } : { ok: false, why: unavailableWhy(entry.connection) };
    const placeholder = built.placeholders.get(id);
    if (placeholder) return { ok: false, why: `${unavailableWhy(placeholder)}; its tools are not known yet` };
    return undefined;
  }

  implementation(id: string): ToolImplementation | undefined {
    const entry = this.build().entries.get(id);
    if (!entry) return undefined;
    let impl = this.impls.get(entry.tool);
    if (!impl) this.impls.set(entry.tool, (impl = this.implement(entry)));
    return impl;
  }

  private implement({ id, connection, tool }: Entry): ToolImplementation {
    const settings = connection.settings;
    return {
      id,
      description: tool.description,
      parameters: tool.parameters,
      approval: () => {
        const decision = approvalDecision(tool.annotations, settings.approval(tool.name));
        return decision.ask ? approvalRequest({ id, server: settings.name, tool: tool.name, transport: settings.launch.kind, annotations: tool.annotations }, decision) : undefined;
      },
      async execute(args, ctx) {
        const result = await connection.call(tool.name, args, ctx.signal);
        return mapCallResult(result, { server: settings.name, tool: tool.name });
      },
    };
  }

  private build(): NonNullable<McpManager['built']> {
    if (this.built) return this.built;
    const reserved = new Set<string>(this.options.reserved?.() ?? []);
    const entries = new Map<string, Entry>();
    const placeholders = new Map<string, McpConnection>();
    const metas: ToolMeta[] = [];
    const sorted = [...this.connections.values()].filter((c) => c.settings.enabled).sort((a, b) => (a.settings.safeName < b.settings.safeName ? -1 : 1));
    for (const c of sorted) {
      const server = c.settings.safeName;
      if (c.tools === undefined) {
        if (c.state === 'stopped') continue;
        const id = placeholderId(server);
        placeholders.set(id, c);
        metas.push({ id, label: `${c.settings.name} (not listed yet)`, description: `The tools of MCP server ${c.settings.name}, once it lists them.`, section: 'plugins', profiles: [], inWardenGroup: false, ownerOnly: false, source: { kind: 'mcp', server, placeholder: true } });
        continue;
      }
      for (const tool of c.tools) {
        const id = toolId(server, tool.name, reserved);
        reserved.add(id);
        if (id !== `${server}__${tool.name.toLowerCase()}`) this.log.debug({ mcpServer: c.settings.name, tool: tool.name, id }, 'MCP tool renamed to keep its id provider-safe and unique');
        entries.set(id, { id, connection: c, tool });
        metas.push({ id, label: tool.title ?? tool.name, description: tool.description, section: 'plugins', profiles: [], inWardenGroup: false, ownerOnly: false, source: { kind: 'mcp', server } });
      }
    }
    this.built = { metas, entries, placeholders };
    return this.built;
  }
}

function unavailableWhy(c: McpConnection): string {
  const s = c.status();
  const error = s.lastError ? `: ${s.lastError}` : '';
  switch (s.state) {
    case 'connecting':
      return `MCP server ${s.name} is connecting`;
    case 'reconnecting':
      return `MCP server ${s.name} is reconnecting${error}`;
    case 'failed':
      return `MCP server ${s.name} failed${error}`;
    case 'stopped':
      return `MCP server ${s.name} is stopped`;
    case 'disabled':
      return `MCP server ${s.name} is disabled (mcp.servers.${s.name}.enabled: false)`;
    default:
      return `MCP server ${s.name} is ${s.state}`;
  }
}
