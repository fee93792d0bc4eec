import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { HookToolContext } from '../../src/hooks/types.js';
import { createPluginRuntime } from '../../src/plugins/runtime.js';
import { config } from '../../src/policy/testing.js';
import { compileLinearRegex } from '../../src/util/linear-regex.js';
import { compileRules, decide, type ExecGuardConfig } from './index.js';

const PLUGINS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const GUARD: ExecGuardConfig = {
  obfuscated: 'approve',
  rules: [
    { id: 'prod-ssh', pattern: '\\bssh\\b.*\\bprod', action: 'deny', channels: ['#general', 'support'], reason: 'no ssh to production from here' },
    { id: 'deploys', contains: ['kubectl apply', 'terraform apply'], action: 'approve', reason: 'deploys need a second pair of eyes', severity: 'critical' },
    { id: 'rm-dm', pattern: '\\brm\\s+-rf\\b', action: 'deny', channels: ['dm'] },
  ],
};
const rules = compileRules(GUARD, compileLinearRegex);
const ctx = (channelName: string | undefined, chat: 'channel' | 'dm' = 'channel'): HookToolContext => ({
  toolName: 'exec',
  conversation: { provider: 'discord', chat, ...(channelName ? { channelId: `C-${channelName}`, channelName } : {}) },
});
const exec = (command: string, where: HookToolContext) => decide(rules, GUARD, 'exec', { command }, where);

describe('exec-guard rules', () => {
  it.each([
    ['ssh deploy@prod-db', 'general', 'block'],
    ['ssh deploy@prod-db', 'Support', 'block'],
    ['ssh deploy@prod-db', 'dev', 'none'],
    ['kubectl apply -f x.yaml', 'dev', 'approve'],
    ['terraform apply', 'general', 'approve'],
    ['ls -la', 'general', 'none'],
    ['rm -rf build', undefined, 'block'],
  ] as const)('%s in #%s → %s', (command, channel, expected) => {
    const out = exec(command, channel ? ctx(channel) : ctx(undefined, 'dm'));
    const got = out?.block ? 'block' : out?.requireApproval ? 'approve' : 'none';
    expect(got).toBe(expected);
  });

  it('says why, and where', () => {
    expect(exec('ssh prod', ctx('general'))).toEqual({ block: true, blockReason: 'exec-guard: no ssh to production from here in #general. The command did not run; do not retry it.' });
    expect(exec('kubectl apply -f a', ctx('dev'))?.requireApproval).toMatchObject({ title: 'exec-guard: deploys need a second pair of eyes', severity: 'critical', description: 'Command in #dev:\nkubectl apply -f a' });
  });

  it('loads as a plugin with its rules from the config; a bad pattern stops it loading', async () => {
    const good = createPluginRuntime(config({ plugins: { paths: [PLUGINS], allow: ['exec-guard'], entries: { 'exec-guard': { config: { rules: [{ pattern: 'prod', action: 'deny' }] } } } } }), PLUGINS);
    await good.load(5_000);
    expect(good.plugins[0]).toMatchObject({ id: 'exec-guard', status: 'loaded', hooks: [{ name: 'before_tool_call', priority: 100, toolMatcher: ['exec', 'process'] }] });
    const bad = createPluginRuntime(config({ plugins: { paths: [PLUGINS], allow: ['exec-guard'], entries: { 'exec-guard': { config: { rules: [{ pattern: '(', action: 'deny' }] } } } } }), PLUGINS);
    await bad.load(5_000);
    expect(bad.plugins[0]).toMatchObject({ status: 'error', why: expect.stringContaining('exec-guard rules[0]: pattern not a regular expression') });
    const backtracking = createPluginRuntime(config({ plugins: { paths: [PLUGINS], allow: ['exec-guard'], entries: { 'exec-guard': { config: { rules: [{ pattern: 'ssh(?!.*staging)', action: 'deny' }] } } } } }), PLUGINS);
    await backtracking.load(5_000);
    expect(backtracking.plugins[0]).toMatchObject({ status: 'error', why: expect.stringContaining('exec-guard rules[0]: pattern uses a negative lookahead') });
    const unknownKey = createPluginRuntime(config({ plugins: { paths: [PLUGINS], allow: ['exec-guard'], entries: { 'exec-guard': { config: { rules: [{ pattern: 'x', action: 'allow' }] } } } } }), PLUGINS);
    expect(unknownKey.plugins[0]).toMatchObject({ status: 'error', why: expect.stringContaining('plugins.entries.exec-guard.config.rules[0].action: must be equal to one of the allowed values') });
  });
});
