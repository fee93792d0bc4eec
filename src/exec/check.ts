import { agentWorkspace } from './agent-workspace.js';
import type { ExecConfig } from '../config/schema/exec.js';
import type { WardenConfig } from '../config/schema/index.js';
import type { AllowlistEntry } from './allowlist.js';
import { evaluateExec, type ExecPolicy, type ExecVerdict } from './decide.js';
import { effectiveExecConfig } from './effective-config.js';
import { DEFAULT_PATH_DIRS } from './resolve.js';
import { readOnlyPolicy } from './read-only.js';
import { buildSafeBinPolicy } from './safe-bins.js';
import { execHomes, resolveExecHost, type ExecHost } from './sandbox.js';
import type { TurnContext } from '../policy/context.js';

// Kept here for their callers; they live apart so the policy can read them without loading the gate.
export { effectiveExecConfig, execHostOf } from './effective-config.js';

/**
 * The exec gate's policy for an agent's `tools.exec` block. `host` is where the command would
 * run: the default read-only list (read-only.ts) applies only on the sandbox host, and only while
 * `defaultAllowlist` is not switched off.
 */
export function execPolicyFromConfig(exec: ExecConfig, stored: readonly AllowlistEntry[] = [], host: ExecHost = resolveExecHost(exec.host)): ExecPolicy {
  return {
    security: exec.security,
    ask: exec.ask,
    strictInlineEval: exec.strictInlineEval,
    allowlist: [...exec.allowlist.map((e) => ({ ...e, source: 'config' as const })), ...stored],
    safeBins: buildSafeBinPolicy({ safeBins: exec.safeBins, trustedDirs: exec.safeBinTrustedDirs, profiles: exec.safeBinProfiles }),
    ...(host === 'sandbox' && exec.defaultAllowlist !== false ? { readOnly: readOnlyPolicy() } : {}),
  };
}

export { agentWorkspace };

/** What a verdict is computed with, besides the config, the command and the turn's context. */
export interface ExecVerdictOptions {
  /** Stored entries (allow-always grants, imports) for the context's agent. */
  storedAllowlist?: readonly AllowlistEntry[];
  /** Working directory relative paths resolve against; default: the agent's workspace. */
  cwd?: string;
  /** Directory relative config paths resolve against (the config file's directory). */
  baseDir?: string;
  pathDirs?: readonly string[];
  /** What `~` means in the command; default: the HOME it would run with on the configured host. */
  home?: string;
  /** What `~` means in allowlist patterns; default: the operator's home. */
  patternHome?: string;
  now?: number;
}

/**
 * The exec policy's verdict for one command in one turn's context, under the agent's effective
 * `tools.exec` and the stored allowlist — before asking whether exec is on that turn's surface,
 * which the composition root's `checkExec` adds (it needs every tool source). The config-change
 * classifier compares these verdicts directly, beside its own surface comparison.
 */
export function execVerdictFor(config: WardenConfig, command: string, context: Pick<TurnContext, 'agentId'>, options: ExecVerdictOptions = {}): ExecVerdict {
  const exec = effectiveExecConfig(config, context.agentId);
  const host = resolveExecHost(exec.host);
  const policy = execPolicyFromConfig(exec, options.storedAllowlist, host);
  const homes = execHomes(host);
  return evaluateExec(command, policy, {
    cwd: options.cwd ?? agentWorkspace(config, context.agentId, options.baseDir),
    pathDirs: options.pathDirs ?? DEFAULT_PATH_DIRS,
    home: options.home ?? homes.home,
    patternHome: options.patternHome ?? homes.patternHome,
    ...(options.now !== undefined ? { now: options.now } : {}),
  });
}
