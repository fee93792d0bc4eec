import { afterEach, describe, expect, it, vi } from 'vitest';
import { ENGINES, freshStoreTarget } from '../../test/store-engines.js';
import { parseConfig } from '../config/index.js';
import { EventBus } from '../events/events.js';
import { approvalsInAnotherThread } from '../app/testing.js';
import { openWardenStore } from '../app/migrations.js';
import type { StoreEngine } from '../store/db.js';
import type { Store } from '../store/store.js';
import { Transcripts } from '../store/transcript.js';
import { ApprovalService, type ApprovalServiceOptions } from './service.js';
import type { ApprovalRenderer, ApprovalRequest, ApprovalRequestContext, ApprovalRequestInput } from './types.js';

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

function configOf(raw: unknown) {
  const parsed = parseConfig(raw);
  if (!parsed.ok) throw parsed.error;
  return parsed.value.config;
}

const CONFIG = { owners: { discord: ['owner-1'], slack: ['U-OWNER'] }, approvals: { approvers: { slack: ['U-APPROVER'] } } };

type Target = { dataDir: string; url: string | undefined };

async function openAt(where: Target): Promise<Store> {
  const result = await openWardenStore({ dataDir: where.dataDir, url: where.url });
  if (!result.ok) throw new Error(result.error.message);
  cleanups.push(() => result.store.close());
  return result.store;
}

/** A service over a new store on `engine`, or over the store at `where` (another process on the same store). */
async function service(engine: StoreEngine, where?: Target, extra: Partial<ApprovalServiceOptions> = {}, raw: unknown = CONFIG) {
  const at = where ?? (await freshStoreTarget(engine));
  const store = await openAt(at);
  const svc = new ApprovalService({ store, config: configOf(raw), events: new EventBus(), pollMs: 10, ...extra });
  cleanups.push(() => svc.shutdown());
  return { svc, store, where: at };
}

/**
 * A second approval service deciding on the store at `where`, as another Warden process would
 * (on SQLite in a thread of its own: see `approvalsInAnotherThread`).
 */
async function anotherProcess(engine: StoreEngine, where: Target): Promise<{ resolve: ApprovalService['resolve'] }> {
  if (engine !== 'sqlite') return (await service(engine, where)).svc;
  const other = await approvalsInAnotherThread(where.dataDir, CONFIG);
  cleanups.push(() => other.close());
  return other;
}

/** The one pending request, once the waiting call has recorded it. */
async function onlyPending(svc: ApprovalService): Promise<ApprovalRequest> {
  return vi.waitFor(
    async () => {
      const [pending, ...more] = await svc.list();
      expect(pending).toBeDefined();
      expect(more).toEqual([]);
      return pending!;
    },
    { timeout: 5000, interval: 5 },
  );
}

class RecordingRenderer implements ApprovalRenderer {
  shown: ApprovalRequest[] = [];
  updated: ApprovalRequest[] = [];
  constructor(readonly provider: string) {}
  async show(request: ApprovalRequest) {
    this.shown.push(request);
  }
  async update(request: ApprovalRequest) {
    this.updated.push(request);
  }
}

