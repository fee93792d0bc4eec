import type { WardenConfig } from '../../../config/index.js';
import { configSchemaAt } from '../../../config/edit/schema-at.js';
import { redactSecrets, type ConfigAdmin } from '../../config-admin.js';
import type { RuntimeStatus, ToolCallContext, ToolImplementation, ToolResult } from '../../../tools/types.js';
import { gatewayParameters as parameters, GATEWAY_ACTIONS } from './gateway-schema.js';

export { GATEWAY_ACTIONS, redactSecrets };

export interface GatewayArgs {
  action: (typeof GATEWAY_ACTIONS)[number];
  /** Dotted path inside the config for config.get and config.schema, e.g. `tools.exec`. */
  path?: string;
  /** For config.patch: a JSON merge patch (objects merge, null removes a key, arrays replace). */
  patch?: Record<string, unknown>;
}

export interface GatewayToolDeps {
  config: WardenConfig;
  status?: (() => RuntimeStatus) | undefined;
  pendingApprovals?: (() => number) | undefined;
  /** Config administration of a running Warden; without it only status, config.get and config.schema work. */
  admin?: ConfigAdmin | undefined;
}

const ok = (value: unknown, text?: string): ToolResult => ({ content: [{ type: 'text', text: text ?? JSON.stringify(value, null, 2) }], details: value });
const fail = (message: string, details: Record<string, unknown> = {}): ToolResult => ({ content: [{ type: 'text', text: message }], details: { status: 'error', error: message, ...details }, isError: true });
const NOT_RUNNING = (action: string) => fail(`${action} needs a running Warden (warden start); this process only reads the config.`);

/**
 * gateway (owner-only): the running Warden's state and its config — read, described, patched,
 * reloaded, restarted. Every change goes through the config file, validated by the same schema
 * as at start and recorded in the audit log.
 */
export function createGatewayTool(deps: GatewayToolDeps): ToolImplementation<GatewayArgs> {
  return {
    id: 'gateway',
    parameters,
    async execute(args, ctx: ToolCallContext) {
      if (!ctx.turn.senderIsOwner) return fail('gateway is owner-only.');
      const admin = deps.admin;
      switch (args.action) {
        case 'status': {
          const live = deps.status?.();
          const config = admin?.config() ?? deps.config;
          const status = {
            running: live !== undefined,
            uptimeSec: live ? Math.round((Date.now() - live.startedAt) / 1000) : undefined,
            adapters: live?.adapters ?? [],
            activeSessions: live?.activeSessions,
            pendingApprovals: deps.pendingApprovals?.(),
            node: process.version,
            pid: process.pid,
            config: admin?.status(),
            agents: config.agents.list.map((a) => a.id),
            defaultModel: config.models.default ?? null,
          };
          return ok(status);
        }
        case 'config.get': {
          if (admin) {
            const got = admin.get(args.path);
            return got.ok ? { ...ok(got.value), details: { path: args.path ?? '' } } : fail(got.error);
          }
          let value: unknown = redactSecrets(deps.config);
          for (const part of (args.path ?? '').split('.').filter(Boolean)) {
            if (!value || typeof value !== 'object' || !Object.hasOwn(value, part)) return fail(`config.get: no key "${args.path}"`);
            value = (value as Record<string, unknown>)[part];
          }
          return { content: [{ type: 'text', text: JSON.stringify(value ?? null, null, 2) }], details: { path: args.path ?? '' } };
        }
        case 'config.schema':
        case 'config.schema.lookup': {
          const found = configSchemaAt(args.path ?? '');
          return found.ok ? ok(found.schema) : fail(found.error);
        }
        case 'config.patch': {
          if (!admin) return NOT_RUNNING('config.patch');
          if (args.patch === undefined) return fail('config.patch needs "patch": a JSON merge patch object.');
          const outcome = await admin.patch(args.patch, ctx.turn, ctx.sessionKey, ctx.signal);
          switch (outcome.kind) {
            case 'applied':
              return ok(
                { status: 'applied', ...outcome },
                `Config patched and applied to new turns (version ${outcome.version}): ${outcome.changed.join(', ')}.` +
                  (outcome.approvedBy ? ` Approved by ${outcome.approvedBy}.` : '') +
                  (outcome.failed.length ? ` Not restarted: ${outcome.failed.join('; ')}.` : '') +
                  (outcome.restartNeeded.length ? ` ${outcome.restartNeeded.join(', ')} take effect at the next restart.` : ''),
              );
            case 'unchanged':
              return ok({ status: 'unchanged' }, 'The patch changes nothing in the effective config; the file was not written.');
            case 'invalid':
              return fail(`The patch was refused; nothing was written:\n${outcome.problems.map((p) => `  ${p.path || '(root)'}: ${p.message}`).join('\n')}`, { problems: outcome.problems });
            case 'refused':
              return fail(`The patch was not applied: ${outcome.reason}`, { status: 'refused', widening: outcome.widening });
          }
          break;
        }
        case 'reload': {
          if (!admin) return NOT_RUNNING('reload');
          const r = await admin.reload();
          if (!r.ok) return fail(`The config file was refused; the running config stays:\n${r.problems.map((p) => `  ${p.path || '(root)'}: ${p.message}`).join('\n')}`, { problems: r.problems });
          if ('unchanged' in r) return ok({ status: 'unchanged' }, 'The config file is what Warden runs with.');
          return ok({ status: 'reloaded', ...r }, r.changed.length ? `Reloaded (version ${r.version}): ${r.changed.join(', ')}.` : 'The config file means what Warden runs with; nothing changed.');
        }
        case 'restart': {
          if (!admin) return NOT_RUNNING('restart');
          const r = admin.restart();
          return r.ok ? ok({ status: 'restarting' }, r.message) : fail(r.message);
        }
      }
      return fail(`unknown action "${String(args.action)}"`);
    },
  };
}
