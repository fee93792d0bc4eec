// Attacker table for rule approvals (approvals.rules): quorum votes, the requester's own vote,
// role claims, replayed clicks, two instances on one PostgreSQL, and a card decided after the
// config changed. Each row is an attack; each must leave the call un-allowed (or allowed once).
import { afterEach, describe, expect, it } from 'vitest';
import { freshStoreTarget, ENGINES } from '../store-engines.js';
import { InstanceRegistry } from '../../src/cluster/instances.js';
import { parseConfig, type WardenConfig } from '../../src/config/index.js';
import { EventBus } from '../../src/events/events.js';
import { openWardenStore } from '../../src/app/migrations.js';
import { ApprovalService } from '../../src/approvals/service.js';
import type { ApprovalActor, ApprovalRequestContext, ApprovalRequestInput } from '../../src/approvals/types.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const LEADS = '500';
const configWith = (extra: Record<string, unknown> = {}): WardenConfig => {
  const parsed = parseConfig({ owners: { discord: ['OWNER'] }, approvals: { waitSec: 0 }, accessGroups: { oncall: ['B2'] }, ...extra });
  if (!parsed.ok) throw parsed.error;
  return parsed.value.config;
};

const CTX: ApprovalRequestContext = { agentId: 'main', sessionKey: 'agent:main:discord:channel:C1', provider: 'discord', channelId: 'C1', requesterId: 'A1' };
const RULE_INPUT = (approvers: string[] = [`role:${LEADS}`, 'group:oncall'], quorum = 2): ApprovalRequestInput => ({
  kind: 'tool',
  tool: 'message',
  title: 'message under approvals.rules[0]',
  preview: '{"channel":"#announcements"}',
  fullText: '{"channel":"#announcements"}',
  rule: { path: 'approvals.rules[0]', approvers, quorum },
  scopedGrants: true,
  grant: { pattern: 'message', argPattern: '{"channel":"#announcements"}', ruleKey: 'r_x' },
});
const lead = (userId: string): ApprovalActor => ({ provider: 'discord', userId, roleIds: [LEADS], via: { kind: 'typed' } });

async function instance(target: { dataDir: string; url: string | undefined }, config: WardenConfig | (() => WardenConfig) = configWith()) {
  const opened = await openWardenStore(target);
  if (!opened.ok) throw new Error(opened.error.message);
  const store = opened.store;
  const instances = target.url ? new InstanceRegistry(store.db, { leaseMs: 2_000, role: 'server' }) : undefined;
  await instances?.start();
  const live = typeof config === 'function' ? config : () => config;
  const approvals = new ApprovalService({
    store,
    config: {
      get owners() {
        return live().owners;
      },
      get approvals() {
        return live().approvals;
      },
      get accessGroups() {
        return live().accessGroups;
      },
    },
    events: new EventBus(),
    instances,
    externalPollMs: 100,
    pollMs: 20,
  });
  cleanups.push(async () => {
    approvals.shutdown();
    await instances?.stop();
    await store.close();
  });
  return approvals;
}

