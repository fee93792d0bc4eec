// Approvals on a store several instances share (PostgreSQL): decisions reach the waiting
// instance by notification, a stale or dead instance never decides twice, and a dead instance's
// requests are taken over by the one live server in charge.
import { afterEach, describe, expect, it } from 'vitest';
import { freshStoreTarget } from '../../test/store-engines.js';
import { InstanceRegistry } from '../cluster/instances.js';
import { parseConfig } from '../config/index.js';
import { EventBus } from '../events/events.js';
import { openWardenStore } from '../app/migrations.js';
import type { Store } from '../store/store.js';
import { APPROVAL_CHANNEL, ApprovalService, TAKEN_OVER_FACT } from './service.js';
import type { ApprovalRenderer, ApprovalRequest, ApprovalRequestContext, ApprovalRequestInput } from './types.js';
import { until } from '../../test/until.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const config = (() => {
  const parsed = parseConfig({ owners: { slack: ['U-OWNER'] }, approvals: { waitSec: 0 } });
  if (!parsed.ok) throw parsed.error;
  return parsed.value.config;
})();

class RecordingRenderer implements ApprovalRenderer {
  readonly provider = 'slack';
  shown: ApprovalRequest[] = [];
  updated: ApprovalRequest[] = [];
  async show(request: ApprovalRequest) {
    this.shown.push(request);
  }
  async update(request: ApprovalRequest) {
    this.updated.push(request);
  }
}

const CTX: ApprovalRequestContext = { agentId: 'main', sessionKey: 'agent:main:slack:channel:C1', provider: 'slack', channelId: 'C1', requesterId: 'U-7' };
const INPUT: ApprovalRequestInput = { kind: 'exec', tool: 'exec', title: 'Run a command', preview: 'echo hi', fullText: 'echo hi' };

/** An instance: its own store handle (its own pool and notification connection), registry and service. */
async function instance(target: { dataDir: string; url: string | undefined }, leaseMs = 600) {
  const opened = await openWardenStore(target);
  if (!opened.ok) throw new Error(opened.error.message);
  const store: Store = opened.store;
  const instances = new InstanceRegistry(store.db, { leaseMs, role: 'server' });
  await instances.start();
  const renderer = new RecordingRenderer();
  const approvals = new ApprovalService({ store, config, events: new EventBus(), instances, externalPollMs: 100 });
  approvals.registerRenderer(renderer);
  const stop = async () => {
    approvals.shutdown();
    await instances.stop();
    await store.close();
  };
  cleanups.push(stop);
  return { store, instances, approvals, renderer, stop };
}

