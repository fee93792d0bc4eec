import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApprovalService } from '../approvals/service.js';
import type { ApprovalRequestContext, ApprovalRequestInput, ApprovalResolution } from '../approvals/types.js';
import { parseConfig, type WardenConfigInput } from '../config/index.js';
import { EventBus } from '../events.js';
import { openStore } from '../store/store.js';
import { approveOn, clickHandlerOn, withWebLocalOwner } from './approval-clicks.js';

const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

function setup(raw: WardenConfigInput) {
  const parsed = parseConfig(raw);
  if (!parsed.ok) throw parsed.error;
  const opened = openStore({ dataDir: mkdtempSync(path.join(tmpdir(), 'warden-clicks-')) });
  if (!opened.ok) throw new Error(opened.error.message);
  const svc = new ApprovalService({ store: opened.store, config: withWebLocalOwner(parsed.value.config), events: new EventBus(), pollMs: 10 });
  cleanups.push(() => opened.store.close(), () => svc.shutdown());
  return svc;
}

const INPUT: ApprovalRequestInput = { kind: 'exec', tool: 'exec', title: 'Run', preview: 'ls', fullText: 'ls', allowedDecisions: ['allow-once', 'deny'] };
const ctx = (provider: string): ApprovalRequestContext => ({ agentId: 'main', sessionKey: `agent:main:${provider}:channel:1`, provider, channelId: '1' });

describe('clicks through the approval service', () => {
  it('a non-approver is refused and the call keeps waiting; the approver decides once', async () => {
    const svc = setup({ owners: { discord: ['boss'] } });
    const request = svc.open(INPUT, ctx('discord'));
    const waiting = svc.wait(request.id);
    const click = clickHandlerOn((...a) => svc.resolve(...a), 'discord');

    expect(await click({ approvalId: request.id, decision: 'allow-once', userId: 'mallory' })).toEqual({ kind: 'not-approver' });
    expect(svc.get(request.id)?.status).toBe('pending');

    const first = await click({ approvalId: request.id, decision: 'allow-once', userId: 'boss' });
    expect(first).toMatchObject({ kind: 'resolved', request: { status: 'allow-once', decidedBy: 'discord:boss' } });
    const resolution: ApprovalResolution = await waiting;
    expect(resolution.outcome).toBe('allow-once');

    const second = await click({ approvalId: request.id, decision: 'deny', userId: 'boss' });
    expect(second).toMatchObject({ kind: 'already-resolved', request: { status: 'allow-once' } });
  });

  it('an owner on one platform is not an approver on another', async () => {
    const svc = setup({ owners: { discord: ['same-id'] } });
    const request = svc.open(INPUT, ctx('slack'));
    void svc.wait(request.id);
    expect(await clickHandlerOn((...a) => svc.resolve(...a), 'slack')({ approvalId: request.id, decision: 'allow-once', userId: 'same-id' })).toEqual({
      kind: 'not-approver',
    });
  });

  it('/approve learns which decisions a request offers; a button click gets not-found', async () => {
    const svc = setup({ owners: { discord: ['boss'] } });
    const request = svc.open(INPUT, ctx('discord'));
    void svc.wait(request.id);
    const resolve = (...a: Parameters<typeof svc.resolve>) => svc.resolve(...a);
    expect(await approveOn(resolve, 'discord')({ approvalId: request.id, decision: 'allow-always', userId: 'boss' })).toEqual({
      kind: 'decision-not-allowed',
      allowed: ['allow-once', 'deny'],
    });
    expect(await clickHandlerOn(resolve, 'discord')({ approvalId: request.id, decision: 'allow-always', userId: 'boss' })).toEqual({ kind: 'not-found' });
    expect(await approveOn(resolve, 'discord')({ approvalId: 'nope', decision: 'deny', userId: 'boss' })).toEqual({ kind: 'not-found' });
  });

  it('the web chat local user approves on web, nowhere else', async () => {
    const svc = setup({ approvals: { approvers: { web: ['someone'] } } });
    const web = svc.open(INPUT, ctx('web'));
    void svc.wait(web.id);
    const resolve = (...a: Parameters<typeof svc.resolve>) => svc.resolve(...a);
    expect((await clickHandlerOn(resolve, 'web')({ approvalId: web.id, decision: 'allow-once', userId: 'local' })).kind).toBe('resolved');
    const discord = svc.open(INPUT, ctx('discord'));
    void svc.wait(discord.id);
    expect((await clickHandlerOn(resolve, 'discord')({ approvalId: discord.id, decision: 'allow-once', userId: 'local' })).kind).toBe('not-approver');
  });
});
