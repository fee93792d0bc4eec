import { describe, expect, it } from 'vitest';
import { parseConfig, type WardenConfig, type WardenConfigInput } from '../config/index.js';
import { classifyConfigChange } from './widening.js';

// approvals.rules as the control plane judges a patch: adding asking is not widening; removing
// or loosening a rule is.

const ANN = { tool: 'message', match: { channel: '#announcements' } };
const DEPLOY = { tool: 'write', match: { path: 'deploy/*' }, approvers: ['role:1', '1001'], quorum: 2 };

const load = (rules: unknown[] | undefined, extra: Record<string, unknown> = {}): WardenConfig => {
  const input: WardenConfigInput = { owners: { discord: ['1001'] }, models: { default: 'anthropic/claude-sonnet-4-5' }, approvals: { ...(rules ? { rules } : {}), ...extra } } as WardenConfigInput;
  const r = parseConfig(input);
  if (!r.ok) throw new Error(r.error.message);
  return r.value.config;
};
const widening = async (before: unknown[] | undefined, after: unknown[] | undefined, extra: [Record<string, unknown>, Record<string, unknown>] = [{}, {}]) =>
  (await classifyConfigChange(load(before, extra[0]), load(after, extra[1]))).widening.map((w) => `${w.path}: ${w.why}`);

describe('approvals.rules changes', () => {
  it.each<[string, unknown[] | undefined, unknown[] | undefined]>([
    ['a first rule', undefined, [ANN]],
    ['a rule appended', [ANN], [ANN, DEPLOY]],
    ['a higher quorum', [DEPLOY], [{ ...DEPLOY, quorum: 3 }]],
    ['ask always instead of on-miss', [ANN], [{ ...ANN, ask: 'always' }]],
    ['approvers narrowed', [DEPLOY], [{ ...DEPLOY, approvers: ['role:1'] }]],
    ['an escalation added', [ANN], [{ ...ANN, escalateAfterSec: 60, escalateTo: ['channel:9'] }]],
    ['a risk line', [ANN], [{ ...ANN, risk: 'posts to everyone' }]],
    ['a rule on url arguments (no egress)', [ANN], [ANN, { tool: 'web_fetch', match: { url: 'http://intranet/*' } }]],
  ])('not widening: %s', async (_label, before, after) => {
    expect(await widening(before, after)).toEqual([]);
  });

  it.each<[string, unknown[] | undefined, unknown[] | undefined, string]>([
    ['every rule removed', [ANN], undefined, 'approvals.rules: removes 1 rule'],
    ['a rule removed', [ANN, DEPLOY], [ANN], 'approvals.rules: removes 1 rule'],
    ['a rule inserted before an old one', [DEPLOY], [ANN, DEPLOY], 'approvals.rules[0]: changes which tools'],
    ['a lower quorum', [DEPLOY], [{ ...DEPLOY, quorum: 1 }], 'approvals.rules[0]: needs fewer approvers'],
    ['on-miss instead of always', [{ ...ANN, ask: 'always' }], [ANN], 'approvals.rules[0]: lets a grant answer'],
    ['an approver added', [DEPLOY], [{ ...DEPLOY, approvers: ['role:1', '1001', '2002'] }], 'approvals.rules[0]: changes who may decide'],
    ['approvers given to a rule that had the platform’s', [ANN], [{ ...ANN, approvers: ['2002'] }], 'approvals.rules[0]: changes who may decide'],
    ['a narrower match', [ANN], [{ ...ANN, match: { channel: '#announcements-2' } }], 'approvals.rules[0]: changes which arguments'],
    ['a narrower conversation', [ANN], [{ ...ANN, where: { provider: 'slack' } }], 'approvals.rules[0]: changes which conversations'],
    ['fewer tools', [{ tools: ['write', 'edit'] }], [{ tools: ['write'] }], 'approvals.rules[0]: changes which tools'],
  ])('widening: %s', async (_label, before, after, expected) => {
    const found = await widening(before, after);
    expect(found.some((w) => w.startsWith(expected))).toBe(true);
  });

  it('a longer timed grant widens; a shorter one does not', async () => {
    expect(await widening([ANN], [ANN], [{}, { timedGrantSec: 7200 }])).toEqual([expect.stringContaining('approvals.timedGrantSec')]);
    expect(await widening([ANN], [ANN], [{}, { timedGrantSec: 600 }])).toEqual([]);
  });
});
