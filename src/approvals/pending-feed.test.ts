import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../config/index.js';
import { EventBus } from '../events.js';
import { openStore } from '../store/store.js';
import { watchPending } from './pending-feed.js';
import { ApprovalService } from './service.js';
import type { ApprovalRequestInput } from './types.js';

const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

const INPUT: ApprovalRequestInput = { kind: 'exec', tool: 'exec', title: 'Run a command', preview: 'ls', fullText: 'ls', allowedDecisions: ['allow-once', 'deny'] };
const ctx = (sessionKey: string) => ({ agentId: 'main', sessionKey, provider: 'web', channelId: 'web', requesterId: 'local' });

describe('watchPending', () => {
  it('gives a conversation its pending requests now and after every change of its own', async () => {
    const parsed = parseConfig({});
    if (!parsed.ok) throw parsed.error;
    const opened = openStore({ dataDir: mkdtempSync(path.join(tmpdir(), 'warden-pending-feed-')) });
    if (!opened.ok) throw new Error(opened.error.message);
    const events = new EventBus();
    const approvals = new ApprovalService({ store: opened.store, config: parsed.value.config, events });
    cleanups.push(() => opened.store.close(), () => approvals.shutdown());

    const first = approvals.open(INPUT, ctx('agent:main:web:direct:local'));
    const seen: string[][] = [];
    const stop = watchPending(approvals, events, 'agent:main:web:direct:local', (pending) => seen.push(pending.map((r) => r.id)));
    const second = approvals.open(INPUT, ctx('agent:main:web:direct:local'));
    approvals.open(INPUT, ctx('agent:main:discord:channel:9'));
    await approvals.resolveAsOperator(first.id, 'deny', 'op');
    approvals.cancel(second.id, 'gone');
    stop();
    approvals.open(INPUT, ctx('agent:main:web:direct:local'));
    expect(seen).toEqual([[first.id], [first.id, second.id], [second.id], []]);
  });
});
