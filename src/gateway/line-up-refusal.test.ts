// A message the local queue would refuse (its conversation's line is full, or the gateway is
// stopping) is refused before its place, its lease or the message itself is written to the shared
// store: the sender is told, and nothing of it is left in the line or the transcript to lie there
// without an answer.
import { describe, expect, it } from 'vitest';
import type { HeldLease, Place } from '../cluster/leases.js';
import { BUSY_TEXT, Gateway } from './gateway.js';
import { HeldAgent } from './held-agent-testing.js';
import { SessionQueues } from './queue.js';
import { lineGateway, PushAdapter } from './push-adapter-testing.js';
import { until } from '../../test/until.js';


/** The session line of a shared store, as far as the gateway's line-up sees it: every place is this instance's, taken at once. */
class RecordingLine {
  readonly places: string[] = [];
  readonly left: number[] = [];
  async hold<T>(_name: string, signal: AbortSignal, fn: (signal: AbortSignal, lease?: HeldLease) => Promise<T>): Promise<T> {
    return fn(signal);
  }
  async place(name: string): Promise<Place> {
    this.places.push(name);
    return { seq: this.places.length, holder: 'me', here: true, taken: true };
  }
  async release(): Promise<void> {}
  async leave(seq: number): Promise<void> {
    this.left.push(seq);
  }
}

describe('a message the local queue would refuse takes no place in the shared line', () => {
  it('the conversation is full: refused before the place is written; the sender is told', async () => {
    const adapter = new PushAdapter();
    const agent = new HeldAgent();
    const line = new RecordingLine();
    const gateway = lineGateway({ adapter, agent, sessionLeases: line, maxPending: 1, });
    await gateway.start();
    try {
      await adapter.push('first: runs and holds the conversation');
      await until(() => agent.requests.length === 1);
      await adapter.push('second: waits');
      expect(line.places).toHaveLength(2);
      await adapter.push('third: the line is full');
      expect(line.places).toHaveLength(2);
      expect(line.left).toEqual([]);
      expect(adapter.sent.map((m) => m.text)).toEqual([BUSY_TEXT(1)]);
    } finally {
      agent.releaseAll();
      await gateway.stop();
    }
  });
});

describe('SessionQueues.refusal: as enqueue would decide, without queueing', () => {
  it.each<[string, { running: boolean; pending: number; closed: boolean; overflow: boolean }, 'closed' | 'full' | undefined]>([
    ['an idle conversation', { running: false, pending: 0, closed: false, overflow: false }, undefined],
    ['a busy conversation with room', { running: true, pending: 0, closed: false, overflow: false }, undefined],
    ['a busy conversation at its limit', { running: true, pending: 1, closed: false, overflow: false }, 'full'],
    ['at its limit, an item that may overflow', { running: true, pending: 1, closed: false, overflow: true }, undefined],
    ['a closed queue (stopping)', { running: false, pending: 0, closed: true, overflow: true }, 'closed'],
  ])('%s', async (_name, s, expected) => {
    const gates: Array<() => void> = [];
    const q = new SessionQueues<string>(() => new Promise<void>((r) => gates.push(r)), { maxPending: 1 });
    if (s.running) q.enqueue('k', 'running');
    for (let i = 0; i < s.pending; i++) q.enqueue('k', `pending ${i}`);
    if (s.closed) q.close();
    expect(q.refusal('k', { overflow: s.overflow })).toBe(expected);
    // The same answer enqueue gives.
    const queued = q.enqueue('k', 'probe', { overflow: s.overflow });
    expect(queued.ok ? undefined : queued.reason).toBe(expected);
    for (const g of gates.splice(0)) g();
  });
});
