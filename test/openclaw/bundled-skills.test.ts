import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { discoverSkills } from '../../src/skills/discover.js';
import type { SkillRoot } from '../../src/skills/types.js';

/**
 * Every SKILL.md shipped in openclaw@2026.9.6 (its skills/, custodian-skills/, the extensions'
 * skills and a bundled dependency's), extracted by scripts/extract-openclaw-corpus.mjs, loads in
 * Warden with no errors.
 */
const base = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/openclaw/skills');

/** Every folder that holds skill folders. */
function skillRoots(dir: string): string[] {
  const entries = readdirSync(dir);
  if (entries.some((e) => statSync(path.join(dir, e)).isDirectory() && readdirSync(path.join(dir, e)).includes('SKILL.md'))) return [dir];
  return entries.filter((e) => statSync(path.join(dir, e)).isDirectory()).flatMap((e) => skillRoots(path.join(dir, e)));
}

describe("OpenClaw's bundled skills", () => {
  const roots = skillRoots(base);
  const found = discoverSkills(roots.map((dir): SkillRoot => ({ source: 'extra', dir })));

  it('all 66 load without errors', () => {
    expect(found.errors).toEqual([]);
    expect(found.skills).toHaveLength(66);
  });

  it.each(found.skills.map((s) => [s.name, s] as const))('%s has a description', (_name, skill) => {
    expect(skill.description.trim().length).toBeGreaterThan(0);
  });
});