describe.each(ENGINES)('quorum approvals (%s)', (engine) => {
  it.each<[string, ApprovalActor, string]>([
    ['the requester, in the role', lead('A1'), 'not-approver'],
    ['the requester, spelled in another case', lead('a1'), 'not-approver'],
    ['the requester as owner', { provider: 'discord', userId: 'OWNER', via: { kind: 'typed' } }, 'not-approver'],
    ['an owner not in the rule', { provider: 'discord', userId: 'OWNER', via: { kind: 'typed' } }, 'not-approver'],
    ['a role claimed on another platform (Slack has no roles)', { provider: 'slack', userId: 'B1', roleIds: [LEADS], via: { kind: 'typed' } }, 'not-approver'],
    ['a role id sent as a user group', { provider: 'discord', userId: 'B1', usergroupIds: [LEADS], via: { kind: 'typed' } }, 'not-approver'],
    ['a member of no listed role', { provider: 'discord', userId: 'B1', roleIds: ['999'], via: { kind: 'typed' } }, 'not-approver'],
    ['a role member', lead('B1'), 'counted'],
    ['a member through an access group', { provider: 'discord', userId: 'B2', via: { kind: 'typed' } }, 'counted'],
  ])('%s → %s', async (_label, actor, expected) => {
    const approvals = await instance(await freshStoreTarget(engine));
    const ctx = _label.includes('as owner') ? { ...CTX, requesterId: 'OWNER' } : CTX;
    const request = await approvals.open(RULE_INPUT(_label.includes('as owner') ? [`role:${LEADS}`, 'OWNER'] : undefined), ctx);
    const result = await approvals.resolve(request.id, 'allow-once', actor);
    expect(result.kind).toBe(expected);
    expect((await approvals.get(request.id))!.status).toBe('pending');
  });

  it('a replayed vote counts once; two distinct approvers allow once, and later clicks change nothing', async () => {
    const approvals = await instance(await freshStoreTarget(engine));
    const request = await approvals.open(RULE_INPUT(), CTX);
    expect((await approvals.resolve(request.id, 'allow-once', lead('B1'))).kind).toBe('counted');
    expect((await approvals.resolve(request.id, 'allow-once', lead('B1'))).kind).toBe('counted');
    expect((await approvals.get(request.id))!.votes).toHaveLength(1);
    expect(request.allowedDecisions).toEqual(['allow-once', 'deny']);
    const last = await approvals.resolve(request.id, 'allow-once', lead('C1'));
    expect(last.kind).toBe('resolved');
    expect((await approvals.get(request.id))!).toMatchObject({ status: 'allow-once', votes: [{ by: 'discord:B1' }, { by: 'discord:C1' }] });
    expect((await approvals.resolve(request.id, 'allow-once', lead('D1'))).kind).toBe('already-resolved');
    expect((await approvals.resolve(request.id, 'deny', lead('D1'))).kind).toBe('already-resolved');
  });

  it('one deny ends it, with its reason; a quorum offers no grant to click', async () => {
    const approvals = await instance(await freshStoreTarget(engine));
    const request = await approvals.open(RULE_INPUT(), CTX);
    await approvals.resolve(request.id, 'allow-once', lead('B1'));
    expect((await approvals.resolve(request.id, 'allow-always', lead('C1'))).kind).toBe('decision-not-allowed');
    const denied = await approvals.resolve(request.id, 'deny', lead('C1'), { reason: 'not\u0007 today\n' });
    expect(denied.kind).toBe('resolved');
    expect((await approvals.get(request.id))!).toMatchObject({ status: 'deny', denyReason: 'not  today' });
  });

  it('a card asked under a rule keeps the approvers it was asked with after a config reload', async () => {
    let config = configWith({ accessGroups: { oncall: ['B2'] } });
    const approvals = await instance(await freshStoreTarget(engine), () => config);
    const request = await approvals.open(RULE_INPUT(['group:oncall'], 1), CTX);
    // The reload empties the group: membership is read at the click, so B2 no longer decides.
    config = configWith({ accessGroups: { oncall: [] } });
    expect((await approvals.resolve(request.id, 'allow-once', { provider: 'discord', userId: 'B2', via: { kind: 'typed' } })).kind).toBe('not-approver');
    // And the platform's owner (not on the card's list) is still refused.
    expect((await approvals.resolve(request.id, 'allow-once', { provider: 'discord', userId: 'OWNER', via: { kind: 'typed' } })).kind).toBe('not-approver');
  });
});

describe('quorum across two instances on one PostgreSQL', () => {
  it('votes at both instances at once: every vote is counted, the call is allowed exactly once', async () => {
    const target = await freshStoreTarget('postgres');
    const a = await instance(target);
    const b = await instance(target);
    for (let round = 0; round < 5; round++) {
      const request = await a.open(RULE_INPUT([`role:${LEADS}`], 3), CTX);
      // Five approvers click at once, spread over both instances, each twice (a replay).
      const clicks = ['B1', 'C1', 'D1', 'E1', 'F1'].flatMap((u, i) => [(i % 2 === 0 ? a : b).resolve(request.id, 'allow-once', lead(u)), (i % 2 === 0 ? b : a).resolve(request.id, 'allow-once', lead(u))]);
      const results = await Promise.all(clicks);
      expect(results.filter((r) => r.kind === 'resolved')).toHaveLength(1);
      const final = (await a.get(request.id))!;
      expect(final.status).toBe('allow-once');
      expect(final.votes).toHaveLength(3);
      expect(new Set(final.votes!.map((v) => v.by)).size).toBe(3);
    }
  }, 30_000);

  it('the same user clicking at both instances counts once', async () => {
    const target = await freshStoreTarget('postgres');
    const a = await instance(target);
    const b = await instance(target);
    const request = await a.open(RULE_INPUT(), CTX);
    const results = await Promise.all([a.resolve(request.id, 'allow-once', lead('B1')), b.resolve(request.id, 'allow-once', lead('B1'))]);
    expect(results.map((r) => r.kind)).toEqual(['counted', 'counted']);
    expect((await a.get(request.id))!).toMatchObject({ status: 'pending', votes: [{ by: 'discord:B1' }] });
  });
});
