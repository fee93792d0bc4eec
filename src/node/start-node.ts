import path from 'node:path';
import type { LoadedConfig } from '../config/index.js';
import { ExecAllowlistStore, nodeExecutor } from '../exec/allowlist-store.js';
import { wardenStatePaths } from '../exec/warden-state.js';
import { defaultAgentId } from '../policy/steps.js';
import { listSkills } from '../skills/index.js';
import { openConfiguredStore } from '../app/migrations.js';
import { createAgentWorkspaces } from '../app/workspaces.js';
import { createExecTool } from '../tools/core/exec/exec.js';
import { eraseArgs } from '../tools/types.js';
import { gatewayProblem, runNode, type NodeRun } from './client.js';
import { nodeId } from './identity.js';

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
 * Starts a node: its agents' workspaces (created as `warden start` creates them), its stable id
 * (`node-id` in the state dir), its store (the exec allowlist and allow-always grants of this
 * machine, under that id: the configured `store.url` when its config names one, else a SQLite
 * file in the state dir), its own exec tool under its config's `tools.exec`, its eligible skills to
 * publish. Errors as values.
 */
export async function startNode(options: StartNodeOptions): Promise<{ ok: true; run: NodeRun; nodeId: string; close: () => Promise<void> } | { ok: false; error: string }> {
  const problem = gatewayProblem(options.gateway, options.fingerprint);
  if (problem) return { ok: false, error: problem };
  const { config, baseDir, file } = options.loaded;
  // As `warden start` does: a fresh node has no workspace, and its exec refuses a missing workdir.
  const workspaces = createAgentWorkspaces(config, baseDir);
  if (!workspaces.ok) return workspaces;
  // Its grants are this machine's, under its stable id: never the gateway's or another node's on a shared store.
  const self = nodeId(options.stateDir);
  if (!self.ok) return self;
  // The node's store: the configured one (`store.url`, shared with the instances on it), else a
  // SQLite file in the state dir.
  const opened = await openConfiguredStore({ dataDir: options.stateDir, store: config.store });
  if (!opened.ok) return { ok: false, error: opened.error.message };
  const protect = wardenStatePaths({ dataDir: path.resolve(options.stateDir), configFile: file, baseDir, cwd: process.cwd() }).map((p) => p.at);
  const exec = eraseArgs(createExecTool({ config, allowlist: new ExecAllowlistStore(opened.store.db, Date.now, nodeExecutor(self.id)), protect }));
  const listing = listSkills(config, defaultAgentId(config), { baseDir, env: options.env ?? process.env });
  const skills = listing.ok ? listing.value.eligible.slice(0, 200).map((s) => ({ name: s.name.slice(0, 64), description: (s.description ?? '').slice(0, 1024) })) : [];
  const run = runNode({ gateway: options.gateway, name: options.name, loaded: options.loaded, stateDir: options.stateDir, fingerprint: options.fingerprint, exec, skills, say: options.say });
  return { ok: true, run, nodeId: self.id, close: () => opened.store.close() };
}
