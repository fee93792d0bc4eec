import { describe, expect, it } from 'vitest';
import { memberName, repoConfigInvocation, withoutVersion } from './repo-config.js';

describe('withoutVersion', () => {
  it.each(['pip3.11', 'python3.12', 'pip3', 'node-20', 'node-20.1.2', 'tox', '3.11', '-1', 'a.1', 'a..1', 'a1.', 'a1..2', 'x-', 'x-.1', 'v1.2.3.4', '', '1', 'a-1-2', 'py.3'])(
    '%j as /-?\\d+(\\.\\d+)*$/ takes it off',
    (name) => {
      expect(withoutVersion(name)).toBe(name.replace(/-?\d+(\.\d+)*$/, ''));
    },
  );

  it('memberName drops a version: pip3.11 is pip', () => {
    expect(memberName('/usr/bin/pip3.11')).toBe('pip');
  });

  it('returns at once on a name of 100,000 digits ending in a letter', () => {
    const hostile = `${'1'.repeat(100_000)}x`;
    expect(withoutVersion(hostile)).toBe(hostile);
    expect(memberName(hostile)).toBe(hostile);
  });
});

describe('python -m through repoConfigInvocation', () => {
  it.each([
    [['python3', '-m', 'pytest'], 'python3 -m pytest'],
    [['python3', '-mpytest'], 'python3 -m pytest'],
    [['python', '-Bm', 'pip', 'install', '.'], 'python -m pip'],
    [['python', '-m', 'json.tool'], null],
    [['python', '-cm', 'pytest'], null],
    [['python', '-mpytest\n'], null],
  ])('%j → %j', (argv, binary) => {
    expect(repoConfigInvocation(argv)?.binary ?? null).toBe(binary);
  });

  it('returns at once on a flag of 100,000 m before a line break', () => {
    expect(repoConfigInvocation(['python3', `-${'m'.repeat(100_000)}\n`])).toBeNull();
  });
});
