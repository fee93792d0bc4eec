import { describe, expect, it } from 'vitest';
import { COMMAND_NAMES, parseCommand } from '../../src/gateway/commands.js';
import { answersPrivately, NATIVE_COMMANDS, slackCommandText, typedCommandText } from './native-commands.js';

describe('native commands', () => {
  it('declares every chat command once', () => {
    expect(NATIVE_COMMANDS.map((c) => c.name).sort()).toEqual([...COMMAND_NAMES].sort());
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
  ])('%s %j is refused with the list of commands', (command, text) => {
    const result = slackCommandText(command, text);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message).toContain('/warden help');
  });
});
