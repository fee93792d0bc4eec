import type { WardenConfig } from '../config/schema/index.js';
import { execVerdictFor, type ExecVerdictOptions } from '../exec/check.js';
import type { ExecVerdict } from '../exec/decide.js';
import type { TurnContext } from '../policy/context.js';
import { resolveToolSurface, type SurfaceResult } from '../policy/surface.js';
import { surfaceInputs } from './surface-inputs.js';

/**
 * `checkExec(config, command, context)`: the exec verdict for one command in one turn's context,
 * under `tools.exec` and the stored allowlist. What `warden exec-check` prints and what the exec
 * tool enforces — and, first, whether exec is on that turn's tool surface at all: where the
 * policy removes exec (a channel's deny, a sender's, a subagent's ceiling, …) or it cannot run,
 * the answer is `deny: exec is not on this surface (…)`, as the call gate would refuse it.
 */
export interface CheckExecOptions extends ExecVerdictOptions {
  /** The turn's surface; default: resolved for the context with the inputs the running bot uses. */
  surface?: Pick<SurfaceResult, 'tools' | 'removed' | 'unavailable' | 'error'>;
}

export function checkExec(config: WardenConfig, command: string, context: TurnContext, options: CheckExecOptions = {}): ExecVerdict {
  const verdict = execVerdictFor(config, command, context, options);
  const surface = options.surface ?? resolveToolSurface(config, context, surfaceInputs(config, options.baseDir ?? process.cwd()));
  const missing = whyNotOnSurface(surface, 'exec');
  if (missing === undefined) return verdict;
  // The segments stay, as what the command would have been judged by; nothing runs or is offered.
  return {
    ...verdict,
    decision: 'deny',
    reason: `exec is not on this surface (${missing})`,
    rewritten: null,
    fallbackScript: null,
    askReasons: [],
    allowAlways: { offered: false, why: 'exec is not on this surface', entries: [] },
  };
}

/** Why `tool` is missing from a surface, in the words `warden tools` uses; undefined when it is there. */
function whyNotOnSurface(surface: NonNullable<CheckExecOptions['surface']>, tool: string): string | undefined {
  if (surface.tools.includes(tool)) return undefined;
  const removed = surface.removed.find((r) => r.tool === tool);
  if (removed) return `removed by ${removed.by}`;
  const unavailable = surface.unavailable.find((u) => u.tool === tool);
  if (unavailable) return `unavailable: ${unavailable.why}`;
  return surface.error ?? 'not offered in this context';
}
