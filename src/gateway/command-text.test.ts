import { describe, expect, it } from 'vitest';
import { skillCommandSpecs } from '../skills/commands.js';
import { testSkill } from '../skills/testing.js';
import { classifyCommandText, isAddressedCommand, reservedCommandNames, unknownCommandText } from './command-text.js';

const skills = skillCommandSpecs(
  [testSkill('release-notes'), testSkill('run', { commandDispatch: { kind: 'tool', tool: 'exec', argMode: 'raw' } }), testSkill('status'), testSkill('skill')],
  reservedCommandNames(),
);

/** What the router does with a text: the kind, and the command or skill it names. */
function verdict(text: string, help?: string): string {
  const c = classifyCommandText(text, { skills, help });
  switch (c.kind) {
    case 'builtin':
      return `builtin ${c.command.name}${c.command.args ? ` [${c.command.args}]` : ''}`;
    case 'skill':
      return `skill ${c.spec.name}${c.args ? ` [${c.args}]` : ''}`;
    case 'plugin':
      return `plugin ${c.command.command.name}${c.command.args ? ` [${c.command.args}]` : ''}`;
    case 'answer':
      return `answer: ${c.text}`;
    case 'message':
      return 'message';
  }
}

describe('classifyCommandText', () => {
  it.each([
    // Built-ins first, whatever skills exist.
    ['/tools', 'builtin tools'],
    ['/STATUS', 'builtin status'],
    ['/exec ls -la', 'builtin exec [ls -la]'],
    ['/warden exec ls', 'builtin exec [ls]'],
    ['/warden', 'builtin help'],
    ['/new', 'builtin new'],
    // Skill commands by their command name, the skill's name, or either with - and _ as one.
    ['/release_notes v1.2', 'skill release_notes [v1.2]'],
    ['/release-notes v1.2', 'skill release_notes [v1.2]'],
    ['/Release-Notes', 'skill release_notes'],
    ['/warden release-notes v1.2', 'skill release_notes [v1.2]'],
    ['/release_notes  multi\nline  ', 'skill release_notes [multi\nline]'],
    ['/run echo "a b"', 'skill run [echo "a b"]'],
    // A skill named like a built-in lost the name: /status is the built-in, /status_2 the skill.
    ['/status_2', 'skill status_2'],
    // The generic entry point.
    ['/skill release-notes v1.2', 'skill release_notes [v1.2]'],
    ['/skill run pwd', 'skill run [pwd]'],
    ['/skill skill_2', 'skill skill_2'],
    // Plain messages, even when they start with a slash.
    ['hello', 'message'],
    ['please /tools', 'message'],
    ['/etc/hosts is empty', 'message'],
    ['/ 5', 'message'],
    ['/42', 'message'],
    ['', 'message'],
  ])('%j → %s', (text, expected) => {
    expect(verdict(text)).toBe(expected);
  });

  it.each([
    ['/frobnicate', 'answer: Unknown command /frobnicate. /help lists the commands; nothing was sent to the model.'],
    ['/statsu', 'answer: Unknown command /statsu (did you mean /status?). /help lists the commands; nothing was sent to the model.'],
    ['/release_note v1', 'answer: Unknown command /release_note (did you mean /release_notes?). /help lists the commands; nothing was sent to the model.'],
    ['/toolsx', 'answer: Unknown command /toolsx (did you mean /tools?). /help lists the commands; nothing was sent to the model.'],
    ['/tools-please', 'answer: Unknown command /tools-please. /help lists the commands; nothing was sent to the model.'],
    ['/skill', 'answer: usage: /skill <name> [input]; skills: release_notes, run, status_2, skill_2'],
    ['/skill releese-notes', 'answer: No skill "releese-notes" (did you mean "release-notes"?). /skills lists the skills.'],
  ])('%j is answered without the model: %s', (text, expected) => {
    expect(verdict(text)).toBe(expected);
  });

  it('says how help is spelled where the answer is read', () => {
    expect(verdict('/frobnicate', '`/warden help`')).toContain('`/warden help` lists the commands');
  });
});

describe('isAddressedCommand', () => {
  it.each([
    ['/tools', true],
    ['/release-notes v1', true],
    ['/frobnicate', false],
    ['hi', false],
  ])('%j → %s', (text, expected) => {
    expect(isAddressedCommand(text, skills)).toBe(expected);
  });
});

describe('unknownCommandText', () => {
  it('suggests only what is close', () => {
    expect(unknownCommandText('zzzzzzzz', skills)).not.toContain('did you mean');
    expect(unknownCommandText('hlp')).toContain('(did you mean /help?)');
  });
});

describe('plugin commands in the one classifier', () => {
  const incident = { name: 'incident', pluginId: 'incidents', description: 'open or list incidents', ownerOnly: false, handler: () => 'ok' };
  const plugins = { get: (n: string) => (n === 'incident' ? incident : undefined), values: () => [incident] } as never;
  it.each([
    ['/incident open db down', 'plugin incident [open db down]'],
    ['/warden incident list', 'plugin incident [list]'],
    ['/status', 'builtin status'],
    ['/incidnet', 'answer: Unknown command /incidnet (did you mean /incident?). /help lists the commands; nothing was sent to the model.'],
  ])('%s → %s', (text, expected) => {
    const c = classifyCommandText(text, { skills, plugins });
    const got = c.kind === 'plugin' ? `plugin ${c.command.command.name}${c.command.args ? ` [${c.command.args}]` : ''}` : c.kind === 'builtin' ? `builtin ${c.command.name}` : c.kind === 'answer' ? `answer: ${c.text}` : c.kind;
    expect(got).toBe(expected);
  });
  it('a plugin command is addressed to the bot like a built-in', () => {
    expect(isAddressedCommand('/incident list', skills, plugins)).toBe(true);
    expect(isAddressedCommand('/incident list', skills)).toBe(false);
  });
});
