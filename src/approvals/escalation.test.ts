// Escalation of a rule's card (escalateAfterSec / escalateTo): once, by whichever process times
// the request, never after a decision, and its expiry still denies.
import { afterEach, describe, expect, it } from 'vitest';
import { ENGINES, freshStoreTarget } from '../../test/store-engines.js';
import { until } from '../../test/until.js';
import { parseConfig } from '../config/index.js';
import { EventBus } from '../events/events.js';
import { openWardenStore } from '../app/migrations.js';
import { ApprovalService } from './service.js';
import type { ApprovalRenderer, ApprovalRequest, ApprovalRequestContext, ApprovalRequestInput, DeferredCallSpec } from './types.js';
import type { TurnContext } from '../policy/context.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

class Recorder implements ApprovalRenderer {
  readonly provider = 'discord';
  escalated: ApprovalRequest[] = [];
  updated: ApprovalRequest[] = [];
  async show() {}
  async update(r: ApprovalRequest) {
    this.updated.push(r);
  }
  async escalate(r: ApprovalRequest) {
    this.escalated.push(r);
  }
}

const CTX: ApprovalRequestContext = { agentId: 'main', sessionKey: 'agent:main:discord:channel:C1', provider: 'discord', channelId: 'C1', requesterId: 'A1' };
const input = (escalateAfterSec: number, expiresSec?: number): ApprovalRequestInput => ({
  kind: 'tool',
  tool: 'message',
  title: 'message under approvals.rules[0]',
  preview: '{}',
  fullText: '{}',
  rule: { path: 'approvals.rules[0]', quorum: 1, escalateAfterSec, escalateTo: ['channel:OPS'] },
  ...(expiresSec !== undefined ? { timeoutMs: expiresSec * 1000 } : {}),
});

async function service(target: { dataDir: string; url: string | undefined }) {
  const opened = await openWardenStore(target);
  if (!opened.ok) throw new Error(opened.error.message);
  const parsed = parseConfig({ owners: { discord: ['OWNER'] }, approvals: { waitSec: 0 } });
  if (!parsed.ok) throw parsed.error;
  const svc = new ApprovalService({ store: opened.store, config: parsed.value.config, events: new EventBus(), pollMs: 20 });
  const renderer = new Recorder();
  svc.registerRenderer(renderer);
  cleanups.push(async () => {
    svc.shutdown();
    await opened.store.close();
  });
  return { svc, renderer, store: opened.store };
}

const TURN: TurnContext = { agentId: 'main', provider: 'discord', chat: 'channel', channelId: 'C1', senderId: 'A1', senderIsOwner: false, spawnDepth: 0 };
const SPEC: DeferredCallSpec = { tool: 'message', args: {}, toolCallId: 'call-1', origin: 'turn', turn: TURN, surface: ['message'] };

describe.each(ENGINES)('escalation (%s)', (engine) => {
  it('an undecided card escalates once after escalateAfterSec; the original is updated to say so; expiry still denies', async () => {
    const { svc, renderer } = await service(await freshStoreTarget(engine));
    const request = await svc.open(input(1, 3), CTX);
    expect(request.escalateAt).toBe(request.createdAt + 1000);
    await until(() => renderer.escalated.length === 1, 4_000);
    expect(renderer.escalated[0]!.escalateTo).toEqual(['channel:OPS']);
    expect((await svc.get(request.id))!.escalatedAt).toBeDefined();
    expect(renderer.updated.some((r) => r.escalatedAt !== undefined && r.status === 'pending')).toBe(true);
    // A second attempt (another process's timer) changes nothing.
    expect(await svc.escalate(request.id)).toBe(false);
    await until(async () => (await svc.get(request.id))!.status === 'expired', 5_000);
    expect(renderer.escalated).toHaveLength(1);
  });

  it('a card decided before escalateAfterSec never escalates', async () => {
    const { svc, renderer } = await service(await freshStoreTarget(engine));
    const request = await svc.open(input(1), CTX);
    expect((await svc.resolve(request.id, 'allow-once', { provider: 'discord', userId: 'OWNER', via: { kind: 'typed' } })).kind).toBe('resolved');
    await new Promise((r) => setTimeout(r, 1_300));
    expect(renderer.escalated).toHaveLength(0);
    expect(await svc.escalate(request.id)).toBe(false);
  });

  it('two processes timing the same card: it escalates once', async () => {
    const target = await freshStoreTarget(engine);
    const a = await service(target);
    const b = await service(target);
    const request = await a.svc.open(input(60), CTX);
    const results = await Promise.all([a.svc.escalate(request.id), b.svc.escalate(request.id), a.svc.escalate(request.id)]);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(a.renderer.escalated.length + b.renderer.escalated.length).toBe(1);
  });

  it('after a restart, the process that adopts a deferred card escalates it when the time comes', async () => {
    const target = await freshStoreTarget(engine);
    const first = await service(target);
    const pending = await first.svc.requestOrDefer(input(2, 30), CTX, SPEC);
    expect('pending' in pending && pending.pending).toBe(true);
    first.svc.shutdown(); // the process stops before the card escalates
    expect(first.renderer.escalated).toHaveLength(0);
    const second = await service(target);
    const report = await second.svc.recover();
    expect(report.deferred.map((r) => r.id)).toEqual([pending.id]);
    await until(() => second.renderer.escalated.length === 1, 5_000);
    expect((await second.svc.get(pending.id))!.status).toBe('pending');
  });
});
