// Two instances on one PostgreSQL updating one Slack poll message: the real Web API client of
// each against the loopback Slack, whose `chat.update`s may land in either order. Whatever the
// order, once the clicks are handled the message shows the stored counts.
import { webApi } from '@slack/bolt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { log } from '../../src/log/log.js';
import { PollStore, pollActionId, type PollRecord } from '../../src/tools/core/message/polls.js';
import { startSlackFake, type RecordedRequest, type SlackFake } from '../../test/fakes/slack/index.js';
import { useTestStores } from '../../test/store-engines.js';
import { until } from '../../test/until.js';
import { slackPollMessage, votePollClick } from './poll.js';

const CHANNEL = 'C0000GEN';
let fake: SlackFake;
beforeAll(async () => {
  fake = await startSlackFake();
});
afterAll(async () => {
  await fake?.close();
});
const stores = useTestStores();

/** Instances `a` and `b` (a store handle and a Slack client each, told apart by token) and a posted two-option poll. */
async function twoInstancesAndAPoll(id: string) {
  const [sa, sb] = await stores.handles('postgres', 2);
  const instance = (store: typeof sa, token: string) => {
    const polls = new PollStore(store.db);
    const web = new webApi.WebClient(token, { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 } });
    const click = (userId: string, option: number) =>
      votePollClick(
        { actionId: pollActionId(option), value: id, channelId: CHANNEL, messageId: poll.messageId, userId },
        { polls, web, channelKind: async () => 'channel', logger: log },
      );
    return { polls, click };
  };
  const a = instance(sa, 'xoxb-instance-a');
  const b = instance(sb, 'xoxb-instance-b');
  const poll: PollRecord = { id, provider: 'slack', channelId: CHANNEL, question: 'Ship Friday?', options: ['yes', 'no'], createdAt: Date.now(), closesAt: Date.now() + 600_000 };
  await a.polls.create(poll);
  const posted = await new webApi.WebClient('xoxb-instance-a', { slackApiUrl: fake.apiUrl }).chat.postMessage({ channel: CHANNEL, ...slackPollMessage(poll, [0, 0]) });
  poll.messageId = posted.ts!;
  await a.polls.posted(id, poll.messageId);
  const shown = () => fake.messages.get(`${CHANNEL}:${poll.messageId}`)!.text;
  const final = async () => slackPollMessage(poll, await b.polls.counts(id, 2)).text;
  return { a, b, poll, shown, final };
}

const updatesBy = (token: string, ts: string) => (r: RecordedRequest) => r.path === '/api/chat.update' && r.body.ts === ts && r.headers.authorization === `Bearer ${token}`;

describe('a Slack poll updated by two instances', () => {
  it('an instance whose updates keep landing after the other’s newer ones shows the final counts in the end', async () => {
    const { a, b, poll, shown, final } = await twoInstancesAndAPoll('11111111-2222-4333-8444-000000000001');
    // Slack holds each of A's updates (A's requests are slow) until the test lets it land.
    const held: Array<() => void> = [];
    let holding = true;
    fake.override(updatesBy('xoxb-instance-a', poll.messageId!), async () => {
      if (holding) await new Promise<void>((resolve) => held.push(resolve));
      return false;
    });
    const clickAtA = a.click('U0000A1', 0);
    // Three times over, a vote at B lands its update while A's older one is held, then A's lands.
    for (let round = 1; round <= 3; round++) {
      await until(() => held.length === round, 10_000, `A's update ${round} at Slack`);
      await b.click(`U0000B${round}`, 1);
      expect(shown()).toBe(await final());
      if (round === 3) holding = false;
      held[round - 1]!();
    }
    await clickAtA;
    expect(await b.polls.counts(poll.id, 2)).toEqual([1, 3]);
    expect(shown()).toBe(await final());
    expect(shown()).toContain('• yes — 1 vote\n• no — 3 votes');
  });

  it('votes hitting both instances at once, their updates landing in any order: the message ends with the final counts', async () => {
    const { a, b, poll, shown, final } = await twoInstancesAndAPoll('11111111-2222-4333-8444-000000000002');
    // Every update takes Slack a random while: they land in no particular order.
    fake.override(
      (r) => r.path === '/api/chat.update' && r.body.ts === poll.messageId,
      async () => {
        await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 40)));
        return false;
      },
    );
    // 24 people, each clicking once or twice (a change of mind), half at each instance.
    await Promise.all(
      Array.from({ length: 24 }, async (_, i) => {
        const at = i % 2 === 0 ? a : b;
        await at.click(`U${String(i).padStart(8, '0')}`, i % 3 === 0 ? 0 : 1);
        if (i % 4 === 0) await (i % 8 === 0 ? b : a).click(`U${String(i).padStart(8, '0')}`, 1);
      }),
    );
    const counts = await a.polls.counts(poll.id, 2);
    expect(counts[0]! + counts[1]!).toBe(24);
    expect(shown()).toBe(await final());
  });
});
