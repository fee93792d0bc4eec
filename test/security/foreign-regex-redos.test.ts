// A regular expression someone else wrote, run by a backtracking engine against text the model
// controls, blocks the one event loop every conversation shares: `^git (-+)+x$` against one
// 32 KiB argument ran for over a minute. The attacker is the model choosing the command, the tool
// arguments or the file names; the patterns are an operator's exec allowlist, a plugin tool's
// JSON Schema, an exec-guard rule, an approval grant. Every row goes through the gate the bot
// uses, with a text on which V8's own engine would not finish (a hang fails the test by its
// limit), and checks the gate decides fail-closed.
import { mkdirSync, mkdtempSync, writeFileSync, chmodSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileRules, decide } from '../../plugins/exec-guard/index.js';
import { globMatch } from '../../src/approvals/glob.js';
import { parseConfig } from '../../src/config/load.js';
import { execConfig } from '../../src/config/schema/exec.js';
import { execPolicyFromConfig } from '../../src/exec/check.js';
import { evaluateExec, MAX_COMMAND_CHARS } from '../../src/exec/decide.js';
import { validateArgs } from '../../src/tools/invoke/validate-args.js';
import { compileLinearRegex } from '../../src/util/linear-regex.js';

const LIMIT = { timeout: 30_000 };
const home = mkdtempSync(path.join(os.tmpdir(), 'warden-redos-'));
const where = { cwd: home, home, pathDirs: ['/usr/bin'] };

function verdict(argPattern: string, command: string): string {
  const policy = execPolicyFromConfig(execConfig.parse({ allowlist: [{ pattern: '/usr/bin/tar', argPattern }] }), []);
  return evaluateExec(command, policy, where).decision;
}

describe('exec allowlist argPatterns written as regexes', () => {
  const long = (n: number) => '-'.repeat(n);
  it.each<[string, string, string, string]>([
    ['nested quantifiers, the failing tail', '^(-+)+x$', `tar ${long(30_000)}`, 'ask'],
    ['overlapping alternation', '^(-|--)+x$', `tar ${long(30_000)}`, 'ask'],
    ['a word list ending in a mismatch', '^(\\w+\\s?)*$', `tar ${'file '.repeat(6_000)}!`, 'ask'],
    ['a polynomial pattern', '^.*.*.*.*=x$', `tar ${'a'.repeat(30_000)}`, 'ask'],
    ['the longest command exec takes', '^(-+)+x$', `tar ${long(MAX_COMMAND_CHARS - 4)}`, 'ask'],
    ['within the budget, short and hostile', '^(-+)+x$', `tar ${long(2_000)}`, 'ask'],
    ['a matching command within the budget still runs', '^(-+)+x$', `tar ${long(2_000)}x`, 'allow'],
    ['a matching command past the budget asks', '^-tf .*$', `tar -tf ${'a'.repeat(20_000)}`, 'ask'],
    ['the same command within the budget runs', '^-tf .*$', `tar -tf ${'a'.repeat(2_000)}`, 'allow'],
  ])('%s: %s', (_what, argPattern, command, expected) => {
    expect(verdict(argPattern, command)).toBe(expected);
  }, LIMIT.timeout);

  it.each<[string, RegExp]>([
    ['^(?!push)', /tools\.exec\.allowlist\.0\.argPattern|allowlist\[0\]\.argPattern/],
    ['^(a)\\1', /argPattern/],
    ['^(?<=x)', /argPattern/],
  ])('a config argPattern %s no linear engine can run is refused, by key path', (argPattern, keyPath) => {
    const loaded = parseConfig({ tools: { exec: { allowlist: [{ pattern: '/usr/bin/git', argPattern }] } } });
    expect(loaded.ok).toBe(false);
    if (loaded.ok) return;
    const problem = loaded.error.problems.find((p) => /argPattern/.test(p.path) || /argPattern/.test(p.message));
    expect(`${problem?.path} ${problem?.message}`).toMatch(keyPath);
    expect(problem?.message).toMatch(/linear-time engine/);
  });
});

describe('allowlist path globs against a path the model created', () => {
  it('a glob with several ** decides a deep path at once', () => {
    let dir = path.join(home, 'w');
    for (let i = 0; i < 60; i++) dir = path.join(dir, 'a'.repeat(50));
    mkdirSync(dir, { recursive: true });
    const exe = path.join(dir, 'tool');
    writeFileSync(exe, '#!/bin/sh\n');
    chmodSync(exe, 0o755);
    const policy = execPolicyFromConfig(execConfig.parse({ allowlist: [{ pattern: `${home}/**a**a**a**a**b/tool` }] }), []);
    expect(evaluateExec(exe, policy, where).decision).toBe('ask');
  }, LIMIT.timeout);
});

describe('JSON Schema patterns of tool arguments (a plugin tool writes them; MCP schemas arrive without)', () => {
  const schema = (pattern: string) => ({ type: 'object', properties: { name: { type: 'string', pattern } } });
  it.each<[string, string, string, RegExp | null]>([
    ['nested quantifiers', '^(a+)+$', `${'a'.repeat(40)}!`, /must match/],
    ['nested quantifiers on a long value', '^(a+)+$', `${'a'.repeat(100_000)}!`, /characters long; the schema's pattern is checked on at most/],
    ['a lookahead (unsafe to run, so unchecked would be fail-open)', '^(?=.*x)(a+)+$', 'aaa', /cannot be checked: .*lookahead/],
    ['a pattern that reads only without u', '^[a-z\\-]+$', 'abc-def', null],
    ['a plain pattern', '^[a-z0-9-]{1,63}$', 'my-repo', null],
  ])('%s', (_what, pattern, value, problem) => {
    const problems = validateArgs(schema(pattern), { name: value });
    if (problem === null) expect(problems).toEqual([]);
    else expect(problems[0]?.message).toMatch(problem);
  }, LIMIT.timeout);
});

describe('exec-guard rules', () => {
  const GUARD = {
    obfuscated: 'approve' as const,
    rules: [{ id: 'prod', pattern: '^(\\w+\\s?)*prod$', action: 'deny' as const }],
  };
  const rules = compileRules(GUARD, compileLinearRegex);
  const ctx = { toolName: 'exec', conversation: { provider: 'discord', chat: 'channel' as const, channelId: 'C1', channelName: 'general' } };
  it.each<[string, string, 'block' | 'none']>([
    ['a hostile command within the budget', `${'aaaa '.repeat(400)}!`, 'none'],
    ['the rule matching', 'ssh to prod', 'block'],
    ['a command past the budget counts as matching', `${'aaaa '.repeat(6_000)}!`, 'block'],
  ])('%s', (_what, command, expected) => {
    const result = decide(rules, GUARD, 'exec', { command }, ctx);
    expect(result?.block ? 'block' : 'none').toBe(expected);
  }, LIMIT.timeout);

  it('a rule with a lookahead stops the plugin from loading', () => {
    expect(() => compileRules({ obfuscated: 'approve', rules: [{ pattern: 'ssh(?!.*staging)', action: 'deny' }] }, compileLinearRegex)).toThrow(/negative lookahead/);
  });
});

describe('approval grants and MCP tool filters (star-only globs)', () => {
  it.each<[string, string, boolean]>([
    ['*a*a*a*a*a*b', 'a'.repeat(200_000), false],
    ['git *--force*', `git ${'-'.repeat(200_000)}`, false],
    ['git push *', 'git push origin main', true],
  ])('%s', (pattern, text, expected) => {
    expect(globMatch(pattern, text)).toBe(expected);
  }, LIMIT.timeout);
});
