import type { WardenConfig } from '../../../config/index.js';
import type { RuntimeStatus, ToolCallContext, ToolImplementation, ToolResult } from '../../types.js';

export interface GatewayArgs {
  action: 'status' | 'config.get';
  /** Dotted path inside the config for config.get, e.g. `tools.exec`. */
  path?: string;
}

export interface GatewayToolDeps {
  config: WardenConfig;
  status?: (() => RuntimeStatus) | undefined;
  pendingApprovals?: (() => number) | undefined;
}

const parameters = {
  type: 'object',
  properties: {
    action: { type: 'string', enum: ['status', 'config.get'], description: 'status: adapters, uptime, versions; config.get: the effective config with secrets redacted.' },
    path: { type: 'string', description: 'For config.get: a dotted path such as "tools.exec" or "channels.discord.guilds".' },
  },
  required: ['action'],
  additionalProperties: false,
} as const;

/** Keys whose values are credentials; redacted wherever they appear. */
const SECRET_KEY = /token|secret|password|apikey|api_key|signingsecret/i;

export function redactSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactSecrets);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, SECRET_KEY.test(k) && v !== undefined ? '[redacted]' : redactSecrets(v)]));
  }
  return value;
}

const fail = (message: string): ToolResult => ({ content: [{ type: 'text', text: message }], details: { status: 'error', error: message }, isError: true });

/**
 * gateway (owner-only): what the running Warden is doing and which config it runs with, secrets
 * redacted. It changes nothing: config edits go through the file, where they are reviewed.
 */
export function createGatewayTool(deps: GatewayToolDeps): ToolImplementation<GatewayArgs> {
  return {
    id: 'gateway',
    parameters,
    async execute(args, ctx: ToolCallContext) {
      if (!ctx.turn.senderIsOwner) return fail('gateway is owner-only.');
      if (args.action === 'status') {
        const live = deps.status?.();
        const status = {
          running: live !== undefined,
          uptimeSec: live ? Math.round((Date.now() - live.startedAt) / 1000) : undefined,
          adapters: live?.adapters ?? [],
          activeSessions: live?.activeSessions,
          pendingApprovals: deps.pendingApprovals?.(),
          node: process.version,
          pid: process.pid,
          agents: deps.config.agents.list.map((a) => a.id),
          defaultModel: deps.config.models.default ?? null,
        };
        return { content: [{ type: 'text', text: JSON.stringify(status, null, 2) }], details: status };
      }
      let value: unknown = redactSecrets(deps.config);
      for (const part of (args.path ?? '').split('.').filter(Boolean)) {
        if (!value || typeof value !== 'object' || !Object.hasOwn(value, part)) return fail(`config.get: no key "${args.path}"`);
        value = (value as Record<string, unknown>)[part];
      }
      return { content: [{ type: 'text', text: JSON.stringify(value ?? null, null, 2) }], details: { path: args.path ?? '' } };
    },
  };
}
