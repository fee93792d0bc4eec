import { describe, expect, it } from 'vitest';
import { findSkillCommand, sanitizeCommandName, shadowedWarning, skillCommandSpecs } from './commands.js';
import { testSkill } from './testing.js';

const skill = testSkill;

describe('skill slash commands', () => {
  it.each([
    ['code-review', 'code_review'],
    ['Release Notes!', 'release_notes'],
    ['__a..b__', 'a_b'],
    ['日本語', 'skill'],
    ['x'.repeat(40), 'x'.repeat(32)],
    [`${'a'.repeat(31)}-b`, 'a'.repeat(31)],
  ])('sanitises %j to %j', (raw, expected) => {
    expect(sanitizeCommandName(raw)).toBe(expected);
  });

  it('skips skills that are not user-invocable and de-duplicates against reserved names and each other', () => {
    const specs = skillCommandSpecs(
      [skill('help'), skill('code-review'), skill('code_review'), skill('hidden', { userInvocable: false }), skill('Code Review')],
      ['help', 'tools', 'skills'],
    );
    expect(specs.map((s) => [s.name, s.skillName])).toEqual([
      ['help_2', 'help'],
      ['code_review', 'code-review'],
      ['code_review_2', 'code_review'],
      ['code_review_3', 'Code Review'],
    ]);
  });

  it('keeps suffixed names within 32 characters', () => {
    const long = 'y'.repeat(32);
    const [, second] = skillCommandSpecs([skill(long), skill(`${long}z`)]);
    expect(second!.name).toBe(`${'y'.repeat(30)}_2`);
  });

  it('carries tool dispatch', () => {
    const [spec] = skillCommandSpecs([skill('search', { commandDispatch: { kind: 'tool', tool: 'web_search', argMode: 'raw' } })]);
    expect(spec).toEqual({
      name: 'search',
      skillName: 'search',
      description: 'about search',
      location: '/s/search/SKILL.md',
      modelInvocable: true,
      dispatch: { tool: 'web_search', argMode: 'raw' },
    });
  });

  it('keeps skills the model may not invoke as commands, and says so', () => {
    const [spec] = skillCommandSpecs([skill('deploy', { disableModelInvocation: true })]);
    expect(spec).toMatchObject({ name: 'deploy', modelInvocable: false });
  });

  it('a built-in wins its name; the skill gets a suffix and a warning names both', () => {
    const specs = skillCommandSpecs([skill('status'), skill('Tools!'), skill('notes')], ['help', 'tools', 'status']);
    expect(specs.map((s) => [s.name, s.shadowedBuiltin])).toEqual([
      ['status_2', 'status'],
      ['tools_2', 'tools'],
      ['notes', undefined],
    ]);
    expect(shadowedWarning(specs[0]!)).toBe('skill "status": /status is a built-in command, which wins; the skill\'s command is /status_2');
    expect(shadowedWarning(specs[2]!)).toBeUndefined();
  });

  it('a description-less skill is described by its name', () => {
    expect(skillCommandSpecs([skill('x', { description: '  ' })])[0]!.description).toBe('x');
  });
});

describe('findSkillCommand', () => {
  const specs = skillCommandSpecs([skill('release-notes'), skill('release_notes'), skill('code review')]);
  it.each([
    ['release_notes', 'release-notes'],
    ['RELEASE_NOTES', 'release-notes'],
    ['release-notes', 'release-notes'],
    ['release_notes_2', 'release_notes'],
    ['code_review', 'code review'],
    ['code-review', 'code review'],
    ['nothing', undefined],
    ['', undefined],
  ])('%j → %j', (word, skillName) => {
    expect(findSkillCommand(specs, word)?.skillName).toBe(skillName);
  });
});
