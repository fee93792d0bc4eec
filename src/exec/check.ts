import path from 'node:path';
import type { ExecConfig } from '../config/schema/exec.js';
import type { WardenConfig } from '../config/schema/index.js';
import type { AllowlistEntry } from './allowlist.js';
import type { ExecPolicy } from './decide.js';
import { readOnlyPolicy } from './read-only.js';
import { buildSafeBinPolicy } from './safe-bins.js';
import { resolveExecHost, type ExecHost } from './sandbox.js';

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

/** The agent's workspace directory: its own `workspace`, else `agents.defaults.workspace`. */
export function agentWorkspace(config: WardenConfig, agentId: string, baseDir: string = process.cwd()): string {
  const agent = config.agents.list.find((a) => a.id === agentId);
  return path.resolve(baseDir, agent?.workspace ?? config.agents.defaults.workspace);
}
