import { execConfig, type ExecConfig } from '../config/schema/exec.js';
import type { WardenConfig } from '../config/schema/index.js';
import { resolveExecHost, type ExecHost } from './sandbox.js';

/**
 * The effective `tools.exec` block for an agent: the global block (defaults when absent) with
 * the agent's `tools.exec` keys over it; its allowlist entries and safe-bin profiles add to the
 * global ones.
 */
/** The schema's defaults, parsed once: every turn context asks for the exec host. */
let defaults: ExecConfig | undefined;

export function effectiveExecConfig(config: WardenConfig, agentId?: string): ExecConfig {
  const base = config.tools.exec ?? (defaults ??= Object.freeze(execConfig.parse({})));
  const own = agentId === undefined ? undefined : config.agents.list.find((a) => a.id === agentId)?.tools?.exec;
  if (!own) return base;
  return {
    ...base,
    ...own,
    allowlist: [...base.allowlist, ...(own.allowlist ?? [])],
    safeBinProfiles: { ...base.safeBinProfiles, ...own.safeBinProfiles },
  };
}

/**
 * Where exec commands run for this config (`tools.exec.host` is process-wide): the same
 * resolution the exec tool picks its host by, so the policy's sandbox step and the tool never
 * disagree about whether a session is sandboxed.
 */
export function execHostOf(config: WardenConfig): ExecHost {
  // `host` has no default in the schema, so an absent block and an absent key answer alike:
  // read it where it is, without building the exec schema to parse `{}` (every command's
  // turn context asks this).
  return resolveExecHost(config.tools.exec?.host);
}
