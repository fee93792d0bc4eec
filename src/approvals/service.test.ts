import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseConfig } from '../config/index.js';
import { EventBus } from '../events.js';
import { openStore, type Store } from '../store/store.js';
import { Transcripts } from '../store/transcript.js';
import { ApprovalService, type ApprovalServiceOptions } from './service.js';
import type { ApprovalRenderer, ApprovalRequest, ApprovalRequestContext, ApprovalRequestInput } from './types.js';

const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

function configOf(raw: unknown) {
  const parsed = parseConfig(raw);
  if (!parsed.ok) throw parsed.error;
  return parsed.value.config;
}

const CONFIG = { owners: { discord: ['owner-1'], slack: ['U-OWNER'] }, approvals: { approvers: { slack: ['U-APPROVER'] } } };

function openIn(dir: string): Store {
  const result = openStore({ dataDir: dir });
  if (!result.ok) throw new Error(result.error.message);
  cleanups.push(() => result.store.close());
  return result.store;
}

function service(dir = mkdtempSync(path.join(tmpdir(), 'warden-approvals-')), extra: Partial<ApprovalServiceOptions> = {}, raw: unknown = CONFIG) {
  const store = openIn(dir);
  const svc = new ApprovalService({ store, config: configOf(raw), events: new EventBus(), pollMs: 10, ...extra });
  cleanups.push(() => svc.shutdown());
  return { svc, store, dir };
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
const tick = () => new Promise((r) => setTimeout(r, 0));

describe('request and resolve', () => {
  it('persists, renders, and wakes the waiting call with the decision', async () => {
    const { svc } = service();
    const renderer = new RecordingRenderer('discord');
    const other = new RecordingRenderer('slack');
    svc.registerRenderer(renderer);
    svc.registerRenderer(other);
    const waiting = svc.request(INPUT, CTX);
    await tick();
    const [pending] = svc.list();
    expect(pending).toMatchObject({ status: 'pending', tool: 'write', agentId: 'main', sessionKey: CTX.sessionKey, channelId: '42', requesterId: 'user-7', allowedDecisions: ['allow-once', 'allow-always', 'deny'] });
    expect(pending!.expiresAt - pending!.createdAt).toBe(120_000);
    expect(renderer.shown.map((r) => r.id)).toEqual([pending!.id]);
    expect(other.shown).toEqual([]);

    const result = await svc.resolve(pending!.id, 'allow-once', { provider: 'discord', userId: 'owner-1' });
    expect(result).toMatchObject({ kind: 'resolved', request: { status: 'allow-once', decidedBy: 'discord:owner-1' } });
    expect(await waiting).toMatchObject({ id: pending!.id, outcome: 'allow-once', decidedBy: 'discord:owner-1' });
    await tick();
    expect(renderer.updated.at(-1)).toMatchObject({ id: pending!.id, status: 'allow-once' });
    expect(svc.audit.list({ subject: pending!.id }).map((e) => e.type)).toEqual(['approval.requested', 'approval.resolved']);
  });

  it('uses the exec expiry for exec requests', () => {
    const { svc } = service(undefined, {}, { ...CONFIG, approvals: { ...CONFIG.approvals, exec: { timeoutSec: 60 } } });
    const request = svc.open({ ...INPUT, kind: 'exec', tool: 'exec' }, CTX);
    expect(request.expiresAt - request.createdAt).toBe(60_000);
  });

  it('caps hook approval timeouts at 600 s', () => {
    const { svc } = service();
    const request = svc.open({ ...INPUT, timeoutMs: 3_600_000 }, CTX);
    expect(request.expiresAt - request.createdAt).toBe(600_000);
  });

  it('does not offer allow-always when nothing could be stored for it', () => {
    const { svc } = service();
    const { grant: _grant, ...noGrant } = INPUT;
    expect(svc.open(noGrant, CTX).allowedDecisions).toEqual(['allow-once', 'deny']);
    expect(svc.open({ ...noGrant, allowedDecisions: ['allow-once', 'allow-always', 'deny'] }, CTX).allowedDecisions).toEqual(['allow-once', 'allow-always', 'deny']);
  });

  it.each([
    ['a non-approver on the same platform', { provider: 'discord', userId: 'someone' }, 'discord user someone is not an approver (owners.discord)'],
    ['an owner once approvers are configured for the platform', { provider: 'slack', userId: 'U-OWNER' }, 'slack user U-OWNER is not an approver (approvals.approvers.slack)'],
    ['a platform with nobody configured', { provider: 'web', userId: 'me' }, 'no approvers are configured for web: set approvals.approvers.web (or owners.web)'],
  ])('refuses %s and changes nothing', async (_label, by, reason) => {
    const { svc } = service();
    const request = svc.open(INPUT, CTX);
    expect(await svc.resolve(request.id, 'allow-once', by)).toEqual({ kind: 'not-approver', reason });
    expect(svc.get(request.id)!.status).toBe('pending');
    expect(svc.audit.list({ subject: request.id }).map((e) => e.type)).toEqual(['approval.requested', 'approval.refused']);
  });

  it('accepts a configured approver', async () => {
    const { svc } = service();
    const request = svc.open(INPUT, CTX);
    expect((await svc.resolve(request.id, 'deny', { provider: 'slack', userId: 'U-APPROVER' })).kind).toBe('resolved');
  });

  it('reports an unknown id and a decision the request does not offer', async () => {
    const { svc } = service();
    expect(await svc.resolve('nope', 'deny', { provider: 'discord', userId: 'owner-1' })).toEqual({ kind: 'not-found', id: 'nope' });
    const request = svc.open({ ...INPUT, allowedDecisions: ['allow-once', 'deny'] }, CTX);
    expect(await svc.resolve(request.id, 'allow-always', { provider: 'discord', userId: 'owner-1' })).toEqual({
      kind: 'decision-not-allowed',
      decision: 'allow-always',
      allowed: ['allow-once', 'deny'],
    });
    expect(await svc.resolve(request.id, 'maybe', { provider: 'discord', userId: 'owner-1' })).toMatchObject({ kind: 'decision-not-allowed' });
    expect(svc.get(request.id)!.status).toBe('pending');
  });

  it('a second resolve changes nothing and says who decided what', async () => {
    const { svc } = service();
    const request = svc.open(INPUT, CTX);
    await svc.resolve(request.id, 'deny', { provider: 'discord', userId: 'owner-1' });
    const again = await svc.resolve(request.id, 'allow-once', { provider: 'slack', userId: 'U-APPROVER' });
    expect(again).toMatchObject({ kind: 'already-resolved', outcome: 'deny', decidedBy: 'discord:owner-1' });
    expect(svc.get(request.id)).toMatchObject({ status: 'deny', decidedBy: 'discord:owner-1' });
  });

  it('of two concurrent resolves exactly one wins', async () => {
    const { svc } = service();
    const request = svc.open(INPUT, CTX);
    const results = await Promise.all([
      svc.resolve(request.id, 'allow-once', { provider: 'discord', userId: 'owner-1' }),
      svc.resolve(request.id, 'deny', { provider: 'slack', userId: 'U-APPROVER' }),
    ]);
    expect(results.map((r) => r.kind).sort()).toEqual(['already-resolved', 'resolved']);
    expect(svc.audit.list({ subject: request.id, typePrefix: 'approval.resolved' })).toHaveLength(1);
  });

  it('of two processes resolving the same request on one file exactly one wins, and the waiter hears it', async () => {
    const a = service();
    const b = service(a.dir);
    const waiting = a.svc.request(INPUT, CTX);
    await tick();
    const id = a.svc.list()[0]!.id;
    const [ra, rb] = await Promise.all([
      b.svc.resolve(id, 'deny', { provider: 'discord', userId: 'owner-1' }),
      a.svc.resolve(id, 'allow-once', { provider: 'discord', userId: 'owner-1' }),
    ]);
    expect([ra.kind, rb.kind].sort()).toEqual(['already-resolved', 'resolved']);
    const winner = ra.kind === 'resolved' ? 'deny' : 'allow-once';
    expect((await waiting).outcome).toBe(winner);
  });

  it('a decision written by another process reaches the waiting call', async () => {
    const a = service();
    const b = service(a.dir);
    const waiting = a.svc.request(INPUT, CTX);
    await tick();
    await b.svc.resolve(a.svc.list()[0]!.id, 'allow-once', { provider: 'discord', userId: 'owner-1' });
    expect(await waiting).toMatchObject({ outcome: 'allow-once', decidedBy: 'discord:owner-1' });
  });
});

describe('expiry and cancellation', () => {
  it('expires a request nobody decided, updates its card and denies', async () => {
    const { svc } = service();
    const renderer = new RecordingRenderer('discord');
    svc.registerRenderer(renderer);
    const resolution = await svc.request({ ...INPUT, timeoutMs: 30 }, CTX);
    expect(resolution).toMatchObject({ outcome: 'expired', timeoutBehavior: 'deny' });
    await tick();
    expect(renderer.updated.at(-1)).toMatchObject({ status: 'expired' });
    expect(await svc.resolve(resolution.id, 'allow-once', { provider: 'discord', userId: 'owner-1' })).toMatchObject({ kind: 'already-resolved', outcome: 'expired' });
  });

  it('reports timeoutBehavior allow for hook requests only', async () => {
    const { svc } = service();
    expect((await svc.request({ ...INPUT, timeoutMs: 10, timeoutBehavior: 'allow' }, CTX)).timeoutBehavior).toBe('allow');
    expect((await svc.request({ ...INPUT, kind: 'exec', timeoutMs: 10, timeoutBehavior: 'allow' }, CTX)).timeoutBehavior).toBe('deny');
  });

  it('a click that arrives after expiry cannot approve', async () => {
    let now = 1_000_000;
    const { svc } = service(undefined, { now: () => now });
    const request = svc.open({ ...INPUT, timeoutMs: 1000 }, CTX);
    now += 1001;
    expect(await svc.resolve(request.id, 'allow-once', { provider: 'discord', userId: 'owner-1' })).toMatchObject({ kind: 'already-resolved', outcome: 'expired' });
  });

  it('cancels the request when the waiting call is aborted', async () => {
    const { svc } = service();
    const controller = new AbortController();
    const waiting = svc.request(INPUT, CTX, controller.signal);
    await tick();
    controller.abort();
    const resolution = await waiting;
    expect(resolution.outcome).toBe('cancelled');
    expect(svc.get(resolution.id)!.status).toBe('cancelled');
  });
});

describe('allow-always grants', () => {
  it('stores a grant that matches the same call and not another', async () => {
    const { svc } = service();
    const waiting = svc.request({ ...INPUT, grant: { pattern: 'write', argPattern: '{"path":"notes/*"}' } }, CTX);
    await tick();
    const id = svc.list()[0]!.id;
    const result = await svc.resolve(id, 'allow-always', { provider: 'discord', userId: 'owner-1' });
    expect(result.kind === 'resolved' && result.grant).toMatchObject({ agentId: 'main', tool: 'write', argPattern: '{"path":"notes/*"}', createdBy: 'discord:owner-1', approvalId: id });
    const resolution = await waiting;
    expect(resolution.grantId).toMatch(/^g_/);
    expect(svc.grants.match({ agentId: 'main', tool: 'write', target: 'write', args: '{"path":"notes/a.txt"}' })?.id).toBe(resolution.grantId);
    expect(svc.grants.match({ agentId: 'main', tool: 'write', target: 'write', args: '{"path":"etc/passwd"}' })).toBeUndefined();
    expect(svc.grants.match({ agentId: 'other', tool: 'write', target: 'write', args: '{"path":"notes/a.txt"}' })).toBeUndefined();
    expect(svc.grants.list().map((g) => g.id)).toEqual([resolution.grantId]);
  });

  it('a revoked grant no longer matches and stays in the full list', async () => {
    const { svc } = service();
    const request = svc.open(INPUT, CTX);
    const result = await svc.resolve(request.id, 'allow-always', { provider: 'discord', userId: 'owner-1' });
    const grantId = result.kind === 'resolved' ? result.grant!.id : '';
    expect(svc.revokeGrant(grantId, 'cli:op')).toMatchObject({ kind: 'revoked' });
    expect(svc.revokeGrant(grantId, 'cli:op')).toMatchObject({ kind: 'already-revoked' });
    expect(svc.revokeGrant('g_missing', 'cli:op')).toEqual({ kind: 'not-found', id: 'g_missing' });
    expect(svc.grants.match({ agentId: 'main', tool: 'write', target: 'write', args: INPUT.fullText })).toBeUndefined();
    expect(svc.grants.list()).toEqual([]);
    expect(svc.grants.list({ all: true })[0]).toMatchObject({ id: grantId, revokedBy: 'cli:op' });
    expect(svc.audit.list({ subject: grantId }).map((e) => e.type)).toEqual(['grant.created', 'grant.revoked']);
  });

  it('an expired grant no longer matches', async () => {
    let now = 5_000_000;
    const { svc } = service(undefined, { now: () => now });
    const request = svc.open({ ...INPUT, grant: { pattern: 'write', ttlMs: 60_000 } }, CTX);
    await svc.resolve(request.id, 'allow-always', { provider: 'discord', userId: 'owner-1' });
    expect(svc.grants.match({ agentId: 'main', tool: 'write', target: 'write', args: 'anything' })).toBeDefined();
    now += 60_001;
    expect(svc.grants.match({ agentId: 'main', tool: 'write', target: 'write', args: 'anything' })).toBeUndefined();
  });
});

describe('recover', () => {
  it('expires, re-arms or interrupts each pending request by its waiter', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-recover-'));
    let now = 10_000_000;
    const dead = service(dir, { now: () => now });
    const expiredReq = dead.svc.open({ ...INPUT, timeoutMs: 1000 }, CTX);
    const orphan = dead.svc.open({ ...INPUT, timeoutMs: 100_000 }, CTX);
    dead.svc.shutdown();
    const live = service(dir, { now: () => now });
    const stillWaited = live.svc.open({ ...INPUT, timeoutMs: 100_000 }, CTX);
    live.svc.shutdown();

    now += 2000;
    const bus = new EventBus();
    const interrupted: string[] = [];
    bus.on('approval.interrupted', ({ request }) => interrupted.push(request.id));
    // Every pid looks alive; the dead service is recognised by its stale stamp.
    const fresh = service(dir, { now: () => now, isProcessAlive: () => true, staleWaiterMs: 60_000, events: bus });
    fresh.store.db.prepare('UPDATE approvals SET waiter_seen_at = 0 WHERE waiter_instance = ?').run(dead.svc.instanceId);
    const renderer = new RecordingRenderer('discord');
    fresh.svc.registerRenderer(renderer);
    const report = await fresh.svc.recover();

    expect(report.expired.map((r) => r.id)).toEqual([expiredReq.id]);
    expect(report.interrupted.map((r) => r.id)).toEqual([orphan.id]);
    expect(report.rearmed.map((r) => r.id)).toEqual([stillWaited.id]);
    expect(interrupted).toEqual([orphan.id]);
    expect(fresh.svc.get(expiredReq.id)!.status).toBe('expired');
    expect(fresh.svc.get(orphan.id)!.status).toBe('interrupted');
    expect(fresh.svc.get(stillWaited.id)!.status).toBe('pending');
    expect(renderer.updated.map((r) => [r.id, r.status])).toEqual(expect.arrayContaining([[expiredReq.id, 'expired'], [orphan.id, 'interrupted']]));
    expect(renderer.shown.map((r) => r.id)).toEqual([stillWaited.id]);
    const transcript = new Transcripts(fresh.store.db).list(CTX.sessionKey);
    expect(transcript.at(-1)).toMatchObject({ role: 'system', content: expect.stringContaining(`Approval ${orphan.id} for write was interrupted`) });
    expect(fresh.svc.audit.list({ subject: orphan.id }).map((e) => e.type)).toEqual(['approval.requested', 'approval.interrupted']);
  });

  it('treats a waiter whose process is gone as dead even with a fresh stamp', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-recover-'));
    const gone = service(dir);
    const request = gone.svc.open(INPUT, CTX);
    gone.svc.shutdown();
    const fresh = service(dir, { isProcessAlive: () => false });
    const report = await fresh.svc.recover();
    expect(report.interrupted.map((r) => r.id)).toEqual([request.id]);
  });

  it('after recover, keeps watching: renders requests other processes open and updates cards they close', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'warden-watch-'));
    const bot = service(dir, { externalPollMs: 10 });
    const cards = new RecordingRenderer('discord');
    bot.svc.registerRenderer(cards);
    await bot.svc.recover();

    const cli = service(dir);
    const waiting = cli.svc.request(INPUT, CTX);
    await vi.waitFor(() => expect(cards.shown).toHaveLength(1), { timeout: 2000, interval: 10 });
    const id = cards.shown[0]!.id;
    await cli.svc.resolveAsOperator(id, 'deny', 'op');
    expect((await waiting).outcome).toBe('deny');
    await vi.waitFor(() => expect(cards.updated.map((r) => [r.id, r.status])).toEqual([[id, 'deny']]), { timeout: 2000, interval: 10 });

    // A request whose waiter stopped stamping is interrupted, not left pending.
    const orphan = cli.svc.open(INPUT, CTX);
    cli.svc.shutdown();
    // Let the bot adopt it while its waiter still looks alive, then let the waiter go stale.
    await vi.waitFor(() => expect(cards.shown.map((r) => r.id)).toContain(orphan.id), { timeout: 2000, interval: 10 });
    bot.store.db.prepare('UPDATE approvals SET waiter_seen_at = 0 WHERE id = ?').run(orphan.id);
    await vi.waitFor(() => expect(bot.svc.get(orphan.id)!.status).toBe('interrupted'), { timeout: 2000, interval: 10 });
  });
});
