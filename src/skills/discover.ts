import { createHash } from 'node:crypto';
import { type Dirent, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { log } from '../log/log.js';
import { parseSkillMarkdown } from './frontmatter.js';
import { agentNameProblem, isInsideAny, skillNameKey } from './trust.js';
import { isWithinOrEqual } from '../util/path-within.js';
import {
  DEFAULT_DISCOVERY_LIMITS,
  type DiscoveryLimits,
  type LoadedSkill,
  type OverriddenSkill,
  type RefusedSkill,
  type SkillDiscovery,
  type SkillLoadError,
  type SkillRoot,
  type SkillSource,
} from './types.js';

const SKILL_FILE = 'SKILL.md';

export interface DiscoveryOptions {
  /**
   * Real paths of the folders agents can write (every agent's workspace, trust.ts). A skill
   * whose folder resolves inside one is agent-written whatever its root; `workspace` roots
   * always are.
   */
  writableDirs?: readonly string[];
}

/**
 * Reads every root, lowest precedence first, and merges skills by name: a later root's skill
 * overrides an earlier one and the hidden copy is reported in `overridden`. Nothing here throws
 * for bad input: unreadable roots, oversized or malformed SKILL.md files, folders that escape
 * their root and skills past a limit all land in `errors`, one entry per file or root.
 *
 * Unlike OpenClaw, where the workspace tier wins, an agent-written skill never replaces a
 * trusted one: one whose name reads as a trusted skill's (`skillNameKey`: case, separators,
 * look-alike letters) is refused, wherever the two roots rank, and reported in `refused`; so
 * is one whose name is not plain ASCII.
 */
export function discoverSkills(roots: readonly SkillRoot[], limits: DiscoveryLimits = DEFAULT_DISCOVERY_LIMITS, options: DiscoveryOptions = {}): SkillDiscovery {
  const errors: SkillLoadError[] = [];
  const loadedPerSource = new Map<SkillSource, number>();
  const loaded: LoadedSkill[] = [];
  const writableDirs = options.writableDirs ?? [];

  for (const root of roots) {
    const candidates = listCandidates(root, limits, errors);
    let notLoaded = 0;
    for (const dir of candidates) {
      const count = loadedPerSource.get(root.source) ?? 0;
      if (count >= limits.maxSkillsLoadedPerSource) {
        notLoaded++;
        continue;
      }
      const skill = loadSkill(root, dir, limits, errors, writableDirs);
      if (!skill) continue;
      loadedPerSource.set(root.source, count + 1);
      loaded.push(skill);
    }
    if (notLoaded > 0) {
      errors.push({
        file: root.dir,
        error: `${notLoaded} skill folder${notLoaded === 1 ? '' : 's'} not loaded: the ${root.source} source is limited to ${limits.maxSkillsLoadedPerSource} skills`,
      });
    }
  }

  // The names trusted skills hold, by key; the highest-precedence holder is the one reported.
  const trusted = new Map<string, LoadedSkill>();
  for (const skill of loaded) if (!skill.agentWritable) trusted.set(skillNameKey(skill.name), skill);

  const byName = new Map<string, LoadedSkill>();
  const overridden: OverriddenSkill[] = [];
  const refused: RefusedSkill[] = [];
  for (const skill of loaded) {
    if (skill.agentWritable) {
      const refusal = refusalOf(skill, trusted);
      if (refusal) {
        refused.push(refusal);
        log.warn({ skill: skill.name, location: skill.location, shadows: refusal.shadows?.location }, 'agent-written skill refused');
        continue;
      }
    }
    const previous = byName.get(skill.name);
    if (previous) {
      overridden.push({
        name: skill.name,
        location: previous.location,
        root: previous.root.source,
        overriddenBy: { location: skill.location, root: skill.root.source },
      });
      log.warn({ skill: skill.name, hidden: previous.location, by: skill.location }, 'skill overridden by a higher-precedence root');
    }
    byName.set(skill.name, skill);
  }

  for (const e of errors) log.warn({ file: e.file, error: e.error }, 'skill not loaded');
  const skills = [...byName.values()].sort((a, b) => compareNames(a.name, b.name));
  return { skills, overridden, refused, errors };
}

/** Why an agent-written skill is not loaded, or undefined when it may be. */
function refusalOf(skill: LoadedSkill, trusted: ReadonlyMap<string, LoadedSkill>): RefusedSkill | undefined {
  const base = { name: skill.name, location: skill.location, root: skill.root.source };
  const nameProblem = agentNameProblem(skill.name);
  if (nameProblem) return { ...base, why: `refused: ${nameProblem}` };
  const shadowed = trusted.get(skillNameKey(skill.name));
  if (!shadowed) return undefined;
  return {
    ...base,
    why: `refused: from a folder an agent can write, it would shadow the ${shadowed.root.source} skill "${shadowed.name}" (${shadowed.location}), which is used instead`,
    shadows: { name: shadowed.name, location: shadowed.location, root: shadowed.root.source },
  };
}

/** Lowercase ASCII letters, digits and hyphens: every name the skill format allows, and most folders. */
const PLAIN_NAME = /^[a-z0-9-]*$/;

/**
 * English collation order (`localeCompare(…, 'en')`). Names of lowercase ASCII letters, digits
 * and hyphens collate as their code points compare (hyphen, digits, letters; a prefix first), so
 * those are compared directly: the first use of collation loads ICU's tables, some 3 MB that the
 * process keeps, and a start discovers the skills before anyone asks for a sorted list.
 */
export function compareNames(a: string, b: string): number {
  if (PLAIN_NAME.test(a) && PLAIN_NAME.test(b)) return a < b ? -1 : a > b ? 1 : 0;
  return a.localeCompare(b, 'en');
}

/**
 * Skill folders of one root: the root itself when it holds a SKILL.md, else its subfolders that
 * do, and one level of grouping below them (`skills/ops/incident-triage/SKILL.md`). Hidden
 * folders and node_modules are skipped. At most `maxCandidatesPerRoot` folders are examined.
 */
function listCandidates(root: SkillRoot, limits: DiscoveryLimits, errors: SkillLoadError[]): string[] {
  let rootReal: string;
  try {
    rootReal = realpathSync(root.dir);
    if (!statSync(rootReal).isDirectory()) {
      errors.push({ file: root.dir, error: 'skill root is not a directory' });
      return [];
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') errors.push({ file: root.dir, error: `cannot read skill root: ${(err as Error).message}` });
    return [];
  }
  if (isFile(path.join(root.dir, SKILL_FILE))) return [root.dir];

  const candidates: string[] = [];
  let examined = 0;
  let truncated = false;
  const visit = (dir: string, depth: number): void => {
    for (const child of childDirs(dir, errors)) {
      if (examined >= limits.maxCandidatesPerRoot) {
        truncated = true;
        return;
      }
      examined++;
      if (!withinRoot(root, rootReal, child, errors)) continue;
      if (isFile(path.join(child, SKILL_FILE))) candidates.push(child);
      else if (depth === 0) visit(child, 1);
    }
  };
  visit(root.dir, 0);
  if (truncated) {
    errors.push({
      file: root.dir,
      error: `more than ${limits.maxCandidatesPerRoot} folders under this root; the rest were not scanned`,
    });
  }
  return candidates;
}

function childDirs(dir: string, errors: SkillLoadError[]): string[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    errors.push({ file: dir, error: `cannot list folder: ${(err as Error).message}` });
    return [];
  }
  return entries
    .filter((e) => !e.name.startsWith('.') && e.name !== 'node_modules' && (e.isDirectory() || (e.isSymbolicLink() && isDirectory(path.join(dir, e.name)))))
    .map((e) => e.name)
    .sort(compareNames)
    .map((name) => path.join(dir, name));
}

/**
 * Workspace and extra roots are content the operator may not have vetted folder by folder; a
 * symlink there must not pull in a skill from elsewhere on the machine. Managed, personal and
 * bundled roots belong to the operator and may link freely.
 */
function withinRoot(root: SkillRoot, rootReal: string, dir: string, errors: SkillLoadError[]): boolean {
  if (root.source !== 'workspace' && root.source !== 'extra') return true;
  const real = safeRealpath(dir);
  if (real && isWithinOrEqual(real, rootReal)) return true;
  errors.push({ file: path.join(dir, SKILL_FILE), error: `skill folder resolves outside its root (${real ?? 'unresolvable'}); not loaded` });
  return false;
}

function loadSkill(root: SkillRoot, dir: string, limits: DiscoveryLimits, errors: SkillLoadError[], writableDirs: readonly string[]): LoadedSkill | undefined {
  const file = path.join(dir, SKILL_FILE);
  const dirReal = safeRealpath(dir);
  const fileReal = safeRealpath(file);
  if (!dirReal || !fileReal || !isWithinOrEqual(fileReal, dirReal)) {
    errors.push({ file, error: 'SKILL.md resolves outside its skill folder; not loaded' });
    return undefined;
  }
  let bytes: Buffer;
  try {
    const size = statSync(fileReal).size;
    if (size > limits.maxSkillFileBytes) {
      errors.push({ file, error: `SKILL.md is ${size} bytes, over the ${limits.maxSkillFileBytes}-byte limit` });
      return undefined;
    }
    bytes = readFileSync(fileReal);
  } catch (err) {
    errors.push({ file, error: `cannot read: ${(err as Error).message}` });
    return undefined;
  }
  const parsed = parseSkillMarkdown(bytes.toString('utf8'), path.basename(dir));
  if (!parsed.ok) {
    errors.push({ file, error: parsed.error });
    return undefined;
  }
  return {
    ...parsed.value,
    location: file,
    baseDir: dir,
    root,
    contentHash: createHash('sha256').update(bytes).digest('hex'),
    // The folder's real path decides, not the tier: a link from a trusted root into a workspace is agent-written.
    agentWritable: root.source === 'workspace' || isInsideAny(dirReal, writableDirs) || isInsideAny(fileReal, writableDirs),
  };
}

function safeRealpath(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}
