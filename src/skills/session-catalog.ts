import type { WardenConfig } from '../config/index.js';
import { log } from '../log/log.js';
import { buildSkillsPrompt, type SkillsPrompt } from './catalog.js';
import type { SessionSkillSnapshots, SkillSnapshot } from './snapshot.js';

const built = new WeakMap<SkillSnapshot, { limitsKey: string; prompt: SkillsPrompt }>();

/**
 * The skills block for a turn's system prompt, from the session's snapshot: what the agent's
 * `skillsCatalog` dependency expects. The catalog is built once per snapshot and limits, so a
 * session's prompt stays byte-identical until its skills change. An unknown agent gives an
 * empty catalog and a logged error rather than a failed turn.
 */
export function sessionSkillsCatalog(
  snapshots: SessionSkillSnapshots,
  config: () => WardenConfig,
): (turn: { agentId: string }, sessionKey: string) => string {
  return (turn, sessionKey) => {
    const snapshot = snapshots.forSession(sessionKey, turn.agentId);
    if (!snapshot.ok) {
      log.error({ agentId: turn.agentId, error: snapshot.error }, 'skills catalog unavailable');
      return '';
    }
    const limits = config().skills.limits;
    const limitsKey = `${limits.maxSkillsInPrompt}/${limits.maxSkillsPromptChars}`;
    const cached = built.get(snapshot.value);
    if (cached?.limitsKey === limitsKey) return cached.prompt.text;
    const prompt = buildSkillsPrompt(snapshot.value, limits);
    built.set(snapshot.value, { limitsKey, prompt });
    return prompt.text;
  };
}
