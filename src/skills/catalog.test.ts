import { describe, expect, it } from 'vitest';
import { buildSkillsPrompt, type CatalogSkill } from './catalog.js';

const pad = (n: number) => String(n).padStart(3, '0');

function skills(count: number, over: { description?: (i: number) => string; location?: (i: number) => string } = {}): CatalogSkill[] {
  return Array.from({ length: count }, (_, i) => ({
    name: `skill-${pad(i)}`,
    description: over.description?.(i) ?? `Does task ${i}.`,
    location: over.location?.(i) ?? `/s/skill-${pad(i)}/SKILL.md`,
    disableModelInvocation: false,
  }));
}

const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(' ');

describe('the skills prompt catalog', () => {
  it('lists skills sorted by name in the full format when they fit', () => {
    const prompt = buildSkillsPrompt({
      eligible: [
        { name: 'triage', description: 'Triage an incident', location: '/w/skills/triage/SKILL.md', disableModelInvocation: false },
        { name: 'review', description: 'Review a diff', location: '/w/skills/review/SKILL.md', disableModelInvocation: false },
      ],
    });
    expect(prompt).toMatchObject({ included: ['review', 'triage'], dropped: [], notes: [], format: 'full' });
    expect(prompt.text).toBe(
      [
        'The skills below hold instructions for specific tasks.',
        "When a task matches a skill's name or description, read the SKILL.md at its location first and follow it.",
        "Relative paths in a skill file are relative to that skill's folder (the folder holding its SKILL.md).",
        '',
        '<available_skills>',
        '  <skill>',
        '    <name>review</name>',
        '    <description>Review a diff</description>',
        '    <location>/w/skills/review/SKILL.md</location>',
        '  </skill>',
        '  <skill>',
        '    <name>triage</name>',
        '    <description>Triage an incident</description>',
        '    <location>/w/skills/triage/SKILL.md</location>',
        '  </skill>',
        '</available_skills>',
      ].join('\n'),
    );
  });

  it('is empty when there is nothing to offer', () => {
    expect(buildSkillsPrompt({ eligible: [] })).toEqual({ text: '', included: [], dropped: [], notes: [], format: 'full' });
  });

  it('escapes XML in names, descriptions and locations', () => {
    const { text } = buildSkillsPrompt({
      eligible: [{ name: 'a&b', description: 'Use <tags> & "quotes"', location: "/w/it's/SKILL.md", disableModelInvocation: false }],
    });
    expect(text).toContain('<name>a&amp;b</name>');
    expect(text).toContain('<description>Use &lt;tags&gt; &amp; &quot;quotes&quot;</description>');
    expect(text).toContain('<location>/w/it&apos;s/SKILL.md</location>');
  });

  it('leaves out skills that disable model invocation, and says so in dropped', () => {
    const list = skills(2);
    list[0]!.disableModelInvocation = true;
    const prompt = buildSkillsPrompt({ eligible: list });
    expect(prompt.included).toEqual(['skill-001']);
    expect(prompt.dropped).toEqual([{ name: 'skill-000', reason: 'disable-model-invocation' }]);
    expect(prompt.notes).toEqual([]);
    expect(prompt.text).not.toContain('skill-000');
  });

  describe('with the default limits (150 skills, 18,000 characters)', () => {
    it('caps the count at 150 and notes the truncation', () => {
      const prompt = buildSkillsPrompt({ eligible: skills(160, { description: () => 'd', location: (i) => `/s/${i}` }) });
      expect(prompt.included).toHaveLength(150);
      expect(prompt.included.at(-1)).toBe('skill-149');
      expect(prompt.dropped).toEqual(Array.from({ length: 10 }, (_, i) => ({ name: `skill-${150 + i}`, reason: 'maxSkillsInPrompt' })));
      expect(prompt.format).toBe('full');
      expect(prompt.notes).toEqual(['⚠️ Skills truncated: included 150 of 160. Run `warden skills` to list them all.']);
      expect(prompt.text.startsWith(prompt.notes[0]!)).toBe(true);
      expect(prompt.text.length).toBeLessThanOrEqual(18_000);
    });

    it('shortens descriptions before it drops any skill', () => {
      const list = skills(40, { description: (i) => `Skill ${i}: ${words(120)}` });
      const prompt = buildSkillsPrompt({ eligible: list });
      expect(prompt.included).toHaveLength(40);
      expect(prompt.dropped).toEqual([]);
      expect(prompt.format).toBe('compact');
      expect(prompt.descriptionMaxChars).toBe(220);
      expect(prompt.notes).toEqual(['⚠️ Skills catalog using compact format (descriptions shortened). Run `warden skills` to list them all.']);
      expect(prompt.text.length).toBeLessThanOrEqual(18_000);
      expect(prompt.text).toContain('<description>Skill 0: word0 word1');
      expect(prompt.text).toMatch(/…<\/description>/);
    });

    it('drops the last skills by name only when even name and location do not fit', () => {
      const list = skills(150, { location: (i) => `/very/long/workspace/path/${'x'.repeat(150)}/skill-${pad(i)}/SKILL.md`, description: () => words(30) });
      const prompt = buildSkillsPrompt({ eligible: list });
      const kept = prompt.included.length;
      expect(kept).toBeGreaterThan(0);
      expect(kept).toBeLessThan(150);
      expect(prompt.included).toEqual(list.slice(0, kept).map((s) => s.name));
      expect(prompt.dropped).toEqual(list.slice(kept).map((s) => ({ name: s.name, reason: 'maxSkillsPromptChars' })));
      expect(prompt.text.length).toBeLessThanOrEqual(18_000);
      expect(prompt.notes[0]).toMatch(new RegExp(`^⚠️ Skills truncated: included ${kept} of 150 \\(compact format, descriptions (omitted|shortened)\\)\\.`));
      // As many as fit: one more skill would not.
      const oneMore = buildSkillsPrompt({ eligible: list.slice(0, kept + 1) });
      expect(oneMore.included.length).toBe(kept);
    });
  });

  describe('with small limits', () => {
    it.each([
      [1, 18_000, 1, 'full'],
      [2, 18_000, 2, 'full'],
      [150, 700, 3, 'compact'],
      [150, 450, 1, 'compact'],
    ] as const)('maxSkillsInPrompt %i, maxSkillsPromptChars %i → %i skills, %s format', (maxSkillsInPrompt, maxSkillsPromptChars, count, format) => {
      const prompt = buildSkillsPrompt({ eligible: skills(3, { description: () => words(20) }) }, { maxSkillsInPrompt, maxSkillsPromptChars });
      expect(prompt.included).toHaveLength(count);
      expect(prompt.format).toBe(format);
      expect(prompt.text.length).toBeLessThanOrEqual(maxSkillsPromptChars);
      expect(prompt.included.length + prompt.dropped.length).toBe(3);
    });

    it('omits descriptions entirely when only names and locations fit, and says so', () => {
      const list = skills(3, { description: () => words(20) });
      const bare = buildSkillsPrompt({ eligible: list }, { maxSkillsPromptChars: 0 });
      expect(bare.text).toBe('');
      // The smallest limit that holds all three can only be the form without descriptions.
      let limit: { chars: number; prompt: ReturnType<typeof buildSkillsPrompt> } | undefined;
      for (let chars = 1; chars <= 2000 && !limit; chars++) {
        const prompt = buildSkillsPrompt({ eligible: list }, { maxSkillsPromptChars: chars });
        if (prompt.included.length === 3) limit = { chars, prompt };
      }
      expect(limit).toBeDefined();
      expect(limit!.prompt.text.length).toBe(limit!.chars);
      expect(limit!.prompt.descriptionMaxChars).toBe(0);
      expect(limit!.prompt.notes).toEqual(['⚠️ Skills catalog using compact format (descriptions omitted). Run `warden skills` to list them all.']);
      expect(limit!.prompt.text).not.toContain('<description>');
      expect(limit!.prompt.text).toContain("When a task matches a skill's name, read");
    });

    it('keeps a skill rather than a note when only one of them fits', () => {
      const list = skills(3, { description: () => 'd' });
      const one = buildSkillsPrompt({ eligible: list.slice(0, 1) }, { maxSkillsPromptChars: 10_000 }).text;
      const prompt = buildSkillsPrompt({ eligible: list }, { maxSkillsPromptChars: one.length });
      expect(prompt.included).toEqual(['skill-000']);
      expect(prompt.text).not.toContain('⚠️');
      // The operator still hears about it even though the model does not.
      expect(prompt.notes[0]).toMatch(/^⚠️ Skills truncated: included 1 of 3/);
    });
  });

  it('never exceeds the character limit and accounts for every skill', () => {
    for (const maxSkillsPromptChars of [0, 50, 300, 1000, 5000, 18_000]) {
      for (const count of [0, 1, 7, 60, 200]) {
        const list = skills(count, { description: (i) => words(i % 50) });
        const prompt = buildSkillsPrompt({ eligible: list }, { maxSkillsInPrompt: 150, maxSkillsPromptChars });
        expect(prompt.text.length).toBeLessThanOrEqual(maxSkillsPromptChars);
        expect(new Set([...prompt.included, ...prompt.dropped.map((d) => d.name)]).size).toBe(count);
        if (prompt.dropped.length > 0) expect(prompt.notes.length).toBe(1);
      }
    }
  });
});
