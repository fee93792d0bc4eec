import type { AgentSessionsApi } from '../sessions.js';
import type { Message } from '../../models/types.js';
import type { ToolCallContext, ToolImplementation } from '../../tools/types.js';
import { wrapUntrusted } from '../../tools/untrusted.js';
import { errorResult, jsonResult } from './result.js';
import { canSeeSession, DEFAULT_SESSION_ACCESS, spawnChains, type SessionAccess } from './visibility.js';
import { sessionsListParameters, sessionsHistoryParameters } from './schemas.js';

const ENTRY_CHARS = 2_000;

/**
 * The sessions a call may read, most recently active first: the candidates `access` can reach
 * (this agent's, or every agent's under `all`/`tree`) filtered by `canSeeSession`. What
 * `sessions_list` shows and what `sessions_search` searches — one decision for both.
 */
export async function visibleSessions(sessions: AgentSessionsApi, ctx: Pick<ToolCallContext, 'turn' | 'sessionKey'>, access: SessionAccess, scan: number) {
  // `all` and `tree` can reach other agents' sessions; every other setting stays in this agent.
  const across = access.visibility === 'all' || access.visibility === 'tree';
  const candidates = await sessions.list({ agentId: across ? undefined : ctx.turn.agentId, limit: scan });
  const spawnedBy = await spawnChains([ctx.sessionKey, ...candidates.map((s) => s.sessionKey)], (k) => sessions.parentOf(k));
  return candidates.filter((s) => canSeeSession(ctx.turn, ctx.sessionKey, s.sessionKey, spawnedBy, access));
}

/** `sessions_list`: this agent's sessions, most recently active first. */
export function createSessionsListTool(sessions: AgentSessionsApi, access: SessionAccess = DEFAULT_SESSION_ACCESS): ToolImplementation<{ limit?: number }> {
  return {
    id: 'sessions_list',
    parameters: sessionsListParameters,
    async execute(args, ctx) {
      const list = (await visibleSessions(sessions, ctx, access, 1_000)).slice(0, args.limit ?? 20);
      return jsonResult({
        sessions: list.map((s) => ({ ...s, updatedAt: new Date(s.updatedAt).toISOString(), current: s.sessionKey === ctx.sessionKey })),
        ...(access.visibility ? { visibility: access.visibility } : {}),
      });
    },
  };
}

const render = (m: Message): string => {
  const text = m.content
    .map((p) => (p.type === 'text' ? p.text : p.type === 'image' ? '[image]' : `[called ${p.name} ${p.rawArgs ?? JSON.stringify(p.args ?? {})}]`))
    .join(' ');
  return text.length > ENTRY_CHARS ? `${text.slice(0, ENTRY_CHARS)} […${text.length - ENTRY_CHARS} more chars]` : text;
};

/**
 * `sessions_history`: a page of another session's transcript (newest last). What people and
 * tools said there is data for this session, so the page is wrapped as untrusted.
 */
export function createSessionsHistoryTool(sessions: AgentSessionsApi, access: SessionAccess = DEFAULT_SESSION_ACCESS): ToolImplementation<{ sessionKey: string; limit?: number; beforeSeq?: number }> {
  return {
    id: 'sessions_history',
    parameters: sessionsHistoryParameters,
    async execute(args, ctx) {
      if (!canSeeSession(ctx.turn, ctx.sessionKey, args.sessionKey, await spawnChains([ctx.sessionKey, args.sessionKey], (k) => sessions.parentOf(k)), access)) {
        return errorResult(`session ${args.sessionKey} is not readable from here (another agent, someone else's DM, or another session's subagent); use sessions_list for the sessions you can read`);
      }
      const entries = await sessions.history(args.sessionKey, { limit: args.limit ?? 20, beforeSeq: args.beforeSeq });
      if (entries.length === 0) return jsonResult({ sessionKey: args.sessionKey, entries: [] });
      const lines = entries.map((e) => {
        const who = e.kind === 'summary' ? 'summary' : e.message.role === 'toolResult' ? `tool ${e.message.toolName}` : e.message.role;
        return `#${e.seq} ${new Date(e.createdAt).toISOString()} ${who}: ${render(e.message)}`;
      });
      const first = entries[0]!.seq;
      return {
        content: [
          { type: 'text', text: wrapUntrusted(`session:${args.sessionKey}`, lines.join('\n')) },
          { type: 'text', text: `[${entries.length} entries; for older ones call again with beforeSeq=${first}]` },
        ],
        details: { sessionKey: args.sessionKey, seqs: entries.map((e) => e.seq) },
      };
    },
  };
}
