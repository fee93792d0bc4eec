import { describe, expect, it } from 'vitest';
import { ALWAYS, hardenedGitEnv, neutralisationsFor } from './git-env.js';

const listing = (...pairs: Array<[string, string]>) => pairs.map(([k, v]) => `${k}\n${v}\0`).join('');

describe('neutralisationsFor: the repository keys that name a program', () => {
  it.each<[string, string, string | null]>([
    ['filter.lfs.clean', 'x', ''],
    ['filter.Evil.smudge', 'x', ''],
    ['filter.evil.process', 'x', ''],
    ['filter.evil.required', 'true', null],
    ['diff.evil.textconv', 'x', 'cat'],
    ['diff.evil.command', 'x', ''],
    ['diff.external', 'x', ''],
    ['diff.evil.xfuncname', 'x', null],
    ['merge.evil.driver', 'x', ''],
    ['core.alternaterefscommand', 'x', ''],
    ['trailer.sign.cmd', 'x', ''],
    ['browser.evil.cmd', 'x', 'false'],
    ['difftool.evil.path', 'x', 'false'],
    ['hook.lint.command', 'x', 'false'],
    ['submodule.sub.update', '!sh', 'none'],
    ['submodule.sub.update', 'rebase', null],
    ['core.fsmonitor', 'x', null],
    ['user.name', 'x', null],
  ])('%s = %s → %j', (key, value, neutral) => {
    const found = neutralisationsFor(listing([key, value]));
    expect(found).toEqual(neutral === null ? [] : [{ key, value: neutral }]);
  });
  it('keeps the subsection as written (it is case-sensitive) and reads records without a value', () => {
    expect(neutralisationsFor('filter.A.B.clean\nx\0diff.external\0')).toEqual([
      { key: 'filter.A.B.clean', value: '' },
      { key: 'diff.external', value: '' },
    ]);
  });
});

describe('hardenedGitEnv', () => {
  it('numbers every key after the fixed ones and keeps git above the workspace out of reach', () => {
    const env = hardenedGitEnv({ workspace: '/srv/ws', discovered: [{ key: 'filter.x.clean', value: '' }] });
    expect(env.GIT_CONFIG_COUNT).toBe(String(ALWAYS.length + 1));
    expect(env[`GIT_CONFIG_KEY_${ALWAYS.length}`]).toBe('filter.x.clean');
    expect(env[`GIT_CONFIG_VALUE_${ALWAYS.length}`]).toBe('');
    expect(env).toMatchObject({ GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_CEILING_DIRECTORIES: '/srv', GIT_ALLOW_PROTOCOL: 'git:http:https:ssh' });
  });
});
