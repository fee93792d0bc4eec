import picomatch from 'picomatch';
import { describe, expect, it } from 'vitest';
import { parseConfig } from './index.js';
import { compileGlob, toolEntryProblem } from './tool-glob.js';

describe('tool entry validity', () => {
  it.each(['exec', 'web_*', 'sessions_?', '{read,edit}', 'group:fs', 'bundle-mcp', 'srv__tool', '*'])('%j is valid', (entry) => {
    expect(toolEntryProblem(entry)).toBeUndefined();
  });

  it.each([
    ['web_[x', /invalid glob "web_\[x"/],
    ['a{b', /invalid glob "a\{b"/],
    ['exec)', /invalid glob/],
    ['!exec', /negation is not supported/],
    ['web fetch', /no whitespace/],
    ['a/b', /no "\/"/],
    ['  ', /must not be empty/],
  ])('%j is rejected', (entry, message) => {
    expect(toolEntryProblem(entry)).toMatch(message);
  });

  it('compiles a glob that matches whole names only', () => {
    const test = compileGlob('web_*');
    expect([test('web_fetch'), test('xweb_fetch'), test('web_')]).toEqual([true, false, true]);
  });
});

describe('globs of literal text and `*` are matched by string search, exactly as picomatch would', () => {
  const patterns = ['web_*', '*_tool4*', 'plug*_tool1', '*', '**', 'a*b*c', '*a*a*', 'x**y', 'plug1*', '*fetch', 'memory_*', 'e*', '*.*', 'a-b*', 'sessions_*_x', '$*', '*~'];
  const names = ['web_fetch', 'web_', 'xweb_fetch', 'plug1_tool1', 'plug12_tool1', 'plug1_tool14', 'plug3_tool40', 'abc', 'aXbYc', 'ac', 'abbc', 'aa', 'aaa', 'xy', 'x-y', 'fetch', 'exec', 'e', 'a.b', 'a-bc', 'sessions_list_x', '$x', 'a~', 'a/b', 'web_/x', 'plug1/x', ''];
  it.each(patterns)('%s', (pattern) => {
    const re = picomatch.makeRe(pattern, { strictBrackets: true, dot: true });
    const test = compileGlob(pattern);
    for (const name of names) expect([name, test(name)]).toEqual([name, re.test(name)]);
  });
});

describe('config rejects an invalid glob with its key path', () => {
  it.each([
    [{ tools: { deny: ['exec', 'web_[x'] } }, 'tools.deny[1]'],
    [{ tools: { byProvider: { openai: { allow: ['a{b'] } } } }, 'tools.byProvider.openai.allow[0]'],
    [{ agents: { list: [{ id: 'main', tools: { alsoAllow: ['!exec'] } }] } }, 'agents.list[0].tools.alsoAllow[0]'],
    [{ channels: { slack: { channels: { '#general': { tools: { deny: ['x]'] } } } } } }, 'channels.slack.channels["#general"].tools.deny[0]'],
    [{ tools: { toolsBySender: { 'id:1': { deny: ['(a'] } } } }, 'tools.toolsBySender["id:1"].deny[0]'],
  ])('%j → %s', (raw, path) => {
    const result = parseConfig(raw);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.problems.map((p) => p.path)).toContain(path);
  });
});
