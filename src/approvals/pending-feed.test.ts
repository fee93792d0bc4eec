import { afterEach, describe, expect, it, vi } from 'vitest';
import { ENGINES, freshStoreTarget } from '../../test/store-engines.js';
import { parseConfig } from '../config/index.js';
import { EventBus } from '../events/events.js';
import { openWardenStore } from '../app/migrations.js';
import type { StoreEngine } from '../store/db.js';
import { watchPending } from './pending-feed.js';
import { ApprovalService } from './service.js';
import type { ApprovalRequestInput } from './types.js';

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const INPUT: ApprovalRequestInput = { kind: 'exec', tool: 'exec', title: 'Run a command', preview: 'ls', fullText: 'ls', allowedDecisions: ['allow-once', 'deny'] };
const ctx = (sessionKey: string) => ({ agentId: 'main', sessionKey, provider: 'web', channelId: 'web', requesterId: 'local' });
const WEB = 'agent:main:web:direct:local';

async function setup(engine: StoreEngine) {
  const parsed = parseConfig({});
  if (!parsed.ok) throw parsed.error;
  const where = await freshStoreTarget(engine);
  const opened = await openWardenStore({ dataDir: where.dataDir, url: where.url });
  if (!opened.ok) throw new Error(opened.error.message);
  const events = new EventBus();
  const approvals = new ApprovalService({ store: opened.store, config: parsed.value.config, events });
  cleanups.push(() => opened.store.close(), () => approvals.shutdown());
  return { approvals, events };
}

describe.each(ENGINES)('watchPending on %s', (engine) => {
  it('gives a conversation its pending requests now and after every change of its own', async () => {
    const { approvals, events } = await setup(engine);
    const first = await approvals.open(INPUT, ctx(WEB));
    const seen: string[][] = [];
    const stop = watchPending(approvals, events, WEB, (pending) => seen.push(pending.map((r) => r.id)));
    const reported = (ids: string[]) => vi.waitFor(() => expect(seen.at(-1)).toEqual(ids));
    await reported([first.id]);
    const second = await approvals.open(INPUT, ctx(WEB));
    await reported([first.id, second.id]);
    await approvals.open(INPUT, ctx('agent:main:discord:channel:9'));
    await approvals.resolveAsOperator(first.id, 'deny', 'op');
    await reported([second.id]);
    await approvals.cancel(second.id, 'gone');
    await reported([]);
    stop();
    await approvals.open(INPUT, ctx(WEB));
    expect(seen).toEqual([[first.id], [first.id, second.id], [second.id], []]);
  });

  it('reports nothing once stopped, not even a read already under way', async () => {
    const { approvals, events } = await setup(engine);
    const seen: string[][] = [];
    const stop = watchPending(approvals, events, WEB, (pending) => seen.push(pending.map((r) => r.id)));
    stop();
    // Reads after the feed's own have answered: the feed's would have been reported by now.
    await approvals.list({ sessionKey: WEB });
    await approvals.list({ sessionKey: WEB });
    expect(seen).toEqual([]);
  });
});
