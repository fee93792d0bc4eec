// Polls with stored votes (Slack's buttons), on both engines: one vote per person per poll, a
// vote on another option replaces it, concurrent clicks (two instances) leave one vote each,
// and the counts survive the process (another connection reads the same).
import { describe, expect, it } from 'vitest';
import { ENGINES, useTestStores } from '../../../../test/store-engines.js';
import { PollStore, pollTally, type PollRecord } from './polls.js';

const POLL: PollRecord = { id: '11111111-2222-4333-8444-555555555555', provider: 'slack', channelId: 'C1', question: 'Lunch?', options: ['pizza', 'sushi', 'tacos'], createdAt: 1_000, closesAt: 100_000 };

describe.each(ENGINES)('poll votes in the store (%s)', (engine) => {
  const stores = useTestStores();
  const pollStore = async () => new PollStore((await stores.handles(engine, 1))[0].db);

  it('one vote per person; another option replaces it; the record reads back as stored', async () => {
    const polls = await pollStore();
    await polls.create(POLL);
    expect((await polls.get(POLL.id))?.messageId).toBeUndefined();
    await polls.posted(POLL.id, '1700000001.000001');
    // Recorded once: a second "posted" does not move the poll to another message.
    await polls.posted(POLL.id, '1700000009.000009');
    expect(await polls.get(POLL.id)).toEqual({ ...POLL, messageId: '1700000001.000001' });
    await polls.vote(POLL.id, 'U1', 1, 2_000);
    await polls.vote(POLL.id, 'U2', 1, 2_001);
    await polls.vote(POLL.id, 'U1', 0, 2_002);
    await polls.vote(POLL.id, 'U1', 0, 2_003);
    expect(await polls.counts(POLL.id, 3)).toEqual([1, 1, 0]);
    expect(pollTally(POLL, await polls.counts(POLL.id, 3))).toBe('📊 Lunch?\n• pizza — 1 vote\n• sushi — 1 vote\n• tacos — 0 votes');
    expect(await polls.get('nope')).toBeUndefined();
  });

  it('clicks racing on two instances leave one vote per person, and either instance counts them', async () => {
    const [a, b] = (await stores.handles(engine, 2)).map((s) => new PollStore(s.db)) as [PollStore, PollStore];
    await a.create(POLL);
    await a.posted(POLL.id, '1700000001.000001');
    await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? a : b).vote(POLL.id, `U${i % 3}`, i % 3 === 0 ? i % 2 : 2, 3_000 + i)));
    const counts = await b.counts(POLL.id, 3);
    expect(counts.reduce((x, y) => x + y, 0)).toBe(3);
    expect(counts[2]).toBe(2);
    expect(await a.counts(POLL.id, 3)).toEqual(counts);
  });

  it('a poll whose post failed is gone with its votes', async () => {
    const polls = await pollStore();
    await polls.create(POLL);
    await polls.vote(POLL.id, 'U1', 0, 2_000);
    await polls.remove(POLL.id);
    expect(await polls.get(POLL.id)).toBeUndefined();
    expect(await polls.counts(POLL.id, 3)).toEqual([0, 0, 0]);
  });
});
