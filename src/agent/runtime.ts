import { AgentSessions } from './sessions.js';
import { runTurn } from './turn.js';
import type { AgentDeps, AgentRuntime, TurnOutcome } from './types.js';
import { background } from '../util/background.js';

export interface WardenAgentRuntime extends AgentRuntime {
  /** What the session tools act on (list, history, send, spawn, subagents, yield). */
  readonly sessions: AgentSessions;
  /**
   * A config reload: turns that start from now on use these; running turns keep what they
   * started with (each turn is bound to one config).
   */
  reconfigure(next: Partial<Pick<AgentDeps, 'config' | 'models' | 'tools' | 'skillsCatalog'>>): void;
}

/**
 * The runtime the router holds: dependencies bound once, one `runTurn` per queued message.
 * Turns of one session never overlap, even when they come from several places (the router's
 * queue, `sessions_send`, a subagent's steer).
 */
export function createAgentRuntime(deps: AgentDeps): WardenAgentRuntime {
  const sessions =
    deps.sessions ??
    new AgentSessions({
      config: deps.config,
      transcripts: deps.transcripts,
      runs: deps.subagentRuns,
      contexts: deps.sessionContexts,
      announce: deps.announce,
      hooks: deps.hooks,
      instanceId: deps.ownership?.instanceId,
      isOwnerGone: deps.ownership?.isOwnerGone,
    });
  const tails = new Map<string, Promise<unknown>>();
  let current: AgentDeps = deps;
  const runtime: WardenAgentRuntime = {
    sessions,
    reconfigure(next) {
      current = { ...current, ...next };
      if (next.config) sessions.setConfig(next.config);
    },
    runTurn(request) {
      const bound = current;
      const previous = tails.get(request.sessionKey) ?? Promise.resolve();
      const run: Promise<TurnOutcome> = previous.then(() => runTurn(bound, request, sessions));
      const tail = run.catch(() => undefined);
      tails.set(request.sessionKey, tail);
      background(
        tail.then(() => {
          if (tails.get(request.sessionKey) === tail) tails.delete(request.sessionKey);
        }),
        'session turn queue not cleaned up',
        { fields: { sessionKey: request.sessionKey } },
      );
      return run;
    },
    startRead(sessionKey, incoming) {
      // The message's write first (counted as a write before the read is taken: the read, after
      // it in the same transaction, sees it).
      const write = incoming ? current.transcripts.guardedAppend?.(sessionKey, incoming) : undefined;
      const transcript = current.transcripts.loadSteps?.(sessionKey);
      if (!transcript) return undefined;
      const probe = sessions.resultsWaitingStep(sessionKey);
      const count = transcript.steps.length;
      return {
        steps: [...transcript.steps, probe],
        read: async (results) => {
          const { entries, fresh } = await transcript.read(results.slice(0, count));
          return { entries, resultsWaiting: (results[count]?.rows.length ?? 0) > 0, fresh };
        },
        ...(write ? { write: (guard) => write.steps(guard), writtenSeq: (results) => write.seq(results) } : {}),
      };
    },
  };
  sessions.attach(runtime);
  return runtime;
}
