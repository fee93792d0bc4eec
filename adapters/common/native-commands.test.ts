import { describe, expect, it } from 'vitest';
import { COMMAND_NAMES, parseCommand, WEB_ONLY_COMMANDS } from '../../src/gateway/commands.js';
import { skillCommandSpecs } from '../../src/skills/commands.js';
import { testSkill } from '../../src/skills/testing.js';
import { reservedCommandNames } from '../../src/gateway/command-text.js';
import { answersPrivately, NATIVE_COMMANDS, slackCommandText, typedCommandText, typedSkillText } from './native-commands.js';

describe('native commands', () => {
  it('declares every chat command once, but the web chat\'s own', () => {
    expect(NATIVE_COMMANDS.map((c) => c.name).sort()).toEqual(COMMAND_NAMES.filter((n) => !WEB_ONLY_COMMANDS.includes(n)).sort());
    expect(WEB_ONLY_COMMANDS).toEqual(['new']);
  });

  it.each([
    ['release_notes', ' v1.2 ', '/release_notes v1.2'],
    ['release_notes', undefined, '/release_notes'],
    ['run', 'echo "a b"', '/run echo "a b"'],
  ])('skill %s %j is typed as %s', (name, input, typed) => {
    expect(typedSkillText(name, input)).toBe(typed);
  });

  it.each([
    ['tools', {}, '/tools'],
    ['exec', { command: '  ls -la ' }, '/exec ls -la'],
    ['approve', { decision: 'deny', id: 'a1b2' }, '/approve a1b2 deny'],
    ['exec', {}, '/exec'],
  ] as const)('%s %j is typed as %s', (name, values, typed) => {
    expect(typedCommandText(name, values)).toBe(typed);
    expect(parseCommand(typed)?.name).toBe(name);
  });

  it.each([
    ['tools', true],
    ['status', true],
    ['help', true],
    ['skills', true],
    ['exec', false],
    ['stop', false],
    ['approve', false],
  ])('/%s answers privately: %s', (name, expected) => {
    expect(answersPrivately(name)).toBe(expected);
  });
});

describe('slackCommandText', () => {
  it.each([
    ['/warden', 'tools', '/tools'],
    ['/warden', '  exec  ls -la ', '/exec ls -la'],
    ['/warden', 'EXEC echo Hi', '/exec echo Hi'],
    ['/warden', '', '/help'],
    ['/warden-exec', 'uname -a', '/exec uname -a'],
    ['/warden-status', '', '/status'],
    ['/warden', 'approve a1 deny', '/approve a1 deny'],
  ])('%s %j → %s', (command, text, typed) => {
    const result = slackCommandText(command, text);
    expect(result).toMatchObject({ ok: true, text: typed });
    if (result.ok) expect(parseCommand(result.text)?.name).toBe(result.name);
  });

  it.each([
    ['/warden', 'hello there'],
    ['/warden-frobnicate', ''],
    ['/warden', '42'],
  ])('%s %j is refused with the list of commands', (command, text) => {
    const result = slackCommandText(command, text);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message).toContain('/warden help');
  });

  const skills = skillCommandSpecs([testSkill('release-notes'), testSkill('status')], reservedCommandNames());
  it.each([
    ['/warden', 'release-notes v1.2', 'release_notes', '/release-notes v1.2'],
    ['/warden', 'release_notes v1.2', 'release_notes', '/release_notes v1.2'],
    ['/warden-release-notes', 'v1.2', 'release_notes', '/release-notes v1.2'],
    ['/warden-release_notes', '', 'release_notes', '/release_notes'],
    ['/warden', 'skill release-notes v1.2', 'release_notes', '/skill release-notes v1.2'],
    ['/warden', 'status', 'status', '/status'],
    ['/warden', 'status_2 x', 'status_2', '/status_2 x'],
  ])('with skills, %s %j is the %s command typed as %s', (command, text, name, typed) => {
    expect(slackCommandText(command, text, skills)).toEqual({ ok: true, name, text: typed });
  });

  it('an unknown word close to a command gets a did-you-mean', () => {
    const result = slackCommandText('/warden', 'release-note v1', skills);
    expect(result).toEqual({ ok: false, message: expect.stringContaining('did you mean /release_notes?') });
    const typo = slackCommandText('/warden-statsu', '', skills);
    expect(typo).toEqual({ ok: false, message: expect.stringContaining('did you mean /status?') });
  });
});
