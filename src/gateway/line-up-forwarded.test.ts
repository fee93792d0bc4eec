// A message for a conversation this instance just forwarded to another instance does not ask for
// the conversation's lease (nor the turn's first reads) with its place: its place would most
// likely go to the same owner, and they would run for nothing. Should the conversation have gone
// idle meanwhile, the message still runs here, taking the lease in its turn.
import { describe, expect, it } from 'vitest';
import type { HeldLease, Place } from '../cluster/leases.js';
import { HeldAgent } from './held-agent-testing.js';
import { lineGateway, PushAdapter } from './push-adapter-testing.js';
import { until } from '../../test/until.js';

/** A shared line whose places go where the test says; records what each place asked for and each hold was given. */
class SteeredLine {
  readonly asked: boolean[] = [];
  readonly heldWith: Array<HeldLease | undefined> = [];
  /** Where the next places go: another instance's (forwarded) or this one's. */
  next: Array<'elsewhere' | 'here'> = [];
  async place(name: string, _payload?: string, takeLease = false): Promise<Place> {
    this.asked.push(takeLease);
    const seq = this.asked.length;
    if (this.next.shift() === 'elsewhere') return { seq, holder: 'other', here: false, taken: false };
    return { seq, holder: 'me', here: true, taken: true, ...(takeLease ? { lease: { name, generation: seq } } : {}) };
  }
  async hold<T>(_name: string, signal: AbortSignal, fn: (signal: AbortSignal, lease?: HeldLease) => Promise<T>, _place?: number, _keep?: () => boolean, taken?: HeldLease): Promise<T> {
    this.heldWith.push(taken);
    return fn(signal, taken);
  }
  async release(): Promise<void> {}
  async leave(): Promise<void> {}
}

describe('a message placed right after its conversation was forwarded elsewhere', () => {
  it('asks for no lease with its place; still runs here when its place is here, and the next place asks again', async () => {
    const adapter = new PushAdapter();
    const agent = new HeldAgent();
    const line = new SteeredLine();
    const gateway = lineGateway({ adapter, agent, sessionLeases: line, });
    await gateway.start();
    try {
      line.next = ['elsewhere', 'here', 'here'];
      // Idle here: the first asks for the lease; its place goes to the conversation's owner elsewhere.
      await adapter.push('first');
      // Forwarded a moment ago: no lease asked; the conversation went idle, so it runs here all the same, taking the lease in its turn.
      await adapter.push('second');
      await until(() => agent.requests.length === 1);
      expect(line.heldWith).toEqual([undefined]);
      agent.releaseAll();
      await until(() => adapter.sent.length === 1);
      // Its latest place was here: the next asks for the lease with its place again, and runs on it.
      await adapter.push('third');
      await until(() => agent.requests.length === 2);
      expect(line.asked).toEqual([true, false, true]);
      expect(line.heldWith).toEqual([undefined, { name: expect.stringMatching(/^session:/), generation: 3 }]);
    } finally {
      agent.releaseAll();
      await gateway.stop();
    }
  });
});
