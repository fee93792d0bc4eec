import { ApprovalLedger } from '../../approvals/ledger.js';
import type { WardenConfig } from '../../config/index.js';
import { resolveToolSurface, type SurfaceOptions } from '../../policy/surface.js';
import type { Store } from '../../store/store.js';
import type { ToolCallContext, ToolImplementation, ToolResult } from '../../tools/types.js';
import { sessionStatusParameters } from './schemas.js';

export interface SessionStatusDeps {
  config: WardenConfig;
  /** The surface inputs turns use (plugin tools, availability), so the count is the turn's. */
  surfaceOptions: SurfaceOptions;
  /** Without a store the pending approvals are reported as unknown. */
  store?: Store | undefined;
  now?: () => number;
}

export interface SessionStatus {
  sessionKey: string;
  agentId: string;
  provider: string;
  chat: string;
  model: string | null;
  tools: { count: number; ids: string[] };
  pendingApprovals: Array<{ id: string; tool: string; title: string; expiresAt: number }> | null;
}

/** `session_status`: what this session is: key, agent, model, tool surface, pending approvals. */
export function createSessionStatusTool(deps: SessionStatusDeps): ToolImplementation<Record<string, never>> {
  const now = deps.now ?? Date.now;
  return {
    id: 'session_status',
    parameters: sessionStatusParameters,
    async execute(_args, ctx: ToolCallContext): Promise<ToolResult> {
      const surface = resolveToolSurface(deps.config, ctx.turn, deps.surfaceOptions);
      const pending = deps.store
        ? (await new ApprovalLedger(deps.store.db).pending())
            .filter((e) => e.request.sessionKey === ctx.sessionKey)
            .map(({ request: r }) => ({ id: r.id, tool: r.tool, title: r.title, expiresAt: r.expiresAt }))
        : null;
      const status: SessionStatus = {
        sessionKey: ctx.sessionKey,
        agentId: ctx.turn.agentId,
        provider: ctx.turn.provider,
        chat: ctx.turn.chat,
        model: ctx.turn.model ?? null,
        tools: { count: surface.tools.length, ids: surface.tools },
        pendingApprovals: pending,
      };
      const minutes = (at: number) => Math.max(0, Math.ceil((at - now()) / 60_000));
      const lines = [
        `Session: ${status.sessionKey}`,
        `Agent: ${status.agentId} (${status.provider} ${status.chat})`,
        `Model: ${status.model ?? 'none configured'}`,
        `Tools this turn: ${status.tools.count}${status.tools.count ? ` (${status.tools.ids.join(', ')})` : ''}`,
        pending === null
          ? 'Pending approvals: unknown (no store)'
          : `Pending approvals: ${pending.length}${pending.map((p) => `\n- ${p.id} ${p.tool}: ${p.title} (expires in ${minutes(p.expiresAt)} min)`).join('')}`,
      ];
      return { content: [{ type: 'text', text: lines.join('\n') }], details: status };
    },
  };
}
