import type { AgentSessionsApi } from '../sessions.js';
import type { WardenConfig } from '../../config/index.js';
import { inheritFrom, resolveToolSurface, type SurfaceOptions } from '../../policy/surface.js';
import type { ToolImplementation } from '../../tools/types.js';
import { wrapUntrusted } from '../../tools/untrusted.js';
import { errorResult } from './result.js';
import { canSeeSession, DEFAULT_SESSION_ACCESS, spawnChains, type SessionAccess } from './visibility.js';
import { sessionsSendParameters, DEFAULT_TIMEOUT_S } from './schemas.js';

export interface SendToolDeps {
  config: WardenConfig;
  sessions: AgentSessionsApi;
  /** The surface inputs the turn used, so the ceiling is the surface this turn really has. */
  surfaceOptions: SurfaceOptions;
}

/**
 * `sessions_send`: posts a message into another session of this agent and waits for its
 * reply. The receiving session sees the text as untrusted (it came from another session),
 * and the reply comes back as untrusted data too. The receiving turn runs under the target
 * conversation's stored policy, acts for this turn's sender, and never gets a tool this turn
 * does not have: this turn's surface is its ceiling.
 */
export function createSessionsSendTool(deps: SendToolDeps, access: SessionAccess = DEFAULT_SESSION_ACCESS): ToolImplementation<{ sessionKey: string; message: string; timeoutSeconds?: number }> {
  const { sessions } = deps;
  return {
    id: 'sessions_send',
    parameters: sessionsSendParameters,
    async execute(args, ctx) {
      if (!canSeeSession(ctx.turn, ctx.sessionKey, args.sessionKey, await spawnChains([ctx.sessionKey, args.sessionKey], (k) => sessions.parentOf(k)), access)) {
        return errorResult(`session ${args.sessionKey} cannot be messaged from here (another agent, someone else's DM, or another session's subagent)`);
      }
      const surface = resolveToolSurface(deps.config, ctx.turn, deps.surfaceOptions);
      const sent = await sessions.send({
        fromKey: ctx.sessionKey,
        fromTurn: ctx.turn,
        ceiling: inheritFrom(surface),
        toKey: args.sessionKey,
        text: args.message,
        timeoutMs: (args.timeoutSeconds ?? DEFAULT_TIMEOUT_S) * 1000,
        signal: ctx.signal,
        runId: ctx.runId,
      });
      if (!sent.ok) return errorResult(sent.message);
      const { status, reply } = sent.value;
      return {
        content: [{ type: 'text', text: `${status === 'completed' ? 'Reply' : `Turn ${status}`} from ${args.sessionKey}:\n${wrapUntrusted(`session:${args.sessionKey}`, reply)}` }],
        details: { sessionKey: args.sessionKey, status },
        isError: status === 'failed',
      };
    },
  };
}
