import path from 'node:path';
import type { LoadedConfig } from '../config/index.js';
import { ExecAllowlistStore } from '../exec/allowlist-store.js';
import { wardenStatePaths } from '../exec/warden-state.js';
import { defaultAgentId } from '../policy/steps.js';
import { listSkills } from '../skills/index.js';
import { openWardenStore } from '../app/migrations.js';
import { createExecTool } from '../tools/core/exec/exec.js';
import { eraseArgs } from '../tools/types.js';
import { gatewayProblem, runNode, type NodeRun } from './client.js';

export interface StartNodeOptions {
  gateway: string;
  name: string;
  loaded: LoadedConfig;
  stateDir: string;
  fingerprint?: string | undefined;
  say: (line: string) => void;
  env?: NodeJS.ProcessEnv | undefined;
}

/**
 * Starts a node: its own store (the exec allowlist and allow-always grants of this machine) in
 * the state dir, its own exec tool under its config's `tools.exec`, its eligible skills to
 * publish. Errors as values.
 */
export async function startNode(options: StartNodeOptions): Promise<{ ok: true; run: NodeRun; close: () => Promise<void> } | { ok: false; error: string }> {
  const problem = gatewayProblem(options.gateway, options.fingerprint);
  if (problem) return { ok: false, error: problem };
  const opened = await openWardenStore({ dataDir: options.stateDir });
  if (!opened.ok) return { ok: false, error: opened.error.message };
  const { config, baseDir, file } = options.loaded;
  const protect = wardenStatePaths({ dataDir: path.resolve(options.stateDir), configFile: file, baseDir, cwd: process.cwd() }).map((p) => p.at);
  const exec = eraseArgs(createExecTool({ config, allowlist: new ExecAllowlistStore(opened.store.db), protect }));
  const listing = listSkills(config, defaultAgentId(config), { baseDir, env: options.env ?? process.env });
  const skills = listing.ok ? listing.value.eligible.slice(0, 200).map((s) => ({ name: s.name.slice(0, 64), description: (s.description ?? '').slice(0, 1024) })) : [];
  const run = runNode({ gateway: options.gateway, name: options.name, loaded: options.loaded, stateDir: options.stateDir, fingerprint: options.fingerprint, exec, skills, say: options.say });
  return { ok: true, run, close: () => opened.store.close() };
}
