import { homedir } from 'node:os';
import path from 'node:path';
import type { WardenConfig } from '../config/index.js';
import { defaultAgentId, knownAgentIds, resolveAgent } from '../policy/steps.js';
import { resolveDataDir } from '../store/data-dir.js';
import { PACKAGE_ROOT } from '../util/package-root.js';
import { agentWritableDirs } from './trust.js';
import type { SkillRoot } from './types.js';

/** The `skills/` folder shipped with this package. */
export const BUNDLED_SKILLS_DIR = path.join(PACKAGE_ROOT, 'skills');

/** Where the roots of an agent come from; every field but the config has a default for production. */
export interface SkillRootOptions {
  /** Directory relative config paths resolve against (the config file's folder). */
  baseDir: string;
  env?: NodeJS.ProcessEnv;
  homeDir?: string;
  bundledDir?: string;
  /** Skill folders contributed by plugins; they share the lowest tier with `skills.extraDirs`. */
  pluginSkillDirs?: readonly string[];
}

export interface AgentSkillRoots {
  agentId: string;
  /** Absolute workspace of the agent. */
  workspace: string;
  /** Lowest precedence first. */
  roots: SkillRoot[];
  /** Real paths of every agent's workspace: skills found inside one are agent-written (trust.ts). */
  writableDirs: string[];
}

export type RootsResult = { ok: true; value: AgentSkillRoots } | { ok: false; error: string };

/**
 * The skill roots of one agent, lowest to highest precedence (semantics §6): `skills.extraDirs`
 * and plugin skills, bundled, managed (`<dataDir>/skills`), personal (`~/.agents/skills`), then
 * the workspace's `.agents/skills` and `skills`. The workspace is `agents.list[].workspace`,
 * else `agents.defaults.workspace`, relative to the config's folder. An unknown agent id is an
 * error rather than a silent fallback to the default agent.
 */
export function resolveSkillRoots(config: WardenConfig, agentId: string | undefined, options: SkillRootOptions): RootsResult {
  const id = agentId ?? defaultAgentId(config);
  const agent = resolveAgent(config, id);
  if (!agent) return { ok: false, error: `unknown agent "${id}"; known agents: ${knownAgentIds(config).join(', ')}` };
  const workspace = path.resolve(options.baseDir, agent.entry?.workspace ?? config.agents.defaults.workspace);
  const env = options.env ?? process.env;
  const dataDir = resolveDataDir({ configDataDir: config.dataDir, env, cwd: options.baseDir });

  const roots: SkillRoot[] = [
    ...config.skills.extraDirs.map((dir): SkillRoot => ({ source: 'extra', dir: path.resolve(options.baseDir, expandHome(dir, options.homeDir)) })),
    ...(options.pluginSkillDirs ?? []).map((dir): SkillRoot => ({ source: 'extra', dir: path.resolve(dir) })),
    { source: 'bundled', dir: options.bundledDir ?? BUNDLED_SKILLS_DIR },
    { source: 'managed', dir: path.join(dataDir, 'skills') },
    { source: 'personal', dir: path.join(options.homeDir ?? homedir(), '.agents', 'skills') },
    { source: 'workspace', dir: path.join(workspace, '.agents', 'skills') },
    { source: 'workspace', dir: path.join(workspace, 'skills') },
  ];
  return { ok: true, value: { agentId: id, workspace, roots: dedupeRoots(roots), writableDirs: agentWritableDirs(config, options.baseDir) } };
}

/** The same folder listed twice keeps its highest-precedence place only. */
function dedupeRoots(roots: SkillRoot[]): SkillRoot[] {
  const last = new Map(roots.map((r, i) => [r.dir, i]));
  return roots.filter((r, i) => last.get(r.dir) === i);
}

function expandHome(dir: string, home: string | undefined): string {
  return dir === '~' || dir.startsWith('~/') ? path.join(home ?? homedir(), dir.slice(1)) : dir;
}
