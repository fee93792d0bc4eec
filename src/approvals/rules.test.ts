import { describe, expect, it } from 'vitest';
import { parseConfig, type WardenConfig } from '../config/index.js';
import { approvalRuleFor, explainApprovalRules, type RuleCall } from './rules.js';

const load = (rules: unknown[], extra: Record<string, unknown> = {}): WardenConfig => {
  const r = parseConfig({ approvals: { rules }, ...extra });
  if (!r.ok) throw new Error(r.error.message);
  return r.value.config;
};

const turn = (over: Partial<RuleCall['turn']> = {}): RuleCall['turn'] => ({ provider: 'discord', agentId: 'main', guildId: 'G1', guildName: 'Acme', channelId: 'C1', channelName: 'dev', senderId: 'U1', ...over });
const call = (tool: string, params: Record<string, unknown> = {}, over: Partial<RuleCall['turn']> = {}): RuleCall => ({ tool, params, turn: turn(over) });

describe('approvalRuleFor: which rule a call falls under (first match wins)', () => {
  const config = load([
    { tool: 'message', match: { channel: '/^(#announcements|C9)$/' }, risk: 'posts to #announcements' },
    { tools: ['write', 'edit'], match: { path: 'deploy/*' } },
    { tool: 'github__*' },
    { tool: 'group:web', where: { channel: '#ops' } },
    { tool: 'web_fetch', match: { url: 'http://intranet.*' }, where: { provider: 'slack' } },
    { tool: 'exec', match: { command: '/rm\\s+-rf/' }, quorum: 2, approvers: ['role:7'] },
    { tool: 'sessions_send', match: { 'target.priority': 3 } },
    { tool: 'cron', where: { agent: 'ops' } },
    { tool: 'message', where: { senderGroup: ['group:interns'] } },
  ], { accessGroups: { interns: ['U5'] } });

  it.each<[string, RuleCall, string | undefined]>([
    ['a message to #announcements', call('message', { channel: '#announcements', text: 'hi' }), 'approvals.rules[0]'],
    ['to its id too (the regex names both)', call('message', { channel: 'C9', text: 'hi' }), 'approvals.rules[0]'],
    ['a message elsewhere', call('message', { channel: '#random', text: 'hi' }), undefined],
    ['no channel argument: nothing to match', call('message', { text: 'hi' }), undefined],
    ['write under deploy/', call('write', { path: 'deploy/prod.yaml' }), 'approvals.rules[1]'],
    ['edit under deploy/ (tools list)', call('edit', { path: 'deploy/a' }), 'approvals.rules[1]'],
    ['apply_patch follows write (coupled)', call('apply_patch', { path: 'deploy/a' }), 'approvals.rules[1]'],
    ['glob is case-blind (asks more, never less)', call('write', { path: 'DEPLOY/prod.yaml' }), 'approvals.rules[1]'],
    ['write elsewhere', call('write', { path: 'src/a.ts' }), undefined],
    ['an MCP server glob', call('github__create_issue', { title: 'x' }), 'approvals.rules[2]'],
    ['another MCP server', call('jira__delete', {}), undefined],
    ['a group in a channel named by #name', call('web_search', { query: 'x' }, { channelName: 'ops', channelId: 'C2' }), 'approvals.rules[3]'],
    ['the group elsewhere', call('web_search', { query: 'x' }), undefined],
    ['a provider-bound rule on its provider', call('web_fetch', { url: 'http://intranet.local/x' }, { provider: 'slack' }), 'approvals.rules[4]'],
    ['and not on another', call('web_fetch', { url: 'http://intranet.local/x' }), undefined],
    ['a linear regex over a command', call('exec', { command: 'cd / && rm  -rf x' }), 'approvals.rules[5]'],
    ['a literal number at a nested path', call('sessions_send', { target: { priority: 3 } }), 'approvals.rules[6]'],
    ['a different number', call('sessions_send', { target: { priority: '3' } }), undefined],
    ['an agent-bound rule', call('cron', {}, { agentId: 'ops' }), 'approvals.rules[7]'],
    ['another agent', call('cron', {}, { agentId: 'main' }), undefined],
    ['a sender in the group (no earlier rule)', call('message', { text: 'x' }, { senderId: 'U5' }), 'approvals.rules[8]'],
    ['a prototype key is no argument', call('message', { channel: '#announcements', __proto__: { x: 1 } } as never), 'approvals.rules[0]'],
  ])('%s', (_label, c, expected) => {
    expect(approvalRuleFor(config, c)?.path).toBe(expected);
  });

  it('names the rule’s risk line, else the tool’s own', () => {
    expect(approvalRuleFor(config, call('message', { channel: '#announcements' }))?.risk).toBe('posts to #announcements');
    expect(approvalRuleFor(config, call('write', { path: 'deploy/x' }))?.risk).toBe('creates or overwrites files in the workspace');
    expect(approvalRuleFor(config, call('github__x'))?.risk).toContain('MCP server github');
  });

  it('a rule whose memberships are unknown at call time asks (role entries in senderGroup)', () => {
    const roles = load([{ tool: 'message', where: { senderGroup: ['role:9'] } }]);
    expect(approvalRuleFor(roles, call('message', {}))?.path).toBe('approvals.rules[0]');
    expect(approvalRuleFor(roles, call('message', {}, { provider: 'web' }))).toBeUndefined();
  });

  it('a grant key follows the rule’s text, not its place', () => {
    const a = load([{ tool: 'write' }, { tool: 'message' }]);
    const b = load([{ tool: 'message' }]);
    expect(approvalRuleFor(a, call('message'))!.key).toBe(approvalRuleFor(b, call('message'))!.key);
    expect(approvalRuleFor(a, call('write'))!.key).not.toBe(approvalRuleFor(b, call('message'))!.key);
  });

  it('explains the rules that can ask for a tool here, stopping at one that catches every call', () => {
    const explained = explainApprovalRules(load([{ tool: 'message', match: { channel: '#a' } }, { tool: 'message' }, { tool: 'message', quorum: 2 }]), 'message', turn());
    expect(explained.map((e) => [e.path, e.applies])).toEqual([
      ['approvals.rules[0]', 'when'],
      ['approvals.rules[1]', 'always'],
    ]);
  });
});

describe('approvals.rules in the config', () => {
  it.each<[string, unknown, string]>([
    ['neither tool nor tools', { match: { a: 'b' } }, 'exactly one of tool or tools'],
    ['both', { tool: 'a', tools: ['b'] }, 'exactly one of tool or tools'],
    ['a bad glob', { tool: 'a[' }, 'invalid glob'],
    ['a backtracking regex', { tool: 'exec', match: { command: '/(a+)\\1/' } }, 'approvals.rules[0].match.command: regex not usable'],
    ['unknown flags', { tool: 'exec', match: { command: '/x/iu' } }, 'not supported'],
    ['escalation without a target', { tool: 'exec', escalateAfterSec: 5 }, 'escalateTo'],
    ['a quorum of 0', { tool: 'exec', quorum: 0 }, 'quorum'],
    ['an unknown key', { tool: 'exec', approver: ['1'] }, 'approver'],
  ])('refuses %s, naming the key', (_label, rule, message) => {
    const r = parseConfig({ approvals: { rules: [rule] } });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.message).toContain(message);
  });

  it('reads `/srv/*` as a glob, not a regex', () => {
    const config = load([{ tool: 'write', match: { path: '/srv/*' } }]);
    expect(approvalRuleFor(config, call('write', { path: '/srv/app' }))?.path).toBe('approvals.rules[0]');
  });
});