const CTX: ApprovalRequestContext = { agentId: 'main', sessionKey: 'agent:main:discord:channel:42', provider: 'discord', channelId: '42', requesterId: 'user-7' };
const INPUT: ApprovalRequestInput = { kind: 'tool', tool: 'write', title: 'Write a file', preview: 'notes.txt', fullText: '{"path":"notes.txt"}', grant: { pattern: 'write', argPattern: '{"path":"notes.txt"}' } };
describe.each(ENGINES)('request and resolve on %s', (engine) => {
  it('persists, renders, and wakes the waiting call with the decision', async () => {
    const { svc } = await service(engine);
    const renderer = new RecordingRenderer('discord');
    const other = new RecordingRenderer('slack');
    svc.registerRenderer(renderer);
    svc.registerRenderer(other);
    const waiting = svc.request(INPUT, CTX);
    const pending = await onlyPending(svc);
    expect(pending).toMatchObject({ status: 'pending', tool: 'write', agentId: 'main', sessionKey: CTX.sessionKey, channelId: '42', requesterId: 'user-7', allowedDecisions: ['allow-once', 'allow-always', 'deny'] });
    expect(pending!.expiresAt - pending!.createdAt).toBe(120_000);
    // The row is written before the card is shown: on a store with round trips the card follows.
    await vi.waitFor(() => expect(renderer.shown.map((r) => r.id)).toEqual([pending!.id]), { timeout: 5000, interval: 5 });
    expect(other.shown).toEqual([]);

    const result = await svc.resolve(pending!.id, 'allow-once', { provider: 'discord', userId: 'owner-1', via: { kind: 'typed' } });
    expect(result).toMatchObject({ kind: 'resolved', request: { status: 'allow-once', decidedBy: 'discord:owner-1' } });
    expect(await waiting).toMatchObject({ id: pending!.id, outcome: 'allow-once', decidedBy: 'discord:owner-1' });
    await vi.waitFor(() => expect(renderer.updated.at(-1)).toMatchObject({ id: pending!.id, status: 'allow-once' }), { timeout: 5000, interval: 5 });
    expect((await svc.audit.list({ subject: pending!.id })).map((e) => e.type)).toEqual(['approval.requested', 'approval.resolved']);
  });

  it('uses the exec expiry for exec requests', async () => {
    const { svc } = await service(engine, undefined, {}, { ...CONFIG, approvals: { ...CONFIG.approvals, exec: { timeoutSec: 60 } } });
    const request = await svc.open({ ...INPUT, kind: 'exec', tool: 'exec' }, CTX);
    expect(request.expiresAt - request.createdAt).toBe(60_000);
  });

  it('caps hook approval timeouts at 600 s', async () => {
    const { svc } = await service(engine);
    const request = await svc.open({ ...INPUT, timeoutMs: 3_600_000 }, CTX);
    expect(request.expiresAt - request.createdAt).toBe(600_000);
  });

  it('does not offer allow-always when nothing could be stored for it', async () => {
    const { svc } = await service(engine);
    const { grant: _grant, ...noGrant } = INPUT;
    expect((await svc.open(noGrant, CTX)).allowedDecisions).toEqual(['allow-once', 'deny']);
    expect((await svc.open({ ...noGrant, allowedDecisions: ['allow-once', 'allow-always', 'deny'] }, CTX)).allowedDecisions).toEqual(['allow-once', 'allow-always', 'deny']);
  });

  it.each([
    ['a non-approver on the same platform', { provider: 'discord', userId: 'someone' }, 'discord user someone is not an approver (owners.discord)'],
    ['an owner once approvers are configured for the platform', { provider: 'slack', userId: 'U-OWNER' }, 'slack user U-OWNER is not an approver (approvals.approvers.slack)'],
    ['a platform with nobody configured', { provider: 'web', userId: 'me' }, 'no approvers are configured for web: set approvals.approvers.web (or owners.web)'],
  ])('refuses %s and changes nothing', async (_label, by, reason) => {
    const { svc } = await service(engine);
    const request = await svc.open(INPUT, CTX);
    expect(await svc.resolve(request.id, 'allow-once', { ...by, via: { kind: 'typed' } })).toEqual({ kind: 'not-approver', reason });
    expect((await svc.get(request.id))!.status).toBe('pending');
    expect((await svc.audit.list({ subject: request.id })).map((e) => e.type)).toEqual(['approval.requested', 'approval.refused']);
  });

  it('accepts a configured approver', async () => {
    const { svc } = await service(engine);
    const request = await svc.open(INPUT, CTX);
    expect((await svc.resolve(request.id, 'deny', { provider: 'slack', userId: 'U-APPROVER', via: { kind: 'typed' } })).kind).toBe('resolved');
  });

  it('reports an unknown id and a decision the request does not offer', async () => {
    const { svc } = await service(engine);
    expect(await svc.resolve('nope', 'deny', { provider: 'discord', userId: 'owner-1', via: { kind: 'typed' } })).toEqual({ kind: 'not-found', id: 'nope' });
    const request = await svc.open({ ...INPUT, allowedDecisions: ['allow-once', 'deny'] }, CTX);
    expect(await svc.resolve(request.id, 'allow-always', { provider: 'discord', userId: 'owner-1', via: { kind: 'typed' } })).toEqual({
      kind: 'decision-not-allowed',
      decision: 'allow-always',
      allowed: ['allow-once', 'deny'],
    });
    expect(await svc.resolve(request.id, 'maybe', { provider: 'discord', userId: 'owner-1', via: { kind: 'typed' } })).toMatchObject({ kind: 'decision-not-allowed' });
    expect((await svc.get(request.id))!.status).toBe('pending');
  });

  it('a second resolve changes nothing and says who decided what', async () => {
    const { svc } = await service(engine);
    const request = await svc.open(INPUT, CTX);
    await svc.resolve(request.id, 'deny', { provider: 'discord', userId: 'owner-1', via: { kind: 'typed' } });
    const again = await svc.resolve(request.id, 'allow-once', { provider: 'slack', userId: 'U-APPROVER', via: { kind: 'typed' } });
    expect(again).toMatchObject({ kind: 'already-resolved', outcome: 'deny', decidedBy: 'discord:owner-1' });
    expect(await svc.get(request.id)).toMatchObject({ status: 'deny', decidedBy: 'discord:owner-1' });
  });

  it('of two concurrent resolves exactly one wins', async () => {
    const { svc } = await service(engine);
    const request = await svc.open(INPUT, CTX);
    const results = await Promise.all([
      svc.resolve(request.id, 'allow-once', { provider: 'discord', userId: 'owner-1', via: { kind: 'typed' } }),
      svc.resolve(request.id, 'deny', { provider: 'slack', userId: 'U-APPROVER', via: { kind: 'typed' } }),
    ]);
    expect(results.map((r) => r.kind).sort()).toEqual(['already-resolved', 'resolved']);
    expect(await svc.audit.list({ subject: request.id, typePrefix: 'approval.resolved' })).toHaveLength(1);
  });

  it('of two processes resolving the same request on one file exactly one wins, and the waiter hears it', async () => {
    const a = await service(engine);
    const b = await anotherProcess(engine, a.where);
    const waiting = a.svc.request(INPUT, CTX);
    const { id } = await onlyPending(a.svc);
    const [ra, rb] = await Promise.all([
      b.resolve(id, 'deny', { provider: 'discord', userId: 'owner-1', via: { kind: 'typed' } }),
      a.svc.resolve(id, 'allow-once', { provider: 'discord', userId: 'owner-1', via: { kind: 'typed' } }),
    ]);
    expect([ra.kind, rb.kind].sort()).toEqual(['already-resolved', 'resolved']);
    const winner = ra.kind === 'resolved' ? 'deny' : 'allow-once';
    expect((await waiting).outcome).toBe(winner);
  });

  it('a decision written by another process reaches the waiting call', async () => {
    const a = await service(engine);
    const b = await service(engine, a.where);
    const waiting = a.svc.request(INPUT, CTX);
    await b.svc.resolve((await onlyPending(a.svc)).id, 'allow-once', { provider: 'discord', userId: 'owner-1', via: { kind: 'typed' } });
    expect(await waiting).toMatchObject({ outcome: 'allow-once', decidedBy: 'discord:owner-1' });
  });
});