describe('approvals on a shared store (PostgreSQL)', () => {
  it('a decision made at B reaches the call waiting at A by notification, with no poller running', async () => {
    const target = await freshStoreTarget('postgres');
    const a = await instance(target);
    const b = await instance(target);
    const request = await a.approvals.open(INPUT, CTX);
    const waiting = a.approvals.wait(request.id);
    // A's service polls nothing on a shared store.
    expect((a.approvals as unknown as { poller: unknown }).poller).toBeUndefined();
    const notified: Array<string | undefined> = [];
    await b.store.db.listen(APPROVAL_CHANNEL, (p) => notified.push(p));
    const decided = await b.approvals.resolve(request.id, 'allow-once', { provider: 'slack', userId: 'U-OWNER', via: { kind: 'typed' } });
    expect(decided.kind).toBe('resolved');
    const resolution = await waiting;
    expect(resolution).toMatchObject({ id: request.id, outcome: 'allow-once', decidedBy: 'slack:U-OWNER' });
    // The payload is the id alone: no command text, no requester.
    await until(() => notified.length > 0);
    expect(notified).toEqual([request.id]);
  });

  it("after A's notification connection drops, A listens again and a decision made at B while it was down still reaches A's waiting call", async () => {
    const target = await freshStoreTarget('postgres');
    const a = await instance(target);
    const b = await instance(target);
    const request = await a.approvals.open(INPUT, CTX);
    const waiting = a.approvals.wait(request.id);
    // A's notification connection, once its LISTEN is done (idle after it).
    const listeners = () =>
      b.store.db.value<number>("SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = 'warden-listen' AND datname = current_database() AND state = 'idle' AND query LIKE 'LISTEN%'");
    await until(async () => (await listeners()) === 1);
    // The server drops A's LISTEN connection (a failover, a network cut).
    const dropped = await b.store.db.all("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'warden-listen' AND datname = current_database()");
    expect(dropped.length).toBeGreaterThan(0);
    // Decided while A has no listener: the notification is lost; A's look after re-LISTEN finds the decision.
    expect((await b.approvals.resolve(request.id, 'deny', { provider: 'slack', userId: 'U-OWNER', via: { kind: 'typed' } })).kind).toBe('resolved');
    expect(await waiting).toMatchObject({ id: request.id, outcome: 'deny' });
    // And notifications flow again afterwards.
    const next = await a.approvals.open(INPUT, CTX);
    const again = a.approvals.wait(next.id);
    await until(async () => (await listeners()) === 1);
    await b.approvals.resolve(next.id, 'allow-once', { provider: 'slack', userId: 'U-OWNER', via: { kind: 'typed' } });
    expect(await again).toMatchObject({ outcome: 'allow-once' });
  });

  it('two instances deciding the same card at once: exactly one decision stands', async () => {
    const target = await freshStoreTarget('postgres');
    const a = await instance(target);
    const b = await instance(target);
    for (let i = 0; i < 5; i++) {
      const request = await a.approvals.open(INPUT, CTX);
      const results = await Promise.all([
        a.approvals.resolve(request.id, 'allow-once', { provider: 'slack', userId: 'U-OWNER', via: { kind: 'typed' } }),
        b.approvals.resolve(request.id, 'deny', { provider: 'slack', userId: 'U-OWNER', via: { kind: 'typed' } }),
      ]);
      expect(results.filter((r) => r.kind === 'resolved')).toHaveLength(1);
      expect(results.filter((r) => r.kind === 'already-resolved')).toHaveLength(1);
    }
  });

  it('a live server keeps its own requests: another instance neither renders nor closes them', async () => {
    const target = await freshStoreTarget('postgres');
    const a = await instance(target);
    const b = await instance(target);
    await b.approvals.recover();
    const request = await a.approvals.open(INPUT, CTX);
    void a.approvals.wait(request.id);
    await new Promise((r) => setTimeout(r, 1500));
    expect(b.renderer.shown).toHaveLength(0);
    expect((await b.approvals.get(request.id))?.status).toBe('pending');
  });

  it('a dead instance (its heartbeat stopped, row left behind) has its waiting request closed as interrupted by the live one, its card edited, and its late decision refused', async () => {
    const target = await freshStoreTarget('postgres');
    const a = await instance(target);
    const b = await instance(target);
    await b.approvals.recover();
    const request = await a.approvals.open(INPUT, CTX);
    void a.approvals.wait(request.id);
    // A freezes: no heartbeat; its lease runs out while the row stays (as after SIGKILL).
    clearInterval((a.instances as unknown as { timer: NodeJS.Timeout }).timer);
    const started = Date.now();
    await until(async () => (await b.approvals.get(request.id))?.status === 'interrupted');
    expect(Date.now() - started).toBeLessThan(600 + 200 + 100 + 3000);
    await until(() => b.renderer.updated.some((r) => r.id === request.id && r.status === 'interrupted'));
    // A wakes up and tries to decide: the request is closed, nothing is decided twice.
    const late = await a.approvals.resolve(request.id, 'allow-once', { provider: 'slack', userId: 'U-OWNER', via: { kind: 'typed' } });
    expect(late.kind).toBe('already-resolved');
  });

  it("a dead instance's deferred call is taken over: the card (shown or not yet recorded as shown) is edited to say so and stays decidable", async () => {
    const target = await freshStoreTarget('postgres');
    const a = await instance(target);
    const b = await instance(target);
    await b.approvals.recover();
    const spec = { tool: 'exec', args: { command: 'echo hi' }, toolCallId: 't1', origin: 'command', turn: { agentId: 'main', provider: 'slack' }, surface: ['exec'] } as unknown as Parameters<ApprovalService['requestOrDefer']>[2];
    const pending = await a.approvals.requestOrDefer(INPUT, CTX, spec);
    expect('pending' in pending && pending.pending).toBe(true);
    // Not recorded as shown: A died between posting and recording.
    await until(async () => (await a.store.db.value('SELECT rendered_at FROM approvals WHERE id = ?', [pending.id])) != null);
    await a.store.db.run('UPDATE approvals SET rendered_at = NULL WHERE id = ?', [pending.id]);
    clearInterval((a.instances as unknown as { timer: NodeJS.Timeout }).timer);
    await a.store.db.run('UPDATE instances SET lease_until = 0 WHERE id = ?', [a.instances.id]);
    await until(() => b.renderer.updated.some((r) => r.id === pending.id));
    const edited = b.renderer.updated.find((r) => r.id === pending.id)!;
    expect(edited.facts[0]).toEqual(TAKEN_OVER_FACT);
    expect(edited.status).toBe('pending');
    await until(() => b.renderer.shown.some((r) => r.id === pending.id));
    const decided = await b.approvals.resolve(pending.id, 'allow-once', { provider: 'slack', userId: 'U-OWNER', via: { kind: 'typed' } });
    expect(decided.kind).toBe('resolved');
  });
});
