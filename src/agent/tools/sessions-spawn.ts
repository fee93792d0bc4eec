import type { AgentSessionsApi } from '../sessions.js';
import type { WardenConfig } from '../../config/index.js';
import { inheritFrom, resolveToolSurface, type SurfaceOptions } from '../../policy/surface.js';
import type { ToolImplementation } from '../../tools/types.js';
import { errorResult, jsonResult } from './result.js';
import { sessionsSpawnParameters, sessionsYieldParameters, subagentsParameters } from './schemas.js';

export interface SpawnToolDeps {
  config: WardenConfig;
  sessions: AgentSessionsApi;
  /** The same surface inputs the turn used (plugin tools, availability), so the ceiling matches what the parent saw. */
  surfaceOptions: SurfaceOptions;
}

/**
 * `sessions_spawn`: starts a subagent on a task in its own session. Its ceiling is this
 * turn's final surface (and removals), carried in `TurnContext.inherited`; the policy then
 * applies the subagent deny lists by depth. The result is delivered back to this session.
 */
export function createSessionsSpawnTool(deps: SpawnToolDeps): ToolImplementation<{ task: string; label?: string; agentId?: string }> {
  return {
    id: 'sessions_spawn',
    parameters: sessionsSpawnParameters,
    async execute(args, ctx) {
      const parent = resolveToolSurface(deps.config, ctx.turn, deps.surfaceOptions);
      const spawned = await deps.sessions.spawn({
        parentKey: ctx.sessionKey,
        parentTurn: ctx.turn,
        inherited: inheritFrom(parent),
        task: args.task,
        label: args.label,
        agentId: args.agentId,
        runId: ctx.runId,
      });
      if (!spawned.ok) return errorResult(spawned.message);
      const run = spawned.value;
      return jsonResult({
        status: 'running',
        runId: run.runId,
        sessionKey: run.childKey,
        label: run.label,
        depth: run.depth,
        note: 'The result is delivered to this session when the subagent finishes. Call sessions_yield to end your turn and wait for it, or subagents to check on it.',
      });
    },
  };
}

/** `sessions_yield`: ends this turn after the current tool round; subagent results start the next one. */
export function createSessionsYieldTool(sessions: AgentSessionsApi): ToolImplementation<Record<string, never>> {
  return {
    id: 'sessions_yield',
    parameters: sessionsYieldParameters,
    async execute(_args, ctx) {
      const running = (await sessions.runs(ctx.sessionKey)).filter((r) => r.status === 'running');
      sessions.requestYield(ctx.sessionKey);
      return jsonResult({
        status: 'yielded',
        waitingFor: running.map((r) => ({ runId: r.runId, label: r.label })),
        note: 'This turn ends now. Subagent results arrive as a new message.',
      });
    },
  };
}

type SubagentsArgs = { action: 'list' | 'steer' | 'kill'; runId?: string; message?: string };

/** `subagents`: list, steer (send a follow-up) or kill the subagents this session spawned. */
export function createSubagentsTool(sessions: AgentSessionsApi): ToolImplementation<SubagentsArgs> {
  return {
    id: 'subagents',
    parameters: subagentsParameters,
    async execute(args, ctx) {
      if (args.action === 'list') {
        return jsonResult({
          subagents: (await sessions.runs(ctx.sessionKey)).map((r) => ({
            runId: r.runId,
            label: r.label,
            status: r.status,
            depth: r.depth,
            startedAt: new Date(r.startedAt).toISOString(),
            ...(r.result !== undefined ? { result: r.result.slice(0, 2_000) } : {}),
          })),
        });
      }
      if (!args.runId) return errorResult(`subagents ${args.action} needs runId (see action "list")`);
      if (args.action === 'steer') {
        if (!args.message?.trim()) return errorResult('subagents steer needs a message');
        const r = await sessions.steer(ctx.sessionKey, args.runId, args.message);
        return r.ok ? jsonResult({ status: 'steered', runId: r.value.runId, note: 'It reads the message after its current turn.' }) : errorResult(r.message);
      }
      const r = await sessions.kill(ctx.sessionKey, args.runId);
      return r.ok ? jsonResult({ status: r.value.status, runId: r.value.runId }) : errorResult(r.message);
    },
  };
}