describe.each(ENGINES)('expiry and cancellation on %s', (engine) => {
  it('expires a request nobody decided, updates its card and denies', async () => {
    const { svc } = await service(engine);
    const renderer = new RecordingRenderer('discord');
    svc.registerRenderer(renderer);
    const resolution = await svc.request({ ...INPUT, timeoutMs: 30 }, CTX);
    expect(resolution).toMatchObject({ outcome: 'expired', timeoutBehavior: 'deny' });
    await vi.waitFor(() => expect(renderer.updated.at(-1)).toMatchObject({ status: 'expired' }), { timeout: 5000, interval: 5 });
    expect(await svc.resolve(resolution.id, 'allow-once', { provider: 'discord', userId: 'owner-1', via: { kind: 'typed' } })).toMatchObject({ kind: 'already-resolved', outcome: 'expired' });
  });

  it('reports timeoutBehavior allow for hook requests only', async () => {
    const { svc } = await service(engine);
    expect((await svc.request({ ...INPUT, timeoutMs: 10, timeoutBehavior: 'allow' }, CTX)).timeoutBehavior).toBe('allow');
    expect((await svc.request({ ...INPUT, kind: 'exec', timeoutMs: 10, timeoutBehavior: 'allow' }, CTX)).timeoutBehavior).toBe('deny');
  });

  it('a click that arrives after expiry cannot approve', async () => {
    let now = 1_000_000;
    const { svc } = await service(engine, undefined, { now: () => now });
    const request = await svc.open({ ...INPUT, timeoutMs: 1000 }, CTX);
    now += 1001;
    expect(await svc.resolve(request.id, 'allow-once', { provider: 'discord', userId: 'owner-1', via: { kind: 'typed' } })).toMatchObject({ kind: 'already-resolved', outcome: 'expired' });
  });

  it('cancels the request when the waiting call is aborted', async () => {
    const { svc } = await service(engine);
    const controller = new AbortController();
    const waiting = svc.request(INPUT, CTX, controller.signal);
    await onlyPending(svc);
    controller.abort();
    const resolution = await waiting;
    expect(resolution.outcome).toBe('cancelled');
    expect((await svc.get(resolution.id))!.status).toBe('cancelled');
  });
});

