import { createHash } from 'node:crypto';
import { type Dirent, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { log } from '../log/log.js';
import { parseSkillMarkdown } from './frontmatter.js';
import {
  DEFAULT_DISCOVERY_LIMITS,
  type DiscoveryLimits,
  type LoadedSkill,
  type OverriddenSkill,
  type SkillDiscovery,
  type SkillLoadError,
  type SkillRoot,
  type SkillSource,
} from './types.js';

const SKILL_FILE = 'SKILL.md';

/**
 * Reads every root, lowest precedence first, and merges skills by name: a later root's skill
 * overrides an earlier one and the hidden copy is reported in `overridden`. Nothing here throws
 * for bad input: unreadable roots, oversized or malformed SKILL.md files, folders that escape
 * their root and skills past a limit all land in `errors`, one entry per file or root.
 */
export function discoverSkills(roots: readonly SkillRoot[], limits: DiscoveryLimits = DEFAULT_DISCOVERY_LIMITS): SkillDiscovery {
  const errors: SkillLoadError[] = [];
  const loadedPerSource = new Map<SkillSource, number>();
  const byName = new Map<string, LoadedSkill>();
  const overridden: OverriddenSkill[] = [];

  for (const root of roots) {
    const candidates = listCandidates(root, limits, errors);
    let notLoaded = 0;
    for (const dir of candidates) {
      const count = loadedPerSource.get(root.source) ?? 0;
      if (count >= limits.maxSkillsLoadedPerSource) {
        notLoaded++;
        continue;
      }
      const skill = loadSkill(root, dir, limits, errors);
      if (!skill) continue;
      loadedPerSource.set(root.source, count + 1);
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
    if (notLoaded > 0) {
      errors.push({
        file: root.dir,
        error: `${notLoaded} skill folder${notLoaded === 1 ? '' : 's'} not loaded: the ${root.source} source is limited to ${limits.maxSkillsLoadedPerSource} skills`,
      });
    }
  }

  for (const e of errors) log.warn({ file: e.file, error: e.error }, 'skill not loaded');
  const skills = [...byName.values()].sort((a, b) => compareNames(a.name, b.name));
  return { skills, overridden, errors };
}

export function compareNames(a: string, b: string): number {
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
  if (real && isInside(rootReal, real)) return true;
  errors.push({ file: path.join(dir, SKILL_FILE), error: `skill folder resolves outside its root (${real ?? 'unresolvable'}); not loaded` });
  return false;
}

function loadSkill(root: SkillRoot, dir: string, limits: DiscoveryLimits, errors: SkillLoadError[]): LoadedSkill | undefined {
  const file = path.join(dir, SKILL_FILE);
  const dirReal = safeRealpath(dir);
  const fileReal = safeRealpath(file);
  if (!dirReal || !fileReal || !isInside(dirReal, fileReal)) {
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
  };
}

function isInside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
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
