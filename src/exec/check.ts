import { homedir } from 'node:os';
import path from 'node:path';
import { execConfig, type ExecConfig } from '../config/schema/exec.js';
import type { WardenConfig } from '../config/schema/index.js';
import type { TurnContext } from '../policy/context.js';
import type { AllowlistEntry } from './allowlist.js';
import { evaluateExec, type ExecPolicy, type ExecVerdict } from './decide.js';
import { DEFAULT_PATH_DIRS } from './resolve.js';
import { buildSafeBinPolicy } from './safe-bins.js';

/**
 * `checkExec(config, command, context)`: the exec verdict for one command in one turn's context,
 * under `tools.exec` and the stored allowlist. What `warden exec-check` prints and what the exec
 * tool enforces.
 */
export interface CheckExecOptions {
  /** Stored entries (allow-always grants, imports) for the context's agent. */
  storedAllowlist?: readonly AllowlistEntry[];
  /** Working directory relative paths resolve against; default: the agent's workspace. */
  cwd?: string;
  /** Directory relative config paths resolve against (the config file's directory). */
  baseDir?: string;
  pathDirs?: readonly string[];
  home?: string;
  now?: number;
}

/**
 * The effective `tools.exec` block for an agent: the global block (defaults when absent) with
 * the agent's `tools.exec` keys over it; its allowlist entries and safe-bin profiles add to the
 * global ones.
 */
export function effectiveExecConfig(config: WardenConfig, agentId?: string): ExecConfig {
  const base = config.tools.exec ?? execConfig.parse({});
  const own = agentId === undefined ? undefined : config.agents.list.find((a) => a.id === agentId)?.tools?.exec;
  if (!own) return base;
  return {
    ...base,
    ...own,
    allowlist: [...base.allowlist, ...(own.allowlist ?? [])],
    safeBinProfiles: { ...base.safeBinProfiles, ...own.safeBinProfiles },
  };
}

export function execPolicyFromConfig(exec: ExecConfig, stored: readonly AllowlistEntry[] = []): ExecPolicy {
  return {
    security: exec.security,
    ask: exec.ask,
    strictInlineEval: exec.strictInlineEval,
    allowlist: [...exec.allowlist.map((e) => ({ ...e, source: 'config' as const })), ...stored],
    safeBins: buildSafeBinPolicy({ safeBins: exec.safeBins, trustedDirs: exec.safeBinTrustedDirs, profiles: exec.safeBinProfiles }),
  };
}

/** The agent's workspace directory: its own `workspace`, else `agents.defaults.workspace`. */
export function agentWorkspace(config: WardenConfig, agentId: string, baseDir: string = process.cwd()): string {
  const agent = config.agents.list.find((a) => a.id === agentId);
  return path.resolve(baseDir, agent?.workspace ?? config.agents.defaults.workspace);
}

export function checkExec(config: WardenConfig, command: string, context: TurnContext, options: CheckExecOptions = {}): ExecVerdict {
  const exec = effectiveExecConfig(config, context.agentId);
  const policy = execPolicyFromConfig(exec, options.storedAllowlist);
  return evaluateExec(command, policy, {
    cwd: options.cwd ?? agentWorkspace(config, context.agentId, options.baseDir),
    pathDirs: options.pathDirs ?? DEFAULT_PATH_DIRS,
    home: options.home ?? homedir(),
    ...(options.now !== undefined ? { now: options.now } : {}),
  });
}
