import { describe, expect, it } from 'vitest';
import { discoverSkills } from './discover.js';
import { BUNDLED_SKILLS_DIR } from './roots.js';

describe('bundled skills', () => {
  const found = discoverSkills([{ source: 'bundled', dir: BUNDLED_SKILLS_DIR }]);

  it('all load without errors', () => {
    expect(found.errors).toEqual([]);
    expect(found.skills.map((s) => s.name)).toEqual(['code-review', 'incident-triage', 'release-notes']);
  });

  it.each(found.skills.map((s) => [s.name, s] as const))('%s is named after its folder, says when to use it, and has steps', (_name, skill) => {
    expect(skill.baseDir.endsWith(`/${skill.name}`)).toBe(true);
    expect(skill.description).toMatch(/Use when/);
    // Short enough that the full catalog format stays cheap.
    expect(skill.description.length).toBeLessThanOrEqual(400);
    expect(skill.userInvocable).toBe(true);
    expect(skill.disableModelInvocation).toBe(false);
  });

  it('release-notes needs git', () => {
    expect(found.skills.find((s) => s.name === 'release-notes')!.metadata.requires.bins).toEqual(['git']);
  });
});
