import { homedir } from 'node:os';
import path from 'node:path';
import type { WardenConfig } from '../config/index.js';
import { resolveExecutable } from '../exec/resolve.js';
import type { LoadedSkill } from './types.js';

export type Eligibility = { eligible: true } | { eligible: false; why: string };

/** What eligibility looks at besides the skill: config, environment, host. */
export interface EligibilityContext {
  config: WardenConfig;
  env: NodeJS.ProcessEnv;
  /** `process.platform` of the host the skill would run on. */
  platform: string;
  /** Whether an executable of this name is on PATH. */
  hasBin: (name: string) => boolean;
}

/**
 * `requires.config` paths OpenClaw treats as on unless the config turns them off; Warden has no
 * such keys, so skills written for OpenClaw that require them stay eligible.
 */
const CONFIG_DEFAULTS: Record<string, unknown> = { 'browser.enabled': true, 'browser.evaluateEnabled': true };

/** OS names skill authors write besides `process.platform` values. */
const OS_ALIASES: Record<string, string> = { macos: 'darwin', mac: 'darwin', osx: 'darwin', windows: 'win32', win: 'win32' };

/**
 * Whether a skill may be used here (reference §8.3), in OpenClaw's order: switched off in
 * `skills.entries`, a bundled skill outside `skills.allowBundled`, the wrong OS; then `always`
 * skips the remaining checks; else every `requires.env`, every `requires.config` path, every
 * `requires.bins` and one of `requires.anyBins` must hold. `why` names every unmet requirement,
 * so the operator can fix them all at once.
 */
export function evaluateEligibility(skill: Pick<LoadedSkill, 'name' | 'metadata' | 'root'>, ctx: EligibilityContext): Eligibility {
  const key = skill.metadata.skillKey ?? skill.name;
  const entry = ctx.config.skills.entries[key];
  if (entry?.enabled === false) return no(`disabled by skills.entries.${key}.enabled: false`);

  const allow = ctx.config.skills.allowBundled;
  // Absent means every bundled skill; an empty list allows none (the schema's documented meaning).
  if (skill.root.source === 'bundled' && allow !== undefined && !allow.includes(skill.name) && !allow.includes(key)) {
    return no('bundled skill not listed in skills.allowBundled');
  }

  const os = skill.metadata.os.map((o) => OS_ALIASES[o.toLowerCase()] ?? o.toLowerCase());
  if (os.length > 0 && !os.includes(ctx.platform)) return no(`runs only on ${skill.metadata.os.join(', ')}; this host is ${ctx.platform}`);

  if (skill.metadata.always) return { eligible: true };

  const { requires, primaryEnv } = skill.metadata;
  const unmet: string[] = [];
  const missingEnv = requires.env.filter((name) => {
    if (nonEmpty(ctx.env[name]) || nonEmpty(entry?.env?.[name])) return false;
    return !(name === primaryEnv && nonEmpty(entry?.apiKey));
  });
  if (missingEnv.length > 0) unmet.push(`missing environment ${missingEnv.join(', ')} (set it, or skills.entries.${key}.env${primaryEnv && missingEnv.includes(primaryEnv) ? ` or .apiKey` : ''})`);

  const offConfig = requires.config.filter((p) => !configPathTruthy(ctx.config, p));
  if (offConfig.length > 0) unmet.push(`config ${offConfig.join(', ')} not set`);

  const missingBins = requires.bins.filter((b) => !ctx.hasBin(b));
  if (missingBins.length > 0) unmet.push(`missing on PATH: ${missingBins.join(', ')}`);

  if (requires.anyBins.length > 0 && !requires.anyBins.some((b) => ctx.hasBin(b))) unmet.push(`needs one of ${requires.anyBins.join(', ')} on PATH`);

  return unmet.length > 0 ? no(unmet.join('; ')) : { eligible: true };
}

/** A dotted path (`tools.exec.security`, `agents.list.0.id`) whose value is set and not empty. */
export function configPathTruthy(config: WardenConfig, dotted: string): boolean {
  let node: unknown = config;
  for (const part of dotted.split('.')) {
    if (node === null || typeof node !== 'object') {
      node = undefined;
      break;
    }
    node = (node as Record<string, unknown>)[part];
  }
  if (node === undefined && dotted in CONFIG_DEFAULTS) node = CONFIG_DEFAULTS[dotted];
  if (Array.isArray(node)) return node.length > 0;
  return Boolean(node);
}

/** Looks executables up in the given PATH, remembering answers for the lifetime of the lookup. */
export function binLookup(env: NodeJS.ProcessEnv): (name: string) => boolean {
  const pathDirs = (env.PATH ?? '').split(path.delimiter).filter(Boolean);
  const home = env.HOME ?? homedir();
  const cache = new Map<string, boolean>();
  return (name) => {
    let found = cache.get(name);
    if (found === undefined) {
      // A requirement names a program, not a path: a slash in it never resolves.
      found = !name.includes('/') && resolveExecutable(name, { cwd: home, pathDirs, home }).realPath !== null;
      cache.set(name, found);
    }
    return found;
  };
}

function no(why: string): Eligibility {
  return { eligible: false, why };
}

function nonEmpty(v: string | undefined): boolean {
  return v !== undefined && v.trim() !== '';
}