describe.each(ENGINES)('allow-always grants on %s', (engine) => {
  it('stores a grant that matches the same call and not another', async () => {
    const { svc } = await service(engine);
    const waiting = svc.request({ ...INPUT, grant: { pattern: 'write', argPattern: '{"path":"notes/*"}' } }, CTX);
    const { id } = await onlyPending(svc);
    const result = await svc.resolve(id, 'allow-always', { provider: 'discord', userId: 'owner-1', via: { kind: 'typed' } });
    expect(result.kind === 'resolved' && result.grant).toMatchObject({ agentId: 'main', tool: 'write', argPattern: '{"path":"notes/*"}', createdBy: 'discord:owner-1', approvalId: id });
    const resolution = await waiting;
    expect(resolution.grantId).toMatch(/^g_/);
    expect((await svc.grants.match({ agentId: 'main', tool: 'write', target: 'write', args: '{"path":"notes/a.txt"}' }))?.id).toBe(resolution.grantId);
    expect(await svc.grants.match({ agentId: 'main', tool: 'write', target: 'write', args: '{"path":"etc/passwd"}' })).toBeUndefined();
    expect(await svc.grants.match({ agentId: 'other', tool: 'write', target: 'write', args: '{"path":"notes/a.txt"}' })).toBeUndefined();
    expect((await svc.grants.list()).map((g) => g.id)).toEqual([resolution.grantId]);
  });

  it('a revoked grant no longer matches and stays in the full list', async () => {
    const { svc } = await service(engine);
    const request = await svc.open(INPUT, CTX);
    const result = await svc.resolve(request.id, 'allow-always', { provider: 'discord', userId: 'owner-1', via: { kind: 'typed' } });
    const grantId = result.kind === 'resolved' ? result.grant!.id : '';
    expect(await svc.revokeGrant(grantId, 'cli:op')).toMatchObject({ kind: 'revoked' });
    expect(await svc.revokeGrant(grantId, 'cli:op')).toMatchObject({ kind: 'already-revoked' });
    expect(await svc.revokeGrant('g_missing', 'cli:op')).toEqual({ kind: 'not-found', id: 'g_missing' });
    expect(await svc.grants.match({ agentId: 'main', tool: 'write', target: 'write', args: INPUT.fullText })).toBeUndefined();
    expect(await svc.grants.list()).toEqual([]);
    expect((await svc.grants.list({ all: true }))[0]).toMatchObject({ id: grantId, revokedBy: 'cli:op' });
    expect((await svc.audit.list({ subject: grantId })).map((e) => e.type)).toEqual(['grant.created', 'grant.revoked']);
  });

  it('an expired grant no longer matches', async () => {
    let now = 5_000_000;
    const { svc } = await service(engine, undefined, { now: () => now });
    const request = await svc.open({ ...INPUT, grant: { pattern: 'write', ttlMs: 60_000 } }, CTX);
    await svc.resolve(request.id, 'allow-always', { provider: 'discord', userId: 'owner-1', via: { kind: 'typed' } });
    expect(await svc.grants.match({ agentId: 'main', tool: 'write', target: 'write', args: 'anything' })).toBeDefined();
    now += 60_001;
    expect(await svc.grants.match({ agentId: 'main', tool: 'write', target: 'write', args: 'anything' })).toBeUndefined();
  });
});

