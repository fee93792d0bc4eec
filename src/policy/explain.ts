import type { ExplainStep, SurfaceResult } from './surface.js';

/**
 * One tool's path through the surface, as `warden tools --explain` and `/tools --explain`
 * report it: the verdict, the label that removed it, and every filter and step with its rule
 * (the config key that decided, where one did).
 */
export interface Explanation {
  tool: string;
  /** `available` (the model gets it), `unavailable` (kept by the policy, cannot run here) or `removed`. */
  verdict: 'available' | 'unavailable' | 'removed';
  by?: string;
  steps: ExplainStep[];
}

type Surface = Pick<SurfaceResult, 'removed' | 'unavailable' | 'trace'>;

export function explainTool(result: Surface, tool: string): Explanation {
  const removed = result.removed.find((r) => r.tool === tool);
  const unavailable = result.unavailable.find((u) => u.tool === tool);
  return {
    tool,
    verdict: removed ? 'removed' : unavailable ? 'unavailable' : 'available',
    ...(removed ? { by: removed.by } : unavailable ? { by: 'availability' } : {}),
    steps: result.trace(tool),
  };
}

/** The first line of an explanation: `browser: removed by channels.discord.guilds.111.tools.deny`. */
export function explanationHead(explain: Explanation): string {
  const head = explain.verdict === 'available' ? 'the model gets it' : explain.verdict === 'unavailable' ? 'kept by the policy but unavailable here' : `removed by ${explain.by}`;
  return `${explain.tool}: ${head}`;
}
