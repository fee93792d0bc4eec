import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ENGINES, freshStoreTarget } from '../../test/store-engines.js';
import { parseConfig } from '../config/index.js';
import { EventBus } from '../events/events.js';
import { approvalsInAnotherThread } from '../app/testing.js';
import type { TurnContext } from '../policy/context.js';
import { openWardenStore } from '../app/migrations.js';
import type { StoreEngine } from '../store/db.js';
import type { Store } from '../store/store.js';
import { ApprovalLedger } from './ledger.js';
import { ApprovalService, type ApprovalServiceOptions } from './service.js';
import { isPending, type ApprovalRequest, type ApprovalRequestContext, type ApprovalRequestInput, type DeferredCallSpec } from './types.js';

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const TURN: TurnContext = { agentId: 'main', provider: 'discord', chat: 'channel', channelId: '42', channelName: 'dev', senderId: 'user-7', senderName: 'alice', senderIsOwner: false, spawnDepth: 0 };
const CTX: ApprovalRequestContext = { agentId: 'main', sessionKey: 'agent:main:discord:channel:42', provider: 'discord', channelId: '42', requesterId: 'user-7', requesterName: 'alice', via: 'agent' };
const INPUT: ApprovalRequestInput = { kind: 'exec', tool: 'exec', title: 'Run a command', preview: 'make deploy', fullText: 'make deploy', allowedDecisions: ['allow-once', 'deny'], shown: { scripts: [] } };
const SPEC: DeferredCallSpec = { tool: 'exec', args: { command: 'make deploy' }, toolCallId: 'call-1', origin: 'turn', turn: TURN, surface: ['exec', 'read'] };
const OWNER = { provider: 'discord', userId: 'owner-1', via: { kind: 'typed' as const } };

type Target = { dataDir: string; url: string | undefined };

const configOf = (waitSec: number) => ({ owners: { discord: ['owner-1'] }, approvals: { waitSec } });

/** A service over the store at `where`; two services on one target are two processes on one store. */
async function service(where: Target, waitSec: number, extra: Partial<ApprovalServiceOptions> = {}) {
  const parsed = parseConfig(configOf(waitSec));
  if (!parsed.ok) throw parsed.error;
  const opened = await openWardenStore({ dataDir: where.dataDir, url: where.url });
  if (!opened.ok) throw new Error(opened.error.message);
  const store: Store = opened.store;
  const events = extra.events ?? new EventBus();
  const svc = new ApprovalService({ store, config: parsed.value.config, events, pollMs: 10, externalPollMs: 10, ...extra });
  cleanups.push(() => store.close());
  cleanups.push(() => svc.shutdown());
  const closed: ApprovalRequest[] = [];
  const deferred: ApprovalRequest[] = [];
  events.on('approval.closed', ({ request }) => closed.push(request));
  events.on('approval.deferred', ({ request }) => deferred.push(request));
  return { svc, store, closed, deferred };
}

let engine: StoreEngine;
const newDir = () => freshStoreTarget(engine);

/** Another process deciding on the store at `where` (on SQLite in a thread of its own: see `approvalsInAnotherThread`). */
async function otherProcess(where: Target, waitSec: number): Promise<Pick<ApprovalService, 'resolveAsOperator'>> {
  if (engine !== 'sqlite') return (await service(where, waitSec)).svc;
  const other = await approvalsInAnotherThread(where.dataDir, configOf(waitSec));
  cleanups.push(() => other.close());
  return other;
}