describe.each(ENGINES)('recover on %s', (engine) => {
  it('expires, re-arms or interrupts each pending request by its waiter', async () => {
    const dir = await freshStoreTarget(engine);
    let now = 10_000_000;
    const dead = await service(engine, dir, { now: () => now });
    const expiredReq = await dead.svc.open({ ...INPUT, timeoutMs: 1000 }, CTX);
    const orphan = await dead.svc.open({ ...INPUT, timeoutMs: 100_000 }, CTX);
    dead.svc.shutdown();
    const live = await service(engine, dir, { now: () => now });
    const stillWaited = await live.svc.open({ ...INPUT, timeoutMs: 100_000 }, CTX);
    live.svc.shutdown();

    now += 2000;
    const bus = new EventBus();
    const interrupted: string[] = [];
    bus.on('approval.interrupted', ({ request }) => interrupted.push(request.id));
    // Every pid looks alive; the dead service is recognised by its stale stamp.
    const fresh = await service(engine, dir, { now: () => now, isProcessAlive: () => true, staleWaiterMs: 60_000, events: bus });
    await fresh.store.db.run('UPDATE approvals SET waiter_seen_at = 0 WHERE waiter_instance = ?', [dead.svc.instanceId]);
    const renderer = new RecordingRenderer('discord');
    fresh.svc.registerRenderer(renderer);
    const report = await fresh.svc.recover();

    expect(report.expired.map((r) => r.id)).toEqual([expiredReq.id]);
    expect(report.interrupted.map((r) => r.id)).toEqual([orphan.id]);
    expect(report.rearmed.map((r) => r.id)).toEqual([stillWaited.id]);
    expect(interrupted).toEqual([orphan.id]);
    expect((await fresh.svc.get(expiredReq.id))!.status).toBe('expired');
    expect((await fresh.svc.get(orphan.id))!.status).toBe('interrupted');
    expect((await fresh.svc.get(stillWaited.id))!.status).toBe('pending');
    expect(renderer.updated.map((r) => [r.id, r.status])).toEqual(expect.arrayContaining([[expiredReq.id, 'expired'], [orphan.id, 'interrupted']]));
    expect(renderer.shown.map((r) => r.id)).toEqual([stillWaited.id]);
    const transcript = await new Transcripts(fresh.store.db).list(CTX.sessionKey);
    expect(transcript.at(-1)).toMatchObject({ role: 'system', content: expect.stringContaining(`Approval ${orphan.id} for write was interrupted`) });
    expect((await fresh.svc.audit.list({ subject: orphan.id })).map((e) => e.type)).toEqual(['approval.requested', 'approval.interrupted']);
  });

  it('treats a waiter whose process is gone as dead even with a fresh stamp', async () => {
    const dir = await freshStoreTarget(engine);
    const gone = await service(engine, dir);
    const request = await gone.svc.open(INPUT, CTX);
    gone.svc.shutdown();
    const fresh = await service(engine, dir, { isProcessAlive: () => false });
    const report = await fresh.svc.recover();
    expect(report.interrupted.map((r) => r.id)).toEqual([request.id]);
  });

  it('after recover, keeps watching: renders requests other processes open and updates cards they close', async () => {
    const dir = await freshStoreTarget(engine);
    const bot = await service(engine, dir, { externalPollMs: 10 });
    const cards = new RecordingRenderer('discord');
    bot.svc.registerRenderer(cards);
    await bot.svc.recover();

    const cli = await service(engine, dir);
    const waiting = cli.svc.request(INPUT, CTX);
    await vi.waitFor(() => expect(cards.shown).toHaveLength(1), { timeout: 2000, interval: 10 });
    const id = cards.shown[0]!.id;
    await cli.svc.resolveAsOperator(id, 'deny', 'op');
    expect((await waiting).outcome).toBe('deny');
    await vi.waitFor(() => expect(cards.updated.map((r) => [r.id, r.status])).toEqual([[id, 'deny']]), { timeout: 2000, interval: 10 });

    // A request whose waiter stopped stamping is interrupted, not left pending.
    const orphan = await cli.svc.open(INPUT, CTX);
    cli.svc.shutdown();
    // Let the bot adopt it while its waiter still looks alive, then let the waiter go stale.
    await vi.waitFor(() => expect(cards.shown.map((r) => r.id)).toContain(orphan.id), { timeout: 2000, interval: 10 });
    await bot.store.db.run('UPDATE approvals SET waiter_seen_at = 0 WHERE id = ?', [orphan.id]);
    await vi.waitFor(async () => expect((await bot.svc.get(orphan.id))!.status).toBe('interrupted'), { timeout: 2000, interval: 10 });
  });
});
