// Clicks on a Slack poll's buttons, attacker-written. A vote counts only for a poll this store
// knows, clicked on the very message and in the very channel it was posted in, on an option it
// has, while it is open; a button id that is not a poll's (an approval's, a forged one) never
// decodes as a vote, and a poll button never decodes as anything but a vote. Everything else
// is refused (quietly, by the adapter).
import { describe, expect, it } from 'vitest';
import { APPROVAL_ACTION_PATTERN } from '../../adapters/slack/card.js';
import { ASK_BUTTON_PREFIX, ASK_OTHER_PREFIX } from '../../adapters/common/ask-user-prompt.js';
import { PAIRING_BUTTON_PREFIX } from '../../adapters/common/pairing-card.js';
import { SECRET_BUTTON_PREFIX } from '../../adapters/common/secret-prompt.js';
import { decodePollClick, pollActionId, pollVoteRefusal, POLL_ACTION_PREFIX, type PollClick, type PollRecord } from '../../src/tools/core/message/polls.js';

const ID = '11111111-2222-4333-8444-555555555555';
const POLL: PollRecord = { id: ID, provider: 'slack', channelId: 'C0000GEN', messageId: '1700000001.000001', question: 'q?', options: ['a', 'b'], createdAt: 0, closesAt: 10_000 };
const click = (over: Partial<PollClick> = {}): PollClick => ({ actionId: pollActionId(1), value: ID, channelId: 'C0000GEN', messageId: '1700000001.000001', userId: 'U1', ...over });

describe('which button ids decode as a vote', () => {
  it.each([
    ['a poll button', pollActionId(0), ID, { pollId: ID, option: 0 }],
    ['the tenth option', pollActionId(9), ID, { pollId: ID, option: 9 }],
    ['an approval button', 'warden_approval_allow-once', ID, undefined],
    ['a poll prefix with no option', POLL_ACTION_PREFIX, ID, undefined],
    ['an option that is not a number', `${POLL_ACTION_PREFIX}x`, ID, undefined],
    ['a negative option', `${POLL_ACTION_PREFIX}-1`, ID, undefined],
    ['a huge option', `${POLL_ACTION_PREFIX}999`, ID, undefined],
    ['a value that is not a poll id', pollActionId(0), "1' OR '1'='1", undefined],
    ['a poll id with a suffix', pollActionId(0), `${ID}x`, undefined],
    ['no value', pollActionId(0), undefined, undefined],
  ] as const)('%s', (_label, actionId, value, decoded) => {
    expect(decodePollClick({ actionId, value })).toEqual(decoded);
  });

  it('a poll button matches no other handler’s pattern, and theirs are no poll button', () => {
    const poll = pollActionId(3);
    expect(APPROVAL_ACTION_PATTERN.test(poll)).toBe(false);
    for (const prefix of [PAIRING_BUTTON_PREFIX, SECRET_BUTTON_PREFIX, ASK_BUTTON_PREFIX, ASK_OTHER_PREFIX]) {
      expect(poll.startsWith(prefix)).toBe(false);
      expect(`${prefix}x`.startsWith(POLL_ACTION_PREFIX)).toBe(false);
    }
  });
});

describe('a click is a vote only on the poll where it was posted, while it is open', () => {
  it.each([
    ['the poll’s own button', POLL, click(), 1, 5_000, undefined],
    ['a poll id the store does not know', undefined, click(), 1, 5_000, /no such poll/],
    ['the button copied into another channel', POLL, click({ channelId: 'C0000HR' }), 1, 5_000, /another channel/],
    ['a click with no channel (a forged payload)', POLL, click({ channelId: undefined }), 1, 5_000, /another channel/],
    ['the button on another message', POLL, click({ messageId: '1700000002.000001' }), 1, 5_000, /another message/],
    ['a poll whose post was never recorded', { ...POLL, messageId: undefined }, click(), 1, 5_000, /another message/],
    ['an option the poll does not have', POLL, click(), 2, 5_000, /no such option/],
    ['after the poll closed', POLL, click(), 1, 10_000, /closed/],
  ] as const)('%s', (_label, poll, c, option, now, refused) => {
    const why = pollVoteRefusal(poll as PollRecord | undefined, c, option, now);
    if (refused === undefined) expect(why).toBeUndefined();
    else expect(why).toMatch(refused);
  });
});