describe.each(ENGINES)('deferred calls on %s', (on) => {
    beforeEach(() => {
      engine = on;
    });

  describe('a call that waits approvals.waitSec, then goes on without its turn', () => {
    it('decided within the wait: the turn gets the decision and handles it; nothing is left for a runner', async () => {
      const t = await service(await newDir(), 5);
      t.svc.registerRenderer({ provider: 'discord', show: async (r) => void t.svc.resolve(r.id, 'allow-once', OWNER), update: async () => {} });
      const answer = await t.svc.requester(CTX, { deferred: SPEC }).requestOrDefer!(INPUT);
      expect(isPending(answer)).toBe(false);
      expect(answer).toMatchObject({ outcome: 'allow-once', decidedBy: 'discord:owner-1', shown: { scripts: [] } });
      const call = (await t.svc.deferred.get((answer as { id: string }).id))!;
      expect(call).toMatchObject({ state: 'done', result: { outcome: 'allow-once' } });
      expect(await t.svc.deferred.claim(call.approvalId, { instance: 'x', pid: 1 }, Date.now())).toBe(false);
    });

    it('undecided: pending after the wait, the request stays decidable, the call is deferred and claimed exactly once', async () => {
      const t = await service(await newDir(), 0.05);
      const started = Date.now();
      const answer = await t.svc.requester(CTX, { deferred: SPEC }).requestOrDefer!(INPUT);
      expect(Date.now() - started).toBeGreaterThanOrEqual(45);
      if (!isPending(answer)) throw new Error('expected pending');
      expect(t.deferred.map((r) => r.id)).toEqual([answer.id]);
      expect(await t.svc.get(answer.id)).toMatchObject({ status: 'pending', requesterName: 'alice', via: 'agent' });
      const call = (await t.svc.deferred.get(answer.id))!;
      expect(call).toMatchObject({ state: 'deferred', tool: 'exec', args: { command: 'make deploy' }, toolCallId: 'call-1', origin: 'turn', turn: TURN, surface: ['exec', 'read'], sessionKey: CTX.sessionKey });
      expect(call.owner).toBeUndefined();
      // No call waits for it any more: no waiter stamp for recovery to judge.
      expect(await t.store.db.value('SELECT waiter_instance FROM approvals WHERE id = ?', [answer.id])).toBeNull();

      await t.svc.resolve(answer.id, 'allow-once', OWNER);
      expect(t.closed.map((r) => [r.id, r.status])).toEqual([[answer.id, 'allow-once']]);
      const claims = [await t.svc.deferred.claim(answer.id, { instance: 'a', pid: 1 }, 1), await t.svc.deferred.claim(answer.id, { instance: 'b', pid: 2 }, 2)];
      expect(claims).toEqual([true, false]);
      expect(await t.svc.deferred.finish(answer.id, 3, { outcome: 'allow-once:ran', text: 'ok' })).toBe(true);
      expect(await t.svc.deferred.get(answer.id)).toMatchObject({ state: 'done', owner: { instance: 'a' }, result: { outcome: 'allow-once:ran' } });
      expect((await t.svc.audit.list({ subject: answer.id })).map((e) => e.type)).toEqual(['approval.requested', 'approval.deferred', 'approval.resolved']);
    });

    it('the same call again while its card waits (a retry, a poll) gets that card\'s pending answer, not a second card', async () => {
      const t = await service(await newDir(), 0);
      const requester = t.svc.requester(CTX, { deferred: SPEC });
      const first = await requester.requestOrDefer!(INPUT);
      const again = await requester.requestOrDefer!(INPUT);
      expect(again).toEqual(first);
      expect(await t.svc.list()).toHaveLength(1);
      // Another command, or the same one elsewhere, is its own request.
      expect(await requester.requestOrDefer!({ ...INPUT, fullText: 'make test' })).not.toEqual(first);
      expect(await t.svc.requester({ ...CTX, sessionKey: 'agent:main:discord:channel:43' }, { deferred: SPEC }).requestOrDefer!(INPUT)).not.toEqual(first);
      expect(await t.svc.list()).toHaveLength(3);
    });

    it('waitSec 0 defers at once; an abort during the wait withdraws the request instead', async () => {
      const t = await service(await newDir(), 0);
      expect(isPending(await t.svc.requester(CTX, { deferred: SPEC }).requestOrDefer!(INPUT))).toBe(true);

      const slow = await service(await newDir(), 5);
      const controller = new AbortController();
      const waiting = slow.svc.requester(CTX, { deferred: SPEC }).requestOrDefer!(INPUT, controller.signal);
      await vi.waitFor(async () => expect(await slow.svc.list()).toHaveLength(1));
      controller.abort();
      const answer = await waiting;
      expect(answer).toMatchObject({ outcome: 'cancelled' });
      expect(await slow.svc.deferred.get((answer as { id: string }).id)).toMatchObject({ state: 'done', result: { outcome: 'cancelled' } });
    });

    it('a decision another process writes just as the wait ends is the turn\'s, not a deferred call\'s', async () => {
      const dir = await newDir();
      // The turn's process looks for foreign decisions rarely: its wait ends before it notices.
      const turn = await service(dir, 0.1, { pollMs: 10_000 });
      const cli = await otherProcess(dir, 0.1);
      turn.svc.registerRenderer({ provider: 'discord', show: async (r) => void cli.resolveAsOperator(r.id, 'deny', 'op'), update: async () => {} });
      const answer = await turn.svc.requester(CTX, { deferred: SPEC }).requestOrDefer!(INPUT);
      expect(answer).toMatchObject({ outcome: 'deny', decidedBy: 'cli:op' });
      expect((await turn.svc.deferred.get((answer as { id: string }).id))!.state).toBe('done');
    });

    it('a decision made in another process reaches the deferring process as a closure', async () => {
      const dir = await newDir();
      const bot = await service(dir, 0);
      const answer = await bot.svc.requester(CTX, { deferred: SPEC }).requestOrDefer!(INPUT);
      const cli = await otherProcess(dir, 0);
      await cli.resolveAsOperator((answer as { id: string }).id, 'allow-once', 'op');
      await vi.waitFor(() => expect(bot.closed.map((r) => r.status)).toEqual(['allow-once']), { timeout: 2000, interval: 10 });
    });
  });

  describe('a deferred call survives a restart', () => {
    it('recovery keeps a deferred request pending and decidable, and turns a dead turn\'s waiting call into a deferred one', async () => {
      const dir = await newDir();
      const old = await service(dir, 0);
      old.svc.registerRenderer({ provider: 'discord', show: async () => {}, update: async () => {} });
      const deferred = await old.svc.requester(CTX, { deferred: SPEC }).requestOrDefer!(INPUT);
      // A turn that died while it still waited (within waitSec): its call is `waiting`, its waiter dead.
      const waitingReq = await old.svc.open(INPUT, CTX, { ...SPEC, toolCallId: 'call-2' });
      // A plain request (no deferred call, the CLI's): interrupted as before.
      const plain = await old.svc.open(INPUT, CTX);
      await vi.waitFor(async () => expect(await old.svc.list()).toHaveLength(3));
      // The cards are posted in the background and then recorded as shown: wait for the record, or
      // the next process rightly re-posts a card it cannot know was posted.
      const ledger = new ApprovalLedger(old.store.db);
      await vi.waitFor(async () => {
        for (const r of [deferred as { id: string }, waitingReq, plain]) expect((await ledger.get(r.id))?.renderedAt).toBeDefined();
      });
      old.svc.shutdown();

      const fresh = await service(dir, 0, { isProcessAlive: () => false });
      const shown: string[] = [];
      const updated: string[] = [];
      fresh.svc.registerRenderer({ provider: 'discord', show: async (r) => void shown.push(r.id), update: async (r) => void updated.push(`${r.id}:${r.status}`) });
      const report = await fresh.svc.recover();
      const id = (deferred as { id: string }).id;
      expect(report.deferred.map((r) => r.id).sort()).toEqual([id, waitingReq.id].sort());
      expect(report.interrupted.map((r) => r.id)).toEqual([plain.id]);
      expect((await fresh.svc.get(id))!.status).toBe('pending');
      expect((await fresh.svc.deferred.get(waitingReq.id))!.state).toBe('deferred');
      // Their cards are refreshed, still clickable: the update carries the pending state.
      expect(updated).toEqual(expect.arrayContaining([`${id}:pending`, `${waitingReq.id}:pending`]));
      expect(shown).toEqual([]);

      await fresh.svc.resolve(id, 'allow-once', OWNER);
      expect(await fresh.svc.deferred.claim(id, { instance: fresh.svc.instanceId, pid: process.pid }, Date.now())).toBe(true);
    });

    it('a deferred request is never interrupted by the external watcher either', async () => {
      const dir = await newDir();
      const bot = await service(dir, 0);
      await bot.svc.recover();
      const other = await service(dir, 0);
      const answer = await other.svc.requester(CTX, { deferred: SPEC }).requestOrDefer!(INPUT);
      other.svc.shutdown();
      await new Promise((r) => setTimeout(r, 100));
      expect((await bot.svc.get((answer as { id: string }).id))!.status).toBe('pending');
    });
  });

  describe('resuming a deferred call', () => {
    it('its first request asking what the approver saw gets the decision; anything else asks anew', async () => {
      const t = await service(await newDir(), 0);
      const answer = await t.svc.requester(CTX, { deferred: SPEC }).requestOrDefer!(INPUT);
      const id = (answer as { id: string }).id;
      await t.svc.resolve(id, 'allow-once', OWNER);

      const asked: string[] = [];
      const fallback = { request: async (input: ApprovalRequestInput) => (asked.push(input.fullText), { id: 'new', outcome: 'deny' as const }) };
      const resumed = t.svc.resumedRequester(id, fallback);
      // Another command than the one on the card: a fresh request, never the old decision.
      expect(await resumed.request({ ...INPUT, fullText: 'make deploy && rm -rf /' })).toMatchObject({ id: 'new', outcome: 'deny' });
      expect(await resumed.request({ ...INPUT, kind: 'tool' })).toMatchObject({ id: 'new' });
      expect(await resumed.request(INPUT)).toMatchObject({ id, outcome: 'allow-once', shown: { scripts: [] } });
      // The decision answers once.
      expect(await resumed.request(INPUT)).toMatchObject({ id: 'new' });
      expect(asked).toEqual(['make deploy && rm -rf /', 'make deploy', 'make deploy']);
    });

    it('a request still pending answers nothing: the fallback asks', async () => {
      const t = await service(await newDir(), 0);
      const answer = await t.svc.requester(CTX, { deferred: SPEC }).requestOrDefer!(INPUT);
      const resumed = t.svc.resumedRequester((answer as { id: string }).id, { request: async () => ({ id: 'new', outcome: 'deny' as const }) });
      expect(await resumed.request(INPUT)).toMatchObject({ id: 'new' });
    });
  });
});
