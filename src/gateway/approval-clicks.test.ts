import { afterEach, describe, expect, it } from 'vitest';
import { ENGINES, freshStoreTarget } from '../../test/store-engines.js';
import { ApprovalService } from '../approvals/service.js';
import type { ApprovalRequestContext, ApprovalRequestInput, ApprovalResolution } from '../approvals/types.js';
import { parseConfig, type WardenConfigInput } from '../config/index.js';
import { EventBus } from '../events/events.js';
import { openWardenStore } from '../app/migrations.js';
import type { StoreEngine } from '../store/db.js';
import { approveOn, clickHandlerOn, withWebLocalOwner, WRONG_CONVERSATION_TEXT } from './approval-clicks.js';

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function setup(engine: StoreEngine, raw: WardenConfigInput) {
  const parsed = parseConfig(raw);
  if (!parsed.ok) throw parsed.error;
  const where = await freshStoreTarget(engine);
  const opened = await openWardenStore({ dataDir: where.dataDir, url: where.url });
  if (!opened.ok) throw new Error(opened.error.message);
  const svc = new ApprovalService({ store: opened.store, config: withWebLocalOwner(parsed.value.config), events: new EventBus(), pollMs: 10 });
  cleanups.push(() => opened.store.close(), () => svc.shutdown());
  return svc;
}

const INPUT: ApprovalRequestInput = { kind: 'exec', tool: 'exec', title: 'Run', preview: 'ls', fullText: 'ls', allowedDecisions: ['allow-once', 'deny'] };
/** The conversation each request below was asked in, as its adapter reports a click there. */
const here = (provider: string) => (provider === 'web' ? { provider, channelId: 'web', dm: true } : { provider, channelId: '1', dm: false });
const ctx = (provider: string): ApprovalRequestContext => ({ agentId: 'main', sessionKey: `agent:main:${provider}:channel:1`, provider, channelId: '1' });

describe.each(ENGINES)('clicks through the approval service on %s', (engine) => {
  it('a non-approver is refused and the call keeps waiting; the approver decides once', async () => {
    const svc = await setup(engine, { owners: { discord: ['boss'] } });
    const request = await svc.open(INPUT, ctx('discord'));
    const waiting = svc.wait(request.id);
    const handler = clickHandlerOn((...a) => svc.resolve(...a), 'discord');
    const click = (c: Parameters<typeof handler>[0]) => handler({ origin: here('discord'), ...c });

    expect(await click({ approvalId: request.id, decision: 'allow-once', userId: 'mallory' })).toEqual({ kind: 'not-approver' });
    expect((await svc.get(request.id))?.status).toBe('pending');

    const first = await click({ approvalId: request.id, decision: 'allow-once', userId: 'boss' });
    expect(first).toMatchObject({ kind: 'resolved', request: { status: 'allow-once', decidedBy: 'discord:boss' } });
    const resolution: ApprovalResolution = await waiting;
    expect(resolution.outcome).toBe('allow-once');

    const second = await click({ approvalId: request.id, decision: 'deny', userId: 'boss' });
    expect(second).toMatchObject({ kind: 'already-resolved', request: { status: 'allow-once' } });
  });

  it('an approver clicking from another conversation, or with none, is refused with its own text; typed /approve decides by id', async () => {
    const svc = await setup(engine, { owners: { discord: ['boss'] } });
    const request = await svc.open(INPUT, ctx('discord'));
    void svc.wait(request.id);
    const resolve = (...a: Parameters<typeof svc.resolve>) => svc.resolve(...a);
    const click = clickHandlerOn(resolve, 'discord');
    expect(await click({ approvalId: request.id, decision: 'allow-once', userId: 'boss', origin: { provider: 'discord', channelId: '2', dm: false } })).toEqual({ kind: 'not-approver', text: WRONG_CONVERSATION_TEXT });
    expect(await click({ approvalId: request.id, decision: 'allow-once', userId: 'boss' })).toEqual({ kind: 'not-approver', text: WRONG_CONVERSATION_TEXT });
    expect((await svc.get(request.id))?.status).toBe('pending');
    expect(await approveOn(resolve, 'discord', 'typed')({ approvalId: request.id, decision: 'deny', userId: 'boss' })).toMatchObject({ kind: 'resolved' });
  });

  it('an owner on one platform is not an approver on another', async () => {
    const svc = await setup(engine, { owners: { discord: ['same-id'] } });
    const request = await svc.open(INPUT, ctx('slack'));
    void svc.wait(request.id);
    expect(await clickHandlerOn((...a) => svc.resolve(...a), 'slack')({ approvalId: request.id, decision: 'allow-once', userId: 'same-id', origin: here('slack') })).toEqual({
      kind: 'not-approver',
    });
  });

  it('/approve learns which decisions a request offers; a button click gets not-found', async () => {
    const svc = await setup(engine, { owners: { discord: ['boss'] } });
    const request = await svc.open(INPUT, ctx('discord'));
    void svc.wait(request.id);
    const resolve = (...a: Parameters<typeof svc.resolve>) => svc.resolve(...a);
    expect(await approveOn(resolve, 'discord', 'typed')({ approvalId: request.id, decision: 'allow-always', userId: 'boss' })).toEqual({
      kind: 'decision-not-allowed',
      allowed: ['allow-once', 'deny'],
    });
    expect(await clickHandlerOn(resolve, 'discord')({ approvalId: request.id, decision: 'allow-always', userId: 'boss', origin: here('discord') })).toEqual({ kind: 'not-found' });
    expect(await approveOn(resolve, 'discord', 'typed')({ approvalId: 'nope', decision: 'deny', userId: 'boss' })).toEqual({ kind: 'not-found' });
  });

  it('the web chat local user approves on web, nowhere else', async () => {
    const svc = await setup(engine, { approvals: { approvers: { web: ['someone'] } } });
    const web = await svc.open(INPUT, ctx('web'));
    void svc.wait(web.id);
    const resolve = (...a: Parameters<typeof svc.resolve>) => svc.resolve(...a);
    expect((await clickHandlerOn(resolve, 'web')({ approvalId: web.id, decision: 'allow-once', userId: 'local', origin: here('web') })).kind).toBe('resolved');
    const discord = await svc.open(INPUT, ctx('discord'));
    void svc.wait(discord.id);
    expect((await clickHandlerOn(resolve, 'discord')({ approvalId: discord.id, decision: 'allow-once', userId: 'local', origin: here('discord') })).kind).toBe('not-approver');
  });
});
